//! The reference's scalar semantics: every unary, binary, select and cast rule of
//! `polycompute::expr`, one element at a time, written from the documentation and
//! independently of any backend. Float results are computed in f64 and rounded once to the
//! dtype (correctly rounded for `+ - * / sqrt`, and within half an ULP plus libm's error for
//! the transcendentals). For the halves that is the documented "compute in f32, round once":
//! f32 carries more than twice a half's precision plus two bits, so rounding the f64 result
//! once gives the same bits as rounding the f32 result for `+ - * / sqrt`.

use polycompute::halves::{bf16_from_f64, f16_from_f64};
use polycompute::{BinaryOp, DType, HostVec, Scalar, UnaryOp};

/// Element `i` of a host vector as a scalar.
pub fn get(v: &HostVec, i: usize) -> Scalar {
    match v {
        HostVec::F32(v) => Scalar::F32(v[i]),
        HostVec::F64(v) => Scalar::F64(v[i]),
        HostVec::I32(v) => Scalar::I32(v[i]),
        HostVec::U32(v) => Scalar::U32(v[i]),
        HostVec::F16(v) => Scalar::F16(v[i]),
        HostVec::BF16(v) => Scalar::BF16(v[i]),
        HostVec::I64(v) => Scalar::I64(v[i]),
        HostVec::U8(v) => Scalar::U8(v[i]),
        HostVec::Bool(v) => Scalar::Bool(v[i]),
    }
}

/// The exact value of an integer or bool scalar (`true` is 1), `None` for floats: what the
/// reference compares and sums integers by (f64 loses i64s past 2^53).
pub fn int_value(s: Scalar) -> Option<i128> {
    match s {
        Scalar::I32(v) => Some(v.into()),
        Scalar::U32(v) => Some(v.into()),
        Scalar::I64(v) => Some(v.into()),
        Scalar::U8(v) => Some(v.into()),
        Scalar::Bool(v) => Some(v.into()),
        _ => None,
    }
}

/// `v` wrapped into the integer `dtype` (its low bits, two's complement), or `v != 0` for bool.
fn wrap(v: i128, dtype: DType) -> Scalar {
    match dtype {
        DType::I32 => Scalar::I32(v as i32),
        DType::U32 => Scalar::U32(v as u32),
        DType::I64 => Scalar::I64(v as i64),
        DType::U8 => Scalar::U8(v as u8),
        DType::Bool => Scalar::Bool(v != 0),
        _ => Scalar::F64(v as f64),
    }
}

/// A host vector of `dtype` built element by element.
pub struct Builder(HostVec);

impl Builder {
    /// An empty vector with room for `len` elements.
    pub fn new(dtype: DType, len: usize) -> Builder {
        Builder(match dtype {
            DType::F32 => HostVec::F32(Vec::with_capacity(len)),
            DType::F64 => HostVec::F64(Vec::with_capacity(len)),
            DType::I32 => HostVec::I32(Vec::with_capacity(len)),
            DType::U32 => HostVec::U32(Vec::with_capacity(len)),
            DType::F16 => HostVec::F16(Vec::with_capacity(len)),
            DType::BF16 => HostVec::BF16(Vec::with_capacity(len)),
            DType::I64 => HostVec::I64(Vec::with_capacity(len)),
            DType::U8 => HostVec::U8(Vec::with_capacity(len)),
            DType::Bool => HostVec::Bool(Vec::with_capacity(len)),
        })
    }

