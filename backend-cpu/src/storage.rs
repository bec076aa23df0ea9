//! [`CpuBuffer`]: host memory holding one array, and typed access to it.

use std::any::Any;
use std::sync::Arc;

use polycompute_core::backend::downcast_buffer;
use polycompute_core::{BufferRef, DType, DeviceBuffer, DeviceInfo, HostSlice, HostVec, Result};

use crate::num::Num;

/// A CPU buffer: an owned, typed host vector. Buffers are immutable once made.
#[derive(Debug)]
pub struct CpuBuffer(pub HostVec);

impl CpuBuffer {
    /// Wraps a typed vector as a shared buffer.
    pub(crate) fn shared<T: Num>(v: Vec<T>) -> BufferRef {
        Arc::new(CpuBuffer(T::into_host_vec(v)))
    }

    /// The elements, borrowed.
    pub fn as_slice(&self) -> HostSlice<'_> {
        self.0.as_slice()
    }
}

impl DeviceBuffer for CpuBuffer {
    fn dtype(&self) -> DType {
        self.0.dtype()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The host data of a buffer, or an error when it belongs to another device.
pub(crate) fn host<'a>(buffer: &'a BufferRef, info: &DeviceInfo) -> Result<HostSlice<'a>> {
    Ok(downcast_buffer::<CpuBuffer>(buffer, info)?.as_slice())
}
