//! `Op::Reduce`: every reduction on every dtype, over all elements and along each axis of
//! 3-D shapes (small, and large enough to run in parallel), against naive references in
//! f64 / i128; NaN rules; wrapping integer sums; empty inputs; float sum accuracy.

mod common;

use common::dev;
use polycompute_core::{DeviceArray, Element, Error, ReduceKind};

/// Naive reduction of `x` (shape `dims`) along `axis` (or all), in f64 / i128 terms.
/// Returns one value per output element: the f64 value, or the index for arg reductions.
fn naive(kind: ReduceKind, x: &[f64], dims: &[usize], axis: Option<usize>, int_wrap: Option<bool>) -> Vec<f64> {
    let (outer, len, inner) = match axis {
        None => (1, x.len(), 1),
        Some(a) => (dims[..a].iter().product(), dims[a], dims[a + 1..].iter().product()),
    };
    let mut out = Vec::new();
    for o in 0..outer {
        for j in 0..inner {
            let run: Vec<f64> = (0..len).map(|i| x[(o * len + i) * inner + j]).collect();
            out.push(reduce_run(kind, &run, int_wrap));
        }
    }
    out
}

/// `int_wrap`: None for floats; Some(signed) for 32-bit integers (sum/prod wrap).
fn reduce_run(kind: ReduceKind, run: &[f64], int_wrap: Option<bool>) -> f64 {
    let wrap = |v: i128, signed: bool| {
        let m = v.rem_euclid(1 << 32);
        (if signed && m >= 1 << 31 { m - (1 << 32) } else { m }) as f64
    };
    let first_nan = run.iter().position(|v| v.is_nan());
    match kind {
        ReduceKind::Sum => match int_wrap {
            Some(s) => wrap(run.iter().map(|&v| v as i128).sum(), s),
            None => run.iter().sum(),
        },
        ReduceKind::Prod => match int_wrap {
            Some(s) => wrap(run.iter().fold(1i128, |p, &v| (p * v as i128).rem_euclid(1 << 64)), s),
            None => run.iter().product(),
        },
        ReduceKind::Mean => run.iter().sum::<f64>() / run.len() as f64,
        ReduceKind::Min | ReduceKind::Max if first_nan.is_some() => f64::NAN,
        ReduceKind::Min => run.iter().cloned().fold(f64::INFINITY, f64::min),
        ReduceKind::Max => run.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        ReduceKind::ArgMin | ReduceKind::ArgMax => {
            if let Some(i) = first_nan {
                return i as f64;
            }
            let mut best = 0;
            for (i, &v) in run.iter().enumerate() {
                let better = if kind == ReduceKind::ArgMin { v < run[best] } else { v > run[best] };
                if better {
                    best = i;
                }
            }
            best as f64
        }
    }
}

/// Values with repeats (ties), negatives and, for floats, optionally NaN.
fn data(n: usize, seed: u64, with_nan: bool) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(seed) >> 40;
            if with_nan && h.is_multiple_of(97) {
                f64::NAN
            } else {
                (h % 41) as f64 - 20.0
            }
        })
        .collect()
}

fn to_f64<T: Element>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_scalar().to_f64()).collect()
}

fn run_kind<T: Element>(a: &DeviceArray<T>, kind: ReduceKind, axis: Option<usize>) -> Vec<f64> {
    match kind {
        ReduceKind::Sum => to_f64(&a.sum(axis).unwrap().to_vec().unwrap()),
        ReduceKind::Prod => to_f64(&a.prod(axis).unwrap().to_vec().unwrap()),
        ReduceKind::Min => to_f64(&a.min(axis).unwrap().to_vec().unwrap()),
        ReduceKind::Max => to_f64(&a.max(axis).unwrap().to_vec().unwrap()),
        ReduceKind::Mean => to_f64(&a.mean(axis).unwrap().to_vec().unwrap()),
        ReduceKind::ArgMin => to_f64(&a.argmin(axis).unwrap().to_vec().unwrap()),
        ReduceKind::ArgMax => to_f64(&a.argmax(axis).unwrap().to_vec().unwrap()),
    }
}

