//! Every way a caller can misuse the API is a typed error with a helpful message, never a
//! panic (the "bad input" rule).

use polycompute::{map, DType, Device, Error, Expr};

fn cpu() -> Device {
    Device::cpu()
}

#[test]
fn shapes_that_do_not_broadcast() {
    let a = cpu().from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let b = cpu().from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let err = a.zip_map(&b, |x, y| x + y).unwrap_err();
    assert!(matches!(&err, Error::ShapeMismatch { lhs, rhs, .. } if lhs == &[3] && rhs == &[4]), "{err:?}");
    assert!(err.to_string().contains("do not broadcast"), "{err}");
}

#[test]
fn matmul_inner_dimension_mismatch() {
    let a = cpu().zeros::<f32>(&[2, 3]).unwrap();
    let b = cpu().zeros::<f32>(&[4, 5]).unwrap();
    let err = a.matmul(&b).unwrap_err();
    assert!(matches!(err, Error::MatmulShape { .. }), "{err:?}");
    assert!(err.to_string().contains("3 columns but rhs has 4 rows"), "{err}");
    let batched = cpu().zeros::<f32>(&[2, 3, 4]).unwrap();
    let other_batch = cpu().zeros::<f32>(&[3, 4, 5]).unwrap();
    assert!(matches!(batched.matmul(&other_batch), Err(Error::MatmulShape { .. })));
    let vector = cpu().zeros::<f32>(&[3]).unwrap();
    assert!(matches!(a.matmul(&vector), Err(Error::MatmulShape { .. })));
    let ints = cpu().zeros::<i32>(&[2, 2]).unwrap();
    assert!(matches!(ints.matmul(&ints), Err(Error::Unsupported { dtype: DType::I32, .. })));
}

#[test]
fn reduction_axis_out_of_range() {
    let a = cpu().zeros::<f64>(&[2, 3]).unwrap();
    let err = a.sum(Some(2)).unwrap_err();
    assert!(matches!(err, Error::AxisOutOfRange { axis: 2, ndim: 2, .. }), "{err:?}");
    assert!(matches!(a.argmax(Some(7)), Err(Error::AxisOutOfRange { .. })));
    assert!(matches!(a.permute(&[0, 0]), Err(Error::InvalidShape(_))));
}

/// `(axis, ndim)` of an `AxisOutOfRange`, or a panic naming what came instead.
fn out_of_range<T: std::fmt::Debug>(r: polycompute::Result<T>) -> (isize, usize) {
    match r {
        Err(Error::AxisOutOfRange { axis, ndim, .. }) => (axis, ndim),
        other => panic!("expected AxisOutOfRange, got {other:?}"),
    }
}

#[test]
fn reduction_axes_out_of_range_both_ways_or_named_twice() {
    use polycompute::keepdims;
    let a = cpu().zeros::<f32>(&[2, 3, 4]).unwrap();
    assert_eq!(out_of_range(a.sum(3)), (3, 3));
    assert_eq!(out_of_range(a.sum(-4)), (-4, 3));
    assert_eq!(out_of_range(a.prod([0, 3])), (3, 3));
    assert_eq!(out_of_range(a.min(keepdims([-1, -4]))), (-4, 3));
    assert_eq!(out_of_range(a.max(usize::MAX)), (isize::MAX, 3));
    assert_eq!(out_of_range(a.mean(isize::MIN)), (isize::MIN, 3));
    assert_eq!(out_of_range(a.argmin(-4)), (-4, 3));
    assert_eq!(out_of_range(a.argmax(keepdims(3))), (3, 3));
    assert_eq!(out_of_range(a.var(-4, 1)), (-4, 3));
    assert_eq!(out_of_range(a.std([5], 0)), (5, 3));
    assert_eq!(out_of_range(a.logsumexp(-9)), (-9, 3));
    let err = a.sum(-4).unwrap_err().to_string();
    assert!(err.contains("axis -4") && err.contains("-3..3"), "{err}");
    // The same axis twice, once from each end: numpy's "duplicate value in 'axis'".
    for err in [
        a.sum([1, -2]).unwrap_err(),
        a.max([0, 0]).unwrap_err(),
        a.var(keepdims([2, -1]), 0).unwrap_err(),
        a.logsumexp(vec![0usize, 1, 0]).unwrap_err(),
    ] {
        assert!(matches!(err, Error::DuplicateAxis { ndim: 3, .. }), "{err:?}");
        assert!(err.to_string().contains("duplicate value in 'axis'"), "{err}");
    }
    // argmin/argmax take one axis or none; integers have no logsumexp.
    assert!(matches!(a.argmax([0, 1]), Err(Error::InvalidArgument { argument: "axis", .. })));
    assert!(matches!(a.argmin(Vec::<usize>::new()), Err(Error::InvalidArgument { argument: "axis", .. })));
    let ints = cpu().zeros::<i32>(&[2]).unwrap();
    assert!(matches!(ints.logsumexp(None), Err(Error::Unsupported { dtype: DType::I32, .. })));
    // A 0-d array has no axis 0, nor -1.
    let scalar = cpu().from_slice(&[1.0f64], &[]).unwrap();
    assert_eq!(out_of_range(scalar.sum(0)), (0, 0));
    assert_eq!(out_of_range(scalar.sum(-1)), (-1, 0));
}

