//! Device memory: a raw allocation that keeps its context alive and is freed on the device's
//! stream (stream-ordered, so freeing while a queued kernel still reads it is safe).

use std::fmt;
use std::sync::Arc;

use polycompute_core::{DType, DeviceToken};

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

polycompute_core::backend_buffer!(CudaBuffer);

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        self.ctx.free(self.ptr);
    }
}
