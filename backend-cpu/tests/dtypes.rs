//! i64, u8 and bool on the CPU through `DeviceArray`: masks from comparisons (NaN false but
//! for `ne`), logic, `where_` with a mask, `count_nonzero`, the classifications, wrapping
//! arithmetic at the extremes, the casts' rules, i64 indices checked exactly past 2^32, and
//! the typed errors for what numpy 2 refuses on bools.

mod common;

use common::dev;
use polycompute_core::{where_, DType, Error, Expr, Scalar};

#[test]
fn comparisons_give_masks_and_nan_is_false_but_for_ne() {
    let d = dev();
    let x = d.from_slice(&[1.0f32, f32::NAN, -0.0, 3.0], &[4]).unwrap();
    let y = d.from_slice(&[1.0f32, f32::NAN, 0.0, 2.0], &[4]).unwrap();
    assert_eq!(x.eq(&y).unwrap().to_vec().unwrap(), [true, false, true, false]);
    assert_eq!(x.ne(&y).unwrap().to_vec().unwrap(), [false, true, false, true]);
    assert_eq!(x.lt(&y).unwrap().to_vec().unwrap(), [false, false, false, false]);
    assert_eq!(x.le(&y).unwrap().to_vec().unwrap(), [true, false, true, false]);
    assert_eq!(x.gt(2.0).unwrap().to_vec().unwrap(), [false, false, false, true]);
    assert_eq!(x.ge(1.0).unwrap().to_vec().unwrap(), [true, false, false, true]);
    // Broadcast: a column against a row.
    let col = d.from_slice(&[1i64, 2], &[2, 1]).unwrap();
    let row = d.from_slice(&[2i64, 1, 0], &[1, 3]).unwrap();
    assert_eq!(col.lt(&row).unwrap().to_vec().unwrap(), [true, false, false, false, false, false]);
    assert_eq!(col.lt(&row).unwrap().shape(), &[2, 3]);
}

#[test]
fn i64_comparisons_are_exact_past_2_to_the_53() {
    let d = dev();
    let big = (1i64 << 53) + 1;
    let x = d.from_slice(&[big, i64::MAX, i64::MIN], &[3]).unwrap();
    // Through f64 these would tie with their neighbours.
    assert_eq!(x.gt(big - 1).unwrap().to_vec().unwrap(), [true, true, false]);
    assert_eq!(x.eq(i64::MAX - 1).unwrap().to_vec().unwrap(), [false, false, false]);
    assert_eq!(x.max(None).unwrap().to_vec().unwrap(), [i64::MAX]);
    assert_eq!(x.argmin(None).unwrap().to_vec().unwrap(), [2]);
}

#[test]
fn logic_where_and_count_nonzero() {
    let d = dev();
    let x = d.from_slice(&[1u8, 5, 9, 200], &[4]).unwrap();
    let inside = x.gt(2u8).unwrap().and(x.lt(100u8).unwrap()).unwrap();
    assert_eq!(inside.to_vec().unwrap(), [false, true, true, false]);
    assert_eq!(inside.not().unwrap().to_vec().unwrap(), [true, false, false, true]);
    assert_eq!(inside.or(true).unwrap().to_vec().unwrap(), [true; 4]);
    assert_eq!(inside.xor(x.gt(2u8).unwrap()).unwrap().to_vec().unwrap(), [false, false, false, true]);
    assert_eq!(where_(&inside, &x, 0u8).unwrap().to_vec().unwrap(), [0, 5, 9, 0]);
    assert_eq!(inside.count_nonzero(None).unwrap().to_vec().unwrap(), [2i64]);
    let f = d.from_slice(&[0.0f32, -0.0, f32::NAN, 2.0, 0.0, 1.0], &[2, 3]).unwrap();
    assert_eq!(f.count_nonzero(None).unwrap().to_vec().unwrap(), [3]);
    assert_eq!(f.count_nonzero(1).unwrap().to_vec().unwrap(), [1, 2]);
    // min and max of a mask are all and any; its mean is the fraction that are true.
    assert_eq!(inside.min(None).unwrap().to_vec().unwrap(), [false]);
    assert_eq!(inside.max(None).unwrap().to_vec().unwrap(), [true]);
    assert_eq!(inside.mean(None).unwrap().to_vec().unwrap(), [0.5]);
}

#[test]
fn classifications_of_floats_and_integers() {
    let d = dev();
    let x = d.from_slice(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 1e308], &[5]).unwrap();
    assert_eq!(x.isnan().unwrap().to_vec().unwrap(), [true, false, false, false, false]);
    assert_eq!(x.isinf().unwrap().to_vec().unwrap(), [false, true, true, false, false]);
    assert_eq!(x.isfinite().unwrap().to_vec().unwrap(), [false, false, false, true, true]);
    let h = d.from_slice(&[polycompute_core::f16::INFINITY, polycompute_core::f16::MAX], &[2]).unwrap();
    assert_eq!(h.isinf().unwrap().to_vec().unwrap(), [true, false]);
    let i = d.from_slice(&[i64::MIN, 0], &[2]).unwrap();
    assert_eq!(i.isnan().unwrap().to_vec().unwrap(), [false, false]);
    assert_eq!(i.isinf().unwrap().to_vec().unwrap(), [false, false]);
    assert_eq!(i.isfinite().unwrap().to_vec().unwrap(), [true, true]);
}

