//! Data movement: Copy (a buffer-to-buffer copy) and Transpose (tiled, or a strided map when
//! the contiguous axis stays last).

use std::sync::Arc;

use polycompute_core::expr::Program;
use polycompute_core::plan::simplify_permutation;
use polycompute_core::{DType, DeviceBuffer, Error, Layout, Result, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::layout::{transpose as tiled, TILE};
use crate::device::{Launch, WgpuDevice};
use crate::pipeline_cache::KernelKey;

/// A copy of `input` in a new buffer.
pub(crate) fn copy(dev: &WgpuDevice, input: &WgpuBuffer) -> Result<WgpuBuffer> {
    let out = dev.alloc(input.dtype(), input.len())?;
    dev.copy(input.raw(), out.raw(), input.bytes())?;
    Ok(out)
}

/// Axis permutation: output axis `i` is input axis `perm[i]`.
pub(crate) fn transpose(dev: &WgpuDevice, shape: &Shape, perm: &[usize], input: &WgpuBuffer) -> Result<WgpuBuffer> {
    let dtype = input.dtype();
    let n = shape.numel();
    let plan = simplify_permutation(shape.dims(), perm);
    let (d, perm) = (plan.dims.len(), &plan.perm);
    if d <= 1 || plan.is_identity() {
        return copy(dev, input);
    }
    if dtype == DType::F64 && !dev.has_f64() {
        // Moves bits only: a map over the permuted view's u32 words needs no SHADER_F64.
        let view = Layout::contiguous(Shape::new(&plan.dims)?).permute(perm)?;
        return super::map::copy_f64_as_words(dev, &view, &view.shape.clone(), input);
    }
    let out_dims = plan.out_dims();
    let in_strides = plan.in_strides();
    if perm[d - 1] == d - 1 {
        // The contiguous axis stays last: rows move whole, a strided copy is coalesced.
        return super::map::gather(dev, &Arc::new(Program::identity(dtype)), &out_dims, &in_strides, input);
    }
    let out_strides = Shape::new(&out_dims)?.strides();
    let out = dev.alloc(dtype, n)?;
    let gather: Vec<u32> = in_strides.iter().map(|&s| s as u32).collect();
    let q = perm.iter().position(|&p| p == d - 1).unwrap_or(0);
    let tile = TILE as usize;
    let tiles_l = out_dims[d - 1].div_ceil(tile);
    let tiles_q = out_dims[q].div_ceil(tile);
    let batch: usize = (0..d).filter(|&i| i != q && i != d - 1).map(|i| out_dims[i]).product();
    let total = (tiles_l * tiles_q) as u64 * batch as u64;
    let total32 =
        u32::try_from(total).map_err(|_| Error::TooLarge(format!("transpose of {shape} needs {total} workgroups")))?;
    let mut params = vec![total32, tiles_l as u32, tiles_q as u32];
    params.extend(out_dims.iter().map(|&x| x as u32));
    params.extend(&gather);
    params.extend(out_strides.iter().map(|&x| x as u32));
    let kernel = dev.kernel(KernelKey::Transpose { dtype, ndim: d, q }, || Ok(tiled(dtype, d, q)))?;
    let launch = Launch { kernel, buffers: vec![input.raw().clone(), out.raw().clone()], params, groups: total };
    dev.launch(vec![launch])?;
    Ok(out)
}
