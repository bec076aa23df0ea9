//! Per-dtype scalar semantics of the `Expr` IR (see `polycompute_core::expr`), written out
//! explicitly wherever Rust's native operator differs from the contract: NaN-propagating
//! `min`/`max`, floor division with `x / 0 == 0`, numpy's float `remainder`, wrapping integer
//! `pow`. Every kernel of this crate calls these functions, so the rules live in one place.

use polycompute_core::{Element, HostSlice, HostVec};

/// A scalar type the CPU backend computes on: `f32`, `f64`, `i32`, `u32`, `i64`, `u8`,
/// `bool`, and the halves `f16` and `bf16` (computed in f32, rounded once per operation:
/// `num_half.rs`). `bool` has invalid bit patterns, hence `CheckedBitPattern` rather than
/// `Pod` (see `memory/block.rs`).
pub(crate) trait Num:
    Element + bytemuck::NoUninit + bytemuck::CheckedBitPattern + bytemuck::Zeroable + Send + Sync + 'static
{
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// The largest value (+inf for floats): the identity of `min`.
    const HIGHEST: Self;
    /// The smallest value (-inf for floats): the identity of `max`.
    const LOWEST: Self;

    /// Borrows host data of this dtype.
    fn of_slice(s: HostSlice<'_>) -> Option<&[Self]>;
    /// Wraps owned elements.
    fn into_host_vec(v: Vec<Self>) -> HostVec;

    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn div(a: Self, b: Self) -> Self;
    fn rem(a: Self, b: Self) -> Self;
    fn pow(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
    fn neg(a: Self) -> Self;
    fn abs(a: Self) -> Self;
    fn floor(a: Self) -> Self;
    fn ceil(a: Self) -> Self;
    fn round(a: Self) -> Self;
    /// 1 or 0 of this dtype.
    fn from_bool(b: bool) -> Self;
    /// True for NaN (never for integers).
    fn is_nan(self) -> bool;
    /// `select`'s condition: non-zero, NaN included.
    #[inline(always)]
    fn nonzero(self) -> bool {
        self != Self::ZERO
    }
}

/// The float-only functions.
pub(crate) trait Float: Num {
    fn sqrt(a: Self) -> Self;
    fn recip(a: Self) -> Self;
    fn exp(a: Self) -> Self;
    fn expm1(a: Self) -> Self;
    fn ln(a: Self) -> Self;
    fn log1p(a: Self) -> Self;
    fn log2(a: Self) -> Self;
    fn log10(a: Self) -> Self;
    fn sin(a: Self) -> Self;
    fn cos(a: Self) -> Self;
    fn tan(a: Self) -> Self;
    fn tanh(a: Self) -> Self;
    /// The element count as this float (for `mean`).
    fn from_usize(n: usize) -> Self;
}

/// The integer-only (bitwise) operations.
pub(crate) trait Int: Num {
    fn and(a: Self, b: Self) -> Self;
    fn or(a: Self, b: Self) -> Self;
    fn xor(a: Self, b: Self) -> Self;
}

macro_rules! host_access {
    ($t:ty, $variant:ident) => {
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
    };
}

macro_rules! float_num {
    ($t:ident, $variant:ident) => {
        impl Num for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const HIGHEST: Self = $t::INFINITY;
            const LOWEST: Self = $t::NEG_INFINITY;
            host_access!($t, $variant);

            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                a + b
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                a - b
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                a * b
            }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self {
                a / b
            }
            /// numpy's `remainder`: `fmod`, moved into the divisor's sign; an exact zero
            /// takes the divisor's sign.
            #[inline(always)]
            fn rem(a: Self, b: Self) -> Self {
                let m = a % b;
                if m == 0.0 {
                    (0.0 as $t).copysign(b)
                } else if (m < 0.0) != (b < 0.0) {
                    m + b
                } else {
                    m
                }
            }
            #[inline(always)]
            fn pow(a: Self, b: Self) -> Self {
                a.powf(b)
            }
            /// IEEE 754-2019 `minimum`: NaN propagates, `-0.0 < +0.0`. Written as selects
            /// without branches so that loops over it vectorise.
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                let r = if a < b { a } else { b };
                // Equal values differ at most in the sign of zero: OR keeps a minus sign.
                let r = if a == b { $t::from_bits(a.to_bits() | b.to_bits()) } else { r };
                if a.is_nan() | b.is_nan() {
                    a + b
                } else {
                    r
                }
            }
            /// IEEE 754-2019 `maximum`: NaN propagates, `+0.0 > -0.0`.
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                let r = if a > b { a } else { b };
                let r = if a == b { $t::from_bits(a.to_bits() & b.to_bits()) } else { r };
                if a.is_nan() | b.is_nan() {
                    a + b
                } else {
                    r
                }
            }
            #[inline(always)]
            fn neg(a: Self) -> Self {
                -a
            }
            #[inline(always)]
            fn abs(a: Self) -> Self {
                a.abs()
            }
            #[inline(always)]
            fn floor(a: Self) -> Self {
                a.floor()
            }
            #[inline(always)]
            fn ceil(a: Self) -> Self {
                a.ceil()
            }
            #[inline(always)]
            fn round(a: Self) -> Self {
                a.round_ties_even()
            }
            #[inline(always)]
            fn from_bool(b: bool) -> Self {
                if b {
                    1.0
                } else {
                    0.0
                }
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
        }

        impl Float for $t {
            #[inline(always)]
            fn sqrt(a: Self) -> Self {
                a.sqrt()
            }
            #[inline(always)]
            fn recip(a: Self) -> Self {
                1.0 / a
            }
            #[inline(always)]
            fn exp(a: Self) -> Self {
                a.exp()
            }
            #[inline(always)]
            fn expm1(a: Self) -> Self {
                a.exp_m1()
            }
            #[inline(always)]
            fn ln(a: Self) -> Self {
                a.ln()
            }
            #[inline(always)]
            fn log1p(a: Self) -> Self {
                a.ln_1p()
            }
            #[inline(always)]
            fn log2(a: Self) -> Self {
                a.log2()
            }
            #[inline(always)]
            fn log10(a: Self) -> Self {
                a.log10()
            }
            #[inline(always)]
            fn sin(a: Self) -> Self {
                a.sin()
            }
            #[inline(always)]
            fn cos(a: Self) -> Self {
                a.cos()
            }
            #[inline(always)]
            fn tan(a: Self) -> Self {
                a.tan()
            }
            #[inline(always)]
            fn tanh(a: Self) -> Self {
                a.tanh()
            }
            #[inline(always)]
            fn from_usize(n: usize) -> Self {
                n as $t
            }
        }
    };
}

