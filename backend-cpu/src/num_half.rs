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
                $t::from_f32(a.to_f32() + b.to_f32())
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                $t::from_f32(a.to_f32() - b.to_f32())
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                $t::from_f32(a.to_f32() * b.to_f32())
            }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self {
                $t::from_f32(a.to_f32() / b.to_f32())
            }
            #[inline(always)]
            fn rem(a: Self, b: Self) -> Self {
                $t::from_f32(<f32 as Num>::rem(a.to_f32(), b.to_f32()))
            }
            #[inline(always)]
            fn pow(a: Self, b: Self) -> Self {
                $t::from_f32(a.to_f32().powf(b.to_f32()))
            }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                $t::from_f32(<f32 as Num>::min(a.to_f32(), b.to_f32()))
            }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                $t::from_f32(<f32 as Num>::max(a.to_f32(), b.to_f32()))
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
                $t::from_f32(a.to_f32().floor())
            }
            #[inline(always)]
            fn ceil(a: Self) -> Self {
                $t::from_f32(a.to_f32().ceil())
            }
            #[inline(always)]
            fn round(a: Self) -> Self {
                $t::from_f32(a.to_f32().round_ties_even())
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
                $t::from_f32(a.to_f32().sqrt())
            }
            #[inline(always)]
            fn recip(a: Self) -> Self {
                $t::from_f32(1.0 / a.to_f32())
            }
            #[inline(always)]
            fn exp(a: Self) -> Self {
                $t::from_f32(a.to_f32().exp())
            }
            #[inline(always)]
            fn ln(a: Self) -> Self {
                $t::from_f32(a.to_f32().ln())
            }
            #[inline(always)]
            fn sin(a: Self) -> Self {
                $t::from_f32(a.to_f32().sin())
            }
            #[inline(always)]
            fn cos(a: Self) -> Self {
                $t::from_f32(a.to_f32().cos())
            }
            #[inline(always)]
            fn tan(a: Self) -> Self {
                $t::from_f32(a.to_f32().tan())
            }
            #[inline(always)]
            fn tanh(a: Self) -> Self {
                $t::from_f32(a.to_f32().tanh())
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
                self.to_f32()
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
                self.to_f32() as i32
            }
        }
        impl CastTo<u32> for $t {
            #[inline(always)]
            fn cast(self) -> u32 {
                self.to_f32() as u32
            }
        }
        // To a half: one rounding to nearest even from the exact value.
        impl CastTo<$t> for f32 {
            #[inline(always)]
            fn cast(self) -> $t {
                $t::from_f32(self)
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
