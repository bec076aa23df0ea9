//! Map and cast: one launch of the fused elementwise kernel that [`map::plan`] plans (a cast
//! is the map of core's [`Program::cast`]).

use std::sync::Arc;

use polycompute_core::{DType, Layout, Program, Result, Shape};

use super::layout::copy;
use crate::buffer::CudaBuffer;
use crate::codegen::map;
use crate::device::{CudaDevice, Params};

/// Runs `program` over `inputs` (of `input_shapes`) broadcast to `shape`.
pub(super) fn run(
    dev: &CudaDevice,
    program: &Arc<Program>,
    input_shapes: &[Shape],
    shape: &Shape,
    inputs: &[&CudaBuffer],
) -> Result<CudaBuffer> {
    launch(dev, &map::plan(program, input_shapes, shape), program.output_dtype(), shape.numel(), inputs)
}

/// Runs `program` over `inputs` read through `layouts` (views) and broadcast to `shape`.
pub(super) fn run_views(
    dev: &CudaDevice,
    program: &Arc<Program>,
    layouts: &[Layout],
    shape: &Shape,
    inputs: &[&CudaBuffer],
) -> Result<CudaBuffer> {
    launch(dev, &map::plan_views(program, layouts, shape), program.output_dtype(), shape.numel(), inputs)
}

/// Converts `src` to `to` (a device copy when the dtype does not change).
pub(super) fn cast(dev: &CudaDevice, src: &CudaBuffer, to: DType) -> Result<CudaBuffer> {
    if src.dtype == to {
        return copy(dev, src);
    }
    let shape = Shape::new(&[src.len])?;
    let program = Arc::new(Program::cast(src.dtype, to));
    launch(dev, &map::plan(&program, std::slice::from_ref(&shape), &shape), to, src.len, &[src])
}

fn launch(
    dev: &CudaDevice,
    plan: &map::MapPlan,
    out_dtype: DType,
    n: usize,
    inputs: &[&CudaBuffer],
) -> Result<CudaBuffer> {
    let out = dev.new_buffer(out_dtype, n)?;
    if n == 0 {
        return Ok(out);
    }
    let mut p = Params::default();
    p.ptr(out.ptr);
    for b in inputs {
        p.ptr(b.ptr);
    }
    p.len(n);
    if !plan.geometry.is_empty() {
        p.u32s(&plan.geometry);
    }
    dev.launch(&plan.kernel, &dev.strided("map", n, 256)?, &mut p)?;
    Ok(out)
}