    /// Appends `s`, converted to the vector's dtype with [`cast`] if it differs.
    pub fn push(&mut self, s: Scalar) {
        match (&mut self.0, s) {
            (HostVec::F32(v), Scalar::F32(x)) => v.push(x),
            (HostVec::F64(v), Scalar::F64(x)) => v.push(x),
            (HostVec::I32(v), Scalar::I32(x)) => v.push(x),
            (HostVec::U32(v), Scalar::U32(x)) => v.push(x),
            (HostVec::F16(v), Scalar::F16(x)) => v.push(x),
            (HostVec::BF16(v), Scalar::BF16(x)) => v.push(x),
            (HostVec::I64(v), Scalar::I64(x)) => v.push(x),
            (HostVec::U8(v), Scalar::U8(x)) => v.push(x),
            (HostVec::Bool(v), Scalar::Bool(x)) => v.push(x),
            (v, s) => {
                let d = v.dtype();
                self.push(cast(s, d));
            }
        }
    }

    /// The vector.
    pub fn finish(self) -> HostVec {
        self.0
    }
}

/// A float result of `dtype`, rounded from f64 once.
pub fn float(dtype: DType, v: f64) -> Scalar {
    match dtype {
        DType::F32 => Scalar::F32(v as f32),
        DType::F16 => Scalar::F16(f16_from_f64(v)),
        DType::BF16 => Scalar::BF16(bf16_from_f64(v)),
        _ => Scalar::F64(v),
    }
}

/// True when `c` selects the first branch of `select`: any non-zero value, NaN included.
pub fn truthy(c: Scalar) -> bool {
    match c {
        Scalar::F32(x) => x != 0.0,
        Scalar::F64(x) => x != 0.0,
        Scalar::I32(x) => x != 0,
        Scalar::U32(x) => x != 0,
        Scalar::F16(x) => x.to_f64() != 0.0,
        Scalar::BF16(x) => x.to_f64() != 0.0,
        Scalar::I64(x) => x != 0,
        Scalar::U8(x) => x != 0,
        Scalar::Bool(x) => x,
    }
}

/// `cast(x, to)`: float to integer truncates and saturates, NaN gives 0; between integers
/// the low bits are kept (`i32` and `u32` reinterpret each other's bits); to a float rounds
/// to nearest even; a bool is 0 or 1, and anything to bool is `!= 0` (NaN true).
pub fn cast(x: Scalar, to: DType) -> Scalar {
    if to == DType::Bool {
        return Scalar::Bool(truthy(x));
    }
    if let Scalar::Bool(b) = x {
        return cast(Scalar::U8(b.into()), to);
    }
    if let (Some(v), true) = (int_value(x), to.is_int()) {
        return wrap(v, to);
    }
    match (x, to) {
        (x, DType::I64) => Scalar::I64(saturate(x.to_f64(), i64::MIN as f64, i64::MAX as f64) as i64),
        (x, DType::U8) => Scalar::U8(saturate(x.to_f64(), 0.0, 255.0) as u8),
        // One rounding from the exact integer (through f64 it could round twice).
        (Scalar::I64(v), DType::F32) => Scalar::F32(v as f32),
        (Scalar::I32(v), DType::U32) => Scalar::U32(v as u32),
        (Scalar::U32(v), DType::I32) => Scalar::I32(v as i32),
        (Scalar::I32(v), DType::I32) => Scalar::I32(v),
        (Scalar::U32(v), DType::U32) => Scalar::U32(v),
        (x, DType::I32) => Scalar::I32(saturate(x.to_f64(), i32::MIN as f64, i32::MAX as f64) as i32),
        (x, DType::U32) => Scalar::U32(saturate(x.to_f64(), 0.0, u32::MAX as f64) as u32),
        // Every i32, u32 and f32 is exact in f64, so one rounding happens here.
        (x, DType::F32) => Scalar::F32(x.to_f64() as f32),
        (x, DType::F64) => Scalar::F64(x.to_f64()),
        // Every dtype's values are exact in f64: one rounding to nearest even, overflow to ±Inf.
        (x, DType::F16) => Scalar::F16(f16_from_f64(x.to_f64())),
        (x, DType::BF16) => Scalar::BF16(bf16_from_f64(x.to_f64())),
        // Bool was answered above.
        (_, DType::Bool) => Scalar::Bool(truthy(x)),
    }
}

