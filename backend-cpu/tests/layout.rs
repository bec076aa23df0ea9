//! `Op::Copy`, `Op::Transpose` and `Op::Cast`: every axis permutation of 2-, 3- and 4-D
//! shapes (small and large enough to run in parallel tiles) against index arithmetic, and
//! every dtype pair of casts on special values against the rules written out in f64.

mod common;

use common::dev;
use polycompute_core::{DType, DeviceArray, Element};
use polycompute_testing::Specials;

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for pos in 0..=p.len() {
            let mut q = p.clone();
            q.insert(pos, n - 1);
            out.push(q);
        }
    }
    out
}

/// The transpose by index arithmetic: output multi-index `o` reads input index `i` with
/// `i[perm[a]] = o[a]`.
fn naive_transpose(x: &[u32], dims: &[usize], perm: &[usize]) -> Vec<u32> {
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let n: usize = dims.iter().product();
    (0..n)
        .map(|flat| {
            let mut rest = flat;
            let mut idx = vec![0; dims.len()];
            for a in (0..dims.len()).rev() {
                idx[perm[a]] = rest % out_dims[a];
                rest /= out_dims[a];
            }
            x[idx.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i)]
        })
        .collect()
}

#[test]
fn every_permutation_matches_index_arithmetic() {
    let d = dev();
    for dims in [
        vec![37, 70],
        vec![300, 500],
        vec![2, 3, 4],
        vec![5, 1, 130],
        vec![40, 50, 60],
        vec![2, 1, 3, 5],
        vec![3, 40, 7, 45],
        vec![6],
        vec![],
    ] {
        let n: usize = dims.iter().product();
        let x: Vec<u32> = (0..n as u32).collect();
        let a = d.from_slice(&x, &dims).unwrap();
        for perm in permutations(dims.len()) {
            let t = a.permute(&perm).unwrap();
            let want_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
            assert_eq!(t.shape(), &want_dims[..]);
            assert_eq!(t.to_vec().unwrap(), naive_transpose(&x, &dims, &perm), "{dims:?} by {perm:?}");
        }
    }
    let f = d.from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    assert_eq!(f.transpose().unwrap().to_vec().unwrap(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
}

#[test]
fn copy_is_a_new_equal_buffer() {
    let d = dev();
    for n in [0usize, 3, 100_000] {
        let v: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(-7)).collect();
        let a = d.from_slice(&v, &[n]).unwrap();
        let c = a.copy().unwrap();
        assert!(!std::sync::Arc::ptr_eq(a.buffer().unwrap(), c.buffer().unwrap()));
        assert_eq!(c.to_vec().unwrap(), v);
    }
}

/// The cast rules written out on f64 images: to an integer, truncate toward zero,
/// saturate, NaN to 0; i32 ↔ u32 keep the bits; to a float, round to nearest.
fn cast_ref(v: f64, from: DType, to: DType) -> f64 {
    let int_range = |lo: f64, hi: f64| {
        if v.is_nan() {
            0.0
        } else {
            // + 0.0 turns a -0.0 image into the integer 0.
            v.trunc().clamp(lo, hi) + 0.0
        }
    };
    match (from, to) {
        (_, DType::F64) => v,
        (_, DType::F32) => v as f32 as f64,
        (_, DType::F16) => polycompute_core::halves::f16_from_f64(v).to_f64(),
        (_, DType::BF16) => polycompute_core::halves::bf16_from_f64(v).to_f64(),
        (DType::I32, DType::U32) | (DType::U32, DType::I32) => {
            let bits = (v as i64).rem_euclid(1 << 32);
            if to == DType::I32 && bits >= 1 << 31 {
                (bits - (1 << 32)) as f64
            } else {
                bits as f64
            }
        }
        (_, DType::I32) => int_range(i32::MIN as f64, i32::MAX as f64),
        (_, DType::U32) => int_range(0.0, u32::MAX as f64),
        // This file casts among the first six dtypes; i64, u8 and bool are dtypes.rs's and
        // the conformance corpus's (tests/src/corpus_dtypes.rs).
        (_, DType::I64 | DType::U8 | DType::Bool) => unreachable!("no cast to {to} here"),
    }
}

fn cast_all_to<S: Element>(xs: &[S]) {
    let d = dev();
    let a = d.from_slice(xs, &[xs.len()]).unwrap();
    let images: Vec<f64> = xs.iter().map(|x| x.to_scalar().to_f64()).collect();
    let check = |got: Vec<f64>, to: DType| {
        for (i, (&g, &v)) in got.iter().zip(&images).enumerate() {
            let w = cast_ref(v, S::DTYPE, to);
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{} {v} -> {to}: got {g}, want {w} ({i})",
                S::DTYPE
            );
        }
    };
    let f = |v: Vec<f32>| v.into_iter().map(|x| x as f64).collect::<Vec<_>>();
    check(f(a.cast::<f32>().unwrap().to_vec().unwrap()), DType::F32);
    check(a.cast::<f64>().unwrap().to_vec().unwrap(), DType::F64);
    check(a.cast::<i32>().unwrap().to_vec().unwrap().into_iter().map(|x| x as f64).collect(), DType::I32);
    check(a.cast::<u32>().unwrap().to_vec().unwrap().into_iter().map(|x| x as f64).collect(), DType::U32);
}

#[test]
fn casts_between_every_pair_of_dtypes() {
    cast_all_to(&f32::extended());
    cast_all_to(&f64::extended());
    cast_all_to(&i32::extended());
    cast_all_to(&u32::extended());
    // A long cast runs in parallel and still converts every element.
    let v: Vec<i32> = (0..100_000).map(|i: i32| i.wrapping_mul(40_000).wrapping_sub(7)).collect();
    let a: DeviceArray<i32> = dev().from_slice(&v, &[v.len()]).unwrap();
    let got = a.cast::<f32>().unwrap().to_vec().unwrap();
    assert!(got.iter().zip(&v).all(|(&g, &x)| g as f64 == x as f64 as f32 as f64));
}
