//! A device's primary context and stream, shared by the device and every buffer on it, with
//! the stream-ordered allocation and freeing of device memory (so memory can be freed on the
//! stream whichever thread drops the last handle).

use std::mem::ManuallyDrop;

use cust::context::{Context, CurrentContext};
use cust::stream::Stream;
use polycompute_core::{DeviceId, Result};

use crate::driver::{self, DevPtr, Handle};
use crate::errors::code::SUCCESS;
use crate::errors::{check, check_alloc, from_cust};

/// A device's context and stream, shared by the device and every buffer on it, so memory can
/// be freed (on the stream) whichever thread drops the last handle.
pub(crate) struct Ctx {
    pub(crate) id: DeviceId,
    stream: ManuallyDrop<Stream>,
    context: ManuallyDrop<Context>,
    /// Whether the device supports stream-ordered allocation (cuMemAllocAsync).
    async_alloc: bool,
}

impl Ctx {
    /// The device `id`'s `context` and `stream`; `async_alloc` when the device supports
    /// stream-ordered allocation.
    pub(crate) fn new(id: DeviceId, context: Context, stream: Stream, async_alloc: bool) -> Ctx {
        Ctx { id, stream: ManuallyDrop::new(stream), context: ManuallyDrop::new(context), async_alloc }
    }

    /// Makes the context current on the calling thread.
    pub(crate) fn make_current(&self) -> Result<()> {
        CurrentContext::set_current(&*self.context).map_err(|e| from_cust(e, self.id, "making the context current"))
    }

    /// The raw stream.
    pub(crate) fn stream(&self) -> Handle {
        self.stream.as_inner().cast()
    }

    /// Allocates `bytes` (0 gives the null pointer). The context must be current.
    pub(crate) fn alloc(&self, bytes: usize) -> Result<DevPtr> {
        if bytes == 0 {
            return Ok(0);
        }
        let mut ptr: DevPtr = 0;
        // SAFETY: writes one device pointer; the stream belongs to the current context.
        let rc = unsafe {
            if self.async_alloc {
                driver::cuMemAllocAsync(&mut ptr, bytes, self.stream())
            } else {
                driver::cuMemAlloc_v2(&mut ptr, bytes)
            }
        };
        check_alloc(rc, self.id, bytes)?;
        Ok(ptr)
    }

    /// Frees an allocation after all work queued so far (errors can only be logged here).
    pub(crate) fn free(&self, ptr: DevPtr) {
        if ptr == 0 {
            return;
        }
        if self.make_current().is_err() {
            return;
        }
        // SAFETY: `ptr` came from `alloc` on this context and is freed once; stream-ordered
        // frees run after the kernels queued before them, synchronous ones after a stream sync.
        let rc = unsafe {
            if self.async_alloc {
                driver::cuMemFreeAsync(ptr, self.stream())
            } else {
                let rc = driver::cuStreamSynchronize(self.stream());
                if rc == SUCCESS {
                    driver::cuMemFree_v2(ptr)
                } else {
                    rc
                }
            }
        };
        if rc != SUCCESS {
            tracing::warn!(device = %self.id, code = rc, "freeing device memory failed: {}", driver::error_name(rc));
        }
    }

    /// Waits for the stream.
    pub(crate) fn sync(&self) -> Result<()> {
        // SAFETY: the stream is alive for as long as `self`.
        check(unsafe { driver::cuStreamSynchronize(self.stream()) }, self.id, "synchronizing")
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        let _ = self.make_current();
        // SAFETY: dropped once, stream before the context it belongs to.
        unsafe {
            ManuallyDrop::drop(&mut self.stream);
            ManuallyDrop::drop(&mut self.context);
        }
    }
}
