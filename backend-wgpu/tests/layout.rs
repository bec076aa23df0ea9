//! Transpose, matmul: against naive host loops.

mod common;

use polycompute_core::{DType, Error, Shape};
use polycompute_testing::inputs::uniform;

/// Host permutation of `x` (of `dims`): output axis i is input axis perm[i].
fn permute<T: Copy>(x: &[T], dims: &[usize], perm: &[usize]) -> Vec<T> {
    let in_strides = Shape::new(dims).unwrap().strides();
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let n: usize = dims.iter().product();
    (0..n)
        .map(|flat| {
            let mut rem = flat;
            let mut off = 0;
            for i in (0..out_dims.len()).rev() {
                let c = rem % out_dims[i];
                rem /= out_dims[i];
                off += c * in_strides[perm[i]];
            }
            x[off]
        })
        .collect()
}

#[test]
fn transposes_of_many_shapes_and_permutations() {
    let Some(dev) = common::device() else { return };
    let cases: Vec<(Vec<usize>, Vec<usize>)> = vec![
        (vec![37, 70], vec![1, 0]),
        (vec![64, 32], vec![1, 0]),
        (vec![1, 100], vec![1, 0]),
        (vec![3, 33, 65], vec![0, 2, 1]),
        (vec![3, 33, 65], vec![2, 1, 0]),
        (vec![3, 33, 65], vec![1, 2, 0]),
        (vec![3, 33, 65], vec![1, 0, 2]),
        (vec![2, 3, 4, 5], vec![3, 1, 0, 2]),
        (vec![2, 3, 4, 5], vec![0, 1, 2, 3]),
        (vec![5, 1, 7], vec![2, 1, 0]),
        (vec![0, 4], vec![1, 0]),
    ];
    for (dims, perm) in cases {
        let n: usize = dims.iter().product();
        let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let x = dev.from_slice(&data, &dims).unwrap();
        let y = x.permute(&perm).unwrap();
        let want_shape: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
        assert_eq!(y.shape(), want_shape.as_slice());
        assert_eq!(y.to_vec().unwrap(), permute(&data, &dims, &perm), "{dims:?} {perm:?}");
    }
    // Integers and f64 move their bits unchanged.
    let ints: Vec<i32> = (0..600).map(|i| i * 7 - 3000).collect();
    let x = dev.from_slice(&ints, &[20, 30]).unwrap();
    assert_eq!(x.transpose().unwrap().to_vec().unwrap(), permute(&ints, &[20, 30], &[1, 0]));
    let d: Vec<f64> = (0..600).map(|i| i as f64 * 1.000_000_000_1).collect();
    let x = dev.from_slice(&d, &[30, 20]).unwrap();
    // The transpose is a view: the copy, and so the error, comes with to_vec.
    match x.transpose().and_then(|t| t.to_vec()) {
        Ok(t) => assert_eq!(t, permute(&d, &[30, 20], &[1, 0])),
        Err(Error::Unsupported { dtype: DType::F64, .. }) => assert!(!common::has_f64(&dev)),
        Err(e) => panic!("{e}"),
    }
}

fn matmul_ref(a: &[f32], b: &[f32], batch: usize, m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0f64; batch * m * n];
    for bi in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0f64;
                for p in 0..k {
                    s += a[bi * m * k + i * k + p] as f64 * b[bi * k * n + p * n + j] as f64;
                }
                c[bi * m * n + i * n + j] = s;
            }
        }
    }
    c
}

#[test]
fn matmul_matches_a_naive_loop_for_ragged_shapes() {
    let Some(dev) = common::device() else { return };
    for (batch, m, k, n) in
        [(1, 1, 1, 1), (1, 65, 17, 70), (1, 128, 64, 64), (3, 33, 40, 9), (1, 7, 0, 5), (2, 1, 300, 1)]
    {
        let a = uniform::<f32>((m * k) as u64 + 1, batch * m * k, -1.0, 1.0);
        let b = uniform::<f32>((k * n) as u64 + 2, batch * k * n, -1.0, 1.0);
        // 2-D operands, except for the batched cases and one 1x1x1 case run batched.
        let (sa, sb) = if batch == 1 && (m, n) != (1, 1) {
            (vec![m, k], vec![k, n])
        } else {
            (vec![batch, m, k], vec![batch, k, n])
        };
        let x = dev.from_slice(&a, &sa).unwrap();
        let y = dev.from_slice(&b, &sb).unwrap();
        let c = x.matmul(&y).unwrap();
        let got = c.to_vec().unwrap();
        let want = matmul_ref(&a, &b, batch, m, k, n);
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            // Each term is at most 1 in size: k terms accumulate at most k ulps of error.
            let bound = (k as f64 + 2.0) * f32::EPSILON as f64;
            assert!((*g as f64 - w).abs() <= bound, "{batch}x{m}x{k}x{n} element {i}: {g} vs {w}");
        }
    }
}

#[test]
fn matmul_f64_where_supported() {
    let Some(dev) = common::device() else { return };
    let (m, k, n) = (45, 33, 50);
    let a: Vec<f64> = uniform::<f32>(1, m * k, -1.0, 1.0).into_iter().map(|v| v as f64 / 3.0).collect();
    let b: Vec<f64> = uniform::<f32>(2, k * n, -1.0, 1.0).into_iter().map(|v| v as f64 / 7.0).collect();
    let x = dev.from_slice(&a, &[m, k]).unwrap();
    let y = dev.from_slice(&b, &[k, n]).unwrap();
    match x.matmul(&y) {
        Ok(c) => {
            let c = c.to_vec().unwrap();
            for i in 0..m {
                for j in 0..n {
                    let w: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                    assert!((c[i * n + j] - w).abs() <= 1e-14, "{} vs {w}", c[i * n + j]);
                }
            }
        }
        Err(Error::Unsupported { dtype: DType::F64, .. }) => assert!(!common::has_f64(&dev)),
        Err(e) => panic!("{e}"),
    }
}
