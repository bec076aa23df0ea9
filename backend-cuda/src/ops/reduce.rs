//! Reductions as [`codegen::reduce`] plans them: one pass along rows or columns, or, when
//! there are too few outputs to fill the device, a segmented pass into scratch partials and a
//! second row pass that combines them.

use polycompute_core::{DType, ReduceKind, Result, Shape};

use crate::buffer::CudaBuffer;
use crate::codegen;
use crate::codegen::reduce::{self, Input, Output, ReducePlan};
use crate::device::{CudaDevice, Params};

/// Reduces `src` (of `shape`) with `kind` along `axis` (`None`: every element).
pub(super) fn run(
    dev: &CudaDevice,
    src: &CudaBuffer,
    kind: ReduceKind,
    axis: Option<usize>,
    shape: &Shape,
) -> Result<CudaBuffer> {
    let dtype = src.dtype;
    let out_dtype = kind.output_dtype(dtype);
    let plan = reduce::plan(shape.dims(), axis, dev.sms as usize);
    let (outputs, count, segs) = match plan {
        ReducePlan::Rows { rows, r, segs, .. } => (rows, r, segs),
        ReducePlan::Cols { outer, r, inner, segs, .. } => (outer * inner, r, segs),
    };
    let out = dev.new_buffer(out_dtype, outputs)?;
    if outputs == 0 {
        return Ok(out);
    }
    // One pass straight into the output; or, with segments, a pass into scratch partials
    // (`[outputs, segs]`) that a second row pass combines.
    let scratch = match segs {
        1 => None,
        _ => Some(TempBuffer { dev, ptr: dev.ctx.alloc(outputs * segs * reduce::acc_bytes(kind, dtype))? }),
    };
    let (target, output) = match &scratch {
        None => (out.ptr, Output::Final),
        Some(t) => (t.ptr, Output::Partials),
    };
    let grid_cap = |n: u64| n.clamp(1, 1 << 20) as u32;
    let mut p = Params::default();
    match plan {
        ReducePlan::Rows { rows, r, segs, seg_len } => {
            let k = codegen::reduce_kernel(kind, dtype, false, Input::Elements, output);
            p.ptr(target).ptr(src.ptr).u32(rows as u32).u32(r as u32).u32(segs as u32).u32(seg_len as u32);
            p.u32(count as u32);
            let block = reduce::row_block(seg_len);
            dev.launch(&k, (grid_cap((rows * segs) as u64), 1, 1), (block, 1, 1), &mut p)?;
        }
        ReducePlan::Cols { outer, r, inner, segs, seg_len } => {
            let k = codegen::reduce_kernel(kind, dtype, true, Input::Elements, output);
            p.ptr(target).ptr(src.ptr).u32(outer as u32).u32(r as u32).u32(inner as u32).u32(segs as u32);
            p.u32(seg_len as u32).u32(count as u32);
            let grid = grid_cap(((outputs * segs) as u64).div_ceil(256));
            dev.launch(&k, (grid, 1, 1), (256, 1, 1), &mut p)?;
        }
    }
    if let Some(partials) = &scratch {
        second_pass(dev, kind, dtype, &out, partials.ptr, outputs, segs, count)?;
    }
    Ok(out)
}

/// Combines `segs` partials per output (laid out `[outputs, segs]`) into the final values.
#[allow(clippy::too_many_arguments)]
fn second_pass(
    dev: &CudaDevice,
    kind: ReduceKind,
    dtype: DType,
    out: &CudaBuffer,
    partial: u64,
    outputs: usize,
    segs: usize,
    count: usize,
) -> Result<()> {
    let k = codegen::reduce_kernel(kind, dtype, false, Input::Partials, Output::Final);
    let mut p = Params::default();
    p.ptr(out.ptr).ptr(partial).u32(outputs as u32).u32(segs as u32).u32(1).u32(segs as u32).u32(count as u32);
    dev.launch(&k, ((outputs as u64).clamp(1, 1 << 20) as u32, 1, 1), (reduce::row_block(segs), 1, 1), &mut p)
}

/// A scratch allocation freed (stream-ordered) when it goes out of scope.
struct TempBuffer<'a> {
    dev: &'a CudaDevice,
    ptr: u64,
}

impl Drop for TempBuffer<'_> {
    fn drop(&mut self) {
        self.dev.ctx.free(self.ptr);
    }
}