float_num!(f32, F32);
float_num!(f64, F64);

/// Integer operations shared by `i32` and `u32` (identity rounding, bitwise ops).
macro_rules! int_common {
    () => {
        const ZERO: Self = 0;
        const ONE: Self = 1;
        const HIGHEST: Self = Self::MAX;
        const LOWEST: Self = Self::MIN;

        #[inline(always)]
        fn add(a: Self, b: Self) -> Self {
            a.wrapping_add(b)
        }
        #[inline(always)]
        fn sub(a: Self, b: Self) -> Self {
            a.wrapping_sub(b)
        }
        #[inline(always)]
        fn mul(a: Self, b: Self) -> Self {
            a.wrapping_mul(b)
        }
        #[inline(always)]
        fn min(a: Self, b: Self) -> Self {
            if b < a {
                b
            } else {
                a
            }
        }
        #[inline(always)]
        fn max(a: Self, b: Self) -> Self {
            if b > a {
                b
            } else {
                a
            }
        }
        #[inline(always)]
        fn floor(a: Self) -> Self {
            a
        }
        #[inline(always)]
        fn ceil(a: Self) -> Self {
            a
        }
        #[inline(always)]
        fn round(a: Self) -> Self {
            a
        }
        #[inline(always)]
        fn from_bool(b: bool) -> Self {
            b as Self
        }
        #[inline(always)]
        fn is_nan(self) -> bool {
            false
        }
    };
}