#[test]
fn movement_axes_out_of_range_both_ways() {
    use polycompute::DeviceArray;
    let a = cpu().zeros::<f32>(&[2, 3]).unwrap();
    let i = cpu().from_slice(&[0u32, 1], &[2]).unwrap();
    let along = cpu().zeros::<u32>(&[2, 3]).unwrap();
    let v = cpu().zeros::<f32>(&[2, 2]).unwrap();
    assert_eq!(out_of_range(DeviceArray::concat(&[&a, &a], 2)), (2, 2));
    assert_eq!(out_of_range(DeviceArray::concat(&[&a, &a], -3)), (-3, 2));
    // stack inserts an axis: valid positions are -3..3 of the 3-D result.
    assert_eq!(out_of_range(DeviceArray::stack(&[&a, &a], 3)), (3, 3));
    assert_eq!(out_of_range(DeviceArray::stack(&[&a, &a], -4)), (-4, 3));
    assert_eq!(DeviceArray::stack(&[&a, &a], -1).unwrap().shape(), &[2, 3, 2]);
    assert_eq!(out_of_range(a.take(&i, 2)), (2, 2));
    assert_eq!(out_of_range(a.take(&i, -3)), (-3, 2));
    assert_eq!(out_of_range(a.index_select(-3, &i)), (-3, 2));
    assert_eq!(out_of_range(a.take_along_axis(&along, 2)), (2, 2));
    assert_eq!(out_of_range(a.scatter_add(&i, &v, -3)), (-3, 2));
    assert_eq!(out_of_range(a.cumsum(2)), (2, 2));
    assert_eq!(out_of_range(a.cumprod(-3)), (-3, 2));
    assert_eq!(out_of_range(a.sort(-3)), (-3, 2));
    assert_eq!(out_of_range(a.argsort(2)), (2, 2));
    assert_eq!(out_of_range(a.topk(1, -3)), (-3, 2));
    assert_eq!(out_of_range(a.flip(2)), (2, 2));
    assert_eq!(out_of_range(a.flip(-3)), (-3, 2));
    assert_eq!(out_of_range(a.expand_dims(3)), (3, 3));
    assert_eq!(out_of_range(a.expand_dims(-4)), (-4, 3));
    assert_eq!(out_of_range(a.squeeze(-3)), (-3, 2));
    assert!(matches!(a.squeeze([0, -2]), Err(Error::DuplicateAxis { .. })));
    assert!(matches!(a.squeeze(0), Err(Error::InvalidArgument { .. })));
    assert!(matches!(a.squeeze(polycompute::keepdims(None)), Err(Error::InvalidArgument { .. })));
    // No arrays to stack is an error, not a panic.
    assert!(matches!(DeviceArray::<f32>::stack(&[], -1), Err(Error::InvalidArgument { .. })));
}

#[test]
fn empty_min_is_an_error_but_empty_sum_is_zero() {
    let empty = cpu().from_slice::<f32>(&[], &[0]).unwrap();
    for err in [
        empty.min(None).unwrap_err(),
        empty.max(None).unwrap_err(),
        empty.argmin(None).map(|_| ()).unwrap_err(),
        empty.argmax(None).map(|_| ()).unwrap_err(),
    ] {
        assert!(matches!(err, Error::EmptyReduction { .. }), "{err:?}");
    }
    assert_eq!(empty.sum(None).unwrap().to_scalar().unwrap(), 0.0);
    assert_eq!(empty.prod(None).unwrap().to_scalar().unwrap(), 1.0);
    // Along an axis of length 0 the same rule holds; along a non-empty axis it does not.
    let rows = cpu().zeros::<i32>(&[0, 3]).unwrap();
    assert!(matches!(rows.min(Some(0)), Err(Error::EmptyReduction { .. })));
    assert_eq!(rows.sum(Some(0)).unwrap().to_vec().unwrap(), vec![0, 0, 0]);
    assert_eq!(rows.min(Some(1)).unwrap().shape(), &[0]);
}

