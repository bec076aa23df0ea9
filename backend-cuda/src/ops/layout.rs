//! Data movement: copy, and transpose as [`codegen::layout`] plans it (a copy, the tiled
//! batched 2-D kernel, or the general gather).

use polycompute_core::{Result, Shape};

use crate::buffer::CudaBuffer;
use crate::codegen::layout;
use crate::device::{CudaDevice, Params};
use crate::launch;

/// A device-to-device copy of `src` into a new buffer.
pub(super) fn copy(dev: &CudaDevice, src: &CudaBuffer) -> Result<CudaBuffer> {
    let out = dev.new_buffer(src.dtype, src.len)?;
    dev.copy(out.ptr, src.ptr, src.bytes())?;
    Ok(out)
}

/// `src` (of `shape`) with its axes permuted by `perm`.
pub(super) fn transpose(dev: &CudaDevice, src: &CudaBuffer, shape: &Shape, perm: &[usize]) -> Result<CudaBuffer> {
    let out = dev.new_buffer(src.dtype, src.len)?;
    if src.len == 0 {
        return Ok(out);
    }
    match layout::plan_transpose(shape, perm, src.dtype) {
        layout::TransposePlan::Copy => dev.copy(out.ptr, src.ptr, src.bytes())?,
        layout::TransposePlan::Tiled { kernel, batch, rows, cols } => {
            let tiles = (batch as u64) * (rows as u64).div_ceil(32) * (cols as u64).div_ceil(32);
            let config = launch::transpose_tiled(tiles, dev.sms, &dev.limits)?;
            let mut p = Params::default();
            p.ptr(out.ptr).ptr(src.ptr).len(batch).len(rows).len(cols);
            dev.launch(&kernel, &config, &mut p)?;
        }
        layout::TransposePlan::Gather { kernel, geometry } => {
            let mut p = Params::default();
            p.ptr(out.ptr).ptr(src.ptr).len(src.len).u32s(&geometry);
            dev.launch(&kernel, &dev.strided("transpose", src.len, 256)?, &mut p)?;
        }
    }
    Ok(out)
}