/// `b^e` modulo 2^64 by squaring (the wrapping power for every exponent of an i64; the low
/// bits of a product depend only on the low bits of its factors, so narrower integers
/// truncate it).
#[inline(always)]
fn wrapping_pow(mut b: i64, mut e: u64) -> i64 {
    let mut r: i64 = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = r.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        e >>= 1;
    }
    r
}

/// The signed integers, i32 and i64.
macro_rules! signed_num {
    ($t:ty, $variant:ident) => {
        impl Num for $t {
            int_common!();
            host_access!($t, $variant);

            /// Floor division; `x / 0 == 0`; `MIN / -1` wraps to `MIN`.
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self {
                if b == 0 {
                    return 0;
                }
                let (q, r) = (a.wrapping_div(b), a.wrapping_rem(b));
                // A non-zero remainder whose sign differs from the divisor's means
                // truncation rounded toward zero, one above the floor.
                if r != 0 && (r ^ b) < 0 {
                    q.wrapping_sub(1)
                } else {
                    q
                }
            }
            /// Floored remainder (the divisor's sign); `x % 0 == 0`.
            #[inline(always)]
            fn rem(a: Self, b: Self) -> Self {
                if b == 0 {
                    return 0;
                }
                let r = a.wrapping_rem(b);
                if r != 0 && (r ^ b) < 0 {
                    r.wrapping_add(b)
                } else {
                    r
                }
            }
            /// Wrapping power; a negative exponent gives the truncated `1 / x^-e`.
            #[inline(always)]
            fn pow(a: Self, e: Self) -> Self {
                if e >= 0 {
                    wrapping_pow(a as i64, e as u64) as $t
                } else {
                    match a {
                        1 => 1,
                        -1 if e & 1 == 0 => 1,
                        -1 => -1,
                        _ => 0,
                    }
                }
            }
            #[inline(always)]
            fn neg(a: Self) -> Self {
                a.wrapping_neg()
            }
            #[inline(always)]
            fn abs(a: Self) -> Self {
                a.wrapping_abs()
            }
        }
    };
}

/// The unsigned integers, u32 and u8.
macro_rules! unsigned_num {
    ($t:ty, $variant:ident) => {
        impl Num for $t {
            int_common!();
            host_access!($t, $variant);

            #[inline(always)]
            fn div(a: Self, b: Self) -> Self {
                a.checked_div(b).unwrap_or(0)
            }
            #[inline(always)]
            fn rem(a: Self, b: Self) -> Self {
                a.checked_rem(b).unwrap_or(0)
            }
            #[inline(always)]
            fn pow(a: Self, e: Self) -> Self {
                a.wrapping_pow(e as u32)
            }
            #[inline(always)]
            fn neg(a: Self) -> Self {
                a.wrapping_neg()
            }
            #[inline(always)]
            fn abs(a: Self) -> Self {
                a
            }
        }
    };
}

signed_num!(i32, I32);
signed_num!(i64, I64);
unsigned_num!(u32, U32);
unsigned_num!(u8, U8);

/// numpy's bool arithmetic: `+` and `max` are or, `*` and `min` and. `- / % pow neg` are
/// refused by the program compiler before a kernel exists; they are defined here only so
/// that the trait is total (as their logical counterparts: xor, and, and, or, identity).
impl Num for bool {
    const ZERO: Self = false;
    const ONE: Self = true;
    const HIGHEST: Self = true;
    const LOWEST: Self = false;
    host_access!(bool, Bool);

