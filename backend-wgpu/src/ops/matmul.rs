//! Matrix products.

use polycompute_core::{DeviceBuffer, Error, Result, Shape};

use crate::buffer_pool::WgpuBuffer;
use crate::device::WgpuDevice;

/// `lhs @ rhs`, 2-D or batched 3-D.
pub(crate) fn run(dev: &WgpuDevice, lhs: &Shape, rhs: &Shape, a: &WgpuBuffer, b: &WgpuBuffer) -> Result<WgpuBuffer> {
    let _ = (lhs, rhs, b);
    Err(Error::Unsupported { op: "matmul".into(), dtype: a.dtype(), device: dev.id.clone() })
}
