//! Dispatch of the ops of issue 14 (strided map inputs, data movement, scans, sorting)
//! to their modules; kept apart from `device.rs` so its match stays small.

use polycompute_core::{Error, HostSlice, HostVec, Op, Result};

use crate::device::CpuDevice;

/// Runs one of the ops `device.rs` does not match itself.
pub(crate) fn run(device: &CpuDevice, op: &Op, data: &[HostSlice<'_>]) -> Result<HostVec> {
    let _ = device;
    Err(Error::Unsupported {
        op: format!("{} (issue 14: CPU implementation pending)", op.name()),
        dtype: data.first().map_or(polycompute_core::DType::F32, |d| d.dtype()),
        device: None,
    })
}
