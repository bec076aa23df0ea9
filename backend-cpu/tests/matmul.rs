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
