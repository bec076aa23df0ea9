//! Constant folding: the value of an instruction whose operands are all constants, computed
//! on the host with exactly the semantics of the module docs (`super`), in the instruction's
//! dtype. The program compiler uses it so that casts of literals and subexpressions made of
//! literals reach no device: `Expr::float(0.5).cast(DType::F32)` is the f32 constant 0.5, not
//! an f64 literal and a conversion a device without f64 could not run.

use super::{BinaryOp, UnaryOp};
use crate::dtype::{bf16, f16, DType, Scalar};

/// `op(a)` in `a`'s dtype, or `None` when the op is not defined for it (a float-only op on
/// an integer: the type checker reports that case before folding is tried).
pub(super) fn unary(op: UnaryOp, a: Scalar) -> Option<Scalar> {
    use UnaryOp::*;
    Some(match a {
        Scalar::F32(x) => Scalar::F32(float_unary(op, x)),
        Scalar::F64(x) => Scalar::F64(float_unary(op, x)),
        Scalar::I32(x) => Scalar::I32(match op {
            Neg => x.wrapping_neg(),
            Abs => x.wrapping_abs(),
            Floor | Ceil | Round => x,
            _ => return None,
        }),
        Scalar::U32(x) => Scalar::U32(match op {
            Neg => x.wrapping_neg(),
            Abs | Floor | Ceil | Round => x,
            _ => return None,
        }),
        Scalar::I64(x) => Scalar::I64(match op {
            Neg => x.wrapping_neg(),
            Abs => x.wrapping_abs(),
            Floor | Ceil | Round => x,
            _ => return None,
        }),
        Scalar::U8(x) => Scalar::U8(match op {
            Neg => x.wrapping_neg(),
            Abs | Floor | Ceil | Round => x,
            _ => return None,
        }),
        // numpy keeps `abs` of a bool a bool and refuses the rest (the type checker says so).
        Scalar::Bool(x) => Scalar::Bool(match op {
            Abs => x,
            _ => return None,
        }),
        // Halves compute in f32 and round once to nearest even.
        Scalar::F16(x) => Scalar::F16(f16::from_f32(unary_f32(op, x.to_f32())?)),
        Scalar::BF16(x) => Scalar::BF16(bf16::from_f32(unary_f32(op, x.to_f32())?)),
    })
}

/// `op(x)` in f32, the arithmetic of the half dtypes.
fn unary_f32(op: UnaryOp, x: f32) -> Option<f32> {
    match unary(op, Scalar::F32(x))? {
        Scalar::F32(r) => Some(r),
        _ => None,
    }
}

/// `a op b` for operands of one dtype, or `None` when the dtypes differ or the op is not
/// defined for them.
pub(super) fn binary(op: BinaryOp, a: Scalar, b: Scalar) -> Option<Scalar> {
    Some(match (a, b) {
        (Scalar::F32(x), Scalar::F32(y)) => Scalar::F32(float_binary(op, x, y)?),
        (Scalar::F64(x), Scalar::F64(y)) => Scalar::F64(float_binary(op, x, y)?),
        (Scalar::I32(x), Scalar::I32(y)) => Scalar::I32(i32_binary(op, x, y)?),
        (Scalar::U32(x), Scalar::U32(y)) => Scalar::U32(u32_binary(op, x, y)?),
        (Scalar::I64(x), Scalar::I64(y)) => Scalar::I64(i64_binary(op, x, y)?),
        (Scalar::U8(x), Scalar::U8(y)) => Scalar::U8(u8_binary(op, x, y)?),
        (Scalar::Bool(x), Scalar::Bool(y)) => Scalar::Bool(bool_binary(op, x, y)?),
        // Halves compute in f32 and round once to nearest even (exact for the comparisons'
        // 0 and 1, and for min/max, which pick an operand).
        (Scalar::F16(x), Scalar::F16(y)) => Scalar::F16(f16::from_f32(float_binary(op, x.to_f32(), y.to_f32())?)),
        (Scalar::BF16(x), Scalar::BF16(y)) => Scalar::BF16(bf16::from_f32(float_binary(op, x.to_f32(), y.to_f32())?)),
        _ => return None,
    })
}

