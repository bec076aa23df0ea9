//! Correctly rounded conversions into the half dtypes ([`f16`](struct@f16), [`bf16`]).
//!
//! The `half` crate's `from_f64` is not correctly rounded: it drops the low 32 bits of the
//! f64 before rounding (and on x86 with F16C rounds through f32 by round-to-nearest), so a
//! value just above a tie can land on the even neighbour below. polycompute's rule is one
//! rounding to nearest even from the exact value, as numpy's `np.float16(x)` does, so every
//! conversion from f64 (and from `i32`/`u32`, which are exact in f64) goes through
//! [`f16_from_f64`] and [`bf16_from_f64`]. From f32, `half`'s `from_f32` is correct.
//!
//! ```
//! use polycompute_core::{f16, halves};
//! // 2049 + 2^-20 is just above the tie between 2048 and 2050: it rounds up.
//! assert_eq!(halves::f16_from_f64(2049.0 + 2f64.powi(-20)), f16::from_f32(2050.0));
//! assert_eq!(halves::f16_from_f64(2049.0), f16::from_f32(2048.0), "a tie goes to even");
//! assert!(halves::f16_from_f64(65520.0).is_infinite(), "past max finite + half an ulp");
//! ```

use crate::dtype::{bf16, f16, DType};
use crate::op::Op;

/// `x` rounded to f32 *to odd*: truncated toward zero, with the last bit set when inexact.
/// A value rounded to odd with at least two more bits than the target, then to nearest
/// even, is rounded to nearest even once from the exact value (Boldo and Melquiond); f32
/// has 13 more bits than f16 and 16 more than bf16, subnormals included.
fn f32_round_to_odd(x: f64) -> f32 {
    let nearest = x as f32;
    if x.is_nan() || nearest as f64 == x {
        return nearest;
    }
    // Inexact: step back toward zero when nearest rounded away from it (an overflow to
    // infinity steps back to the largest finite value), then mark the lost bits.
    let toward_zero = if (nearest as f64).abs() > x.abs() { f32::from_bits(nearest.to_bits() - 1) } else { nearest };
    f32::from_bits(toward_zero.to_bits() | 1)
}

/// `x` as f16, rounded once to nearest even; beyond the largest finite value (65504, by half
/// an ulp or more) it is ±Inf; NaN stays NaN, the sign of zero is kept.
pub fn f16_from_f64(x: f64) -> f16 {
    f16::from_f32(f32_round_to_odd(x))
}

/// `x` as bf16, rounded once to nearest even, with the rules of [`f16_from_f64`].
pub fn bf16_from_f64(x: f64) -> bf16 {
    bf16::from_f32(f32_round_to_odd(x))
}

