//! `Op::Matmul`: 2-D and batched 3-D, f32 and f64, odd sizes and empty dimensions, against
//! a naive triple loop in f64 with the error bound of a length-k dot product.

mod common;

use common::dev;
use polycompute_core::{DeviceArray, Element, Error};

fn values(n: usize, seed: usize) -> Vec<f64> {
    (0..n).map(|i| (((i * 2_654_435_761 + seed * 40_503) >> 7) % 2001) as f64 / 1000.0 - 1.0).collect()
}

/// Naive `[b, m, k] @ [b, k, n]` in f64, with Σ|a||b| per output for the error bound.
fn naive(a: &[f64], b: &[f64], batch: usize, m: usize, k: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut out = vec![0.0; batch * m * n];
    let mut mag = vec![0.0; batch * m * n];
    for p in 0..batch {
        for i in 0..m {
            for j in 0..n {
                for l in 0..k {
                    let (x, y) = (a[(p * m + i) * k + l], b[(p * k + l) * n + j]);
                    out[(p * m + i) * n + j] += x * y;
                    mag[(p * m + i) * n + j] += (x * y).abs();
                }
            }
        }
    }
    (out, mag)
}

fn check<T: Element>(batch: Option<usize>, m: usize, k: usize, n: usize, of: fn(f64) -> T, eps: f64) {
    let d = dev();
    let b = batch.unwrap_or(1);
    let va: Vec<T> = values(b * m * k, m + k).into_iter().map(of).collect();
    let vb: Vec<T> = values(b * k * n, n + 3).into_iter().map(of).collect();
    let (sa, sb): (Vec<usize>, Vec<usize>) = match batch {
        Some(b) => (vec![b, m, k], vec![b, k, n]),
        None => (vec![m, k], vec![k, n]),
    };
    let x: DeviceArray<T> = d.from_slice(&va, &sa).unwrap();
    let y: DeviceArray<T> = d.from_slice(&vb, &sb).unwrap();
    let z = x.matmul(&y).unwrap();
    let want_shape: Vec<usize> = match batch {
        Some(b) => vec![b, m, n],
        None => vec![m, n],
    };
    assert_eq!(z.shape(), &want_shape[..]);
    let f = |v: &[T]| v.iter().map(|x| x.to_scalar().to_f64()).collect::<Vec<f64>>();
    let (want, mag) = naive(&f(&va), &f(&vb), b, m, k, n);
    let got = f(&z.to_vec().unwrap());
    for (i, ((&g, &w), &s)) in got.iter().zip(&want).zip(&mag).enumerate() {
        let tol = (k as f64 + 2.0) * eps * s;
        assert!((g - w).abs() <= tol, "{batch:?}x{m}x{k}x{n} {}: element {i}: got {g}, want {w}", T::DTYPE);
    }
}

#[test]
fn two_d_products_of_odd_sizes() {
    for (m, k, n) in [(1, 1, 1), (3, 5, 2), (7, 33, 65), (130, 17, 9), (64, 256, 64), (257, 129, 200)] {
        check::<f32>(None, m, k, n, |v| v as f32, f32::EPSILON as f64);
        check::<f64>(None, m, k, n, |v| v, f64::EPSILON);
    }
}

#[test]
fn batched_products() {
    for (b, m, k, n) in [(3, 5, 7, 4), (2, 70, 90, 80), (17, 8, 8, 8), (2, 1, 300, 1)] {
        check::<f32>(Some(b), m, k, n, |v| v as f32, f32::EPSILON as f64);
        check::<f64>(Some(b), m, k, n, |v| v, f64::EPSILON);
    }
}

#[test]
fn empty_dimensions() {
    let d = dev();
    // k = 0: every output is an empty sum.
    let a = d.from_slice::<f32>(&[], &[2, 0]).unwrap();
    let b = d.from_slice::<f32>(&[], &[0, 3]).unwrap();
    let z = a.matmul(&b).unwrap();
    assert_eq!((z.shape(), z.to_vec().unwrap()), (&[2, 3][..], vec![0.0; 6]));
    let a = d.from_slice::<f64>(&[], &[0, 4]).unwrap();
    let b = d.from_slice::<f64>(&[1.0; 8], &[4, 2]).unwrap();
    assert_eq!(a.matmul(&b).unwrap().shape(), &[0, 2]);
}

