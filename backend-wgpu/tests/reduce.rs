//! Reductions against host references (f64 accumulation for floats, wrapping for integers).

mod common;

use polycompute_core::{DType, Error};
use polycompute_testing::inputs::{bits, uniform};

/// (outer, r, inner) view of `shape` around `axis`.
fn split(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (shape[..axis].iter().product(), shape[axis], shape[axis + 1..].iter().product())
}

/// Host reduction of `x` along `axis` with `f` over each lane's values.
fn lanes<T: Copy, U>(x: &[T], shape: &[usize], axis: usize, f: impl Fn(&[T]) -> U) -> Vec<U> {
    let (outer, r, inner) = split(shape, axis);
    let mut out = Vec::new();
    for o in 0..outer {
        for j in 0..inner {
            let lane: Vec<T> = (0..r).map(|k| x[(o * r + k) * inner + j]).collect();
            out.push(f(&lane));
        }
    }
    out
}

fn argmin_ref(v: &[f32]) -> u32 {
    if let Some(i) = v.iter().position(|x| x.is_nan()) {
        return i as u32;
    }
    let mut best = 0;
    for (i, x) in v.iter().enumerate() {
        if *x < v[best] {
            best = i;
        }
    }
    best as u32
}

fn argmax_ref(v: &[f32]) -> u32 {
    if let Some(i) = v.iter().position(|x| x.is_nan()) {
        return i as u32;
    }
    let mut best = 0;
    for (i, x) in v.iter().enumerate() {
        if *x > v[best] {
            best = i;
        }
    }
    best as u32
}

fn check_sum(got: f32, lane: &[f32]) {
    let exact: f64 = lane.iter().map(|&x| x as f64).sum();
    let abs: f64 = lane.iter().map(|&x| (x as f64).abs()).sum();
    let bound = ((lane.len().max(2) as f64).log2() + 2.0) * f32::EPSILON as f64 * abs + 1e-30;
    assert!((got as f64 - exact).abs() <= bound, "sum of {} values: {got} vs {exact} (bound {bound})", lane.len());
}

fn shapes() -> Vec<(Vec<usize>, usize)> {
    vec![
        (vec![1000], 0),
        (vec![70_001], 0),
        (vec![300_000], 0),
        (vec![3, 1100, 5], 1),
        (vec![3, 1100, 5], 0),
        (vec![3, 1100, 5], 2),
        (vec![7, 2, 40], 1),
        (vec![5, 9], 1),
        (vec![513, 3], 0),
        (vec![4, 1, 6], 1),
        (vec![1000, 3], 1),
        (vec![37, 32], 1),
        (vec![5, 33], 1),
        // One row per invocation (rows of at most 32), widths 1 to 32.
        (vec![1000, 8], 1),
        (vec![130, 17], 1),
        (vec![70, 1], 1),
        (vec![3, 2], 1),
        // Several long rows: 64 elements per thread, then 8.
        (vec![3, 70_000], 1),
    ]
}

#[test]
fn float_sums_and_means_along_any_axis() {
    for (label, dev) in common::devices() {
        eprintln!("reductions on {label}");
        for (shape, axis) in shapes() {
            let n: usize = shape.iter().product();
            let data = uniform::<f32>(n as u64, n, -100.0, 100.0);
            let x = dev.from_slice(&data, &shape).unwrap();
            let sums = x.sum(Some(axis)).unwrap().to_vec().unwrap();
            let means = x.mean(Some(axis)).unwrap().to_vec().unwrap();
            let want = lanes(&data, &shape, axis, |l| l.to_vec());
            assert_eq!(sums.len(), want.len());
            for ((s, m), lane) in sums.iter().zip(&means).zip(&want) {
                check_sum(*s, lane);
                let exact = lane.iter().map(|&v| v as f64).sum::<f64>() / lane.len() as f64;
                let abs = lane.iter().map(|&v| (v as f64).abs()).sum::<f64>() / lane.len() as f64;
                assert!(
                    (*m as f64 - exact).abs() <= 30.0 * f32::EPSILON as f64 * abs.max(1e-30),
                    "mean {m} vs {exact}"
                );
            }
            let all = x.sum(None).unwrap().to_scalar().unwrap();
            check_sum(all, &data);
        }
    }
}

#[test]
fn min_max_and_arg_reductions_find_the_first_extreme_and_nan() {
    for (label, dev) in common::devices() {
        eprintln!("reductions on {label}");
        for (shape, axis) in shapes() {
            let n: usize = shape.iter().product();
            // Few distinct values, so ties are everywhere; a sprinkle of NaN.
            let mut data: Vec<f32> = bits(n as u64 + 3, n).into_iter().map(|w| (w % 7) as f32 - 3.0).collect();
            for i in (5..n).step_by(997) {
                data[i] = f32::NAN;
            }
            let x = dev.from_slice(&data, &shape).unwrap();
            let want_lanes = lanes(&data, &shape, axis, |l| l.to_vec());
            let mn = x.min(Some(axis)).unwrap().to_vec().unwrap();
            let mx = x.max(Some(axis)).unwrap().to_vec().unwrap();
            let amn = x.argmin(Some(axis)).unwrap().to_vec().unwrap();
            let amx = x.argmax(Some(axis)).unwrap().to_vec().unwrap();
            for (i, lane) in want_lanes.iter().enumerate() {
                let has_nan = lane.iter().any(|v| v.is_nan());
                let lo = lane.iter().copied().fold(f32::INFINITY, f32::min);
                let hi = lane.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                assert!(if has_nan { mn[i].is_nan() } else { mn[i] == lo }, "{shape:?}/{axis} min {} vs {lo}", mn[i]);
                assert!(if has_nan { mx[i].is_nan() } else { mx[i] == hi }, "{shape:?}/{axis} max {} vs {hi}", mx[i]);
                assert_eq!(amn[i], argmin_ref(lane), "{shape:?} axis {axis} argmin lane {i}");
                assert_eq!(amx[i], argmax_ref(lane), "{shape:?} axis {axis} argmax lane {i}");
            }
            assert_eq!(x.argmin(None).unwrap().to_scalar().unwrap(), argmin_ref(&data));
            assert_eq!(x.argmax(None).unwrap().to_scalar().unwrap(), argmax_ref(&data));
        }
    }
}

