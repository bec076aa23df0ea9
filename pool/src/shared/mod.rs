//! [`SharedArray`]: an n-dimensional array in memory shared by the parent and its process
//! workers, so large inputs and outputs never pass through the pool's pipe.
//!
//! The data lives in a memory-mapped file in a RAM-backed directory (`/dev/shm` on Linux,
//! the temporary directory elsewhere). The parent creates it ([`SharedArray::zeros`],
//! [`SharedArray::from_slice`], [`SharedArray::from_ndarray`]); a task input or output can
//! hold one, since it serializes as a small [`SharedHandle`] (segment name, dtype, shape,
//! byte offset, the creator's pid and token). A process worker that decodes one maps the
//! same file: it reads the parent's data and its writes are seen by the parent. A thread
//! worker gets the same mapping (the array holds an `Arc`), with no second mapping.
//!
//! ```
//! use polycompute_pool::shared::SharedArray;
//! let mut a = SharedArray::<f32>::zeros(&[4, 3]).unwrap();
//! // SAFETY: `a` was just made; no other array of this process shares its memory yet.
//! unsafe { a.view_mut() }.fill(1.5);
//! let rows = a.rows(1..3).unwrap(); // shares the memory: what a task would get
//! assert_eq!(rows.shape(), &[2, 3]);
//! assert_eq!(rows.as_slice().iter().sum::<f32>(), 9.0);
//! ```
//!
//! **Writes.** Each task should write its own part (give it [`SharedArray::rows`] of the
//! output): concurrent writes to the same elements from several workers are the caller's
//! business, as with any shared memory — the result is unspecified.
//!
//! **Lifetime.** The file is removed when the last array of its segment in the creating
//! process is dropped. A pool keeps the segments that a queued task's input names alive until
//! its result is back, so a temporary handed straight to `submit` is fine; an array a task
//! only reaches some other way (a handle inside the pool's shared data, say) must be kept
//! alive by the caller until its tasks have finished. A worker keeps each segment it attached
//! mapped between tasks, so each page is mapped into it once, when a task first touches it (a
//! task reading a few rows of a large array maps only those), and lets the segment go at its
//! next attach after the file was removed. That first touch is the costly part of a first
//! hand-off: 60-110 ms per GiB of 4 KiB pages on the development VM, measured in a bare
//! `mmap` of a tmpfs file; where the OS lets tmpfs use huge pages on request, segments ask
//! for them.
//! The files of a creator that died without removing them (a crash, SIGKILL) are removed the
//! next time any process creates a shared array ([`remove_leftovers`]). Worker processes
//! only map and unmap; an array created inside a worker lives as long as it does there.
//!
//! **Between hosts.** An MPI worker rank on rank 0's node gets a task input's shared arrays as
//! handles, like a process worker. A rank on another node, where no handle can be mapped,
//! gets them as their data (dtype, shape, elements): the pool encodes such a job both ways
//! and sends each rank its node's form, and the receiving rank gets a new shared array of its
//! own holding a copy (the pool's shared data likewise; outputs travel as data from every
//! rank). So a task on a worker rank reads its
//! input as usual, but its writes stay on its rank: return what it computed instead. The
//! encoding is tagged, so a decoder takes a handle or data alike.
//!
//! **Serial sections.** [`SharedLock`] is a lock the parent creates and hands to tasks like
//! a shared array; its `with` runs a closure while no other holder (thread or process) runs
//! one.
//!
//! **Large task inputs without `SharedArray`.** A process worker's input whose encoding is
//! larger than the pool's threshold (1 MiB by default, see
//! `PoolBuilder::shared_memory_threshold`) never passes through the pipe: the pool moves the
//! encoded bytes into a segment of their own, the worker decodes them from its mapping, and
//! the segment goes when the task's result is back; large outputs come back the same way.
//! This needs no change to the task (a `Vec<f32>` or an `ndarray` array with ndarray's
//! `serde` feature, say), but the worker still decodes its own copy. A `SharedArray` input
//! is never copied at all: use one for data that many tasks read, or that is too large to
//! copy.