/// Every reduction along every axis of `dims`, for one dtype built from f64 values by `make`.
fn check_all<T: Element>(dims: &[usize], make: impl Fn(f64) -> T, int_wrap: Option<bool>, eps: f64) {
    let d = dev();
    let n: usize = dims.iter().product();
    // Small magnitudes keep products finite / exact enough to compare; NaN only for floats.
    let raw = data(n, dims.len() as u64, int_wrap.is_none());
    // Products get mostly ±1 with rare factors 2 and 1/2: neither the reference nor any
    // partial product of a long run leaves the f32 range.
    let raw_prod: Vec<f64> = raw
        .iter()
        .enumerate()
        .map(|(i, &v)| match (i * 7919 + 13) % 401 {
            _ if v.is_nan() => v,
            0 => 2.0,
            1 => 0.5,
            k if k % 3 == 0 => -1.0,
            _ => 1.0,
        })
        .collect();
    let axes: Vec<Option<usize>> = std::iter::once(None).chain((0..dims.len()).map(Some)).collect();
    for kind in ReduceKind::ALL {
        let src = if kind == ReduceKind::Prod { &raw_prod } else { &raw };
        let host: Vec<T> = src.iter().map(|&v| make(v)).collect();
        let vals = to_f64(&host);
        let a = d.from_slice(&host, dims).unwrap();
        for &axis in &axes {
            let got = run_kind(&a, kind, axis);
            // The reference rounded to T, as T's own result is.
            let want: Vec<f64> = naive(kind, &vals, dims, axis, int_wrap)
                .into_iter()
                .map(|w| if kind == ReduceKind::Mean || int_wrap.is_some() { w } else { make(w).to_scalar().to_f64() })
                .collect();
            let len = axis.map_or(n, |ax| dims[ax]) as f64;
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let what = format!("{} {}{dims:?} axis {axis:?} at {i}: got {g}, want {w}", kind.name(), T::DTYPE);
                if w.is_nan() || w.is_infinite() {
                    assert!(g.is_nan() == w.is_nan() && (w.is_nan() || g == w), "{what}");
                    continue;
                }
                let tol = match kind {
                    // Sums of integers in [-20, 20]: pairwise error bound, relative to Σ|x|.
                    ReduceKind::Sum | ReduceKind::Mean if int_wrap.is_none() => eps * len.log2().max(1.0) * 20.0 * len,
                    ReduceKind::Mean => w.abs() * f64::EPSILON,
                    ReduceKind::Prod if int_wrap.is_none() => w.abs() * eps * len,
                    _ => 0.0,
                };
                let tol = if kind == ReduceKind::Mean { tol / len.max(1.0) + w.abs() * eps } else { tol };
                assert!((g - w).abs() <= tol, "{what}");
            }
        }
    }
}

fn shapes() -> Vec<Vec<usize>> {
    vec![vec![2, 3, 4], vec![5, 1, 7], vec![3, 70, 5], vec![7, 3, 3000], vec![40, 2100, 1], vec![70_001]]
}

#[test]
fn every_reduction_f32() {
    for s in shapes() {
        check_all::<f32>(&s, |v| v as f32, None, f32::EPSILON as f64);
    }
}

#[test]
fn every_reduction_f64() {
    for s in shapes() {
        check_all::<f64>(&s, |v| v, None, f64::EPSILON);
    }
}

#[test]
fn every_reduction_i32() {
    for s in shapes() {
        check_all::<i32>(&s, |v| v as i32 * 100_000_007, Some(true), 0.0);
    }
}

#[test]
fn every_reduction_u32() {
    for s in shapes() {
        check_all::<u32>(&s, |v| ((v + 20.0) as u32).wrapping_mul(300_000_007), Some(false), 0.0);
    }
}

#[test]
fn nan_rules_first_nan_wins_and_ties_take_the_first() {
    let d = dev();
    let a = d.from_slice(&[3.0f32, 1.0, f32::NAN, 1.0, f32::NAN], &[5]).unwrap();
    assert!(a.min(None).unwrap().to_scalar().unwrap().is_nan());
    assert!(a.max(None).unwrap().to_scalar().unwrap().is_nan());
    assert_eq!(a.argmin(None).unwrap().to_scalar().unwrap(), 2);
    assert_eq!(a.argmax(None).unwrap().to_scalar().unwrap(), 2);
    let t = d.from_slice(&[1.0f64, 5.0, 0.0, 5.0, 0.0], &[5]).unwrap();
    assert_eq!(t.argmin(None).unwrap().to_scalar().unwrap(), 2);
    assert_eq!(t.argmax(None).unwrap().to_scalar().unwrap(), 1);
    // A NaN late in a long run (parallel path) still wins over earlier extremes.
    let mut v = vec![0.0f32; 200_000];
    v[10] = -5.0;
    v[150_000] = f32::NAN;
    v[190_000] = f32::NAN;
    let big = d.from_slice(&v, &[200_000]).unwrap();
    assert_eq!(big.argmin(None).unwrap().to_scalar().unwrap(), 150_000);
}

#[test]
fn integer_sums_wrap_and_means_are_exact() {
    let d = dev();
    let a = d.from_slice(&[i32::MAX, 1, 1], &[3]).unwrap();
    assert_eq!(a.sum(None).unwrap().to_scalar().unwrap(), i32::MIN + 1);
    // The mean sums in a wide integer, so it does not wrap.
    let want = (i32::MAX as f64 + 2.0) / 3.0;
    assert_eq!(a.mean(None).unwrap().to_scalar().unwrap(), want);
    let u = d.from_slice(&[u32::MAX; 4], &[4]).unwrap();
    assert_eq!(u.sum(None).unwrap().to_scalar().unwrap(), u32::MAX.wrapping_mul(4));
    assert_eq!(u.mean(None).unwrap().to_scalar().unwrap(), u32::MAX as f64);
}