#[test]
fn expressions_with_missing_arguments_or_mixed_dtypes() {
    let a = cpu().from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let err = a.map(|_| Expr::arg(1)).unwrap_err();
    assert!(matches!(err, Error::MissingArgument { index: 1, available: 1 }), "{err:?}");
    let err = a.map(|x| x + Expr::scalar(polycompute::Scalar::F64(1.0))).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { expected: DType::F32, found: DType::F64, .. }), "{err:?}");
    // The declared result type must match the expression's dtype.
    let err = a.map(|x| x.cast(DType::I32)).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { expected: DType::F32, found: DType::I32, .. }), "{err:?}");
    let ints = cpu().from_slice(&[1i32, 2], &[2]).unwrap();
    assert!(matches!(ints.map(|x| x * 1.5), Err(Error::InvalidExpr(_))));
    assert!(matches!(ints.map(|x| x.sqrt()), Err(Error::InvalidExpr(_))));
    assert!(matches!(a.map(|x| x ^ 1), Err(Error::InvalidExpr(_))));
    let none: [&polycompute::DeviceArray<f32>; 0] = [];
    assert!(matches!(map::<_, f32>(&none, |_| Expr::float(1.0)), Err(Error::InvalidExpr(_))));
}

#[test]
fn upload_length_must_match_the_shape() {
    let err = cpu().from_slice(&[1.0f32, 2.0, 3.0], &[2, 2]).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { len: 3, expected: 4, .. }), "{err:?}");
    assert!(err.to_string().contains("needs 4"), "{err}");
    let a = cpu().from_slice(&[1u32, 2, 3, 4], &[4]).unwrap();
    assert!(matches!(a.reshape(&[3]), Err(Error::LengthMismatch { .. })));
    assert!(matches!(cpu().zeros::<f32>(&[usize::MAX, 2]), Err(Error::InvalidShape(_))));
    assert!(matches!(cpu().zeros::<f32>(&[1 << 20, 1 << 13]), Err(Error::TooLarge(_))));
}

#[test]
fn unknown_or_absent_devices() {
    assert!(matches!(Device::parse("tpu:0"), Err(Error::UnknownDevice(_))));
    assert!(matches!(Device::parse("cpu:1"), Err(Error::NoSuchDevice { count: 1, .. })));
    // A backend that is not compiled in answers with the feature to enable.
    if polycompute::registry::backend(polycompute::BackendKind::Cuda).is_err() {
        let err = Device::parse("cuda").unwrap_err();
        assert!(matches!(err, Error::BackendNotCompiled { .. }), "{err:?}");
        assert!(err.to_string().contains("--features cuda"), "{err}");
    }
}

#[test]
fn normal_fill_of_integers_is_unsupported() {
    assert!(matches!(cpu().normal::<i32>(1, &[4]), Err(Error::Unsupported { .. })));
}

