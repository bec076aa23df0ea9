//! The array vocabulary on the CPU device: operators, elementwise methods, `where_`.
//! (Core's unit tests have no backend; these integration tests link the CPU one.)

use polycompute_core::{where_, Device, Error};
use polycompute_cpu as _;

#[test]
fn operators_broadcast_and_take_scalars_on_either_side() {
    let dev = Device::cpu();
    let x = dev.from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let col = dev.from_slice(&[10i32, 20], &[2, 1]).unwrap();
    assert_eq!((&x + &col).unwrap().to_vec().unwrap(), vec![11, 12, 13, 24, 25, 26]);
    assert_eq!((&x - 1).unwrap().to_vec().unwrap(), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!((10 - &x).unwrap().to_vec().unwrap(), vec![9, 8, 7, 6, 5, 4]);
    assert_eq!((&x * &x).unwrap().to_vec().unwrap(), vec![1, 4, 9, 16, 25, 36]);
    assert_eq!((&x / 0).unwrap().to_vec().unwrap(), vec![0; 6]);
    // Integer `/` is floor division and `%` takes the divisor's sign, as numpy's `//`, `%`.
    assert_eq!((-7 / &x).unwrap().to_vec().unwrap(), vec![-7, -4, -3, -2, -2, -2]);
    assert_eq!((-7 % &x).unwrap().to_vec().unwrap(), vec![0, 1, 2, 1, 3, 5]);
    assert_eq!((-x.clone()).unwrap().to_vec().unwrap(), vec![-1, -2, -3, -4, -5, -6]);
    // A `Result` on either side chains without intermediate `?`.
    assert_eq!((&x * 2 + &col).unwrap().to_vec().unwrap(), vec![12, 14, 16, 28, 30, 32]);
    assert_eq!((&col + (&x * 2)).unwrap().shape(), &[2, 3]);
}

#[test]
fn float_operators_follow_ieee_and_numpy() {
    let dev = Device::cpu();
    let x = dev.from_slice(&[1.0f32, -1.0, 0.0, -4.0], &[4]).unwrap();
    let q = (&x / 0.0).unwrap().to_vec().unwrap();
    assert_eq!((q[0], q[1]), (f32::INFINITY, f32::NEG_INFINITY));
    assert!(q[2].is_nan());
    let r = (&x % 2.0).unwrap().to_vec().unwrap();
    assert_eq!(r, vec![1.0, 1.0, 0.0, 0.0]);
    assert!(r[3].is_sign_positive(), "numpy: -4.0 % 2.0 is +0.0");
}

#[test]
fn bad_shapes_are_typed_errors() {
    let dev = Device::cpu();
    let a = dev.from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let b = dev.from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    match &a + &b {
        Err(Error::ShapeMismatch { op, lhs, rhs }) => assert_eq!((op, lhs, rhs), ("add", vec![3], vec![2])),
        other => panic!("{:?}", other.map(|_| ())),
    }
    // The error of a `Result` operand passes through, and a compound assignment keeps the
    // first one.
    let mut acc = Ok(a.clone());
    acc += &b;
    acc *= &a;
    assert!(matches!(acc, Err(Error::ShapeMismatch { op: "add", .. })));
    assert!(matches!((&a * &b) + &a, Err(Error::ShapeMismatch { op: "mul", .. })));
}

#[test]
fn compound_assignment_replaces_the_array() {
    let dev = Device::cpu();
    let a = dev.from_slice(&[1.0f64, 2.0], &[2]).unwrap();
    let mut acc = Ok(a.clone());
    acc += &a;
    acc -= dev.full(0.5, &[1]).unwrap();
    acc /= a.clone();
    let acc = acc.unwrap() % 1.0;
    assert_eq!(acc.unwrap().to_vec().unwrap(), vec![0.5, 0.75]);
    assert_eq!(a.to_vec().unwrap(), vec![1.0, 2.0], "the operand is unchanged");
}

#[test]
fn methods_match_the_host() {
    let dev = Device::cpu();
    let v = [-2.5f64, -0.5, 0.0, 0.5, 1.5, 2.5];
    let x = dev.from_slice(&v, &[6]).unwrap();
    let host = |f: fn(f64) -> f64| v.iter().map(|&x| f(x)).collect::<Vec<_>>();
    assert_eq!(x.exp().unwrap().to_vec().unwrap(), host(f64::exp));
    assert_eq!(x.abs().unwrap().to_vec().unwrap(), host(f64::abs));
    assert_eq!(x.round().unwrap().to_vec().unwrap(), vec![-2.0, -0.0, 0.0, 0.0, 2.0, 2.0]);
    assert_eq!(x.square().unwrap().to_vec().unwrap(), host(|x| x * x));
    assert_eq!(x.clip(-1.0, 1.0).unwrap().to_vec().unwrap(), vec![-1.0, -0.5, 0.0, 0.5, 1.0, 1.0]);
    let nan = dev.from_slice(&[f64::NAN, 3.0], &[2]).unwrap();
    let clipped = nan.clip(0.0, 1.0).unwrap().to_vec().unwrap();
    assert!(clipped[0].is_nan() && clipped[1] == 1.0);
}

#[test]
fn binary_methods_broadcast_arrays_and_scalars() {
    let dev = Device::cpu();
    let x = dev.from_slice(&[1i32, 5, 3, 7], &[2, 2]).unwrap();
    let row = dev.from_slice(&[4i32, 4], &[2]).unwrap();
    assert_eq!(x.maximum(&row).unwrap().to_vec().unwrap(), vec![4, 5, 4, 7]);
    assert_eq!(x.minimum(4).unwrap().to_vec().unwrap(), vec![1, 4, 3, 4]);
    assert_eq!(x.pow(2).unwrap().to_vec().unwrap(), vec![1, 25, 9, 49]);
    let lo = dev.from_slice(&[2i32, 6], &[2]).unwrap();
    assert_eq!(x.clip(&lo, 6).unwrap().to_vec().unwrap(), vec![2, 6, 3, 6]);
    let bad = dev.from_slice(&[1i32, 2, 3], &[3]).unwrap();
    assert!(matches!(x.maximum(&bad), Err(Error::ShapeMismatch { op: "max", .. })));
}

#[test]
fn where_selects_by_any_condition_dtype() {
    let dev = Device::cpu();
    let cond = dev.from_slice(&[1u32, 0, 7], &[3]).unwrap();
    let a = dev.from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let b = dev.from_slice(&[-1.0f32], &[1]).unwrap();
    assert_eq!(where_(&cond, &a, &b).unwrap().to_vec().unwrap(), vec![1.0, -1.0, 3.0]);
    assert_eq!(where_(&cond, 5.0f32, &a).unwrap().to_vec().unwrap(), vec![5.0, 2.0, 5.0]);
    let fcond = dev.from_slice(&[0.0f32, -0.0, f32::NAN], &[3]).unwrap();
    // NaN is non-zero (numpy: bool(nan) is True); both zeros are false.
    assert_eq!(where_(&fcond, 1i32, 2i32).unwrap().to_vec().unwrap(), vec![2, 2, 1]);
    let col = dev.from_slice(&[1u32, 0], &[2, 1]).unwrap();
    assert_eq!(where_(&col, &a, 0.0).unwrap().to_vec().unwrap(), vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0]);
}