/// Truncation toward zero clamped to `[lo, hi]`, NaN to 0, written out rather than `as`.
fn saturate(x: f64, lo: f64, hi: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.trunc().clamp(lo, hi)
    }
}

/// `op(x)`.
pub fn unary(op: UnaryOp, x: Scalar) -> Scalar {
    match x {
        Scalar::I32(v) => Scalar::I32(match op {
            UnaryOp::Neg => v.wrapping_neg(),
            UnaryOp::Abs => v.wrapping_abs(),
            _ => v,
        }),
        Scalar::U32(v) => Scalar::U32(match op {
            UnaryOp::Neg => v.wrapping_neg(),
            _ => v,
        }),
        // Exact in i128, then wrapped: `abs(i64::MIN)` is 2^63, which wraps back to MIN.
        Scalar::I64(_) | Scalar::U8(_) => {
            let v = int_value(x).unwrap_or(0);
            wrap(
                match op {
                    UnaryOp::Neg => -v,
                    UnaryOp::Abs => v.abs(),
                    _ => v,
                },
                x.dtype(),
            )
        }
        // Only abs is defined on bools (the compiler refuses the rest); it keeps the value.
        Scalar::Bool(_) => x,
        _ => float(x.dtype(), unary_f64(op, x.to_f64())),
    }
}

fn unary_f64(op: UnaryOp, x: f64) -> f64 {
    match op {
        UnaryOp::Neg => -x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Recip => 1.0 / x,
        UnaryOp::Exp => x.exp(),
        UnaryOp::Expm1 => x.exp_m1(),
        UnaryOp::Ln => x.ln(),
        UnaryOp::Log1p => x.ln_1p(),
        UnaryOp::Log2 => x.log2(),
        UnaryOp::Log10 => x.log10(),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        UnaryOp::Tan => x.tan(),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Round => x.round_ties_even(),
    }
}

/// `op(a, b)` for operands of one dtype.
pub fn binary(op: BinaryOp, a: Scalar, b: Scalar) -> Scalar {
    match (a, b) {
        (Scalar::I32(x), Scalar::I32(y)) => Scalar::I32(binary_i32(op, x, y)),
        (Scalar::U32(x), Scalar::U32(y)) => Scalar::U32(binary_u32(op, x, y)),
        (Scalar::I64(_), Scalar::I64(_)) | (Scalar::U8(_), Scalar::U8(_)) => {
            wrap(binary_wide(op, int_value(a).unwrap_or(0), int_value(b).unwrap_or(0), a.dtype()), a.dtype())
        }
        (Scalar::Bool(x), Scalar::Bool(y)) => Scalar::Bool(binary_bool(op, x, y)),
        _ => {
            let (x, y) = (a.to_f64(), b.to_f64());
            let bool_f = |c: bool| if c { 1.0 } else { 0.0 };
            let v = match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::Div => x / y,
                BinaryOp::Rem => remainder(x, y),
                BinaryOp::Pow => x.powf(y),
                BinaryOp::Min => minimum(x, y),
                BinaryOp::Max => -minimum(-x, -y),
                BinaryOp::Eq => bool_f(x == y),
                BinaryOp::Ne => bool_f(x != y),
                BinaryOp::Lt => bool_f(x < y),
                BinaryOp::Le => bool_f(x <= y),
                BinaryOp::Gt => bool_f(x > y),
                BinaryOp::Ge => bool_f(x >= y),
                // Rejected by the type checker for floats.
                BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => f64::NAN,
            };
            float(a.dtype(), v)
        }
    }
}

/// numpy's `remainder`: `fmod(x, y)`, plus `y` when that is non-zero and its sign differs from
/// `y`'s; a zero result takes the sign of `y`.
pub fn remainder(x: f64, y: f64) -> f64 {
    let m = x % y;
    if m == 0.0 {
        0f64.copysign(y)
    } else if (m < 0.0) != (y < 0.0) {
        m + y
    } else {
        m
    }
}

