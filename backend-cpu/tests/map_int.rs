//! `Op::Map` on i32 and u32 against references computed in i64/f64 from the semantics in
//! `polycompute_core::expr`: wrapping arithmetic, floor division and remainder with
//! `x / 0 == 0`, wrapping `pow` with negative exponents, bitwise ops, comparisons.

mod common;

use common::dev;
use polycompute_core::{BinaryOp, DeviceArray, Expr, UnaryOp};
use polycompute_testing::Specials;

/// An integer dtype under test, seen through i64.
trait I: Specials {
    const BITS: u32;
    fn to(self) -> i64;
}

impl I for i32 {
    const BITS: u32 = 32;
    fn to(self) -> i64 {
        self as i64
    }
}

impl I for u32 {
    const BITS: u32 = 32;
    fn to(self) -> i64 {
        self as i64
    }
}

/// `v` reduced modulo 2^32 into the dtype's range, as i64.
fn wrap<T: I>(v: i128, signed: bool) -> i64 {
    let m = v.rem_euclid(1i128 << T::BITS);
    if signed && m >= 1i128 << (T::BITS - 1) {
        (m - (1i128 << T::BITS)) as i64
    } else {
        m as i64
    }
}

/// Floor of `a / b` for integers, through f64 (exact here: |a|, |b| < 2^32 keep the
/// quotient's distance to the next integer far above f64's resolution).
fn floor_div(a: i64, b: i64) -> i64 {
    (a as f64 / b as f64).floor() as i64
}

