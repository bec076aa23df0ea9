//! [`Num`] and [`Float`] for the half dtypes `f16` and `bf16`: every operation widens its
//! operands to f32 (exact), computes there with the f32 semantics of `num.rs`, and rounds the
//! result once to nearest even. Comparisons, `min`/`max`, `neg`/`abs` and the roundings give
//! values the half type holds, so their rounding is exact.

use half::slice::HalfFloatSliceExt;
use polycompute_core::halves::{bf16_from_f64, f16_from_f64};
use polycompute_core::{bf16, f16, HostSlice, HostVec};
use rayon::prelude::*;

use crate::num::{CastTo, Float, Num};
use crate::par::{PAR_MIN, TASK};

/// A half type, with block conversions to and from f32 (vectorised by the `half` crate where
/// the CPU has F16C) for the kernels that widen a whole operand, compute in f32 and round
/// each result once: reductions, scans and matmul.
pub(crate) trait HalfNum: Num + Float + CastTo<f32> {
    /// `dst[i] = src[i]` widened (exact).
    fn widen_into(src: &[Self], dst: &mut [f32]);
    /// `dst[i] = src[i]` rounded to nearest even.
    fn narrow_into(src: &[f32], dst: &mut [Self]);
}

impl HalfNum for f16 {
    fn widen_into(src: &[Self], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst);
    }
    fn narrow_into(src: &[f32], dst: &mut [Self]) {
        dst.convert_from_f32_slice(src);
    }
}

impl HalfNum for bf16 {
    fn widen_into(src: &[Self], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst);
    }
    fn narrow_into(src: &[f32], dst: &mut [Self]) {
        dst.convert_from_f32_slice(src);
    }
}

/// `src` widened to f32, in parallel tasks when it is long.
pub(crate) fn widen<H: HalfNum>(src: &[H]) -> Vec<f32> {
    let mut out = vec![0.0f32; src.len()];
    if src.len() >= PAR_MIN {
        out.par_chunks_mut(TASK).zip(src.par_chunks(TASK)).for_each(|(o, s)| H::widen_into(s, o));
    } else {
        H::widen_into(src, &mut out);
    }
    out
}

/// `src` rounded into `dst` (of the same length), in parallel tasks when it is long.
pub(crate) fn narrow<H: HalfNum>(src: &[f32], dst: &mut [H]) {
    if src.len() >= PAR_MIN {
        dst.par_chunks_mut(TASK).zip(src.par_chunks(TASK)).for_each(|(d, s)| H::narrow_into(s, d));
    } else {
        H::narrow_into(src, dst);
    }
}

/// `src` rounded to a new vector of `H`.
pub(crate) fn narrow_vec<H: HalfNum>(src: &[f32]) -> Vec<H> {
    let mut out = vec![H::ZERO; src.len()];
    narrow(src, &mut out);
    out
}

/// Conversions between a half and f32 written as branch-free integer and float operations,
/// inlined into the kernels: under the kernels' AVX2 dispatch LLVM vectorises them, where
/// the `half` crate's scalar conversions are calls that test the CPU's features each time.
/// `tests` compares them with `half`'s on every f16 and on every rounding case of f32.
pub(crate) trait Bits16: Copy {
    /// The value as f32 (exact).
    fn widen(self) -> f32;
    /// `x` rounded to nearest even; beyond the largest finite value ±Inf; NaN stays NaN.
    fn round(x: f32) -> Self;
}

impl Bits16 for f16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        let h = self.to_bits() as u32;
        // Exponent and mantissa moved to f32's place, then scaled by 2^112 (exact, and it
        // makes f16's subnormals normal); an exponent of all ones becomes f32's.
        let scaled = f32::from_bits((h & 0x7fff) << 13) * f32::from_bits((254 - 15) << 23);
        let inf_nan = if scaled >= 65536.0 { 0xff << 23 } else { 0 };
        f32::from_bits(scaled.to_bits() | inf_nan | ((h & 0x8000) << 16))
    }
    #[inline(always)]
    fn round(x: f32) -> Self {
        // Marat Dukhan's FP16 method: scaling by 2^112 then 2^-110 sends values past f16's
        // range to Inf; adding a power of two aligned with the result's last kept bit makes
        // the f32 adder round to nearest even at f16's precision (subnormals included, where
        // that power is fixed at 2^-14's); f16's exponent and mantissa are then read off.
        let w = x.to_bits();
        let base = (x.abs() * f32::from_bits(0x7780_0000)) * f32::from_bits(0x0880_0000);
        let shl1 = w.wrapping_add(w);
        let bias = (shl1 & 0xff00_0000).max(0x7100_0000);
        let base = f32::from_bits((bias >> 1) + 0x0780_0000) + base;
        let bits = base.to_bits();
        let nonsign = ((bits >> 13) & 0x7c00) + (bits & 0x0fff);
        let body = if shl1 > 0xff00_0000 { 0x7e00 } else { nonsign };
        f16::from_bits(((w >> 16) & 0x8000 | body) as u16)
    }
}

