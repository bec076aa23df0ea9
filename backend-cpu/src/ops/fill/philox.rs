//! Philox4x32-10 over many consecutive blocks at once, laid out lane-wise so that LLVM
//! vectorises the rounds (widening 32×32→64 multiplies). The arithmetic is exactly
//! `polycompute_core::philox::philox4x32_10`, so the bits are identical; the tests check
//! it against that reference.

use polycompute_core::philox::{M, W};

/// Blocks computed together.
pub(crate) const LANES: usize = 16;

/// The four words of blocks `first .. first + LANES`: `words[w][j]` is word `w` of block
/// `first + j`.
#[inline(always)]
// Indexing the four word arrays by lane is the clearest form of the lane-wise rounds.
#[allow(clippy::needless_range_loop)]
pub(crate) fn lanes(key: [u32; 2], first: u64) -> [[u32; LANES]; 4] {
    let mut c = [[0u32; LANES]; 4];
    for j in 0..LANES {
        let b = first.wrapping_add(j as u64);
        c[0][j] = b as u32;
        c[1][j] = (b >> 32) as u32;
    }
    let mut k = key;
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(W[0]);
            k[1] = k[1].wrapping_add(W[1]);
        }
        let [c0, c1, c2, c3] = c;
        for j in 0..LANES {
            let p0 = (M[0] as u64) * (c0[j] as u64);
            let p1 = (M[1] as u64) * (c2[j] as u64);
            c[0][j] = ((p1 >> 32) as u32) ^ c1[j] ^ k[0];
            c[1][j] = p1 as u32;
            c[2][j] = ((p0 >> 32) as u32) ^ c3[j] ^ k[1];
            c[3][j] = p0 as u32;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute_core::philox;

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn lanes_equal_the_scalar_reference() {
        for (seed, first) in [(0u64, 0u64), (0xDEAD_BEEF_1234, (1 << 32) - 5), (u64::MAX, u64::MAX - 3)] {
            let key = philox::key(seed);
            let w = lanes(key, first);
            for j in 0..LANES {
                let want = philox::block(seed, first.wrapping_add(j as u64));
                assert_eq!([w[0][j], w[1][j], w[2][j], w[3][j]], want, "seed {seed} block {first}+{j}");
            }
        }
    }
}
