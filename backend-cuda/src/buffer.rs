//! Device memory: a raw allocation that keeps its context alive and is freed on the device's
//! stream (stream-ordered, so freeing while a queued kernel still reads it is safe).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use polycompute_core::{BackendBuffer, DType, DeviceBuffer, DeviceToken};

use crate::context::Ctx;
use crate::driver::DevPtr;

/// A CUDA buffer of `len` elements of `dtype`.
pub struct CudaBuffer {
    pub(crate) ptr: DevPtr,
    pub(crate) dtype: DType,
    pub(crate) len: usize,
    pub(crate) ctx: Arc<Ctx>,
    /// The device instance that made it.
    pub(crate) owner: DeviceToken,
}

impl CudaBuffer {
    /// Size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.len * self.dtype.size_bytes()
    }
}

impl fmt::Debug for CudaBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CudaBuffer({} x {} on {})", self.len, self.dtype, self.ctx.id)
    }
}

impl DeviceBuffer for CudaBuffer {
    fn dtype(&self) -> DType {
        self.dtype
    }
    fn len(&self) -> usize {
        self.len
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl BackendBuffer for CudaBuffer {
    fn owner(&self) -> DeviceToken {
        self.owner
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        self.ctx.free(self.ptr);
    }
}