/// The op and both shapes of a `ShapeMismatch`, or a panic naming what came instead.
fn shape_mismatch<T: std::fmt::Debug>(r: polycompute::Result<T>) -> (&'static str, Vec<usize>, Vec<usize>, String) {
    match r {
        Err(e @ Error::ShapeMismatch { .. }) => {
            let text = e.to_string();
            let Error::ShapeMismatch { op, lhs, rhs } = e else { unreachable!() };
            (op, lhs, rhs, text)
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
}

#[test]
fn operators_and_methods_on_shapes_that_do_not_broadcast() {
    use polycompute::where_;
    let a = cpu().zeros::<f32>(&[2, 3]).unwrap();
    let b = cpu().zeros::<f32>(&[4]).unwrap();
    let mut acc = Ok(a.clone());
    acc -= &b;
    for (name, r) in [
        ("add", &a + &b),
        ("sub", &a - &b),
        ("mul", &a * &b),
        ("div", a.clone() / &b),
        ("rem", &a % b.clone()),
        // Through a `Result` operand and a compound assignment: the first error stays.
        ("add", &a * 2.0 + &b),
        ("sub", acc),
        ("max", a.maximum(&b)),
        ("min", a.minimum(&b)),
        ("pow", a.pow(&b)),
        ("clip", a.clip(&b, 1.0)),
        ("where", where_(&a, &b, 0.0)),
    ] {
        let (op, lhs, rhs, text) = shape_mismatch(r);
        assert_eq!((op, lhs, rhs), (name, vec![2, 3], vec![4]), "{text}");
        assert!(text.contains("[2, 3]") && text.contains("[4]") && text.contains(name), "{text}");
    }
    // The error of an operand passes through the next operator unchanged.
    let (op, ..) = shape_mismatch(&a + (&a + &b));
    assert_eq!(op, "add");
    // A third operand that does not broadcast with the first two.
    let row = cpu().zeros::<f32>(&[3]).unwrap();
    let (op, lhs, rhs, _) = shape_mismatch(a.clip(&row, &b));
    assert_eq!((op, lhs, rhs), ("clip", vec![2, 3], vec![4]));
}

#[test]
fn operators_on_arrays_of_two_devices() {
    use polycompute::where_;
    let devices = polycompute::testing::devices::Required::none().devices().unwrap();
    let [d0, d1, ..] = devices.as_slice() else {
        eprintln!(
            "SKIPPED operators_on_arrays_of_two_devices: one device linked in ({}); build with --features wgpu",
            devices.iter().map(|d| d.id().to_string()).collect::<Vec<_>>().join(", ")
        );
        return;
    };
    let a = d0.from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let b = d1.from_slice(&[3.0f32, 4.0], &[2]).unwrap();
    let mut acc = Ok(a.clone());
    acc += &b;
    for r in [&a + &b, &b * &a, acc, a.maximum(&b), a.clip(0.0, &b), where_(&a, &a, &b), where_(&b, &a, 0.0)] {
        assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{} and {}: {r:?}", d0.id(), d1.id());
    }
}

#[test]
fn a_map_over_a_mixed_dtype_tuple_names_the_cast() {
    let x = cpu().from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let y = cpu().from_slice(&[3.0f64, 4.0], &[2]).unwrap();
    let err = map::<_, f32>((&x, &y), |(a, b)| a + b).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { expected: DType::F32, found: DType::F64, .. }), "{err:?}");
    // The message says which cast to write.
    let text = err.to_string();
    assert!(text.contains("arg1.cast(DType::F32)"), "{text}");
    // With the cast it runs.
    let z: polycompute::DeviceArray<f32> = map((&x, &y), |(a, b)| a + b.cast(DType::F32)).unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![4.0, 6.0]);
}

#[test]
fn constructors_reject_what_has_no_array() {
    let dev = cpu();
    let step = |r: polycompute::Result<polycompute::DeviceArray<i32>>| {
        assert!(matches!(r, Err(Error::InvalidArgument { op: "arange", argument: "step", .. })), "{r:?}");
    };
    step(dev.arange(0, 5, 0));
    step(dev.arange(5, 0, 0));
    let err = dev.arange(0.0f32, 1.0, 0.0).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { argument: "step", .. }), "{err:?}");
    assert!(err.to_string().contains("non-zero step"), "{err}");
    for r in [
        dev.arange(0.0f64, f64::INFINITY, 1.0),
        dev.arange(f64::NAN, 1.0, 1.0),
        dev.arange(0.0, 1.0, f64::NEG_INFINITY),
    ] {
        assert!(matches!(r, Err(Error::InvalidArgument { op: "arange", .. })), "{r:?}");
    }
    // Lengths past what an array holds (2^32 - 1 elements, which every integer range fits:
    // i32::MIN..i32::MAX has exactly that many): float ranges with tiny steps.
    let err = dev.arange(0.0f64, 1.0, 1e-300).unwrap_err();
    assert!(matches!(err, Error::TooLarge(_)), "{err:?}");
    assert!(err.to_string().contains("at most"), "{err}");
    assert!(matches!(dev.arange(f32::MIN, f32::MAX, 1.0), Err(Error::TooLarge(_))));
    let tiny = polycompute::f16::from_bits(1);
    assert!(matches!(dev.arange(polycompute::f16::MIN, polycompute::f16::MAX, tiny), Err(Error::TooLarge(_))));
    assert!(matches!(dev.arange(-1.0f64, 1e10, 1.0), Err(Error::TooLarge(_))));
    // linspace is for floats; its length and eye's size are bounded.
    for r in [dev.linspace(0i32, 10, 5).map(|_| ()), dev.linspace(0u32, 10, 5).map(|_| ())] {
        assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    }
    assert!(matches!(dev.linspace(0.0f32, 1.0, usize::MAX), Err(Error::TooLarge(_))));
    assert!(matches!(dev.eye::<f32>(usize::MAX), Err(Error::TooLarge(_))));
    assert!(matches!(dev.eye::<u32>(1 << 17), Err(Error::TooLarge(_))));
    assert!(matches!(dev.ones::<f32>(&[usize::MAX, 2]), Err(Error::InvalidShape(_))));
}
