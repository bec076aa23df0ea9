//! [`CpuBuffer`]: host memory holding one array, owned by one open [`crate::CpuDevice`],
//! and [`Output`], a kernel's result before it becomes one.

use std::sync::Arc;

use polycompute_core::{DType, DeviceToken, Element, HostSlice, HostVec, Result};

use crate::memory::{Pool, Pooled};
use crate::num::{with_dtype, Num};

/// A CPU buffer: typed host elements, and the device instance that made it. Buffers are
/// immutable once made. Most live in a block of the device's caching allocator, which
/// takes the block back for reuse when the buffer is dropped.
#[derive(Debug)]
pub struct CpuBuffer {
    data: Data,
    dtype: DType,
    len: usize,
    owner: DeviceToken,
}

#[derive(Debug)]
enum Data {
    /// A block of the device's caching allocator.
    Pooled(Pooled),
    /// A vector of the global allocator (results of the less common kernels).
    Host(HostVec),
}

/// A kernel's result: its elements and their dtype and count.
pub(crate) struct Output {
    data: Data,
    dtype: DType,
    len: usize,
}

impl Output {
    /// `len` elements of `T` in a block from `pool`, written by `write` (which must write
    /// every element: a recycled block holds an earlier buffer's data).
    pub(crate) fn write<T: Num>(pool: &Arc<Pool>, len: usize, write: impl FnOnce(&mut [T])) -> Result<Output> {
        let mut block = pool.alloc::<T>(len)?;
        write(block.typed_mut::<T>(len));
        Ok(Output { data: Data::Pooled(block), dtype: T::DTYPE, len })
    }

    /// Elements already in a host vector.
    pub(crate) fn host(v: HostVec) -> Output {
        Output { dtype: v.dtype(), len: v.len(), data: Data::Host(v) }
    }
}

impl CpuBuffer {
    /// `out` as a buffer of the device whose token is `owner`.
    pub(crate) fn new(out: Output, owner: DeviceToken) -> CpuBuffer {
        CpuBuffer { data: out.data, dtype: out.dtype, len: out.len, owner }
    }

    /// The elements, borrowed.
    pub fn as_slice(&self) -> HostSlice<'_> {
        match &self.data {
            Data::Host(v) => v.as_slice(),
            Data::Pooled(p) => {
                with_dtype!(self.dtype, T => T::host_slice(p.typed::<T>(self.len)))
            }
        }
    }

    /// The elements, copied into a host vector.
    pub fn to_host_vec(&self) -> HostVec {
        self.as_slice().to_host_vec()
    }
}

polycompute_core::backend_buffer!(CpuBuffer);

/// An input's elements as `T` (the typed layer checked the dtypes).
pub(crate) fn typed<'a, T: Num>(data: HostSlice<'a>) -> &'a [T] {
    T::of_slice(data).unwrap_or(&[])
}

/// A kernel's typed result in a host vector.
pub(crate) fn host_vec<T: Num>(v: Vec<T>) -> HostVec {
    T::into_host_vec(v)
}
