//! Reductions as [`codegen::reduce`] plans them: one pass along rows or columns, or, when
//! there are too few outputs to fill the device, a segmented pass into scratch partials and a
//! second row pass that combines them.

use polycompute_core::{DType, ReduceKind, Result, Shape};

use crate::buffer::CudaBuffer;
use crate::codegen;
use crate::codegen::reduce::{self, Input, Output, ReducePlan};
use crate::device::{CudaDevice, Params};
use crate::launch;

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
    let mut p = Params::default();
    match plan {
        ReducePlan::Rows { rows, r, segs, seg_len } => {
            let k = codegen::reduce_kernel(kind, dtype, false, Input::Elements, output);
            p.ptr(target).ptr(src.ptr).len(rows).len(r).len(segs).len(seg_len).len(count);
            let config =
                launch::reduce_rows(kind.name(), (rows as u64) * segs as u64, reduce::row_block(seg_len), &dev.limits)?;
            dev.launch(&k, &config, &mut p)?;
        }
        ReducePlan::Cols { outer, r, inner, segs, seg_len } => {
            let k = codegen::reduce_kernel(kind, dtype, true, Input::Elements, output);
            p.ptr(target).ptr(src.ptr).len(outer).len(r).len(inner).len(segs).len(seg_len).len(count);
            let config = launch::reduce_cols(kind.name(), (outputs as u64) * segs as u64, &dev.limits)?;
            dev.launch(&k, &config, &mut p)?;
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
    p.ptr(out.ptr).ptr(partial).len(outputs).len(segs).u32(1).len(segs).len(count);
    let config = launch::reduce_rows(kind.name(), outputs as u64, reduce::row_block(segs), &dev.limits)?;
    dev.launch(&k, &config, &mut p)
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
