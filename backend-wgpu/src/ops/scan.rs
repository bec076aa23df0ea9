//! cumsum and cumprod along an axis: a thread per short row, else a workgroup per row
//! segment, the segments' totals scanned by the same recursion in between.

use polycompute_core::{DeviceBuffer, Result, Shape};

use super::groups;
use super::movement::{split, word};
use crate::buffer::WgpuBuffer;
use crate::codegen::scan as gen;
use crate::codegen::WG;
use crate::device::{Launch, WgpuDevice};
use crate::pipeline_cache::KernelKey;

/// Elements along the axis one workgroup scans; longer rows go in segments of this many.
const SCAN_SEGMENT: usize = 4096;

/// The launches of an inclusive scan of `rows` rows of `n` (stride `inner`) from `src` to
/// `dst`: one workgroup per row, or per segment with the segments' totals scanned by the
/// same recursion in between. `scratch` keeps the totals' buffers alive until the launch.
#[allow(clippy::too_many_arguments)]
fn segment_scan(
    dev: &WgpuDevice,
    kernel: &std::sync::Arc<crate::pipeline_cache::Kernel>,
    dtype: polycompute_core::DType,
    src: &WgpuBuffer,
    dst: &WgpuBuffer,
    rows: usize,
    n: usize,
    inner: usize,
    launches: &mut Vec<Launch>,
    scratch: &mut Vec<WgpuBuffer>,
) -> Result<()> {
    let segs = n.div_ceil(SCAN_SEGMENT);
    let groups_n = rows * segs;
    let params = |mode: u32| -> Result<Vec<u32>> {
        Ok(vec![
            word(groups_n, "scan workgroups")?,
            word(n, "scan")?,
            word(inner, "scan")?,
            SCAN_SEGMENT as u32,
            segs as u32,
            mode,
        ])
    };
    if segs == 1 {
        // aux is unused in mode 0: a one-element stand-in (a buffer bound twice would
        // conflict).
        let unused = dev.alloc(dtype, 1)?;
        let buffers = vec![src.raw().clone(), dst.raw().clone(), unused.raw().clone()];
        launches.push(Launch { kernel: kernel.clone(), buffers, params: params(0)?, groups: groups_n as u64 });
        scratch.push(unused);
        return Ok(());
    }
    let totals = dev.alloc(dtype, groups_n)?;
    let scanned = dev.alloc(dtype, groups_n)?;
    launches.push(Launch {
        kernel: kernel.clone(),
        buffers: vec![src.raw().clone(), dst.raw().clone(), totals.raw().clone()],
        params: params(1)?,
        groups: groups_n as u64,
    });
    segment_scan(dev, kernel, dtype, &totals, &scanned, rows, segs, 1, launches, scratch)?;
    launches.push(Launch {
        kernel: kernel.clone(),
        buffers: vec![src.raw().clone(), dst.raw().clone(), scanned.raw().clone()],
        params: params(2)?,
        groups: groups_n as u64,
    });
    scratch.push(totals);
    scratch.push(scanned);
    Ok(())
}

/// Rows up to this length scan one per thread; longer ones one per workgroup.
const SERIAL_SCAN_MAX: usize = 64;

/// cumsum (`product` false) or cumprod along `axis`.
pub(crate) fn scan(
    dev: &WgpuDevice,
    product: bool,
    axis: usize,
    shape: &Shape,
    input: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    let dtype = input.dtype();
    dev.require(dtype, if product { "cumprod" } else { "cumsum" })?;
    let out = dev.alloc(dtype, input.len())?;
    let (outer, n, inner) = split(shape, axis);
    let rows = outer * inner;
    if rows == 0 || n == 0 {
        return Ok(out);
    }
    let serial = n <= SERIAL_SCAN_MAX;
    let kernel = dev.kernel(KernelKey::Scan { dtype, product, serial }, || Ok(gen::scan(dtype, product, serial)))?;
    let mut launches = Vec::new();
    if serial {
        let params = vec![word(rows, "scan rows")?, word(n, "scan")?, word(inner, "scan")?];
        let buffers = vec![input.raw().clone(), out.raw().clone()];
        launches.push(Launch { kernel, buffers, params, groups: groups(rows, WG) });
    } else {
        let mut scratch = Vec::new();
        segment_scan(dev, &kernel, dtype, input, &out, rows, n, inner, &mut launches, &mut scratch)?;
    }
    dev.launch(launches)?;
    Ok(out)
}
