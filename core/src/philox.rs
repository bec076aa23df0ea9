//! Philox4x32-10 and the exact recipes of polycompute's random fills. Every backend
//! reproduces these bit for bit; this module is the reference.
//!
//! # The recipe
//!
//! `philox(key, counter)` is Philox4x32 with 10 rounds (Salmon et al., SC'11): multipliers
//! `0xD2511F53`, `0xCD9E8D57`, Weyl constants `0x9E3779B9`, `0xBB67AE85`; a round maps
//! `(c0, c1, c2, c3)` to `(hi(M1·c2) ^ c1 ^ k0, lo(M1·c2), hi(M0·c0) ^ c3 ^ k1, lo(M0·c0))`,
//! and the key is bumped by the Weyl constants between rounds. The key is
//! `(seed as u32, (seed >> 32) as u32)`.
//!
//! Element `i` of a fill uses block `b` with counter `(b as u32, (b >> 32) as u32, 0, 0)`:
//!
//! * `u32` / `i32` uniform: `b = i / 4`, word `i % 4` (for `i32`, the same bits).
//! * `f32` uniform: `b = i / 4`, `w = word i % 4`, value `(w >> 8) as f32 * 2^-24` in `[0, 1)`.
//! * `f64` uniform: `b = i / 2`, words `lo = 2·(i % 2)`, `hi = lo + 1`,
//!   value `(((w_hi << 32) | w_lo) >> 11) as f64 * 2^-53` in `[0, 1)`.
//! * normal (Box–Muller), `f32`: `b = i / 4`; pair `p = (i % 4) / 2` uses words `2p, 2p+1`:
//!   `u1 = ((w_2p >> 8) + 1) as f32 * 2^-24` in `(0, 1]`, `u2 = (w_2p+1 >> 8) as f32 * 2^-24`,
//!   `r = sqrt(-2 ln u1)`, `θ = 2π u2`; even `i` gets `r cos θ`, odd `i` gets `r sin θ`.
//!   `f64`: `b = i / 2`, `u1 = ((w01 >> 11) + 1) as f64 * 2^-53`, `u2 = (w23 >> 11) as f64 * 2^-53`
//!   (with `w01 = (w1 << 32) | w0`, `w23 = (w3 << 32) | w2`); even `i` gets `r cos θ`, odd `r sin θ`.
//!
//! The uniform fills are exact integer and power-of-two arithmetic, identical bits on every
//! backend. The normal fill goes through `ln`, `sqrt`, `cos`, `sin`, whose last bits
//! differ between math libraries (WGSL and CUDA's fast paths allow several ULPs), so normal
//! values agree within the conformance suite's stated tolerance, not bit for bit.

/// Philox4x32 multipliers.
pub const M: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];
/// Philox4x32 Weyl key increments.
pub const W: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];

/// Philox4x32-10 of `counter` under `key`.
///
/// ```
/// // Known-answer test from the Random123 distribution.
/// assert_eq!(polycompute_core::philox::philox4x32_10([0; 4], [0; 2]),
///            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
/// ```
#[inline]
pub fn philox4x32_10(mut c: [u32; 4], mut k: [u32; 2]) -> [u32; 4] {
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(W[0]);
            k[1] = k[1].wrapping_add(W[1]);
        }
        let p0 = (M[0] as u64) * (c[0] as u64);
        let p1 = (M[1] as u64) * (c[2] as u64);
        c = [((p1 >> 32) as u32) ^ c[1] ^ k[0], p1 as u32, ((p0 >> 32) as u32) ^ c[3] ^ k[1], p0 as u32];
    }
    c
}

/// The key of a seed.
#[inline]
pub fn key(seed: u64) -> [u32; 2] {
    [seed as u32, (seed >> 32) as u32]
}

/// The four words of block `b` of stream `seed`.
#[inline]
pub fn block(seed: u64, b: u64) -> [u32; 4] {
    philox4x32_10([b as u32, (b >> 32) as u32, 0, 0], key(seed))
}

/// Element `i` of the `u32` uniform stream.
pub fn uniform_u32(seed: u64, i: u64) -> u32 {
    block(seed, i / 4)[(i % 4) as usize]
}

/// Element `i` of the `f32` uniform stream, in `[0, 1)`.
pub fn uniform_f32(seed: u64, i: u64) -> f32 {
    bits_to_unit_f32(uniform_u32(seed, i))
}

/// Element `i` of the `f64` uniform stream, in `[0, 1)`.
pub fn uniform_f64(seed: u64, i: u64) -> f64 {
    let w = block(seed, i / 2);
    let lo = 2 * (i % 2) as usize;
    bits_to_unit_f64(((w[lo + 1] as u64) << 32) | w[lo] as u64)
}

/// Element `i` of the `f32` standard-normal stream.
pub fn normal_f32(seed: u64, i: u64) -> f32 {
    let w = block(seed, i / 4);
    let p = 2 * ((i % 4) / 2) as usize;
    let u1 = ((w[p] >> 8) + 1) as f32 * (1.0 / 16_777_216.0);
    let u2 = bits_to_unit_f32(w[p + 1]);
    let r = (-2.0 * u1.ln()).sqrt();
    let theta = 2.0 * std::f32::consts::PI * u2;
    if i.is_multiple_of(2) {
        r * theta.cos()
    } else {
        r * theta.sin()
    }
}

/// Element `i` of the `f64` standard-normal stream.
pub fn normal_f64(seed: u64, i: u64) -> f64 {
    let w = block(seed, i / 2);
    let w01 = ((w[1] as u64) << 32) | w[0] as u64;
    let w23 = ((w[3] as u64) << 32) | w[2] as u64;
    let u1 = ((w01 >> 11) + 1) as f64 * (1.0 / 9_007_199_254_740_992.0);
    let u2 = bits_to_unit_f64(w23);
    let r = (-2.0 * u1.ln()).sqrt();
    let theta = 2.0 * std::f64::consts::PI * u2;
    if i.is_multiple_of(2) {
        r * theta.cos()
    } else {
        r * theta.sin()
    }
}

/// `(w >> 8) · 2^-24`: the top 24 bits as a float in `[0, 1)`.
#[inline]
pub fn bits_to_unit_f32(w: u32) -> f32 {
    (w >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// `(w >> 11) · 2^-53`: the top 53 bits as a float in `[0, 1)`.
#[inline]
pub fn bits_to_unit_f64(w: u64) -> f64 {
    (w >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random123_known_answers() {
        assert_eq!(philox4x32_10([u32::MAX; 4], [u32::MAX; 2]), [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]);
        assert_eq!(
            philox4x32_10([0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344], [0xa409_3822, 0x299f_31d0]),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    #[test]
    fn uniform_is_in_range_and_has_the_right_mean() {
        let n = 100_000;
        let mean32: f64 = (0..n).map(|i| uniform_f32(7, i) as f64).sum::<f64>() / n as f64;
        let mean64: f64 = (0..n).map(|i| uniform_f64(7, i)).sum::<f64>() / n as f64;
        assert!((mean32 - 0.5).abs() < 0.005 && (mean64 - 0.5).abs() < 0.005);
        let var: f64 = (0..n).map(|i| normal_f64(7, i).powi(2)).sum::<f64>() / n as f64;
        assert!((var - 1.0).abs() < 0.02, "{var}");
    }
}
