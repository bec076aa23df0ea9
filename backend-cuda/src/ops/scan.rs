//! cumsum and cumprod along an axis, in the passes [`codegen::scan`] plans.

use polycompute_core::{Result, ScanKind, Shape};

use crate::buffer::CudaBuffer;
use crate::codegen::movement::split_axis;
use crate::codegen::scan::{self, ScanPass, ScanPlan};
use crate::device::{CudaDevice, Params};

const BLOCK: u32 = 256;

/// The inclusive scan `kind` of `src` (of `shape`) along `axis`.
pub(super) fn run(
    dev: &CudaDevice,
    src: &CudaBuffer,
    kind: ScanKind,
    axis: usize,
    shape: &Shape,
) -> Result<CudaBuffer> {
    let out = dev.new_buffer(src.dtype, src.len)?;
    let (outer, n, inner) = split_axis(shape, axis);
    if src.len == 0 {
        return Ok(out);
    }
    let plan = ScanPlan::new(outer, n, inner);
    let work = outer * plan.chunks * inner;
    let name = match kind {
        ScanKind::Sum => "cumsum",
        ScanKind::Prod => "cumprod",
    };
    let grid = dev.strided(name, work, BLOCK)?;
    let totals = dev.new_buffer(scan::acc_dtype(src.dtype), if plan.chunks > 1 { work } else { 1 })?;
    if plan.chunks > 1 {
        let mut p = Params::default();
        p.ptr(src.ptr).ptr(totals.ptr).len(work).len(n).len(inner).len(plan.chunk).len(plan.chunks);
        dev.launch(&scan::kernel(kind, src.dtype, ScanPass::Totals), &grid, &mut p)?;
        let lanes = outer * inner;
        let mut p = Params::default();
        p.ptr(totals.ptr).len(lanes).len(inner).len(plan.chunks);
        let lane_grid = dev.strided(name, lanes, BLOCK)?;
        dev.launch(&scan::kernel(kind, src.dtype, ScanPass::Carries), &lane_grid, &mut p)?;
    }
    let mut p = Params::default();
    p.ptr(src.ptr).ptr(out.ptr).ptr(totals.ptr).len(work).len(n).len(inner).len(plan.chunk).len(plan.chunks);
    dev.launch(&scan::kernel(kind, src.dtype, ScanPass::Apply), &grid, &mut p)?;
    Ok(out)
}