#[test]
fn map_takes_tuples_of_mixed_dtypes_and_lists_of_one() {
    let dev = Device::cpu();
    let x = dev.from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let k = dev.from_slice(&[2u32, 0, 1], &[3]).unwrap();
    let y: polycompute_core::DeviceArray<f32> =
        polycompute_core::map((&x, &k), |(x, k)| &x * k.cast(polycompute_core::DType::F32)).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![2.0, 0.0, 3.0]);
    let list = vec![&x, &x, &x];
    let s: polycompute_core::DeviceArray<f32> = polycompute_core::map(&list, |v| &v[0] + &v[1] + &v[2]).unwrap();
    assert_eq!(s.to_vec().unwrap(), vec![3.0, 6.0, 9.0]);
    let none: &[&polycompute_core::DeviceArray<f32>] = &[];
    assert!(matches!(
        polycompute_core::map::<_, f32>(none, |_| polycompute_core::Expr::float(1.0)),
        Err(Error::InvalidExpr(_))
    ));
}

#[test]
fn constructors_follow_numpy() {
    let dev = Device::cpu();
    assert_eq!(dev.arange(0i32, 10, 3).unwrap().to_vec().unwrap(), vec![0, 3, 6, 9]);
    assert_eq!(dev.arange(5i32, 0, -2).unwrap().to_vec().unwrap(), vec![5, 3, 1]);
    assert_eq!(dev.arange(3u32, 3, 1).unwrap().shape(), &[0]);
    assert_eq!(dev.arange(5i32, 0, 1).unwrap().shape(), &[0], "an empty range, not an error");
    // numpy: len(arange(0, 1, 0.1)) is 10, len(arange(1, 2.0000001, 0.5)) is 3.
    assert_eq!(dev.arange(0.0f64, 1.0, 0.1).unwrap().len(), 10);
    assert_eq!(dev.arange(1.0f64, 2.000_000_1, 0.5).unwrap().len(), 3);
    let x = dev.arange(0.0f64, 1.0, 0.1).unwrap().to_vec().unwrap();
    assert_eq!(x[3], 3.0 * 0.1, "start + i * step, computed once");
    assert_eq!(dev.linspace(0.0f32, 1.0, 3).unwrap().to_vec().unwrap(), vec![0.0, 0.5, 1.0]);
    assert_eq!(dev.linspace(2.0f64, 3.0, 1).unwrap().to_vec().unwrap(), vec![2.0]);
    let l = dev.linspace(0.0f64, 0.3, 4).unwrap().to_vec().unwrap();
    assert_eq!(l[3], 0.3, "the end point is exact");
    assert_eq!(dev.eye::<f32>(3).unwrap().to_vec().unwrap(), vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    assert_eq!(dev.eye::<u32>(0).unwrap().shape(), &[0, 0]);
    assert_eq!(dev.ones::<polycompute_core::f16>(&[2]).unwrap().to_vec().unwrap(), vec![polycompute_core::f16::ONE; 2]);
    let a = dev.from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    assert_eq!(a.zeros_like().unwrap().to_vec().unwrap(), vec![0; 4]);
    assert_eq!(a.ones_like().unwrap().shape(), &[2, 2]);
    assert_eq!(a.full_like(-3).unwrap().to_vec().unwrap(), vec![-3; 4]);
}

#[test]
fn constructors_reject_bad_input() {
    let dev = Device::cpu();
    assert!(matches!(dev.arange(0i32, 5, 0), Err(Error::InvalidArgument { argument: "step", .. })));
    assert!(matches!(dev.arange(0.0f32, 5.0, 0.0), Err(Error::InvalidArgument { argument: "step", .. })));
    assert!(matches!(dev.arange(0.0f64, f64::INFINITY, 1.0), Err(Error::InvalidArgument { .. })));
    assert!(matches!(dev.arange(0.0f64, f64::NAN, 1.0), Err(Error::InvalidArgument { .. })));
    assert!(matches!(dev.arange(0.0f64, 1e12, 1.0), Err(Error::TooLarge(_))));
    assert!(matches!(dev.arange(0.0f64, 1.0, 1e-300), Err(Error::TooLarge(_))));
    assert!(matches!(dev.linspace(0i32, 5, 3), Err(Error::Unsupported { .. })));
    assert!(matches!(dev.eye::<f32>(1 << 17), Err(Error::TooLarge(_))));
    assert!(matches!(dev.eye::<f32>(usize::MAX), Err(Error::TooLarge(_))));
}