fn pow_ref(a: i64, e: i64) -> i128 {
    if e < 0 {
        return match a {
            1 => 1,
            -1 => {
                if e % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        };
    }
    // Repeated multiplication modulo 2^64 keeps the low 32 bits exact.
    let mut r: u64 = 1;
    for _ in 0..e {
        r = r.wrapping_mul(a as u64);
    }
    r as i128
}

fn binary_ref(op: BinaryOp, a: i64, b: i64) -> i128 {
    let (a128, b128) = (a as i128, b as i128);
    match op {
        BinaryOp::Add => a128 + b128,
        BinaryOp::Sub => a128 - b128,
        BinaryOp::Mul => a128 * b128,
        BinaryOp::Div if b == 0 => 0,
        BinaryOp::Div => floor_div(a, b) as i128,
        BinaryOp::Rem if b == 0 => 0,
        BinaryOp::Rem => a128 - b128 * floor_div(a, b) as i128,
        BinaryOp::Pow => pow_ref(a, b),
        BinaryOp::Min => a128.min(b128),
        BinaryOp::Max => a128.max(b128),
        BinaryOp::Eq => (a == b) as i128,
        BinaryOp::Ne => (a != b) as i128,
        BinaryOp::Lt => (a < b) as i128,
        BinaryOp::Le => (a <= b) as i128,
        BinaryOp::Gt => (a > b) as i128,
        BinaryOp::Ge => (a >= b) as i128,
        BinaryOp::And => a128 & b128,
        BinaryOp::Or => a128 | b128,
        BinaryOp::Xor => a128 ^ b128,
    }
}

fn binary_ops<T: I>(signed: bool) {
    let d = dev();
    let xs = T::extended();
    let n = xs.len();
    let a = d.from_slice(&xs, &[n, 1]).unwrap();
    let b = d.from_slice(&xs, &[1, n]).unwrap();
    for op in BinaryOp::ALL {
        // pow is checked with small exponents below; huge ones would take the reference forever.
        if op == BinaryOp::Pow {
            continue;
        }
        let got: DeviceArray<T> = a.zip_map(&b, |x, y| x.binary(op, y)).unwrap();
        let got: Vec<i64> = got.to_vec().unwrap().into_iter().map(T::to).collect();
        for (i, &x) in xs.iter().enumerate() {
            for (j, &y) in xs.iter().enumerate() {
                // Bitwise ops on negative i64 images equal the 32-bit ops after wrapping.
                let want = wrap::<T>(binary_ref(op, x.to(), y.to()), signed);
                assert_eq!(got[i * n + j], want, "{}({x}, {y}) for {}", op.name(), T::DTYPE);
            }
        }
    }
}

#[test]
fn binary_ops_i32() {
    binary_ops::<i32>(true);
}

#[test]
fn binary_ops_u32() {
    binary_ops::<u32>(false);
}

#[test]
fn integer_pow_wraps_and_handles_negative_exponents() {
    let d = dev();
    let bases: Vec<i32> = vec![0, 1, -1, 2, -2, 3, -7, 10, i32::MAX, i32::MIN];
    let exps: Vec<i32> = (-3..=40).collect();
    let a = d.from_slice(&bases, &[bases.len(), 1]).unwrap();
    let e = d.from_slice(&exps, &[exps.len()]).unwrap();
    let got = a.zip_map(&e, |x, y| x.pow(y)).unwrap().to_vec().unwrap();
    for (i, &x) in bases.iter().enumerate() {
        for (j, &y) in exps.iter().enumerate() {
            let want = wrap::<i32>(pow_ref(x as i64, y as i64), true);
            assert_eq!(got[i * exps.len() + j] as i64, want, "pow({x}, {y})");
        }
    }
    let ub: Vec<u32> = vec![0, 1, 2, 3, 7, u32::MAX];
    let ue: Vec<u32> = (0..=40).collect();
    let a = d.from_slice(&ub, &[ub.len(), 1]).unwrap();
    let e = d.from_slice(&ue, &[ue.len()]).unwrap();
    let got = a.zip_map(&e, |x, y| x.pow(y)).unwrap().to_vec().unwrap();
    for (i, &x) in ub.iter().enumerate() {
        for (j, &y) in ue.iter().enumerate() {
            let want = wrap::<u32>(pow_ref(x as i64, y as i64), false);
            assert_eq!(got[i * ue.len() + j] as i64, want, "pow({x}, {y}) u32");
        }
    }
}

#[test]
fn unary_ops_wrap_and_rounding_is_identity() {
    let d = dev();
    let xs = i32::extended();
    let x = d.from_slice(&xs, &[xs.len()]).unwrap();
    for op in UnaryOp::ALL.into_iter().filter(|o| !o.float_only()) {
        let got = x.map(|e| e.unary(op)).unwrap().to_vec().unwrap();
        for (&g, &v) in got.iter().zip(&xs) {
            let want = match op {
                UnaryOp::Neg => wrap::<i32>(-(v as i128), true),
                UnaryOp::Abs => wrap::<i32>((v as i128).abs(), true),
                _ => v as i64,
            };
            assert_eq!(g as i64, want, "{}({v})", op.name());
        }
    }
    let us = u32::extended();
    let u = d.from_slice(&us, &[us.len()]).unwrap();
    let neg = u.map(|e| -e).unwrap().to_vec().unwrap();
    let abs = u.map(|e| e.abs()).unwrap().to_vec().unwrap();
    for ((&n, &a), &v) in neg.iter().zip(&abs).zip(&us) {
        assert_eq!(n as i64, wrap::<u32>(-(v as i128), false));
        assert_eq!(a, v);
    }
}

#[test]
fn literals_fold_and_a_literal_only_program_fills() {
    let d = dev();
    let x = d.from_slice(&[1i32, 2, 3], &[3]).unwrap();
    // (2 + 3) * 4 is folded once; x - 20 wraps nowhere here.
    let got = x.map(|e| e - (Expr::int(2) + 3) * 4).unwrap().to_vec().unwrap();
    assert_eq!(got, vec![-19, -18, -17]);
    let filled: DeviceArray<f64> = x.map_to(|_| Expr::float(2.5) * 2).unwrap();
    assert_eq!(filled.to_vec().unwrap(), vec![5.0; 3]);
}
