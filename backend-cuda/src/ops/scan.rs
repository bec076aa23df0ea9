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
    let grid = (dev.grid_1d(work as u64, BLOCK), 1, 1);
    let totals = dev.new_buffer(scan::acc_dtype(src.dtype), if plan.chunks > 1 { work } else { 1 })?;
    if plan.chunks > 1 {
        let mut p = Params::default();
        p.ptr(src.ptr).ptr(totals.ptr).u32(work as u32).u32(n as u32).u32(inner as u32);
        p.u32(plan.chunk as u32).u32(plan.chunks as u32);
        dev.launch(&scan::kernel(kind, src.dtype, ScanPass::Totals), grid, (BLOCK, 1, 1), &mut p)?;
        let lanes = outer * inner;
        let mut p = Params::default();
        p.ptr(totals.ptr).u32(lanes as u32).u32(inner as u32).u32(plan.chunks as u32);
        let lane_grid = (dev.grid_1d(lanes as u64, BLOCK), 1, 1);
        dev.launch(&scan::kernel(kind, src.dtype, ScanPass::Carries), lane_grid, (BLOCK, 1, 1), &mut p)?;
    }
    let mut p = Params::default();
    p.ptr(src.ptr).ptr(out.ptr).ptr(totals.ptr).u32(work as u32).u32(n as u32).u32(inner as u32);
    p.u32(plan.chunk as u32).u32(plan.chunks as u32);
    dev.launch(&scan::kernel(kind, src.dtype, ScanPass::Apply), grid, (BLOCK, 1, 1), &mut p)?;
    Ok(out)
}
