//! How a [`SharedArray`] is written into an encoding: as its handle (the default: a process
//! worker on this host maps the same memory) or as its data — dtype, shape and the elements'
//! bytes — for a receiver that may be on another host (an MPI worker rank), which rebuilds a
//! shared array of its own from them. The encoding is tagged, so a decoder takes either form
//! whatever mode its own side is in.
//!
//! The mode is per thread: [`as_data`] runs an encoding in data mode (the MPI kind wraps rank
//! 0's input encoding and a worker rank's jobs in it).

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{SharedArray, SharedHandle};
use polycompute_core::dtype::{DType, Element};
use polycompute_core::error::{Error, Result};

thread_local! {
    static AS_DATA: Cell<bool> = const { Cell::new(false) };
}

/// Runs `encode` with every [`SharedArray`] it serializes on this thread written as its
/// data, not its handle (for a receiver on another host). Nests; the previous mode comes
/// back when `encode` returns or unwinds.
pub(crate) fn as_data<R>(encode: impl FnOnce() -> R) -> R {
    in_mode(true, encode)
}

/// Runs `encode` with every [`SharedArray`] it serializes on this thread written as its
/// handle (for a receiver on this host, also inside [`as_data`]). Nests like it.
pub(crate) fn as_handles<R>(encode: impl FnOnce() -> R) -> R {
    in_mode(false, encode)
}

/// Runs `encode` with this thread's mode set to `data`; the previous mode comes back when it
/// returns or unwinds.
fn in_mode<R>(data: bool, encode: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            AS_DATA.with(|m| m.set(self.0));
        }
    }
    let _restore = Restore(AS_DATA.with(|m| m.replace(data)));
    encode()
}

/// Whether this thread encodes shared arrays as their data.
pub(super) fn in_data_mode() -> bool {
    AS_DATA.with(Cell::get)
}

/// A shared array's encoding, in either form (the variant's index is the tag).
#[derive(Serialize, Deserialize)]
pub(super) enum Carried<'a> {
    /// Where the memory is: for a receiver on this host.
    Handle(SharedHandle),
    /// The data itself: for a receiver anywhere.
    Data {
        /// The element type.
        dtype: DType,
        /// The dimensions.
        shape: Vec<usize>,
        /// The elements, row-major, in the host's byte order (little-endian on every
        /// target polycompute builds for).
        #[serde(borrow)]
        bytes: ElementBytes<'a>,
    },
}

/// The elements' bytes, written as one byte string (a memory copy in postcard).
pub(super) struct ElementBytes<'a>(pub(super) Cow<'a, [u8]>);

impl Serialize for ElementBytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for ElementBytes<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Bytes;
        impl<'de> Visitor<'de> for Bytes {
            type Value = Cow<'de, [u8]>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the bytes of a shared array's elements")
            }
            fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> std::result::Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_vec()))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> std::result::Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
            // Self-describing formats (JSON) write bytes as a sequence of numbers.
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(b) = seq.next_element::<u8>()? {
                    v.push(b);
                }
                Ok(Cow::Owned(v))
            }
        }
        d.deserialize_bytes(Bytes).map(ElementBytes)
    }
}

impl<T: Element> SharedArray<T> {
    /// The elements' bytes (row-major, the host's byte order).
    fn element_bytes(&self) -> &[u8] {
        let data = self.as_slice();
        // SAFETY: `data` is a live, initialized slice of plain numbers (no padding, every
        // byte initialized), so its memory read as `size_of_val(data)` bytes is valid for as
        // long as `data` is borrowed.
        unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
    }

    /// This array's encoding in the current mode.
    pub(super) fn carried(&self) -> Carried<'_> {
        if in_data_mode() {
            Carried::Data {
                dtype: T::DTYPE,
                shape: self.shape.clone(),
                bytes: ElementBytes(Cow::Borrowed(self.element_bytes())),
            }
        } else {
            Carried::Handle(self.handle())
        }
    }

    /// The array an encoding stands for: the handle's memory mapped, or a new shared array
    /// of this process holding the data.
    pub(super) fn from_carried(carried: Carried<'_>) -> Result<Self> {
        let (dtype, shape, bytes) = match carried {
            Carried::Handle(handle) => return SharedArray::attach(&handle),
            Carried::Data { dtype, shape, bytes } => (dtype, shape, bytes.0),
        };
        if dtype != T::DTYPE {
            return Err(Error::DTypeMismatch {
                context: "a shared array sent as data".into(),
                expected: T::DTYPE,
                found: dtype,
            });
        }
        // Checked before anything is made: a hostile shape must not size a segment.
        let want = polycompute_core::shape::Shape::new(&shape)?.numel().checked_mul(T::DTYPE.size_bytes());
        if want != Some(bytes.len()) {
            return Err(Error::SharedMemory {
                segment: "(sent as data)".into(),
                why: format!("a shared array of shape {shape:?} ({dtype}) came with {} bytes", bytes.len()),
                source: None,
            });
        }
        if let Some(b) = bytes.iter().find(|&&b| b > 1).filter(|_| T::DTYPE == DType::Bool) {
            // Every byte of a bool array is 0 or 1: anything else is refused, never a `bool`.
            return Err(Error::SharedMemory {
                segment: "(sent as data)".into(),
                why: format!("a bool array sent as data holds the byte {b}, not 0 or 1"),
                source: None,
            });
        }
        let want = bytes.len();
        let mut array = SharedArray::<T>::zeros(&shape)?;
        // SAFETY: `array` was just made: no other array shares its memory.
        let dst = unsafe { array.as_slice_mut() };
        // SAFETY: `dst` is exactly `want` bytes of plain numbers (every bit pattern valid; a
        // bool's bytes were checked to be 0 or 1 above), exclusively borrowed; `bytes` is another allocation (or the encoding) of as many.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.as_mut_ptr().cast::<u8>(), want) };
        Ok(array)
    }
}