pub(crate) mod carry;
mod lock;
pub(crate) mod payload;
pub(crate) mod segment;

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, IxDyn};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use polycompute_core::dtype::{DType, Element};
use polycompute_core::error::{Error, Result};
use polycompute_core::shape::Shape;
use segment::Segment;

pub use lock::SharedLock;
pub use segment::remove_leftovers;

/// What a [`SharedArray`] serializes as: enough to find and check the segment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedHandle {
    /// The segment's file name (in the RAM-backed directory).
    pub name: String,
    /// The element type.
    pub dtype: DType,
    /// The array's dimensions.
    pub shape: Vec<usize>,
    /// Where the array starts, in bytes from the start of the segment's data.
    pub offset: u64,
    /// The process that created the segment.
    pub pid: u32,
    /// The creating process's token (also in the segment's header).
    pub token: u64,
}

/// An n-dimensional array of `T` in shared memory (row-major, contiguous). Cloning it is
/// cheap and shares the memory. See the [module docs](self).
pub struct SharedArray<T: Element> {
    seg: Arc<Segment>,
    shape: Vec<usize>,
    /// Bytes from the start of the segment's data.
    offset: usize,
    _t: PhantomData<T>,
}

impl<T: Element> Clone for SharedArray<T> {
    fn clone(&self) -> Self {
        SharedArray { seg: self.seg.clone(), shape: self.shape.clone(), offset: self.offset, _t: PhantomData }
    }
}

impl<T: Element> SharedArray<T> {
    /// A new shared array of zeros.
    pub fn zeros(shape: &[usize]) -> Result<Self> {
        let numel = Shape::new(shape)?.numel();
        let bytes = numel
            .checked_mul(T::DTYPE.size_bytes())
            .ok_or_else(|| Error::TooLarge(format!("a shared array of shape {shape:?}")))?;
        let seg = Segment::create(Some(T::DTYPE), bytes, true)?;
        Ok(SharedArray { seg, shape: shape.to_vec(), offset: 0, _t: PhantomData })
    }

    /// A new shared array holding a copy of `data` (row-major) with the given shape.
    pub fn from_slice(data: &[T], shape: &[usize]) -> Result<Self> {
        let numel = Shape::new(shape)?.numel();
        if data.len() != numel {
            return Err(Error::LengthMismatch { len: data.len(), shape: shape.to_vec(), expected: numel });
        }
        let mut a = Self::zeros(shape)?;
        // SAFETY: `a` was just made: no other array shares its memory.
        unsafe { a.as_slice_mut() }.copy_from_slice(data);
        Ok(a)
    }