/// `a` converted to `to` (Rust's `as`: floats to integers truncate and saturate, NaN is 0;
/// between integers the low bits are kept (wrapping, two's complement); to a float rounds to
/// nearest even, once — f64 to a half directly, not through f32 — and overflows to ±Inf;
/// `bool` is 0 or 1, and anything to `bool` is `!= 0`, NaN true). A half source is first
/// widened to f32, which is exact.
pub(super) fn cast(a: Scalar, to: DType) -> Scalar {
    macro_rules! to {
        ($v:expr, $zero:expr) => {
            match to {
                DType::F32 => Scalar::F32($v as f32),
                DType::F64 => Scalar::F64($v as f64),
                DType::I32 => Scalar::I32($v as i32),
                DType::U32 => Scalar::U32($v as u32),
                DType::I64 => Scalar::I64($v as i64),
                DType::U8 => Scalar::U8($v as u8),
                DType::Bool => Scalar::Bool($v != $zero),
                // Every source but i64 beyond 2^53 is exact in f64 (i32, u32, u8, f32 and the
                // halves widened to f32); such an i64 is far past f16's range, and rounds
                // twice on its way to bf16.
                DType::F16 => Scalar::F16(crate::halves::f16_from_f64($v as f64)),
                DType::BF16 => Scalar::BF16(crate::halves::bf16_from_f64($v as f64)),
            }
        };
    }
    match a {
        Scalar::F32(v) => to!(v, 0.0),
        Scalar::F64(v) => to!(v, 0.0),
        Scalar::I32(v) => to!(v, 0),
        Scalar::U32(v) => to!(v, 0),
        Scalar::I64(v) => to!(v, 0),
        Scalar::U8(v) => to!(v, 0),
        Scalar::Bool(v) => to!(v as u8, 0),
        Scalar::F16(v) => to!(v.to_f32(), 0.0),
        Scalar::BF16(v) => to!(v.to_f32(), 0.0),
    }
}

/// True when `c` selects the `then` branch: non-zero, NaN included.
pub(super) fn truthy(c: Scalar) -> bool {
    match c {
        Scalar::F32(v) => v != 0.0,
        Scalar::F64(v) => v != 0.0,
        Scalar::I32(v) => v != 0,
        Scalar::U32(v) => v != 0,
        Scalar::I64(v) => v != 0,
        Scalar::U8(v) => v != 0,
        Scalar::Bool(v) => v,
        Scalar::F16(v) => v.to_f32() != 0.0,
        Scalar::BF16(v) => v.to_f32() != 0.0,
    }
}

/// The float operations folding needs, generic over f32 and f64: num-traits' `Float`, and
/// rounding half to even (`Round`'s rule), which it lacks.
trait Float: num_traits::Float {
    fn round_ties_even(self) -> Self;
}

impl Float for f32 {
    fn round_ties_even(self) -> Self {
        f32::round_ties_even(self)
    }
}

impl Float for f64 {
    fn round_ties_even(self) -> Self {
        f64::round_ties_even(self)
    }
}

/// `op(x)` for a float dtype (every unary op is defined on floats).
fn float_unary<F: Float>(op: UnaryOp, x: F) -> F {
    use UnaryOp::*;
    match op {
        Neg => -x,
        Abs => x.abs(),
        Sqrt => x.sqrt(),
        Recip => F::one() / x,
        Exp => x.exp(),
        Expm1 => x.exp_m1(),
        Ln => x.ln(),
        Log1p => x.ln_1p(),
        Log2 => x.log2(),
        Log10 => x.log10(),
        Sin => x.sin(),
        Cos => x.cos(),
        Tan => x.tan(),
        Tanh => x.tanh(),
        Floor => x.floor(),
        Ceil => x.ceil(),
        Round => x.round_ties_even(),
    }
}