#[test]
fn integer_arithmetic_wraps_and_divides_by_zero_to_zero() {
    let d = dev();
    let x = d.from_slice(&[i64::MAX, i64::MIN, -7, 7], &[4]).unwrap();
    assert_eq!((&x + 1i64).unwrap().to_vec().unwrap(), [i64::MIN, i64::MIN + 1, -6, 8]);
    assert_eq!((&x / -1i64).unwrap().to_vec().unwrap(), [-i64::MAX, i64::MIN, 7, -7]);
    assert_eq!((&x / 2i64).unwrap().to_vec().unwrap(), [i64::MAX / 2, i64::MIN / 2, -4, 3]);
    assert_eq!((&x % 2i64).unwrap().to_vec().unwrap(), [1, 0, 1, 1]);
    assert_eq!((&x / 0i64).unwrap().to_vec().unwrap(), [0; 4]);
    assert_eq!(x.abs().unwrap().to_vec().unwrap(), [i64::MAX, i64::MIN, 7, 7]);
    // A wrapping power past 32 bits of exponent: 3^(2^32 + 1) mod 2^64.
    let e = d.from_slice(&[(1i64 << 32) + 1], &[1]).unwrap();
    let three = d.from_slice(&[3i64], &[1]).unwrap();
    let mut want = 1i64;
    let (mut b, mut k) = (3i64, (1u64 << 32) + 1);
    while k > 0 {
        if k & 1 == 1 {
            want = want.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        k >>= 1;
    }
    assert_eq!(three.pow(&e).unwrap().to_vec().unwrap(), [want]);
    let u = d.from_slice(&[250u8, 3, 0], &[3]).unwrap();
    assert_eq!((&u + 10u8).unwrap().to_vec().unwrap(), [4, 13, 10]);
    assert_eq!((&u * 2u8).unwrap().to_vec().unwrap(), [244, 6, 0]);
    assert_eq!((0u8 - &u).unwrap().to_vec().unwrap(), [6, 253, 0]);
    assert_eq!((&u / 0u8).unwrap().to_vec().unwrap(), [0, 0, 0]);
    assert_eq!(u.sum(None).unwrap().to_vec().unwrap(), [253], "u8 sums wrap, as i32 sums do");
    assert_eq!(u.mean(None).unwrap().to_vec().unwrap(), [253.0 / 3.0], "the exact sum, divided once");
}

#[test]
fn casts_saturate_from_floats_wrap_between_integers_and_test_nonzero_to_bool() {
    let d = dev();
    let f = d.from_slice(&[f64::NAN, -1.5, 300.7, 1e30, -1e30, -0.0, 0.5], &[7]).unwrap();
    assert_eq!(f.cast::<u8>().unwrap().to_vec().unwrap(), [0, 0, 255, 255, 0, 0, 0]);
    assert_eq!(f.cast::<i64>().unwrap().to_vec().unwrap(), [0, -1, 300, i64::MAX, i64::MIN, 0, 0]);
    assert_eq!(f.cast::<bool>().unwrap().to_vec().unwrap(), [true, true, true, true, true, false, true]);
    let i = d.from_slice(&[-1i64, 256, 257, (1 << 40) + 5], &[4]).unwrap();
    assert_eq!(i.cast::<u8>().unwrap().to_vec().unwrap(), [255, 0, 1, 5]);
    assert_eq!(i.cast::<i32>().unwrap().to_vec().unwrap(), [-1, 256, 257, 5]);
    assert_eq!(i.cast::<u32>().unwrap().to_vec().unwrap(), [u32::MAX, 256, 257, 5]);
    let i32s = d.from_slice(&[-1i32, i32::MIN], &[2]).unwrap();
    assert_eq!(i32s.cast::<i64>().unwrap().to_vec().unwrap(), [-1, i32::MIN as i64]);
    let b = d.from_slice(&[true, false], &[2]).unwrap();
    assert_eq!(b.cast::<f32>().unwrap().to_vec().unwrap(), [1.0, 0.0]);
    assert_eq!(b.cast::<i64>().unwrap().to_vec().unwrap(), [1, 0]);
    assert_eq!(b.cast::<polycompute_core::bf16>().unwrap().to_vec().unwrap()[0].to_f32(), 1.0);
}

#[test]
fn bool_arithmetic_is_numpys_and_what_numpy_2_refuses_is_a_typed_error() {
    let d = dev();
    let a = d.from_slice(&[true, true, false, false], &[4]).unwrap();
    let b = d.from_slice(&[true, false, true, false], &[4]).unwrap();
    assert_eq!((&a + &b).unwrap().to_vec().unwrap(), [true, true, true, false], "+ is or");
    assert_eq!((&a * &b).unwrap().to_vec().unwrap(), [true, false, false, false], "* is and");
    for (what, r) in [("sub", &a - &b), ("div", &a / &b), ("rem", &a % &b)] {
        let e = r.unwrap_err();
        assert!(matches!(e, Error::InvalidExpr(_)), "{what}: {e}");
        assert!(e.to_string().contains(what) && e.to_string().contains("bool"), "{what}: {e}");
    }
    let e = a.neg().unwrap_err().to_string();
    assert!(e.contains("neg") && e.contains("bool"), "{e}");
    let e = a.sum(None).unwrap_err();
    assert!(
        matches!(e, Error::Unsupported { dtype: DType::Bool, .. }) && e.to_string().contains("count_nonzero"),
        "{e}"
    );
    assert!(matches!(a.cumsum(0).unwrap_err(), Error::Unsupported { dtype: DType::Bool, .. }));
    // An integer literal is no bool: the message says what to write.
    let e = a.map(|x| x + 1).unwrap_err().to_string();
    assert!(e.contains("Scalar::Bool"), "{e}");
    assert_eq!(
        a.map(|x| x.eq(Expr::scalar(Scalar::Bool(false)))).unwrap().to_vec().unwrap(),
        [false, false, true, true]
    );
}

#[test]
fn i64_indices_take_and_are_checked_exactly_past_2_to_the_32() {
    let d = dev();
    let x = d.from_slice(&[10.0f32, 20.0, 30.0], &[3]).unwrap();
    let i = d.from_slice(&[2i64, -1, 0, -3], &[4]).unwrap();
    assert_eq!(x.take(&i, 0).unwrap().to_vec().unwrap(), [30.0, 30.0, 10.0, 10.0]);
    let s = x.scatter_add(&i, &d.from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap(), 0).unwrap();
    assert_eq!(s.to_vec().unwrap(), [17.0, 20.0, 33.0]);
    // 2^32 + 1 would wrap to 1 in 32 bits; -(2^32) - 2 to -2.
    for bad in [(1i64 << 32) + 1, -(1i64 << 32) - 2, i64::MAX, i64::MIN, 3] {
        let idx = d.from_slice(&[0, bad], &[2]).unwrap();
        match x.take(&idx, 0) {
            Err(Error::IndexOutOfRange { index, len: 3, .. }) => assert_eq!(index, bad),
            other => panic!("index {bad}: {:?}", other.map(|a| a.to_vec())),
        }
    }
    // A bool mask is no index array: the error says what to call instead.
    let op = polycompute_core::Op::Take {
        axis: 0,
        shape: polycompute_core::Shape::new(&[3]).unwrap(),
        indices: polycompute_core::Shape::new(&[2]).unwrap(),
    };
    let (s3, s2) = (polycompute_core::Shape::new(&[3]).unwrap(), polycompute_core::Shape::new(&[2]).unwrap());
    let e = op.output(&[(DType::F32, &s3), (DType::Bool, &s2)]).unwrap_err().to_string();
    assert!(e.contains("where_") && e.contains("mask"), "{e}");
}

#[test]
fn sorting_and_reducing_the_new_dtypes() {
    let d = dev();
    let x = d.from_slice(&[i64::MAX, -1, i64::MIN, 1 << 40, -1], &[5]).unwrap();
    assert_eq!(x.sort(0).unwrap().to_vec().unwrap(), [i64::MIN, -1, -1, 1 << 40, i64::MAX]);
    assert_eq!(x.argsort(0).unwrap().to_vec().unwrap(), [2, 1, 4, 3, 0]);
    assert_eq!(x.sum(None).unwrap().to_vec().unwrap(), [(1i64 << 40) - 3], "i64 sums wrap");
    let m = d.from_slice(&[true, false, true, false], &[4]).unwrap();
    assert_eq!(m.argsort(0).unwrap().to_vec().unwrap(), [1, 3, 0, 2], "stable, false first");
    assert_eq!(m.argmax(None).unwrap().to_vec().unwrap(), [0]);
    let u = d.from_slice(&[3u8, 255, 0], &[3]).unwrap();
    assert_eq!(u.sort(0).unwrap().to_vec().unwrap(), [0, 3, 255]);
    assert_eq!(u.cumsum(0).unwrap().to_vec().unwrap(), [3, 2, 2]);
    // A bool result of a map in a recycled block (bytes other than 0/1 before) reads back.
    for _ in 0..3 {
        let big = d.from_slice(&vec![7u8; 1 << 21], &[1 << 21]).unwrap();
        drop(big);
        let mask = d.from_slice(&vec![0.5f32; 1 << 21], &[1 << 21]).unwrap().gt(0.0).unwrap();
        assert_eq!(mask.count_nonzero(None).unwrap().to_vec().unwrap(), [1 << 21]);
    }
}
