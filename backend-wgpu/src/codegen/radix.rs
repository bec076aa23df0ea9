//! A stable LSD radix sort of (key, index) slots, for rows too long for the bitonic network
//! of [`super::sort`]: 8-bit digits, least significant first (4 passes over one-word keys,
//! 8 over f64's two words). Each pass counts digits per block of a row
//! (`wgsl/radix_hist.wgsl`), scans the counts of all rows at once (`wgsl/scan_block.wgsl`,
//! `wgsl/scan_add.wgsl`) and moves every slot to its place, equal digits in input order
//! (`wgsl/radix_scatter.wgsl`). The kernels take the key width at run time, so four
//! kernels serve every dtype; none uses subgroups or 64-bit types.

use super::{Builder, KernelSource, WG};

/// Slots per block of a row: one histogram of 256 counts per block.
pub(crate) const BLOCK: usize = 4096;

/// Words one workgroup of [`scan_block`] scans.
pub(crate) const SCAN_CHUNK: usize = 1024;

/// Digits per pass: 8 bits.
pub(crate) const RADIX: usize = 256;

/// The four radix kernels, as the pipeline cache names them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RadixKernel {
    /// Digit counts per block.
    Hist,
    /// The stable scatter of one pass.
    Scatter,
    /// The exclusive scan of 1024-word chunks.
    ScanBlock,
    /// The chunk offsets added back.
    ScanAdd,
}

/// Parameters of [`hist`] and [`scatter`].
const PASS_PARAMS: usize = 7;

/// The source of `kernel`.
pub(crate) fn kernel(kernel: RadixKernel) -> KernelSource {
    match kernel {
        RadixKernel::Hist => {
            let mut b = Builder::new(PASS_PARAMS);
            b.storage("keys", "u32", false).storage("hist", "u32", true);
            b.code("var<workgroup> counts: array<atomic<u32>, 256>;\n");
            b.finish((WG, 1), include_str!("wgsl/radix_hist.wgsl"))
        }
        RadixKernel::Scatter => {
            let mut b = Builder::new(PASS_PARAMS);
            b.storage("keys_in", "u32", false).storage("idx_in", "u32", false).storage("hist", "u32", false);
            b.storage("keys_out", "u32", true).storage("idx_out", "u32", true);
            // One 256-bit mask per digit (8 words), and each digit's next destination.
            b.code("var<workgroup> masks: array<atomic<u32>, 2048>;\nvar<workgroup> next: array<u32, 256>;\n");
            b.finish((WG, 1), include_str!("wgsl/radix_scatter.wgsl"))
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

/// The (key word, shift) of LSD pass `pass` over keys of `kw` words (word 0 most significant).
pub(crate) fn digit(kw: usize, pass: usize) -> (u32, u32) {
    ((kw - 1 - pass / 4) as u32, (pass % 4 * 8) as u32)
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
        let one: Vec<_> = (0..4).map(|p| digit(1, p)).collect();
        assert_eq!(one, [(0, 0), (0, 8), (0, 16), (0, 24)]);
        let two: Vec<_> = (0..8).map(|p| digit(2, p)).collect();
        assert_eq!(two, [(1, 0), (1, 8), (1, 16), (1, 24), (0, 0), (0, 8), (0, 16), (0, 24)]);
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
