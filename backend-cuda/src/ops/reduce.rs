//! Reductions as [`codegen::reduce`] plans them: one pass along rows or columns, or, when
//! there are too few outputs to fill the device, a segmented pass into scratch partials and a
//! second row pass that combines them.

use polycompute_core::{DType, ReduceKind, Result, Shape};

use crate::buffer::CudaBuffer;
use crate::codegen::{self, reduce};
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
    let (outputs, count) = match plan {
        reduce::ReducePlan::Rows { rows, r, .. } => (rows, r),
        reduce::ReducePlan::Cols { outer, r, inner, .. } => (outer * inner, r),
    };
    let out = dev.new_buffer(out_dtype, outputs)?;
    if outputs == 0 {
        return Ok(out);
    }
    let acc = reduce::acc_bytes(kind, dtype);
    let grid_cap = |n: u64| n.clamp(1, 1 << 20) as u32;
    match plan {
        reduce::ReducePlan::Rows { rows, r, segs, seg_len } => {
            let block = reduce::row_block(seg_len);
            if segs == 1 {
                let k = codegen::reduce_kernel(kind, dtype, false, reduce::Input::Elements, reduce::Output::Final);
                let mut p = Params::default();
                p.ptr(out.ptr).ptr(src.ptr).u32(rows as u32).u32(r as u32).u32(1).u32(seg_len as u32).u32(count as u32);
                dev.launch(&k, (grid_cap(rows as u64), 1, 1), (block, 1, 1), &mut p)?;
            } else {
                let partial = dev.ctx.alloc(rows * segs * acc)?;
                let guard = TempBuffer { dev, ptr: partial };
                let k = codegen::reduce_kernel(kind, dtype, false, reduce::Input::Elements, reduce::Output::Partials);
                let mut p = Params::default();
                p.ptr(guard.ptr).ptr(src.ptr).u32(rows as u32).u32(r as u32).u32(segs as u32).u32(seg_len as u32);
                p.u32(count as u32);
                dev.launch(&k, (grid_cap((rows * segs) as u64), 1, 1), (block, 1, 1), &mut p)?;
                second_pass(dev, kind, dtype, &out, guard.ptr, rows, segs, count)?;
            }
        }
        reduce::ReducePlan::Cols { outer, r, inner, segs, seg_len } => {
            let threads = (outputs * segs) as u64;
            let grid = grid_cap(threads.div_ceil(256));
            if segs == 1 {
                let k = codegen::reduce_kernel(kind, dtype, true, reduce::Input::Elements, reduce::Output::Final);
                let mut p = Params::default();
                p.ptr(out.ptr).ptr(src.ptr).u32(outer as u32).u32(r as u32).u32(inner as u32).u32(1);
                p.u32(seg_len as u32).u32(count as u32);
                dev.launch(&k, (grid, 1, 1), (256, 1, 1), &mut p)?;
            } else {
                let partial = dev.ctx.alloc(outputs * segs * acc)?;
                let guard = TempBuffer { dev, ptr: partial };
                let k = codegen::reduce_kernel(kind, dtype, true, reduce::Input::Elements, reduce::Output::Partials);
                let mut p = Params::default();
                p.ptr(guard.ptr).ptr(src.ptr).u32(outer as u32).u32(r as u32).u32(inner as u32).u32(segs as u32);
                p.u32(seg_len as u32).u32(count as u32);
                dev.launch(&k, (grid, 1, 1), (256, 1, 1), &mut p)?;
                second_pass(dev, kind, dtype, &out, guard.ptr, outputs, segs, count)?;
            }
        }
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
    let k = codegen::reduce_kernel(kind, dtype, false, reduce::Input::Partials, reduce::Output::Final);
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
