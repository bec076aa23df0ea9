//! The launches of the radix sort (`codegen::radix`) over `rows` contiguous rows of `n`
//! (key, payload) slots: per pass a histogram, its scan and the stable scatter, ping-ponging
//! between the caller's buffers and a second pair, an even number of passes, so the sorted
//! slots end in the caller's buffers.

use polycompute_core::{DType, Result};

use crate::buffer::WgpuBuffer;
use crate::codegen::radix::{self as gen, RadixKernel, RADIX, SCAN_CHUNK, SEGMENT_WG};
use crate::codegen::WG;
use crate::device::{Launch, WgpuDevice};
use crate::ops::groups;
use crate::ops::movement::word;
use crate::pipeline_cache::KernelKey;

/// The launches that sort `keys` (`kw` words per slot) and their payloads `idx` (`pw` words
/// per slot) of `rows` rows of `n` slots in place, stably. `keep` receives the scratch
/// buffers: they must stay allocated until the launches are submitted, or the buffer pool
/// could hand them to another allocation of the same submission.
pub(crate) fn launches(
    dev: &WgpuDevice,
    keys: &WgpuBuffer,
    idx: &WgpuBuffer,
    rows: usize,
    n: usize,
    (kw, pw): (usize, usize),
    keep: &mut Vec<WgpuBuffer>,
) -> Result<Vec<Launch>> {
    let kernel = |k| dev.kernel(KernelKey::Radix(k), || Ok(gen::kernel(k)));
    let (hist_k, scatter_k) = (kernel(RadixKernel::Hist)?, kernel(RadixKernel::Scatter)?);
    let (scan_k, add_k) = (kernel(RadixKernel::ScanBlock)?, kernel(RadixKernel::ScanAdd)?);
    let size = gen::segment_len(rows * n);
    let nb = n.div_ceil(size);
    let segments = rows * nb;
    let levels = gen::scan_levels(segments * RADIX);
    // The words scanned at each level, then the one total of the last level.
    let mut scan_bufs = Vec::with_capacity(levels.len() + 1);
    for &len in levels.iter().chain([&1]) {
        scan_bufs.push(dev.alloc(DType::U32, len)?);
    }
    let keys2 = dev.alloc(DType::U32, rows * n * kw)?;
    let idx2 = dev.alloc(DType::U32, rows * n * pw)?;
    let slots = [(keys.raw().clone(), idx.raw().clone()), (keys2.raw().clone(), idx2.raw().clone())];
    let hist = scan_bufs[0].raw().clone();
    let mut out = Vec::new();
    for pass in 0..gen::PASSES_PER_WORD * kw {
        let (kword, shift) = gen::digit(kw, pass);
        let params = vec![
            word(n, "sort axis length")?,
            word(nb, "radix segments per row")?,
            word(segments, "radix segments")?,
            kw as u32,
            kword,
            shift,
            size as u32,
            pw as u32,
        ];
        let (from, to) = (&slots[pass % 2], &slots[(pass + 1) % 2]);
        out.push(Launch {
            kernel: hist_k.clone(),
            buffers: vec![from.0.clone(), hist.clone()],
            params: params.clone(),
            groups: groups(segments, SEGMENT_WG),
        });
        for (l, &len) in levels.iter().enumerate() {
            out.push(Launch {
                kernel: scan_k.clone(),
                buffers: vec![scan_bufs[l].raw().clone(), scan_bufs[l + 1].raw().clone()],
                params: vec![word(len, "radix histogram words")?],
                groups: len.div_ceil(SCAN_CHUNK) as u64,
            });
        }
        for (l, &len) in levels.iter().enumerate().rev().skip(1) {
            out.push(Launch {
                kernel: add_k.clone(),
                buffers: vec![scan_bufs[l].raw().clone(), scan_bufs[l + 1].raw().clone()],
                params: vec![word(len, "radix histogram words")?],
                groups: groups(len, WG),
            });
        }
        out.push(Launch {
            kernel: scatter_k.clone(),
            buffers: vec![from.0.clone(), from.1.clone(), hist.clone(), to.0.clone(), to.1.clone()],
            params,
            groups: groups(segments, SEGMENT_WG),
        });
    }
    keep.extend(scan_bufs);
    keep.extend([keys2, idx2]);
    Ok(out)
}