/// The first half dtype `op` reads (`inputs`: its inputs' dtypes), writes or computes in (an
/// instruction of a map), if any. A backend that has no half kernels yet refuses such an op
/// with [`crate::Error::missing_capability`] before planning it.
///
/// ```
/// use polycompute_core::{halves, DType, Fill, Op};
/// let fill = Op::Fill { fill: Fill::Uniform { seed: 1 }, dtype: DType::BF16, len: 4 };
/// assert_eq!(halves::half_dtype_in(&fill, &[]), Some(DType::BF16));
/// assert_eq!(halves::half_dtype_in(&Op::Copy, &[DType::F32]), None);
/// assert_eq!(halves::half_dtype_in(&Op::Copy, &[DType::F16]), Some(DType::F16));
/// ```
pub fn half_dtype_in(op: &Op, inputs: &[DType]) -> Option<DType> {
    let made = match op {
        Op::Fill { dtype, .. } => Some(*dtype),
        Op::Cast { to } => Some(*to),
        _ => None,
    };
    let computed = match op {
        Op::Map { program, .. } | Op::MapViews { program, .. } => {
            program.insts.iter().map(|i| i.dtype).find(|d| d.is_half())
        }
        _ => None,
    };
    inputs.iter().copied().chain(made).chain(computed).find(|d| d.is_half())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact nearest-even f16 of `x`, by comparing with the two neighbours in f64.
    fn reference_f16(x: f64) -> f16 {
        // 65520 is the tie between 65504 (odd) and the next power of two: Inf.
        if x.abs() >= 65520.0 {
            return if x < 0.0 { f16::NEG_INFINITY } else { f16::INFINITY };
        }
        let lo = f16::from_f32((x as f32).clamp(-65504.0, 65504.0));
        // Walk to the neighbours of the f32-rounded candidate and pick the nearest exactly.
        let cands: Vec<f16> = [lo.to_bits().wrapping_sub(1), lo.to_bits(), lo.to_bits().wrapping_add(1)]
            .into_iter()
            .map(f16::from_bits)
            .filter(|c| c.is_finite())
            .collect();
        let mut best = cands[0];
        for &c in &cands[1..] {
            let (dc, db) = ((c.to_f64() - x).abs(), (best.to_f64() - x).abs());
            if dc < db || (dc == db && c.to_bits() & 1 == 0) {
                best = c;
            }
        }
        best
    }

    #[test]
    fn ties_round_to_even_and_sticky_bits_round_up() {
        // 1 + 2^-11 is the tie between 1 and 1 + 2^-10: even is 1.
        assert_eq!(f16_from_f64(1.0 + 2f64.powi(-11)), f16::ONE);
        // A bit far below the tie (lost by half's from_f64) breaks it upward.
        let above = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f16_from_f64(above), f16::from_bits(0x3c01));
        assert_eq!(bf16_from_f64(1.0 + 2f64.powi(-8) + 2f64.powi(-40)), bf16::from_bits(0x3f81));
        assert_eq!(bf16_from_f64(1.0 + 2f64.powi(-8)), bf16::ONE);
        // 257 is a bf16 tie between 256 and 258: even mantissa is 256.
        assert_eq!(bf16_from_f64(257.0), bf16::from_f32(256.0));
        assert_eq!(bf16_from_f64(259.0), bf16::from_f32(260.0));
    }

    #[test]
    fn overflow_subnormals_zeros_and_nan() {
        assert_eq!(f16_from_f64(65519.99), f16::MAX);
        assert_eq!(f16_from_f64(65520.0), f16::INFINITY);
        assert_eq!(f16_from_f64(-1e300), f16::NEG_INFINITY);
        assert_eq!(bf16_from_f64(1e300), bf16::INFINITY);
        assert_eq!(bf16_from_f64(f32::MAX as f64), bf16::INFINITY);
        assert_eq!(f16_from_f64(2f64.powi(-24)), f16::from_bits(1));
        // Half the smallest subnormal is a tie with zero: even is zero; a hair above rounds up.
        assert_eq!(f16_from_f64(2f64.powi(-25)).to_bits(), 0);
        assert_eq!(f16_from_f64(2f64.powi(-25) * (1.0 + 1e-12)), f16::from_bits(1));
        assert_eq!(f16_from_f64(-1e-300).to_bits(), 0x8000);
        assert_eq!(bf16_from_f64(2f64.powi(-133)), bf16::from_bits(1));
        assert_eq!(bf16_from_f64(-0.0).to_bits(), 0x8000);
        assert!(f16_from_f64(f64::NAN).is_nan() && bf16_from_f64(f64::NAN).is_nan());
        assert_eq!(f16_from_f64(f64::INFINITY), f16::INFINITY);
    }

    #[test]
    fn matches_an_exact_reference_on_many_values() {
        // Deterministic values of every magnitude f16 has, with bits below f32's precision.
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let e = (s % 50) as i32 - 30;
            let m = 1.0 + (s >> 11) as f64 / (1u64 << 53) as f64;
            let x = if s & 1 == 1 { -m } else { m } * 2f64.powi(e);
            assert_eq!(f16_from_f64(x).to_bits(), reference_f16(x).to_bits(), "{x:e}");
        }
    }
}
