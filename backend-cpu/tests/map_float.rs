//! `Op::Map` on f32 and f64: every unary and binary op over every pair of special values
//! (signed zeros, infinities, NaN, extremes), against references computed in f64 from the
//! semantics in `polycompute_core::expr`.

mod common;

use common::dev;
use polycompute_core::{BinaryOp, DeviceArray, Expr, UnaryOp};
use polycompute_testing::{Specials, UlpFloat, Ulps};

/// A float dtype under test, seen through f64.
trait F: Specials + UlpFloat {
    fn of(v: f64) -> Self;
}

impl F for f32 {
    fn of(v: f64) -> f32 {
        v as f32
    }
}

impl F for f64 {
    fn of(v: f64) -> f64 {
        v
    }
}

/// Bit for bit (signed zeros included) for an allowance of 0 ULPs, else within `ulps`.
fn tolerance(ulps: u64) -> Ulps {
    if ulps == 0 {
        Ulps::EXACT
    } else {
        Ulps::within(ulps)
    }
}

/// Round half to even, written without `round_ties_even`.
fn half_even(v: f64) -> f64 {
    if !v.is_finite() {
        return v;
    }
    let f = v.floor();
    let r = match (v - f).partial_cmp(&0.5) {
        Some(std::cmp::Ordering::Less) => f,
        Some(std::cmp::Ordering::Greater) => f + 1.0,
        _ if f % 2.0 == 0.0 => f,
        _ => f + 1.0,
    };
    // Keep the sign of a result that rounds to zero (-0.4 → -0.0).
    if r == 0.0 {
        0f64.copysign(v)
    } else {
        r
    }
}

/// The unary op in f64, and how many ULPs of the target type it may be off.
fn unary_ref(op: UnaryOp, v: f64) -> (f64, u64) {
    match op {
        UnaryOp::Neg => (-v, 0),
        UnaryOp::Abs => (if v.is_sign_negative() { -v } else { v }, 0),
        UnaryOp::Sqrt => (v.sqrt(), 0),
        UnaryOp::Recip => (1.0 / v, 0),
        UnaryOp::Floor => (v.floor(), 0),
        UnaryOp::Ceil => (v.ceil(), 0),
        UnaryOp::Round => (half_even(v), 0),
        UnaryOp::Exp => (v.exp(), 2),
        UnaryOp::Expm1 => (v.exp_m1(), 2),
        UnaryOp::Ln => (v.ln(), 2),
        UnaryOp::Log1p => (v.ln_1p(), 2),
        UnaryOp::Log2 => (v.log2(), 2),
        UnaryOp::Log10 => (v.log10(), 2),
        UnaryOp::Sin => (v.sin(), 2),
        UnaryOp::Cos => (v.cos(), 2),
        UnaryOp::Tan => (v.tan(), 2),
        UnaryOp::Tanh => (v.tanh(), 2),
    }
}

/// numpy's `minimum`/`maximum` with IEEE 754-2019 signed zeros.
fn min_ref(a: f64, b: f64, want_min: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == b {
        // Only the zeros' signs can differ.
        let neg = if want_min {
            a.is_sign_negative() || b.is_sign_negative()
        } else {
            a.is_sign_negative() && b.is_sign_negative()
        };
        return if neg { -a.abs() } else { a.abs() };
    }
    if (a < b) == want_min {
        a
    } else {
        b
    }
}

/// numpy's `remainder`: the result has the divisor's sign, `a - b·floor(a / b)` exactly.
fn rem_ref(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() || a.is_infinite() || b == 0.0 {
        return f64::NAN;
    }
    let m = a % b; // fmod is exact
    if m == 0.0 {
        return 0f64.copysign(b);
    }
    if (m < 0.0) == (b < 0.0) {
        m
    } else {
        m + b
    }
}