    /// A new shared array holding a copy of an ndarray (any layout; read in logical order).
    pub fn from_ndarray<S, D>(array: &ndarray::ArrayBase<S, D>) -> Result<Self>
    where
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        let mut a = Self::zeros(array.shape())?;
        // SAFETY: `a` was just made: no other array shares its memory.
        let dst = unsafe { a.as_slice_mut() };
        match array.as_slice() {
            Some(data) => dst.copy_from_slice(data),
            None => dst.iter_mut().zip(array.iter()).for_each(|(d, s)| *d = *s),
        }
        Ok(a)
    }

    /// Maps the array a handle names (what deserializing does). Errors: a name that is no
    /// segment of the handle's process, a segment that is gone (its creator dropped it or
    /// died), another process's token, another dtype, a shape and offset that do not fit in
    /// the segment.
    pub fn attach(handle: &SharedHandle) -> Result<Self> {
        if handle.dtype != T::DTYPE {
            return Err(Error::DTypeMismatch {
                context: format!("shared array handle {}", handle.name),
                expected: T::DTYPE,
                found: handle.dtype,
            });
        }
        let seg = Segment::attach(&handle.name, handle.pid, handle.token, T::DTYPE)?;
        let numel = Shape::new(&handle.shape)?.numel();
        let size = T::DTYPE.size_bytes();
        let fits = usize::try_from(handle.offset).ok().and_then(|off| {
            let end = numel.checked_mul(size)?.checked_add(off)?;
            (off % size == 0 && end <= seg.data_bytes).then_some(off)
        });
        let Some(offset) = fits else {
            return Err(Error::SharedMemory {
                segment: handle.name.clone(),
                why: format!(
                    "shape {:?} of {} at byte offset {} does not fit in its {} data bytes",
                    handle.shape,
                    T::DTYPE,
                    handle.offset,
                    seg.data_bytes
                ),
                source: None,
            });
        };
        if T::DTYPE == DType::Bool {
            // A byte other than 0 or 1 is no bool: refuse it rather than read it as one.
            let ptr = seg.data_ptr().wrapping_add(offset) as *const u8;
            // SAFETY: `offset .. offset + numel` bytes lie within the mapping (checked just
            // above), which lives as long as `seg`; every byte pattern is a valid u8.
            let bytes = unsafe { std::slice::from_raw_parts(ptr, numel) };
            if let Some(i) = bytes.iter().position(|&b| b > 1) {
                return Err(Error::SharedMemory {
                    segment: handle.name.clone(),
                    why: format!("element {i} of a bool array holds the byte {}, not 0 or 1", bytes[i]),
                    source: None,
                });
            }
        }
        Ok(SharedArray { seg, shape: handle.shape.clone(), offset, _t: PhantomData })
    }

    /// The small handle this array serializes as (for a receiver on this host; see the
    /// module docs for other hosts).
    pub fn handle(&self) -> SharedHandle {
        SharedHandle {
            name: self.seg.name.clone(),
            dtype: T::DTYPE,
            shape: self.shape.clone(),
            offset: self.offset as u64,
            pid: self.seg.pid,
            token: self.seg.token,
        }
    }

    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The segment's name (its file name).
    pub fn segment_name(&self) -> &str {
        &self.seg.name
    }

    pub(crate) fn segment_path(&self) -> &std::path::Path {
        self.seg.path()
    }

    /// Uploads the array to `device` straight from its mapped memory (no host copy first).
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// use polycompute_pool::SharedArray;
    /// let a = SharedArray::<f32>::zeros(&[2, 3]).unwrap();
    /// let d = a.upload_to(&polycompute_core::Device::cpu()).unwrap();
    /// assert_eq!(d.shape(), &[2, 3]);
    /// ```
    pub fn upload_to(
        &self,
        device: &polycompute_core::Device,
    ) -> polycompute_core::Result<polycompute_core::DeviceArray<T>> {
        device.from_slice(self.as_slice(), self.shape())
    }

    /// Whether this process created the segment (and removes it when done with it).
    pub fn is_creator(&self) -> bool {
        self.seg.owner()
    }

    /// The elements, row-major.
    pub fn as_slice(&self) -> &[T] {
        let ptr = self.seg.data_ptr().wrapping_add(self.offset) as *const T;
        // SAFETY: `ptr` is within the mapping, which lives as long as `self.seg`; offset and
        // length were checked against the segment's size (create, attach, rows), the offset
        // is a multiple of size_of::<T>() and the data start 64-byte aligned; every bit
        // pattern is a valid number, and a bool segment holds only 0 and 1 (zeroed when
        // made, written through `&mut [bool]`, checked byte by byte on attach). Other handles may write the same memory: the
        // writers (`as_slice_mut`, `view_mut`) are unsafe and promise not to overlap a live read.
        unsafe { std::slice::from_raw_parts(ptr, self.len()) }
    }

    /// The elements, row-major, writable. Write only this task's part of a shared output
    /// (see [`SharedArray::rows`]).
    ///
    /// # Safety
    /// Clones and [`SharedArray::rows`] share memory, so the borrow checker cannot see
    /// them: while the returned slice lives, no other array of this process may read or
    /// write any of its elements (give each task its own rows, or hold a [`SharedLock`]).
    /// Writes by other processes are outside Rust's memory model, as for any mapped file;
    /// keeping them to other elements is the caller's business too.
    pub unsafe fn as_slice_mut(&mut self) -> &mut [T] {
        let ptr = self.seg.data_ptr().wrapping_add(self.offset) as *mut T;
        // SAFETY: as in `as_slice`; the mapping is read-write (map_raw of a file opened
        // read-write), and the caller guarantees no other live reference to these elements.
        unsafe { std::slice::from_raw_parts_mut(ptr, self.len()) }
    }

    /// An `ndarray` view.
    pub fn view(&self) -> ArrayViewD<'_, T> {
        ArrayViewD::from_shape(IxDyn(&self.shape), self.as_slice()).unwrap_or_else(|_| unreachable_shape())
    }

    /// A writable `ndarray` view.
    ///
    /// # Safety
    /// As for [`SharedArray::as_slice_mut`]: no other array of this process may touch these
    /// elements while the view lives.
    pub unsafe fn view_mut(&mut self) -> ArrayViewMutD<'_, T> {
        let shape = self.shape.clone();
        // SAFETY: the caller's guarantee is passed on.
        let data = unsafe { self.as_slice_mut() };
        ArrayViewMutD::from_shape(IxDyn(&shape), data).unwrap_or_else(|_| unreachable_shape())
    }

    /// A copy as an owned `ndarray`.
    pub fn to_ndarray(&self) -> ArrayD<T> {
        self.view().to_owned()
    }

    /// Rows `range` (along the first axis) as an array sharing this memory: hand each task
    /// its own rows of an input or output. An error for a 0-dimensional array or a range
    /// past the end.
    pub fn rows(&self, range: Range<usize>) -> Result<Self> {
        let Some(&n) = self.shape.first() else {
            return Err(Error::InvalidShape("rows() of a 0-dimensional shared array".into()));
        };
        if range.start > range.end || range.end > n {
            return Err(Error::OutOfRange { op: "SharedArray::rows", start: range.start, end: range.end, len: n });
        }
        let row: usize = self.shape[1..].iter().product();
        let mut shape = self.shape.clone();
        shape[0] = range.end - range.start;
        let offset = self.offset + range.start * row * T::DTYPE.size_bytes();
        Ok(SharedArray { seg: self.seg.clone(), shape, offset, _t: PhantomData })
    }
}