fn float_binary<F: Float>(op: BinaryOp, x: F, y: F) -> Option<F> {
    use BinaryOp::*;
    let flag = |b: bool| if b { F::one() } else { F::zero() };
    Some(match op {
        Add => x + y,
        Sub => x - y,
        Mul => x * y,
        Div => x / y,
        // numpy's remainder: fmod, moved into the divisor's sign; a zero takes the divisor's sign.
        Rem => {
            let r = x % y;
            if r.is_nan() {
                r
            } else if r == F::zero() {
                F::zero().copysign(y)
            } else if r.is_sign_negative() != y.is_sign_negative() {
                r + y
            } else {
                r
            }
        }
        Pow => x.powf(y),
        // NaN propagates; -0.0 orders below +0.0.
        Min | Max => {
            if x.is_nan() || y.is_nan() {
                if x.is_nan() {
                    x
                } else {
                    y
                }
            } else if x == y {
                let x_first = x.is_sign_negative() == (op == Min);
                if x_first {
                    x
                } else {
                    y
                }
            } else if (x < y) == (op == Min) {
                x
            } else {
                y
            }
        }
        Eq => flag(x == y),
        Ne => flag(x != y),
        Lt => flag(x < y),
        Le => flag(x <= y),
        Gt => flag(x > y),
        Ge => flag(x >= y),
        And | Or | Xor => return None,
    })
}

/// Signed integer ops (i32, i64): wrapping, floor division.
macro_rules! signed_binary {
    ($name:ident, $t:ty) => {
        fn $name(op: BinaryOp, x: $t, y: $t) -> Option<$t> {
            use BinaryOp::*;
            Some(match op {
                Add => x.wrapping_add(y),
                Sub => x.wrapping_sub(y),
                Mul => x.wrapping_mul(y),
                // Floor division and the floored remainder; by zero gives 0, MIN / -1 wraps.
                Div if y == 0 => 0,
                Div => {
                    let q = x.wrapping_div(y);
                    if x.wrapping_rem(y) != 0 && ((x < 0) != (y < 0)) {
                        q - 1
                    } else {
                        q
                    }
                }
                Rem if y == 0 => 0,
                Rem => {
                    let r = x.wrapping_rem(y);
                    if r != 0 && ((r < 0) != (y < 0)) {
                        r + y
                    } else {
                        r
                    }
                }
                // A negative exponent is the truncated 1 / x^-e: 0 unless |x| == 1 (and 0 for x == 0,
                // division by zero giving 0).
                Pow if y < 0 => match x {
                    1 => 1,
                    -1 if y % 2 == 0 => 1,
                    -1 => -1,
                    _ => 0,
                },
                Pow => wrapping_pow(x as i64, y as u64) as $t,
                Min => x.min(y),
                Max => x.max(y),
                Eq => (x == y) as $t,
                Ne => (x != y) as $t,
                Lt => (x < y) as $t,
                Le => (x <= y) as $t,
                Gt => (x > y) as $t,
                Ge => (x >= y) as $t,
                And => x & y,
                Or => x | y,
                Xor => x ^ y,
            })
        }
    };
}

/// Unsigned integer ops (u32, u8): wrapping.
macro_rules! unsigned_binary {
    ($name:ident, $t:ty) => {
        fn $name(op: BinaryOp, x: $t, y: $t) -> Option<$t> {
            use BinaryOp::*;
            Some(match op {
                Add => x.wrapping_add(y),
                Sub => x.wrapping_sub(y),
                Mul => x.wrapping_mul(y),
                Div => x.checked_div(y).unwrap_or(0),
                Rem => x.checked_rem(y).unwrap_or(0),
                Pow => x.wrapping_pow(y as u32),
                Min => x.min(y),
                Max => x.max(y),
                Eq => (x == y) as $t,
                Ne => (x != y) as $t,
                Lt => (x < y) as $t,
                Le => (x <= y) as $t,
                Gt => (x > y) as $t,
                Ge => (x >= y) as $t,
                And => x & y,
                Or => x | y,
                Xor => x ^ y,
            })
        }
    };
}

/// `b^e` modulo 2^64 by squaring; truncated to a narrower integer it is that integer's
/// wrapping power too (the low bits of a product depend only on the low bits of its factors).
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

signed_binary!(i32_binary, i32);
signed_binary!(i64_binary, i64);
unsigned_binary!(u32_binary, u32);
unsigned_binary!(u8_binary, u8);