impl Bits16 for bf16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits((self.to_bits() as u32) << 16)
    }
    #[inline(always)]
    fn round(x: f32) -> Self {
        let bits = x.to_bits();
        // Round to nearest even on the upper 16 bits (a carry into the exponent is right,
        // up to Inf); a NaN keeps its upper bits and is made quiet.
        let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16;
        let nan = (bits >> 16) | 0x40;
        bf16::from_bits(if x.is_nan() { nan } else { rounded } as u16)
    }
}

macro_rules! half_num {
    ($t:ident, $variant:ident, $from_f64:ident) => {
        impl Num for $t {
            const ZERO: Self = $t::ZERO;
            const ONE: Self = $t::ONE;
            const HIGHEST: Self = $t::INFINITY;
            const LOWEST: Self = $t::NEG_INFINITY;

            #[inline]
            fn of_slice(s: HostSlice<'_>) -> Option<&[Self]> {
                match s {
                    HostSlice::$variant(v) => Some(v),
                    _ => None,
                }
            }
            #[inline]
            fn into_host_vec(v: Vec<Self>) -> HostVec {
                HostVec::$variant(v)
            }

            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                <$t as Bits16>::round(a.widen() + b.widen())
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                <$t as Bits16>::round(a.widen() - b.widen())
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                <$t as Bits16>::round(a.widen() * b.widen())
            }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self {
                <$t as Bits16>::round(a.widen() / b.widen())
            }
            #[inline(always)]
            fn rem(a: Self, b: Self) -> Self {
                <$t as Bits16>::round(<f32 as Num>::rem(a.widen(), b.widen()))
            }
            #[inline(always)]
            fn pow(a: Self, b: Self) -> Self {
                <$t as Bits16>::round(a.widen().powf(b.widen()))
            }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                <$t as Bits16>::round(<f32 as Num>::min(a.widen(), b.widen()))
            }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                <$t as Bits16>::round(<f32 as Num>::max(a.widen(), b.widen()))
            }
            #[inline(always)]
            fn neg(a: Self) -> Self {
                -a
            }
            #[inline(always)]
            fn abs(a: Self) -> Self {
                $t::from_bits(a.to_bits() & 0x7fff)
            }
            #[inline(always)]
            fn floor(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().floor())
            }
            #[inline(always)]
            fn ceil(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().ceil())
            }
            #[inline(always)]
            fn round(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().round_ties_even())
            }
            #[inline(always)]
            fn from_bool(b: bool) -> Self {
                if b {
                    $t::ONE
                } else {
                    $t::ZERO
                }
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            // `!=` on the half type is IEEE's: -0.0 is zero, NaN is not.
        }

        impl Float for $t {
            #[inline(always)]
            fn sqrt(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().sqrt())
            }
            #[inline(always)]
            fn recip(a: Self) -> Self {
                <$t as Bits16>::round(1.0 / a.widen())
            }
            #[inline(always)]
            fn exp(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().exp())
            }
            #[inline(always)]
            fn expm1(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().exp_m1())
            }
            #[inline(always)]
            fn ln(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().ln())
            }
            #[inline(always)]
            fn log1p(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().ln_1p())
            }
            #[inline(always)]
            fn log2(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().log2())
            }
            #[inline(always)]
            fn log10(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().log10())
            }
            #[inline(always)]
            fn sin(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().sin())
            }
            #[inline(always)]
            fn cos(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().cos())
            }
            #[inline(always)]
            fn tan(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().tan())
            }
            #[inline(always)]
            fn tanh(a: Self) -> Self {
                <$t as Bits16>::round(a.widen().tanh())
            }
            #[inline(always)]
            fn from_usize(n: usize) -> Self {
                $from_f64(n as f64)
            }
        }

        // From a half: widen to f32 (exact), then the f32 rule (`as` saturates to integers).
        impl CastTo<f32> for $t {
            #[inline(always)]
            fn cast(self) -> f32 {
                self.widen()
            }
        }
        impl CastTo<f64> for $t {
            #[inline(always)]
            fn cast(self) -> f64 {
                self.to_f64()
            }
        }
        impl CastTo<i32> for $t {
            #[inline(always)]
            fn cast(self) -> i32 {
                self.widen() as i32
            }
        }
        impl CastTo<u32> for $t {
            #[inline(always)]
            fn cast(self) -> u32 {
                self.widen() as u32
            }
        }
        impl CastTo<i64> for $t {
            #[inline(always)]
            fn cast(self) -> i64 {
                self.widen() as i64
            }
        }
        impl CastTo<u8> for $t {
            #[inline(always)]
            fn cast(self) -> u8 {
                self.widen() as u8
            }
        }
        impl CastTo<bool> for $t {
            #[inline(always)]
            fn cast(self) -> bool {
                self.widen() != 0.0
            }
        }
        // i64 past 2^53 rounds twice (to f64, then to the half): far beyond f16's range,
        // and the fold on the host does the same (core/src/expr/fold.rs).
        impl CastTo<$t> for i64 {
            #[inline(always)]
            fn cast(self) -> $t {
                $from_f64(self as f64)
            }
        }
        impl CastTo<$t> for u8 {
            #[inline(always)]
            fn cast(self) -> $t {
                $from_f64(self as f64)
            }
        }
        impl CastTo<$t> for bool {
            #[inline(always)]
            fn cast(self) -> $t {
                $from_f64(self as u8 as f64)
            }
        }
        // To a half: one rounding to nearest even from the exact value.
        impl CastTo<$t> for f32 {
            #[inline(always)]
            fn cast(self) -> $t {
                <$t as Bits16>::round(self)
            }
        }
        impl CastTo<$t> for f64 {
            #[inline(always)]
            fn cast(self) -> $t {
                $from_f64(self)
            }
        }
        impl CastTo<$t> for i32 {
            #[inline(always)]
            fn cast(self) -> $t {
                $from_f64(self as f64)
            }
        }
        impl CastTo<$t> for u32 {
            #[inline(always)]
            fn cast(self) -> $t {
                $from_f64(self as f64)
            }
        }
    };
}