#[test]
fn inner_dimension_mismatch_is_an_error() {
    let d = dev();
    let a = d.from_slice(&[1.0f32; 6], &[2, 3]).unwrap();
    assert!(matches!(a.matmul(&a), Err(Error::MatmulShape { .. })));
}

/// `x` (row-major `[batch, rows, cols]`) transposed per batch: `[batch, cols, rows]`.
fn transposed(x: &[f64], batch: usize, rows: usize, cols: usize) -> Vec<f64> {
    let mut t = vec![0.0; x.len()];
    for z in 0..batch {
        for r in 0..rows {
            for c in 0..cols {
                t[(z * cols + c) * rows + r] = x[(z * rows + r) * cols + c];
            }
        }
    }
    t
}

/// `lhs @ rhs` where either operand is a transposed view (`transpose()` in 2-D,
/// `permute([0, 2, 1])` batched) of a plain buffer: core passes the buffer with a transpose
/// flag and gemm reads it through its strides.
fn check_transposed<T: Element>(batch: Option<usize>, m: usize, k: usize, n: usize, of: fn(f64) -> T, eps: f64) {
    let d = dev();
    let b = batch.unwrap_or(1);
    let (va, vb) = (values(b * m * k, m + 2 * k), values(b * k * n, 3 * n + 1));
    let (want, mag) = naive(&va, &vb, b, m, k, n);
    let dims = |r: usize, c: usize| match batch {
        Some(b) => vec![b, r, c],
        None => vec![r, c],
    };
    // The transposed view of a plain array holding the operand's transpose.
    let view = |v: &[f64], r: usize, c: usize| -> DeviceArray<T> {
        let t: Vec<T> = transposed(v, b, r, c).into_iter().map(of).collect();
        let stored = d.from_slice(&t, &dims(c, r)).unwrap();
        let v = if batch.is_some() { stored.permute(&[0, 2, 1]) } else { stored.transpose() }.unwrap();
        assert!(r == 1 || c == 1 || !v.is_plain(), "a transposed view");
        v
    };
    let plain = |v: &[f64], r: usize, c: usize| -> DeviceArray<T> {
        d.from_slice(&v.iter().copied().map(of).collect::<Vec<T>>(), &dims(r, c)).unwrap()
    };
    for (lt, rt) in [(true, false), (false, true), (true, true)] {
        let x = if lt { view(&va, m, k) } else { plain(&va, m, k) };
        let y = if rt { view(&vb, k, n) } else { plain(&vb, k, n) };
        let z = x.matmul(&y).unwrap();
        assert_eq!(z.shape(), &dims(m, n)[..]);
        let got: Vec<f64> = z.to_vec().unwrap().iter().map(|x| x.to_scalar().to_f64()).collect();
        for (i, ((&g, &w), &s)) in got.iter().zip(&want).zip(&mag).enumerate() {
            let tol = (k as f64 + 2.0) * eps * s;
            assert!(
                (g - w).abs() <= tol,
                "lhs.T {lt} rhs.T {rt} {batch:?}x{m}x{k}x{n}: element {i}: got {g}, want {w}"
            );
        }
    }
}

#[test]
fn transposed_views_are_read_in_place() {
    for (m, k, n) in [(1, 1, 1), (3, 5, 2), (7, 33, 65), (130, 17, 9)] {
        check_transposed::<f32>(None, m, k, n, |v| v as f32, f32::EPSILON as f64);
        check_transposed::<f64>(None, m, k, n, |v| v, f64::EPSILON);
    }
    for (b, m, k, n) in [(3, 5, 7, 4), (2, 70, 90, 80)] {
        check_transposed::<f32>(Some(b), m, k, n, |v| v as f32, f32::EPSILON as f64);
        check_transposed::<f64>(Some(b), m, k, n, |v| v, f64::EPSILON);
    }
}