/// numpy's bool arithmetic: `+` is logical or, `*` logical and (as are `max` and `min`);
/// `- / % pow` are refused by the type checker before folding is tried.
fn bool_binary(op: BinaryOp, x: bool, y: bool) -> Option<bool> {
    use BinaryOp::*;
    Some(match op {
        Add | Or | Max => x | y,
        Mul | And | Min => x & y,
        Xor => x ^ y,
        Eq => x == y,
        Ne => x != y,
        Lt => !x & y,
        Le => x <= y,
        Gt => x & !y,
        Ge => x >= y,
        Sub | Div | Rem | Pow => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_and_remainder_floor() {
        let b = |op, x, y| binary(op, Scalar::I32(x), Scalar::I32(y));
        assert_eq!(b(BinaryOp::Div, -7, 2), Some(Scalar::I32(-4)));
        assert_eq!(b(BinaryOp::Rem, -7, 2), Some(Scalar::I32(1)));
        assert_eq!(b(BinaryOp::Div, i32::MIN, -1), Some(Scalar::I32(i32::MIN)));
        assert_eq!(b(BinaryOp::Div, 5, 0), Some(Scalar::I32(0)));
        assert_eq!(b(BinaryOp::Pow, -1, -3), Some(Scalar::I32(-1)));
        assert_eq!(b(BinaryOp::Pow, 2, -1), Some(Scalar::I32(0)));
    }

    #[test]
    fn float_remainder_min_max_and_casts_follow_the_docs() {
        let f = |op, x, y| binary(op, Scalar::F64(x), Scalar::F64(y));
        assert_eq!(f(BinaryOp::Rem, -2.5, 2.0), Some(Scalar::F64(1.5)));
        assert_eq!(f(BinaryOp::Rem, 4.0, -2.0), Some(Scalar::F64(-0.0)));
        assert_eq!(f(BinaryOp::Min, 0.0, -0.0), Some(Scalar::F64(-0.0)));
        assert_eq!(f(BinaryOp::Max, -0.0, 0.0), Some(Scalar::F64(0.0)));
        assert!(matches!(f(BinaryOp::Max, f64::NAN, 1.0), Some(Scalar::F64(v)) if v.is_nan()));
        assert_eq!(cast(Scalar::F64(-1.5), DType::U32), Scalar::U32(0));
        assert_eq!(cast(Scalar::F64(f64::NAN), DType::I32), Scalar::I32(0));
        assert_eq!(cast(Scalar::I32(-1), DType::U32), Scalar::U32(u32::MAX));
        assert_eq!(unary(UnaryOp::Round, Scalar::F32(2.5)), Some(Scalar::F32(2.0)));
        assert!(truthy(Scalar::F32(f32::NAN)) && !truthy(Scalar::F32(-0.0)));
    }

    #[test]
    fn halves_compute_in_f32_and_round_once() {
        let h = |v: f32| Scalar::F16(f16::from_f32(v));
        let b = |v: f32| Scalar::BF16(bf16::from_f32(v));
        // Ties to even, overflow to Inf, the smallest subnormal halved (a tie with zero).
        assert_eq!(binary(BinaryOp::Add, h(2048.0), h(1.0)), Some(h(2048.0)));
        assert_eq!(binary(BinaryOp::Add, h(2048.0), h(3.0)), Some(h(2052.0)));
        assert_eq!(binary(BinaryOp::Add, h(65504.0), h(16.0)), Some(Scalar::F16(f16::INFINITY)));
        assert_eq!(binary(BinaryOp::Mul, Scalar::F16(f16::from_bits(1)), h(0.5)), Some(h(0.0)));
        assert_eq!(binary(BinaryOp::Add, b(256.0), b(1.0)), Some(b(256.0)));
        assert_eq!(binary(BinaryOp::Lt, b(1.0), b(2.0)), Some(b(1.0)));
        assert_eq!(unary(UnaryOp::Sqrt, h(2.0)), Some(Scalar::F16(f16::from_f32(2f32.sqrt()))));
        // Casts: one rounding from f64 (1 + 2^-11 + 2^-40 is above the tie), saturation, NaN.
        let above = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(cast(Scalar::F64(above), DType::F16), Scalar::F16(f16::from_bits(0x3c01)));
        assert_eq!(cast(h(-7.5), DType::I32), Scalar::I32(-7));
        assert_eq!(cast(Scalar::F16(f16::NAN), DType::U32), Scalar::U32(0));
        assert_eq!(cast(Scalar::F16(f16::MAX), DType::BF16), b(65536.0));
        assert!(truthy(Scalar::BF16(bf16::NAN)) && !truthy(Scalar::F16(f16::NEG_ZERO)));
    }
}