half_num!(f16, F16, f16_from_f64);
half_num!(bf16, BF16, bf16_from_f64);

impl CastTo<f16> for f16 {
    #[inline(always)]
    fn cast(self) -> f16 {
        self
    }
}
impl CastTo<bf16> for bf16 {
    #[inline(always)]
    fn cast(self) -> bf16 {
        self
    }
}
// Between the halves: through f32, which holds both exactly, so one rounding.
impl CastTo<bf16> for f16 {
    #[inline(always)]
    fn cast(self) -> bf16 {
        bf16::from_f32(self.to_f32())
    }
}
impl CastTo<f16> for bf16 {
    #[inline(always)]
    fn cast(self) -> f16 {
        f16::from_f32(self.to_f32())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every f32 whose low bits sit at a rounding corner for a 16-bit result with `drop`
    /// dropped bits (0, just below, at, just above the tie, all ones), for every high part.
    fn corners(drop: u32) -> impl Iterator<Item = f32> {
        let half = 1u32 << (drop - 1);
        let lows = [0, half - 1, half, half + 1, (1 << drop) - 1];
        (0..1u32 << (32 - drop)).flat_map(move |hi| lows.map(|lo| f32::from_bits((hi << drop) | lo)))
    }

    #[test]
    fn f16_conversions_match_the_half_crate() {
        for b in 0..=u16::MAX {
            let h = f16::from_bits(b);
            let (ours, theirs) = (h.widen(), h.to_f32());
            assert!(ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()), "{b:#06x}");
        }
        for x in corners(13) {
            let (ours, theirs) = (<f16 as Bits16>::round(x), f16::from_f32(x));
            assert!(
                ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
                "{x:e} ({:#010x})",
                x.to_bits()
            );
        }
    }

    #[test]
    fn bf16_conversions_match_the_half_crate() {
        for b in 0..=u16::MAX {
            let h = bf16::from_bits(b);
            let (ours, theirs) = (h.widen(), h.to_f32());
            assert!(ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()), "{b:#06x}");
        }
        for x in corners(16) {
            let (ours, theirs) = (<bf16 as Bits16>::round(x), bf16::from_f32(x));
            assert!(ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()), "{x:e}");
        }
    }
}