/// NaN-propagating minimum in which `-0.0` is below `+0.0` (IEEE 754-2019 `minimum`).
pub fn minimum(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else if x < y || (x == y && x.is_sign_negative()) {
        x
    } else {
        y
    }
}

fn binary_i32(op: BinaryOp, x: i32, y: i32) -> i32 {
    match op {
        BinaryOp::Add => x.wrapping_add(y),
        BinaryOp::Sub => x.wrapping_sub(y),
        BinaryOp::Mul => x.wrapping_mul(y),
        BinaryOp::Div => floor_div(x, y),
        BinaryOp::Rem if y == 0 => 0,
        BinaryOp::Rem => x.wrapping_sub(floor_div(x, y).wrapping_mul(y)),
        BinaryOp::Pow => {
            if y >= 0 {
                pow_bits(x as u32, y as u32) as i32
            } else {
                // The truncated 1 / x^-y.
                match x {
                    1 => 1,
                    -1 if y % 2 == 0 => 1,
                    -1 => -1,
                    _ => 0,
                }
            }
        }
        _ => compare_or_bits(op, x, y),
    }
}

fn binary_u32(op: BinaryOp, x: u32, y: u32) -> u32 {
    match op {
        BinaryOp::Add => x.wrapping_add(y),
        BinaryOp::Sub => x.wrapping_sub(y),
        BinaryOp::Mul => x.wrapping_mul(y),
        BinaryOp::Div => x.checked_div(y).unwrap_or(0),
        BinaryOp::Rem => x.checked_rem(y).unwrap_or(0),
        BinaryOp::Pow => pow_bits(x, y),
        _ => compare_or_bits(op, x, y),
    }
}

/// Comparisons (1 or 0), min, max and the bitwise ops, for integers of either signedness.
fn compare_or_bits<
    T: Copy + Ord + std::ops::BitAnd<Output = T> + std::ops::BitOr<Output = T> + std::ops::BitXor<Output = T> + From<bool>,
>(
    op: BinaryOp,
    x: T,
    y: T,
) -> T {
    match op {
        BinaryOp::Min => x.min(y),
        BinaryOp::Max => x.max(y),
        BinaryOp::Eq => T::from(x == y),
        BinaryOp::Ne => T::from(x != y),
        BinaryOp::Lt => T::from(x < y),
        BinaryOp::Le => T::from(x <= y),
        BinaryOp::Gt => T::from(x > y),
        BinaryOp::Ge => T::from(x >= y),
        BinaryOp::And => x & y,
        BinaryOp::Or => x | y,
        BinaryOp::Xor => x ^ y,
        _ => T::from(false),
    }
}

/// `op(x, y)` of two integers of `dtype` computed exactly in i128 (before the caller wraps
/// the result to the dtype): an independent route to the backends' wrapping arithmetic.
fn binary_wide(op: BinaryOp, x: i128, y: i128, dtype: DType) -> i128 {
    let floor_div = |x: i128, y: i128| {
        let q = x / y;
        if x % y != 0 && ((x < 0) != (y < 0)) {
            q - 1
        } else {
            q
        }
    };
    match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div if y == 0 => 0,
        // `i64::MIN / -1` is 2^63 here and wraps back to MIN.
        BinaryOp::Div => floor_div(x, y),
        BinaryOp::Rem if y == 0 => 0,
        BinaryOp::Rem => x - floor_div(x, y) * y,
        BinaryOp::Pow if y < 0 => match x {
            1 => 1,
            -1 if y % 2 == 0 => 1,
            -1 => -1,
            _ => 0,
        },
        BinaryOp::Pow => {
            // Squaring modulo the dtype's width at every step keeps the numbers small.
            // Residues below 2^64 multiply within u128.
            let mask = (1u128 << (dtype.size_bytes() as u32 * 8)) - 1;
            let (mut r, mut b, mut e) = (1u128, x as u128 & mask, y);
            while e > 0 {
                if e & 1 == 1 {
                    r = (r * b) & mask;
                }
                b = (b * b) & mask;
                e >>= 1;
            }
            r as i128
        }
        BinaryOp::Min => x.min(y),
        BinaryOp::Max => x.max(y),
        BinaryOp::Eq => (x == y).into(),
        BinaryOp::Ne => (x != y).into(),
        BinaryOp::Lt => (x < y).into(),
        BinaryOp::Le => (x <= y).into(),
        BinaryOp::Gt => (x > y).into(),
        BinaryOp::Ge => (x >= y).into(),
        BinaryOp::And => x & y,
        BinaryOp::Or => x | y,
        BinaryOp::Xor => x ^ y,
    }
}