    #[inline(always)]
    fn add(a: Self, b: Self) -> Self {
        a | b
    }
    #[inline(always)]
    fn sub(a: Self, b: Self) -> Self {
        a ^ b
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        a & b
    }
    #[inline(always)]
    fn div(a: Self, b: Self) -> Self {
        a & b
    }
    #[inline(always)]
    fn rem(a: Self, b: Self) -> Self {
        a & !b
    }
    #[inline(always)]
    fn pow(a: Self, b: Self) -> Self {
        a | !b
    }
    #[inline(always)]
    fn min(a: Self, b: Self) -> Self {
        a & b
    }
    #[inline(always)]
    fn max(a: Self, b: Self) -> Self {
        a | b
    }
    #[inline(always)]
    fn neg(a: Self) -> Self {
        a
    }
    #[inline(always)]
    fn abs(a: Self) -> Self {
        a
    }
    #[inline(always)]
    fn floor(a: Self) -> Self {
        a
    }
    #[inline(always)]
    fn ceil(a: Self) -> Self {
        a
    }
    #[inline(always)]
    fn round(a: Self) -> Self {
        a
    }
    #[inline(always)]
    fn from_bool(b: bool) -> Self {
        b
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        false
    }
}

macro_rules! int_bitwise {
    ($($t:ty),*) => {$(
        impl Int for $t {
            #[inline(always)]
            fn and(a: Self, b: Self) -> Self {
                a & b
            }
            #[inline(always)]
            fn or(a: Self, b: Self) -> Self {
                a | b
            }
            #[inline(always)]
            fn xor(a: Self, b: Self) -> Self {
                a ^ b
            }
        }
    )*};
}

int_bitwise!(i32, u32, i64, u8, bool);

/// Conversion with the IR's `cast` rules. Rust's `as` is exactly those rules: float to int
/// truncates and saturates with NaN to 0, between integers keeps the low bits (wrapping), to
/// float rounds to nearest even; `bool` converts as 0 or 1, and to `bool` is `!= 0` (NaN
/// true).
pub(crate) trait CastTo<U>: Copy {
    fn cast(self) -> U;
}

macro_rules! cast_impls {
    ($($from:ty => [$($to:ty),*]);* $(;)?) => {$($(
        impl CastTo<$to> for $from {
            #[inline(always)]
            fn cast(self) -> $to {
                self as $to
            }
        }
    )*)*};
}

cast_impls!(
    f32 => [f32, f64, i32, u32, i64, u8];
    f64 => [f32, f64, i32, u32, i64, u8];
    i32 => [f32, f64, i32, u32, i64, u8];
    u32 => [f32, f64, i32, u32, i64, u8];
    i64 => [f32, f64, i32, u32, i64, u8];
    u8 => [f32, f64, i32, u32, i64, u8];
);

macro_rules! bool_casts {
    ($($t:ty),*) => {$(
        impl CastTo<bool> for $t {
            #[inline(always)]
            fn cast(self) -> bool {
                // `!=` is true for NaN, as numpy's `astype(bool)`.
                self != (0 as $t)
            }
        }
        impl CastTo<$t> for bool {
            #[inline(always)]
            fn cast(self) -> $t {
                self as u8 as $t
            }
        }
    )*};
}

bool_casts!(f32, f64, i32, u32, i64, u8);

impl CastTo<bool> for bool {
    #[inline(always)]
    fn cast(self) -> bool {
        self
    }
}

/// Runs `$body` with `$T` bound to the Rust type of `$dtype`.
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            polycompute_core::DType::F32 => {
                type $T = f32;
                $body
            }
            polycompute_core::DType::F64 => {
                type $T = f64;
                $body
            }
            polycompute_core::DType::I32 => {
                type $T = i32;
                $body
            }
            polycompute_core::DType::U32 => {
                type $T = u32;
                $body
            }
            polycompute_core::DType::F16 => {
                type $T = polycompute_core::f16;
                $body
            }
            polycompute_core::DType::BF16 => {
                type $T = polycompute_core::bf16;
                $body
            }
            polycompute_core::DType::I64 => {
                type $T = i64;
                $body
            }
            polycompute_core::DType::U8 => {
                type $T = u8;
                $body
            }
            polycompute_core::DType::Bool => {
                type $T = bool;
                $body
            }
        }
    };
}
pub(crate) use with_dtype;
