//! Data movement: Copy (a buffer copy) and Transpose.

use polycompute_core::{DeviceBuffer, Error, Result, Shape};

use crate::buffer_pool::WgpuBuffer;
use crate::device::WgpuDevice;

/// A copy of `input` in a new buffer.
pub(crate) fn copy(dev: &WgpuDevice, input: &WgpuBuffer) -> Result<WgpuBuffer> {
    let out = dev.alloc(input.dtype(), input.len())?;
    dev.copy(input.raw(), out.raw(), input.bytes())?;
    Ok(out)
}

/// Axis permutation.
pub(crate) fn transpose(dev: &WgpuDevice, shape: &Shape, perm: &[usize], input: &WgpuBuffer) -> Result<WgpuBuffer> {
    let _ = (shape, perm);
    Err(Error::Unsupported { op: "transpose".into(), dtype: input.dtype(), device: dev.id.clone() })
}
