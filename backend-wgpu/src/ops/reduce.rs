//! Reductions.

use polycompute_core::{DeviceBuffer, Error, ReduceKind, Result, Shape};

use crate::buffer_pool::WgpuBuffer;
use crate::device::WgpuDevice;

/// Reduces `input` (of `shape`) over all elements or one axis.
pub(crate) fn run(
    dev: &WgpuDevice,
    kind: ReduceKind,
    axis: Option<usize>,
    shape: &Shape,
    input: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    let _ = (axis, shape);
    Err(Error::Unsupported { op: kind.name().into(), dtype: input.dtype(), device: dev.id.clone() })
}
