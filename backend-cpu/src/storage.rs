//! [`CpuBuffer`]: host memory holding one array, owned by one open [`crate::CpuDevice`].

use std::any::Any;

use polycompute_core::{BackendBuffer, DType, DeviceBuffer, DeviceToken, HostSlice, HostVec};

use crate::num::Num;

/// A CPU buffer: an owned, typed host vector, and the device instance that made it.
/// Buffers are immutable once made.
#[derive(Debug)]
pub struct CpuBuffer {
    data: HostVec,
    owner: DeviceToken,
}

impl CpuBuffer {
    /// The data as a buffer of the device whose token is `owner`.
    pub(crate) fn new(data: HostVec, owner: DeviceToken) -> CpuBuffer {
        CpuBuffer { data, owner }
    }

    /// The elements, borrowed.
    pub fn as_slice(&self) -> HostSlice<'_> {
        self.data.as_slice()
    }

    /// The host vector holding the elements.
    pub fn data(&self) -> &HostVec {
        &self.data
    }
}

impl DeviceBuffer for CpuBuffer {
    fn dtype(&self) -> DType {
        self.data.dtype()
    }
    fn len(&self) -> usize {
        self.data.len()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl BackendBuffer for CpuBuffer {
    fn owner(&self) -> DeviceToken {
        self.owner
    }
}

/// A kernel's typed result as host data.
pub(crate) fn host_vec<T: Num>(v: Vec<T>) -> HostVec {
    T::into_host_vec(v)
}