/// `from_shape` cannot fail: the slice's length is the shape's product.
#[cold]
fn unreachable_shape() -> ! {
    unreachable!("a shared array's slice has its shape's length")
}

impl<T: Element> fmt::Debug for SharedArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedArray")
            .field("segment", &self.seg.name)
            .field("dtype", &T::DTYPE)
            .field("shape", &self.shape)
            .field("offset", &self.offset)
            .finish()
    }
}

impl<T: Element> Serialize for SharedArray<T> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        payload::note_serialized(self);
        self.carried().serialize(s)
    }
}

impl<'de, T: Element> Deserialize<'de> for SharedArray<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let carried = carry::Carried::deserialize(d)?;
        SharedArray::from_carried(carried).map_err(|e| {
            // Some formats (postcard) drop a custom error's text: keep it for the pool's report.
            let msg = e.to_string();
            DECODE_ERROR.with(|c| *c.borrow_mut() = Some(msg.clone()));
            serde::de::Error::custom(msg)
        })
    }
}

thread_local! {
    static DECODE_ERROR: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// The last error of decoding a [`SharedArray`] on this thread, taken (for error reports
/// where the serde format dropped the message).
pub(crate) fn take_decode_error() -> Option<String> {
    DECODE_ERROR.with(|c| c.borrow_mut().take())
}

#[cfg(test)]
mod tests;
