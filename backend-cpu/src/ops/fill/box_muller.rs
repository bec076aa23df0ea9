//! Box–Muller for the f32 normal stream, many lanes at a time. `philox::normal_f32` (the
//! reference) calls the C library's `logf`, `cosf` and `sinf` per element, which cannot be
//! vectorised and cost more than the Philox rounds. Here `ln`, `sin` and `cos` are
//! branch-free polynomials evaluated in f64, each rounded to f32 where the reference rounds
//! its own, so that LLVM vectorises them and each result stays within a few ulp of the
//! reference (usually bit-identical; `tests/fill.rs` holds it to 2 ulp).

use std::f64::consts::{FRAC_2_PI, LN_2, SQRT_2};

use polycompute_core::philox::bits_to_unit_f32;

use super::philox::LANES;

/// `ln(x)` for a positive normal `x` (here `u1` in `(0, 1]`), to about 1e-15 relative:
/// `x = m·2^e` with `m` in `[√½, √2)`, `ln m = 2·atanh(s)`, `s = (m − 1)/(m + 1)`,
/// `|s| ≤ 0.172`, the series cut where its next term is below 1e-17 of the sum.
#[inline(always)]
pub(crate) fn ln(x: f64) -> f64 {
    const EXP_MASK: u64 = 0x7ff << 52;
    let bits = x.to_bits();
    // The biased exponent as a float without an integer conversion (which AVX2 lacks for
    // 64-bit lanes): OR it into the mantissa of 2^52 and subtract 2^52.
    let biased = f64::from_bits(0x4330_0000_0000_0000 | ((bits & EXP_MASK) >> 52)) - 4_503_599_627_370_496.0;
    let m = f64::from_bits((bits & !EXP_MASK) | (1023 << 52));
    let big = m > SQRT_2;
    let m = if big { m * 0.5 } else { m };
    let e = biased - 1023.0 + if big { 1.0 } else { 0.0 };
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let tail = 1.0 / 11.0 + z * (1.0 / 13.0 + z * (1.0 / 15.0 + z * (1.0 / 17.0 + z * (1.0 / 19.0))));
    let series = 1.0 + z * (1.0 / 3.0 + z * (1.0 / 5.0 + z * (1.0 / 7.0 + z * (1.0 / 9.0 + z * tail))));
    e * LN_2 + 2.0 * s * series
}

/// `(sin θ, cos θ)` for `θ` in `[0, 2π]`, to about 1e-11 absolute and a few f64 ulps
/// relative near the zeros: Cody–Waite reduction by `π/2` (`π/2` split in three so that
/// `q·hi` and `q·mid` are exact for the quadrant `q ≤ 4`) and Taylor polynomials on
/// `[−π/4, π/4]`.
#[inline(always)]
pub(crate) fn sin_cos(theta: f64) -> (f64, f64) {
    // π/2 = HI + MID + LO, HI and MID with 32 significant bits each.
    const PI_2_HI: f64 = 1.570_796_326_734_125_6;
    const PI_2_MID: f64 = 6.077_100_506_303_966e-11;
    const PI_2_LO: f64 = 2.022_266_248_795_950_6e-21;
    let q = (theta * FRAC_2_PI + 0.5).floor();
    let t = ((theta - q * PI_2_HI) - q * PI_2_MID) - q * PI_2_LO;
    let quadrant = if q >= 4.0 { q - 4.0 } else { q };
    let t2 = t * t;
    let sin_t = t
        * (1.0
            + t2 * (-1.0 / 6.0
                + t2 * (1.0 / 120.0
                    + t2 * (-1.0 / 5040.0
                        + t2 * (1.0 / 362_880.0 + t2 * (-1.0 / 39_916_800.0 + t2 / 6_227_020_800.0))))));
    let cos_t = 1.0
        + t2 * (-0.5
            + t2 * (1.0 / 24.0
                + t2 * (-1.0 / 720.0
                    + t2 * (1.0 / 40_320.0 + t2 * (-1.0 / 3_628_800.0 + t2 * (1.0 / 479_001_600.0))))));
    // Quadrant k turns (sin, cos) of t into those of t + k·π/2.
    let odd = quadrant == 1.0 || quadrant == 3.0;
    let (sin, cos) = if odd { (cos_t, sin_t) } else { (sin_t, cos_t) };
    let sin = if quadrant >= 2.0 { -sin } else { sin };
    let cos = if quadrant == 1.0 || quadrant == 2.0 { -cos } else { cos };
    (sin, cos)
}

/// The normals of [`LANES`] Philox blocks (`w[k][j]`: word `k` of block `j`): element
/// `4j + k` of `out` is the reference's element `k` of block `j`, from the same f32 inputs
/// with roundings at the same places. Written stage by stage over whole lane arrays so
/// that each loop vectorises.
#[inline(always)]
pub(crate) fn blocks(w: &[[u32; LANES]; 4], out: &mut [f32]) {
    let mut values = [[0f32; LANES]; 4];
    for p in 0..2 {
        let (mut r, mut sin, mut cos) = ([0f32; LANES], [0f32; LANES], [0f32; LANES]);
        for j in 0..LANES {
            let u1 = ((w[2 * p][j] >> 8) + 1) as f32 * (1.0 / 16_777_216.0);
            r[j] = (-2.0 * ln(u1 as f64) as f32).sqrt();
        }
        for j in 0..LANES {
            let theta = 2.0 * std::f32::consts::PI * bits_to_unit_f32(w[2 * p + 1][j]);
            let (s, c) = sin_cos(theta as f64);
            (sin[j], cos[j]) = (s as f32, c as f32);
        }
        for j in 0..LANES {
            values[2 * p][j] = r[j] * cos[j];
            values[2 * p + 1][j] = r[j] * sin[j];
        }
    }
    for (j, o) in out.chunks_mut(4).enumerate() {
        for (k, o) in o.iter_mut().enumerate() {
            *o = values[k][j];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_matches_the_library_over_the_range_of_u1() {
        for k in (1u32..=1 << 24).step_by(997).chain([1, 2, 3, (1 << 24) - 1, 1 << 24]) {
            let x = k as f64 / 16_777_216.0;
            let (got, want) = (ln(x), x.ln());
            assert!((got - want).abs() <= 1e-14 * want.abs().max(1e-300), "ln({x}) = {got}, libm {want}");
        }
    }

    #[test]
    fn sin_cos_match_the_library_over_a_turn() {
        for i in 0..=100_000 {
            let theta = i as f64 * std::f64::consts::TAU / 100_000.0;
            let (s, c) = sin_cos(theta);
            assert!((s - theta.sin()).abs() < 1e-11 && (c - theta.cos()).abs() < 1e-11, "at {theta}");
        }
    }
}
