//! A stable LSD radix sort of (key, index) slots, the keys of [`super::sort`] (numpy's order
//! as unsigned integers): 4-bit digits, least significant first (8 passes over one-word
//! keys, 16 over f64's two words). Each pass counts digits per segment of a row, a thread per
//! segment (`wgsl/radix_hist.wgsl`), scans the counts of all rows at once
//! (`wgsl/scan_block.wgsl`, `wgsl/scan_add.wgsl`) and moves every slot to its place, each
//! thread walking its segment in order, so equal digits keep their input order
//! (`wgsl/radix_scatter.wgsl`). The kernels take the key width at run time, so four
//! kernels serve every dtype; none uses subgroups, barriers in loops or 64-bit types.
//!
//! A thread per segment suits CPU adapters (lavapipe, llvmpipe: each thread is a sequential
//! loop; a workgroup-cooperative scatter with bit-mask ranks measured 8x slower there).
//! Digits of 4 bits rather than 8: a SIMD vector of threads then writes to 8 x 16 places at
//! once, not 8 x 256, which stays in cache (measured 1.5-2x faster per sort on lavapipe
//! despite twice the passes). Discrete GPUs would prefer coalesced, workgroup-wide segments.

use polycompute_core::DType;

use super::{Builder, KernelSource, WG};

/// Threads per workgroup of the histogram and scatter: few, so short rows still spread over
/// several workgroups (a CPU adapter runs workgroups, not threads, in parallel).
pub(crate) const SEGMENT_WG: u32 = 64;

/// Slots per segment for `slots` slots in all: about 2048 segments, each of 256 to 4096
/// slots (a segment's histogram words are worth writing and scanning).
pub(crate) fn segment_len(slots: usize) -> usize {
    (slots / 2048).next_power_of_two().clamp(256, 4096)
}

/// Words one workgroup of [`scan_block`] scans.
pub(crate) const SCAN_CHUNK: usize = 1024;

/// Bits per digit.
pub(crate) const DIGIT_BITS: usize = 4;

/// Digits per pass.
pub(crate) const RADIX: usize = 1 << DIGIT_BITS;

/// Passes per key word.
pub(crate) const PASSES_PER_WORD: usize = 32 / DIGIT_BITS;

/// The four radix kernels, as the pipeline cache names them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RadixKernel {
    /// The slots of a dtype's keys and their payloads (`wgsl/radix_init.wgsl`).
    Init(DType),
    /// Digit counts per segment.
    Hist,
    /// The stable scatter of one pass.
    Scatter,
    /// The exclusive scan of 1024-word chunks.
    ScanBlock,
    /// The chunk offsets added back.
    ScanAdd,
}

/// Parameters of the histogram and the scatter.
const PASS_PARAMS: usize = 8;

/// The source of `kernel`.
pub(crate) fn kernel(kernel: RadixKernel) -> KernelSource {
    match kernel {
        RadixKernel::Init(dtype) => {
            let mut b = Builder::new(5);
            b.storage("src", "u32", false).storage("keys", "u32", true).storage("idx", "u32", true);
            b.code(&super::sort::key_code(dtype));
            let vw = super::sort::key_words(dtype).to_string();
            b.finish((WG, 1), &super::shaders::instantiate(include_str!("wgsl/radix_init.wgsl"), &[("VW", &vw)]))
        }
        RadixKernel::Hist => {
            let mut b = Builder::new(PASS_PARAMS);
            b.storage("keys", "u32", false).storage("hist", "u32", true);
            b.finish((SEGMENT_WG, 1), &segment_body(include_str!("wgsl/radix_hist.wgsl")))
        }
        RadixKernel::Scatter => {
            let mut b = Builder::new(PASS_PARAMS);
            b.storage("keys_in", "u32", false).storage("idx_in", "u32", false).storage("hist", "u32", false);
            b.storage("keys_out", "u32", true).storage("idx_out", "u32", true);
            b.finish((SEGMENT_WG, 1), &segment_body(include_str!("wgsl/radix_scatter.wgsl")))
        }
        RadixKernel::ScanBlock => {
            let mut b = Builder::new(1);
            b.storage("data", "u32", true).storage("sums", "u32", true);
            b.code("var<workgroup> part: array<u32, 256>;\n");
            b.finish((WG, 1), include_str!("wgsl/scan_block.wgsl"))
        }
        RadixKernel::ScanAdd => {
            let mut b = Builder::new(1);
            b.storage("data", "u32", true).storage("sums", "u32", false);
            b.finish((WG, 1), include_str!("wgsl/scan_add.wgsl"))
        }
    }
}

/// A segment kernel's body: the common start (`wgsl/radix_segment.wgsl`: the thread's row,
/// segment and slots) then `template`, its workgroup size and digit sizes filled in.
fn segment_body(template: &str) -> String {
    let source = [include_str!("wgsl/radix_segment.wgsl"), template].concat();
    super::shaders::instantiate(
        &source,
        &[("WG", &SEGMENT_WG.to_string()), ("BINS", &RADIX.to_string()), ("MASK", &(RADIX - 1).to_string())],
    )
}

/// The (key word, shift) of LSD pass `pass` over keys of `kw` words (word 0 most significant).
pub(crate) fn digit(kw: usize, pass: usize) -> (u32, u32) {
    ((kw - 1 - pass / PASSES_PER_WORD) as u32, (pass % PASSES_PER_WORD * DIGIT_BITS) as u32)
}

/// The lengths of the scan's levels over `len` words: each level's chunk totals, until one
/// chunk holds everything (that level still runs, its one total unused).
pub(crate) fn scan_levels(len: usize) -> Vec<usize> {
    let mut levels = vec![len];
    let mut l = len;
    while l > SCAN_CHUNK {
        l = l.div_ceil(SCAN_CHUNK);
        levels.push(l);
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_walk_the_key_from_its_least_significant_byte() {
        let one: Vec<_> = (0..PASSES_PER_WORD).map(|p| digit(1, p)).collect();
        assert_eq!(one, [(0, 0), (0, 4), (0, 8), (0, 12), (0, 16), (0, 20), (0, 24), (0, 28)]);
        let two: Vec<_> = (0..2 * PASSES_PER_WORD).map(|p| digit(2, p)).collect();
        assert_eq!(two[..2], [(1, 0), (1, 4)]);
        assert_eq!(two[7..9], [(1, 28), (0, 0)]);
        assert_eq!(two[15], (0, 28));
    }

    #[test]
    fn segments_stay_between_256_and_4096_slots() {
        assert_eq!(segment_len(2048), 256);
        assert_eq!(segment_len(1 << 20), 512);
        assert_eq!(segment_len(1 << 24), 4096);
        assert_eq!(segment_len(1 << 30), 4096);
    }

    #[test]
    fn scan_levels_shrink_by_the_chunk_until_one_chunk_is_left() {
        assert_eq!(scan_levels(1), [1]);
        assert_eq!(scan_levels(1024), [1024]);
        assert_eq!(scan_levels(1025), [1025, 2]);
        assert_eq!(scan_levels(1 << 20), [1 << 20, 1024]);
        assert_eq!(scan_levels((1 << 20) + 1), [(1 << 20) + 1, 1025, 2]);
    }
}