#[test]
fn integer_reductions_wrap_and_mean_is_exact_f64() {
    for (label, dev) in common::devices() {
        eprintln!("reductions on {label}");
        let shape = [6usize, 1500];
        let n = 9000;
        let data: Vec<i32> = bits(77, n).into_iter().map(|w| (w >> 1) as i32).collect();
        let x = dev.from_slice(&data, &shape).unwrap();
        let sums = x.sum(Some(1)).unwrap().to_vec().unwrap();
        let prods = x.prod(Some(1)).unwrap().to_vec().unwrap();
        let mins = x.min(Some(0)).unwrap().to_vec().unwrap();
        for (i, lane) in lanes(&data, &shape, 1, |l| l.to_vec()).iter().enumerate() {
            assert_eq!(sums[i], lane.iter().fold(0i32, |a, b| a.wrapping_add(*b)));
            assert_eq!(prods[i], lane.iter().fold(1i32, |a, b| a.wrapping_mul(*b)));
        }
        for (i, lane) in lanes(&data, &shape, 0, |l| l.to_vec()).iter().enumerate() {
            assert_eq!(mins[i], *lane.iter().min().unwrap());
        }
        let u: Vec<u32> = bits(78, 5000);
        let ux = dev.from_slice(&u, &[5000]).unwrap();
        assert_eq!(ux.sum(None).unwrap().to_scalar().unwrap(), u.iter().fold(0u32, |a, b| a.wrapping_add(*b)));
        assert_eq!(ux.max(None).unwrap().to_scalar().unwrap(), *u.iter().max().unwrap());
        assert_eq!(
            ux.argmax(None).unwrap().to_scalar().unwrap(),
            u.iter().position(|v| v == u.iter().max().unwrap()).unwrap() as u32
        );
        match x.mean(Some(1)) {
            Ok(m) => {
                let m = m.to_vec().unwrap();
                for (i, lane) in lanes(&data, &shape, 1, |l| l.to_vec()).iter().enumerate() {
                    let exact = lane.iter().map(|&v| v as i64).sum::<i64>() as f64 / lane.len() as f64;
                    assert!((m[i] - exact).abs() <= 1e-12 * exact.abs().max(1.0), "{} vs {exact}", m[i]);
                }
            }
            Err(Error::Unsupported { dtype: DType::F64, .. }) => assert!(!common::has_f64(&dev)),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn empty_reductions_follow_numpy() {
    for (label, dev) in common::devices() {
        eprintln!("reductions on {label}");
        let e = dev.from_slice::<f32>(&[], &[3, 0]).unwrap();
        assert_eq!(e.sum(Some(1)).unwrap().to_vec().unwrap(), vec![0.0; 3]);
        assert_eq!(e.prod(Some(1)).unwrap().to_vec().unwrap(), vec![1.0; 3]);
        assert!(e.mean(None).unwrap().to_scalar().unwrap().is_nan());
        assert_eq!(e.sum(Some(0)).unwrap().to_vec().unwrap(), Vec::<f32>::new());
        assert!(matches!(e.min(None), Err(Error::EmptyReduction { .. })));
    }
}

#[test]
fn f64_reductions_where_supported() {
    for (label, dev) in common::devices() {
        eprintln!("reductions on {label}");
        let data: Vec<f64> = uniform::<f32>(5, 3000, -10.0, 10.0).into_iter().map(|v| v as f64 * 1.000_000_1).collect();
        let x = dev.from_slice(&data, &[3, 1000]).unwrap();
        match x.sum(Some(1)) {
            Ok(s) => {
                let s = s.to_vec().unwrap();
                for (i, chunk) in data.chunks(1000).enumerate() {
                    let exact: f64 = chunk.iter().sum();
                    assert!((s[i] - exact).abs() <= 1e-12 * chunk.iter().map(|v| v.abs()).sum::<f64>());
                }
                assert_eq!(x.argmin(None).unwrap().to_scalar().unwrap() as usize, {
                    let m = data.iter().copied().fold(f64::INFINITY, f64::min);
                    data.iter().position(|&v| v == m).unwrap()
                });
            }
            Err(Error::Unsupported { dtype: DType::F64, .. }) => assert!(!common::has_f64(&dev)),
            Err(e) => panic!("{e}"),
        }
    }
}