#[test]
fn empty_inputs_sum_to_zero_and_have_no_minimum() {
    let d = dev();
    let e = d.from_slice::<f32>(&[], &[0]).unwrap();
    assert_eq!(e.sum(None).unwrap().to_scalar().unwrap(), 0.0);
    assert_eq!(e.prod(None).unwrap().to_scalar().unwrap(), 1.0);
    assert!(e.mean(None).unwrap().to_scalar().unwrap().is_nan());
    assert!(matches!(e.min(None), Err(Error::EmptyReduction { .. })));
    assert!(matches!(e.argmax(None), Err(Error::EmptyReduction { .. })));
    let ei = d.from_slice::<i32>(&[], &[2, 0, 3]).unwrap();
    assert_eq!(ei.sum(Some(1)).unwrap().to_vec().unwrap(), vec![0; 6]);
    assert!(ei.mean(Some(1)).unwrap().to_vec().unwrap().iter().all(|m| m.is_nan()));
    assert_eq!(ei.sum(Some(0)).unwrap().shape(), &[0, 3]);
    assert!(matches!(ei.max(Some(1)), Err(Error::EmptyReduction { .. })));
}

#[test]
fn float_sums_stay_within_the_pairwise_error_bound() {
    let d = dev();
    let n = 1 << 21;
    // Values with no exact f32 sum, of mixed magnitude.
    let v: Vec<f32> = (0..n).map(|i| 1.0 + ((i * 2_654_435_761usize) % 1000) as f32 * 1e-4).collect();
    let exact: f64 = v.iter().map(|&x| x as f64).sum();
    let abs: f64 = v.iter().map(|&x| x.abs() as f64).sum();
    let got = d.from_slice(&v, &[n]).unwrap().sum(None).unwrap().to_scalar().unwrap() as f64;
    // Leaves of 32 sequential adds per lane, then log2(n) levels.
    let bound = (32.0 + (n as f64).log2()) * f32::EPSILON as f64 * abs;
    assert!((got - exact).abs() <= bound, "error {} > bound {bound}", (got - exact).abs());
    // Along a long non-last axis too.
    let m = d.from_slice(&v, &[n / 4, 4]).unwrap().sum(Some(0)).unwrap().to_vec().unwrap();
    for (j, &g) in m.iter().enumerate() {
        let col: Vec<f64> = v.iter().skip(j).step_by(4).map(|&x| x as f64).collect();
        let (e, a): (f64, f64) = (col.iter().sum(), col.iter().map(|x| x.abs()).sum());
        let bound = (8.0 + (col.len() as f64).log2()) * f32::EPSILON as f64 * a;
        assert!((g as f64 - e).abs() <= bound, "column {j}: error {} > {bound}", (g as f64 - e).abs());
    }
}

#[test]
fn arg_reductions_along_many_short_rows() {
    // Rows of 1..=33 elements (the short-row path takes up to 32), in counts below, at and
    // past the transposed block and the parallel cut-over, with NaN, ties and both zeros
    // (which tie: the first wins).
    let d = dev();
    let mut cases: Vec<(usize, usize)> = (1..=33).flat_map(|len| [(3, len), (129, len), (4099, len)]).collect();
    cases.push((200_000, 8));
    cases.push((70_001, 17));
    for (rows, len) in cases {
        let raw: Vec<f64> = data(rows * len, len as u64, true)
            .into_iter()
            .enumerate()
            .map(|(i, v)| if v == 0.0 && i % 2 == 1 { -0.0 } else { v })
            .collect();
        for kind in [ReduceKind::ArgMin, ReduceKind::ArgMax] {
            let want = naive(kind, &raw, &[rows, len], Some(1), None);
            let f32s: Vec<f32> = raw.iter().map(|&v| v as f32).collect();
            let got_f32 = run_kind(&d.from_slice(&f32s, &[rows, len]).unwrap(), kind, Some(1));
            assert_eq!(got_f32, want, "{} f32 [{rows}, {len}]", kind.name());
            let got_f64 = run_kind(&d.from_slice(&raw, &[rows, len]).unwrap(), kind, Some(1));
            assert_eq!(got_f64, want, "{} f64 [{rows}, {len}]", kind.name());
            let ints: Vec<f64> = raw.iter().map(|&v| if v.is_nan() { 7.0 } else { v }).collect();
            let want_int = naive(kind, &ints, &[rows, len], Some(1), Some(true));
            let i32s: Vec<i32> = ints.iter().map(|&v| v as i32).collect();
            let got_i32 = run_kind(&d.from_slice(&i32s, &[rows, len]).unwrap(), kind, Some(1));
            assert_eq!(got_i32, want_int, "{} i32 [{rows}, {len}]", kind.name());
            let u32s: Vec<u32> = ints.iter().map(|&v| (v + 20.0) as u32).collect();
            let got_u32 = run_kind(&d.from_slice(&u32s, &[rows, len]).unwrap(), kind, Some(1));
            assert_eq!(got_u32, want_int, "{} u32 [{rows}, {len}]", kind.name());
        }
    }
}