fn bool_ref(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// The binary op in f64, and its ULP allowance in the target type.
fn binary_ref(op: BinaryOp, a: f64, b: f64) -> (f64, u64) {
    match op {
        BinaryOp::Add => (a + b, 0),
        BinaryOp::Sub => (a - b, 0),
        BinaryOp::Mul => (a * b, 0),
        BinaryOp::Div => (a / b, 0),
        BinaryOp::Rem => (rem_ref(a, b), 0),
        BinaryOp::Pow => (a.powf(b), 2),
        BinaryOp::Min => (min_ref(a, b, true), 0),
        BinaryOp::Max => (min_ref(a, b, false), 0),
        BinaryOp::Eq => (bool_ref(a == b), 0),
        BinaryOp::Ne => (bool_ref(a != b), 0),
        BinaryOp::Lt => (bool_ref(a < b), 0),
        BinaryOp::Le => (bool_ref(a <= b), 0),
        BinaryOp::Gt => (bool_ref(a > b), 0),
        BinaryOp::Ge => (bool_ref(a >= b), 0),
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => unreachable!("integer-only"),
    }
}

fn unary_ops<T: F>() {
    let d = dev();
    let xs = T::extended();
    let x = d.from_slice(&xs, &[xs.len()]).unwrap();
    for op in UnaryOp::ALL {
        let got = x.map(|e| e.unary(op)).unwrap().to_vec().unwrap();
        let mut want = Vec::new();
        let mut ulps = 0;
        for &v in &xs {
            let (w, u) = unary_ref(op, v.as_f64());
            want.push(T::of(w));
            ulps = u;
        }
        tolerance(ulps).assert(&got, &want, format!("{}({})", op.name(), T::DTYPE));
    }
}

#[test]
fn unary_ops_f32() {
    unary_ops::<f32>();
}

#[test]
fn unary_ops_f64() {
    unary_ops::<f64>();
}

/// Every pair of specials, through broadcasting `[n, 1]` against `[n]`.
fn binary_ops<T: F>() {
    let d = dev();
    let xs = T::extended();
    let n = xs.len();
    let a = d.from_slice(&xs, &[n, 1]).unwrap();
    let b = d.from_slice(&xs, &[n]).unwrap();
    for op in BinaryOp::ALL.into_iter().filter(|o| !o.int_only()) {
        let got: DeviceArray<T> = a.zip_map(&b, |x, y| x.binary(op, y)).unwrap();
        assert_eq!(got.shape(), &[n, n]);
        let got = got.to_vec().unwrap();
        let mut want = Vec::new();
        let mut ulps = 0;
        for &x in &xs {
            for &y in &xs {
                let (w, u) = binary_ref(op, x.as_f64(), y.as_f64());
                want.push(T::of(w));
                ulps = u;
            }
        }
        tolerance(ulps).assert(&got, &want, format!("{}({})", op.name(), T::DTYPE));
    }
}

#[test]
fn binary_ops_f32() {
    binary_ops::<f32>();
}

#[test]
fn binary_ops_f64() {
    binary_ops::<f64>();
}

#[test]
fn min_max_propagate_nan_and_order_signed_zeros() {
    let d = dev();
    let a = d.from_slice(&[f32::NAN, 1.0, -0.0, 0.0, 2.0], &[5]).unwrap();
    let b = d.from_slice(&[1.0, f32::NAN, 0.0, -0.0, -3.0], &[5]).unwrap();
    let lo = a.zip_map(&b, |x, y| x.min(y)).unwrap().to_vec().unwrap();
    let hi = a.zip_map(&b, |x, y| x.max(y)).unwrap().to_vec().unwrap();
    assert!(lo[0].is_nan() && lo[1].is_nan() && hi[0].is_nan() && hi[1].is_nan());
    assert!(lo[2].to_bits() == (-0.0f32).to_bits() && lo[3].to_bits() == (-0.0f32).to_bits());
    assert!(hi[2].to_bits() == 0 && hi[3].to_bits() == 0);
    assert_eq!((lo[4], hi[4]), (-3.0, 2.0));
}

#[test]
fn select_treats_nan_as_true_and_takes_any_condition_dtype() {
    let d = dev();
    let c = d.from_slice(&[0.0f64, f64::NAN, -0.0, 2.0], &[4]).unwrap();
    let got: Vec<f64> =
        c.map(|x| Expr::select(x.clone(), Expr::float(10.0), x.clone() - 1.0)).unwrap().to_vec().unwrap();
    assert_eq!(got, vec![-1.0, 10.0, -1.0, 10.0]);
    // A u32 condition (the index) choosing between f32 values.
    let x = d.from_slice(&[1.5f32, 2.5, 3.5], &[3]).unwrap();
    let got = x.map(|v| Expr::select(Expr::index(), v.clone(), -v)).unwrap().to_vec().unwrap();
    assert_eq!(got, vec![-1.5, 2.5, 3.5]);
}
