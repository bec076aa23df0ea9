//! Kernels whose loop grows with the problem, past the 65,535 loop iterations that llvmpipe
//! lets one invocation run (`device::LOOP_BUDGET`): a matmul's inner dimension and a
//! scatter-add's indices. Inputs are small integers (or one-hot), so every sum is exact
//! and the expected answers are exact too.

mod common;

use polycompute_core::{bf16, f16, Device};

/// `(i * 7 + j * 3) % 5 - 2`: small integers, so f32 sums of products stay exact.
fn small_ints(rows: usize, cols: usize, salt: usize) -> Vec<f32> {
    (0..rows * cols).map(|e| ((e * 7 + salt * 3 + e / cols) % 5) as f32 - 2.0).collect()
}

/// `a @ b` of row-major `[m, k]` and `[k, n]` on the host, in f64 (exact here).
fn host_matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0f64; m * n];
    for i in 0..m {
        for p in 0..k {
            let x = f64::from(a[i * k + p]);
            for j in 0..n {
                c[i * n + j] += x * f64::from(b[p * n + j]);
            }
        }
    }
    c.into_iter().map(|v| v as f32).collect()
}

fn ones_product(dev: &Device, k: usize) -> Vec<f32> {
    let a = dev.full(1.0f32, &[8, k]).unwrap();
    let b = dev.full(1.0f32, &[k, 4]).unwrap();
    a.matmul(&b).unwrap().to_vec().unwrap()
}

#[test]
fn matmul_sums_every_term_of_a_long_inner_dimension() {
    let Some(dev) = common::device() else { return };
    // 52,430 was the first K that lost terms; 300,000 takes two launches of 262,144.
    for k in [52_430, 100_000, 300_000] {
        let got = ones_product(&dev, k);
        assert!(got.iter().all(|&v| v == k as f32), "full(1) [8, {k}] @ [{k}, 4] gave {:?}", &got[..4]);
    }
}

#[test]
fn matmul_with_a_long_inner_dimension_matches_the_host_in_every_output() {
    let Some(dev) = common::device() else { return };
    let (m, k, n) = (300, 70_000, 30);
    let (a, b) = (small_ints(m, k, 1), small_ints(k, n, 2));
    let want = host_matmul(&a, &b, m, k, n);
    let da = dev.from_slice(&a, &[m, k]).unwrap();
    let db = dev.from_slice(&b, &[k, n]).unwrap();
    assert_eq!(da.matmul(&db).unwrap().to_vec().unwrap(), want, "[{m}, {k}] @ [{k}, {n}]");
    // The same operands stored transposed: the transposed kernels take the same launches.
    let at: Vec<f32> = (0..k * m).map(|e| a[(e % m) * k + e / m]).collect();
    let bt: Vec<f32> = (0..n * k).map(|e| b[(e % k) * n + e / k]).collect();
    let dat = dev.from_slice(&at, &[k, m]).unwrap().transpose().unwrap();
    let dbt = dev.from_slice(&bt, &[n, k]).unwrap().transpose().unwrap();
    assert_eq!(dat.matmul(&dbt).unwrap().to_vec().unwrap(), want, "transposed operands");
}

#[test]
fn f64_and_half_matmuls_reach_the_last_term() {
    let Some(dev) = common::device() else { return };
    // f64 slices are 16 deep: 600,000 takes two launches of 524,288.
    if common::has_f64(&dev) {
        let k = 600_000;
        let a = dev.full(1.0f64, &[2, k]).unwrap();
        let b = dev.full(1.0f64, &[k, 2]).unwrap();
        let got = a.matmul(&b).unwrap().to_vec().unwrap();
        assert!(got.iter().all(|&v| v == k as f64), "f64: {got:?}");
    }
    // Halves cannot count that far: a one-hot row picks the last term out of K.
    let k = 70_000;
    let mut one_hot = vec![0.0f32; k];
    one_hot[k - 1] = 1.0;
    let h: Vec<f16> = one_hot.iter().map(|&v| f16::from_f32(v)).collect();
    let a = dev.from_slice(&h, &[1, k]).unwrap();
    let b = dev.full(f16::from_f32(3.0), &[k, 2]).unwrap();
    assert_eq!(a.matmul(&b).unwrap().to_vec().unwrap(), vec![f16::from_f32(3.0); 2], "f16");
    let h: Vec<bf16> = one_hot.iter().map(|&v| bf16::from_f32(v)).collect();
    let a = dev.from_slice(&h, &[1, k]).unwrap();
    let b = dev.full(bf16::from_f32(-5.0), &[k, 2]).unwrap();
    assert_eq!(a.matmul(&b).unwrap().to_vec().unwrap(), vec![bf16::from_f32(-5.0); 2], "bf16");
}

#[test]
fn scatter_add_applies_every_index() {
    let Some(dev) = common::device() else { return };
    // 200,000 ones into one bin (65,535 was what arrived before).
    let m = 200_000;
    let zeros = dev.zeros::<f32>(&[1]).unwrap();
    let idx = dev.zeros::<u32>(&[m]).unwrap();
    let ones = dev.full(1.0f32, &[m]).unwrap();
    assert_eq!(zeros.scatter_add(&idx, &ones, 0).unwrap().to_vec().unwrap(), vec![m as f32]);
    // i32 values into 7 bins of a [7, 3] array along axis 0, negative indices included.
    let bins = 7;
    let indices: Vec<i32> = (0..m).map(|j| (j * 31 % 13) as i32 - 6).collect();
    let values: Vec<i32> = (0..m * 3).map(|e| (e % 11) as i32 - 5).collect();
    let mut want = vec![0i32; bins * 3];
    for (j, &i) in indices.iter().enumerate() {
        let row = i.rem_euclid(bins as i32) as usize;
        for c in 0..3 {
            want[row * 3 + c] += values[j * 3 + c];
        }
    }
    let base = dev.zeros::<i32>(&[bins, 3]).unwrap();
    let di = dev.from_slice(&indices, &[m]).unwrap();
    let dv = dev.from_slice(&values, &[m, 3]).unwrap();
    assert_eq!(base.scatter_add(&di, &dv, 0).unwrap().to_vec().unwrap(), want);
}
