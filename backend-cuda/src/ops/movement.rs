//! Concat, pad, take, take_along_axis and scatter_add, as [`codegen::movement`] plans them:
//! each op is seen as `[outer, axis, inner]` around its axis.

use polycompute_core::{Error, Result, Scalar, Shape};

use super::layout::copy;
use crate::buffer::CudaBuffer;
use crate::codegen::movement::{self, split_axis};
use crate::device::{CudaDevice, Params};

const BLOCK: u32 = 256;

/// The inputs (of `shapes`) joined along `axis`: one copy launch per non-empty input.
pub(super) fn concat(dev: &CudaDevice, axis: usize, shapes: &[Shape], inputs: &[&CudaBuffer]) -> Result<CudaBuffer> {
    let (Some(first), Some(dtype)) = (shapes.first(), inputs.first().map(|b| b.dtype)) else {
        return Err(Error::InvalidShape("concat needs at least one input".into()));
    };
    let total_axis: usize = shapes.iter().map(|s| s.dims().get(axis).copied().unwrap_or(0)).sum();
    let (outer, _, inner) = split_axis(first, axis);
    let out = dev.new_buffer(dtype, outer * total_axis * inner)?;
    let kernel = movement::concat_kernel(dtype.size_bytes());
    let mut col0 = 0usize;
    for (shape, input) in shapes.iter().zip(inputs) {
        let row = shape.dims().get(axis).copied().unwrap_or(0) * inner;
        let n = outer * row;
        if n > 0 {
            let mut p = Params::default();
            p.ptr(out.ptr).ptr(input.ptr).len(n).len(row).len(total_axis * inner).len(col0);
            dev.launch(&kernel, &dev.strided("concat", n, BLOCK)?, &mut p)?;
        }
        col0 += row;
    }
    Ok(out)
}

/// `src` (of `shape`) with `widths` elements of `value` around each axis.
pub(super) fn pad(
    dev: &CudaDevice,
    src: &CudaBuffer,
    shape: &Shape,
    widths: &[(usize, usize)],
    value: Scalar,
) -> Result<CudaBuffer> {
    let geometry = movement::pad_geometry(shape, widths);
    let ndim = geometry.len() / 3;
    let n: usize = geometry[..ndim].iter().map(|&d| d as usize).product();
    let out = dev.new_buffer(src.dtype, n)?;
    if n == 0 {
        return Ok(out);
    }
    let kernel = movement::pad_kernel(src.dtype.size_bytes(), ndim);
    let mut p = Params::default();
    p.ptr(out.ptr).ptr(src.ptr).len(n).u32s(&geometry).bytes(&movement::value_bytes(value));
    dev.launch(&kernel, &dev.strided("pad", n, BLOCK)?, &mut p)?;
    Ok(out)
}

/// `take` (`along == false`) or `take_along_axis` of `a` (of `shape`) with `idx` (of
/// `indices`) along `axis`.
pub(super) fn take(
    dev: &CudaDevice,
    a: &CudaBuffer,
    idx: &CudaBuffer,
    axis: usize,
    shape: &Shape,
    indices: &Shape,
    along: bool,
) -> Result<CudaBuffer> {
    let (outer, n, inner) = split_axis(shape, axis);
    let m = if along { indices.dims()[axis] } else { indices.numel() };
    let total = outer * m * inner;
    let out = dev.new_buffer(a.dtype, total)?;
    if total == 0 {
        return Ok(out);
    }
    let kernel = movement::take_kernel(a.dtype.size_bytes(), idx.dtype, along);
    let mut p = Params::default();
    p.ptr(out.ptr).ptr(a.ptr).ptr(idx.ptr).len(total).len(n).len(m).len(inner);
    let op = if along { "take_along_axis" } else { "take" };
    dev.launch(&kernel, &dev.strided(op, total, BLOCK)?, &mut p)?;
    Ok(out)
}

/// A copy of `a` (of `shape`) with `values` added at `idx` (of `indices`) along `axis`.
pub(super) fn scatter_add(
    dev: &CudaDevice,
    inputs: [&CudaBuffer; 3],
    axis: usize,
    shape: &Shape,
    indices: &Shape,
) -> Result<CudaBuffer> {
    let [a, idx, values] = inputs;
    let out = copy(dev, a)?;
    let (outer, n, inner) = split_axis(shape, axis);
    let m = indices.numel();
    let total = outer * m * inner;
    if total == 0 {
        return Ok(out);
    }
    let kernel = movement::scatter_add_kernel(a.dtype, idx.dtype);
    let mut p = Params::default();
    p.ptr(out.ptr).ptr(idx.ptr).ptr(values.ptr).len(total).len(n).len(m).len(inner);
    dev.launch(&kernel, &dev.strided("scatter_add", total, BLOCK)?, &mut p)?;
    Ok(out)
}