/// numpy's bool arithmetic: `+` is or, `*` is and (so are `max` and `min`); the type checker
/// refuses `- / % pow`, so their `false` here is never compared.
fn binary_bool(op: BinaryOp, x: bool, y: bool) -> bool {
    match op {
        BinaryOp::Add | BinaryOp::Or | BinaryOp::Max => x || y,
        BinaryOp::Mul | BinaryOp::And | BinaryOp::Min => x && y,
        BinaryOp::Xor => x != y,
        BinaryOp::Eq => x == y,
        BinaryOp::Ne => x != y,
        BinaryOp::Lt => !x && y,
        BinaryOp::Le => !x || y,
        BinaryOp::Gt => x && !y,
        BinaryOp::Ge => x || !y,
        BinaryOp::Sub | BinaryOp::Div | BinaryOp::Rem | BinaryOp::Pow => false,
    }
}

/// Floor division with the wrap `MIN / -1 = MIN` and division by zero giving 0.
fn floor_div(x: i32, y: i32) -> i32 {
    if y == 0 {
        return 0;
    }
    let (q, r) = (x.wrapping_div(y), x.wrapping_rem(y));
    if r != 0 && ((r < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }
}

/// `x^e` modulo 2^32 by repeated squaring (the same bits for i32 and u32).
fn pow_bits(mut x: u32, mut e: u32) -> u32 {
    let mut r: u32 = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = r.wrapping_mul(x);
        }
        x = x.wrapping_mul(x);
        e >>= 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use BinaryOp::*;

    fn i(op: BinaryOp, x: i32, y: i32) -> i32 {
        binary_i32(op, x, y)
    }

    #[test]
    fn integer_division_floors_and_survives_zero_and_overflow() {
        assert_eq!((i(Div, 7, 2), i(Div, -7, 2), i(Div, 7, -2), i(Div, -7, -2)), (3, -4, -4, 3));
        assert_eq!((i(Rem, 7, 2), i(Rem, -7, 2), i(Rem, 7, -2), i(Rem, -7, -2)), (1, 1, -1, -1));
        assert_eq!((i(Div, 5, 0), i(Rem, 5, 0)), (0, 0));
        assert_eq!((i(Div, i32::MIN, -1), i(Rem, i32::MIN, -1)), (i32::MIN, 0));
        assert_eq!((binary_u32(Div, 7, 0), binary_u32(Rem, u32::MAX, 10)), (0, 5));
    }

    #[test]
    fn integer_arithmetic_wraps() {
        assert_eq!(i(Add, i32::MAX, 1), i32::MIN);
        assert_eq!(i(Mul, 65_536, 65_536), 0);
        assert_eq!(binary_u32(Sub, 0, 1), u32::MAX);
        assert_eq!(unary(UnaryOp::Abs, Scalar::I32(i32::MIN)), Scalar::I32(i32::MIN));
        assert_eq!(unary(UnaryOp::Neg, Scalar::U32(1)), Scalar::U32(u32::MAX));
    }

    #[test]
    fn integer_pow_wraps_and_truncates_negative_exponents() {
        assert_eq!((i(Pow, 3, 4), i(Pow, -2, 3), i(Pow, 0, 0)), (81, -8, 1));
        assert_eq!(i(Pow, 2, 31), i32::MIN);
        assert_eq!(i(Pow, 2, 32), 0);
        assert_eq!((i(Pow, 2, -1), i(Pow, 1, -5), i(Pow, -1, -3), i(Pow, -1, -2), i(Pow, 0, -1)), (0, 1, -1, 1, 0));
        assert_eq!(binary_u32(Pow, 3, 40), 3u32.wrapping_pow(40));
    }

    #[test]
    fn float_rules_follow_numpy() {
        let f = |op, x: f64, y: f64| binary(op, Scalar::F64(x), Scalar::F64(y)).to_f64();
        assert_eq!((f(Rem, -7.0, 2.0), f(Rem, 7.0, -2.0), f(Rem, 7.5, 2.0)), (1.0, -1.0, 1.5));
        assert!(f(Rem, -4.0, 2.0).is_sign_positive() && f(Rem, 4.0, -2.0).is_sign_negative());
        assert!(f(Rem, 1.0, 0.0).is_nan());
        assert!(f(Min, f64::NAN, 1.0).is_nan() && f(Max, 1.0, f64::NAN).is_nan());
        assert!(f(Min, 0.0, -0.0).is_sign_negative() && f(Min, -0.0, 0.0).is_sign_negative());
        assert!(f(Max, 0.0, -0.0).is_sign_positive() && f(Max, -0.0, 0.0).is_sign_positive());
        assert_eq!((f(Lt, f64::NAN, 1.0), f(Eq, f64::NAN, f64::NAN), f(Ne, f64::NAN, f64::NAN)), (0.0, 0.0, 1.0));
        assert_eq!(f(Eq, 0.0, -0.0), 1.0);
        assert_eq!(f(Div, 1.0, -0.0), f64::NEG_INFINITY);
        // f32 results are the f64 result rounded once.
        assert_eq!(binary(Add, Scalar::F32(1.0), Scalar::F32(1e-8)), Scalar::F32(1.0));
        assert_eq!(binary(Lt, Scalar::F32(1.0), Scalar::F32(2.0)), Scalar::F32(1.0));
    }

    #[test]
    fn rounding_and_selection() {
        let r = |x: f64| unary(UnaryOp::Round, Scalar::F64(x)).to_f64();
        assert_eq!((r(0.5), r(1.5), r(2.5), r(-2.5), r(-0.4)), (0.0, 2.0, 2.0, -2.0, -0.0));
        assert!(r(-0.4).is_sign_negative());
        assert!(truthy(Scalar::F32(f32::NAN)) && !truthy(Scalar::F64(-0.0)) && truthy(Scalar::U32(2)));
        assert_eq!(unary(UnaryOp::Sqrt, Scalar::F32(2.0)), Scalar::F32(2f32.sqrt()));
    }

    #[test]
    fn casts_saturate_and_reinterpret() {
        assert_eq!(cast(Scalar::F32(f32::NAN), DType::I32), Scalar::I32(0));
        assert_eq!(cast(Scalar::F64(-2.9), DType::I32), Scalar::I32(-2));
        assert_eq!(cast(Scalar::F64(3e9), DType::I32), Scalar::I32(i32::MAX));
        assert_eq!(cast(Scalar::F64(-1.5), DType::U32), Scalar::U32(0));
        assert_eq!(cast(Scalar::F32(f32::INFINITY), DType::U32), Scalar::U32(u32::MAX));
        assert_eq!(cast(Scalar::I32(-1), DType::U32), Scalar::U32(u32::MAX));
        assert_eq!(cast(Scalar::U32(16_777_217), DType::F32), Scalar::F32(16_777_216.0));
        assert_eq!(cast(Scalar::F64(1.0 + 1e-12), DType::F32), Scalar::F32(1.0));
        assert_eq!(cast(Scalar::I32(-7), DType::F64), Scalar::F64(-7.0));
    }
}
