//! The kernels chosen by shape: short rows one per invocation, long rows through the
//! subgroup stage or its barrier fallback, and the skinny matmul, against host references;
//! each on a 2-D grid: past 65,535 workgroups, or past a lowered limit per dimension
//! (`WgpuDevice::limit_grid_for_tests`) where a real crossing would take too long.

mod common;

use std::sync::Arc;

use polycompute_core::Device;
use polycompute_testing::inputs::{bits, uniform};
use polycompute_wgpu::WgpuDevice;

/// Rows of 2 with 64 rows per workgroup: 65,537 workgroups.
const MANY_ROWS: usize = 65_537 * 64 - 3;

fn first_min(row: &[f32]) -> u32 {
    (1..row.len()).fold(0, |best, j| if row[j] < row[best] { j } else { best }) as u32
}

#[test]
fn short_rows_past_one_grid_dimension() {
    let Some(dev) = common::device() else { return };
    let n = MANY_ROWS * 2;
    // Few distinct values: ties in most rows, so the first index must win.
    let data: Vec<f32> = bits(11, n).into_iter().map(|w| (w % 3) as f32).collect();
    let x = dev.from_slice(&data, &[MANY_ROWS, 2]).unwrap();
    let sums = x.sum(Some(1)).unwrap().to_vec().unwrap();
    let mins = x.argmin(Some(1)).unwrap().to_vec().unwrap();
    assert_eq!((sums.len(), mins.len()), (MANY_ROWS, MANY_ROWS));
    for (r, row) in data.chunks_exact(2).enumerate() {
        assert_eq!(sums[r], row[0] + row[1], "sum of row {r}");
        assert_eq!(mins[r], first_min(row), "argmin of row {r}: {row:?}");
    }
}

#[test]
fn short_rows_of_every_width_and_nan() {
    let Some(dev) = common::device() else { return };
    for width in [1, 2, 3, 5, 8, 16, 31, 32] {
        let rows = 1000;
        let mut data: Vec<f32> = bits(width as u64, rows * width).into_iter().map(|w| (w % 5) as f32 - 2.0).collect();
        for i in (3..data.len()).step_by(97) {
            data[i] = f32::NAN;
        }
        let x = dev.from_slice(&data, &[rows, width]).unwrap();
        let mn = x.min(Some(1)).unwrap().to_vec().unwrap();
        let amx = x.argmax(Some(1)).unwrap().to_vec().unwrap();
        let ints: Vec<i32> = data.iter().map(|&v| if v.is_nan() { i32::MAX } else { v as i32 }).collect();
        let isum = dev.from_slice(&ints, &[rows, width]).unwrap().sum(Some(1)).unwrap().to_vec().unwrap();
        for (r, row) in data.chunks_exact(width).enumerate() {
            let nan = row.iter().position(|v| v.is_nan());
            let lo = row.iter().copied().fold(f32::INFINITY, f32::min);
            assert!(if nan.is_some() { mn[r].is_nan() } else { mn[r] == lo }, "width {width} row {r} min {}", mn[r]);
            let hi = nan.unwrap_or_else(|| (1..width).fold(0, |b, j| if row[j] > row[b] { j } else { b }));
            assert_eq!(amx[r] as usize, hi, "width {width} row {r} argmax: {row:?}");
            let want = ints[r * width..(r + 1) * width].iter().fold(0i32, |s, &v| s.wrapping_add(v));
            assert_eq!(isum[r], want, "width {width} row {r}: i32 sums wrap");
        }
    }
}

/// The device under test with and without subgroups, each spreading launches of more than
/// `max` workgroups over a 2-D grid (as past 65,535 on a real adapter, with small inputs).
fn limited_devices(max: u32) -> Vec<(String, polycompute_core::Device)> {
    let Some(probe) = common::wgpu_device() else { return Vec::new() };
    let mut all = Vec::new();
    for subgroups in [true, false] {
        let mut dev = WgpuDevice::open_with_subgroups(common::ordinal(), subgroups).unwrap();
        if subgroups && !dev.has_subgroups() {
            continue;
        }
        dev.limit_grid_for_tests(max);
        all.push((format!("subgroups {subgroups}, grid {max}"), Device::from_backend(Arc::new(dev))));
    }
    assert_eq!(all.len(), if probe.has_subgroups() { 2 } else { 1 });
    all
}

#[test]
fn long_and_medium_rows_on_a_two_dimensional_grid_with_and_without_subgroups() {
    // 300 elements: a tree pass with a workgroup per row; 100: 16 rows per workgroup.
    for (rows, len) in [(3000, 300), (5000, 100)] {
        let data = uniform::<f32>(len as u64, rows * len, -1.0, 1.0);
        for (label, dev) in limited_devices(64) {
            let x = dev.from_slice(&data, &[rows, len]).unwrap();
            let sums = x.sum(Some(1)).unwrap().to_vec().unwrap();
            let amx = x.argmax(Some(1)).unwrap().to_vec().unwrap();
            for (r, row) in data.chunks_exact(len).enumerate() {
                let exact: f64 = row.iter().map(|&v| v as f64).sum();
                let abs: f64 = row.iter().map(|&v| (v as f64).abs()).sum();
                let bound = ((len as f64).log2().ceil() + 1.0) * f32::EPSILON as f64 * abs;
                assert!((sums[r] as f64 - exact).abs() <= bound, "{label}: row {r} sum {} vs {exact}", sums[r]);
                let want = (1..len).fold(0, |b, j| if row[j] > row[b] { j } else { b });
                assert_eq!(amx[r] as usize, want, "{label}: [{rows}, {len}] row {r} argmax");
            }
        }
    }
}

#[test]
fn long_sums_of_64_per_thread_on_a_two_dimensional_grid() {
    let n = (1 << 20) + 3;
    let data = uniform::<f32>(9, n, -1.0, 1.0);
    let ints: Vec<i32> = bits(10, n).into_iter().map(|w| w as i32).collect();
    let exact: f64 = data.iter().map(|&v| v as f64).sum();
    let abs: f64 = data.iter().map(|&v| (v as f64).abs()).sum();
    let bound = ((n as f64).log2().ceil() + 1.0) * f32::EPSILON as f64 * abs;
    for (label, dev) in limited_devices(16) {
        let s = dev.from_slice(&data, &[n]).unwrap().sum(None).unwrap().to_scalar().unwrap();
        assert!((s as f64 - exact).abs() <= bound, "{label}: sum {s} vs {exact}");
        let x = dev.from_slice(&ints, &[n]).unwrap();
        assert_eq!(
            x.sum(None).unwrap().to_scalar().unwrap(),
            ints.iter().fold(0i32, |a, &v| a.wrapping_add(v)),
            "{label}"
        );
        let lo = ints.iter().min().unwrap();
        let want = ints.iter().position(|v| v == lo).unwrap() as u32;
        assert_eq!(x.argmin(None).unwrap().to_scalar().unwrap(), want, "{label}: argmin");
    }
}

/// Host `a @ b` in f64, with the error bound `k * eps * sum|a*b| + 1 ulp` per element.
fn host_matmul(a: &[f32], b: &[f32], (batch, m, k, n): (usize, usize, usize, usize)) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(batch * m * n);
    for bi in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let (mut s, mut mag) = (0.0f64, 0.0f64);
                for p in 0..k {
                    let t = a[(bi * m + i) * k + p] as f64 * b[(bi * k + p) * n + j] as f64;
                    s += t;
                    mag += t.abs();
                }
                let bound = k as f64 * f32::EPSILON as f64 * mag + (s.abs() * f32::EPSILON as f64);
                out.push((s, bound));
            }
        }
    }
    out
}

fn check_matmul(dev: &polycompute_core::Device, batch: usize, m: usize, k: usize, n: usize) {
    let a = uniform::<f32>((m * 31 + k) as u64, batch * m * k, -1.0, 1.0);
    let b = uniform::<f32>((n * 17 + k) as u64, batch * k * n, -1.0, 1.0);
    let (sa, sb) = if batch == 1 { (vec![m, k], vec![k, n]) } else { (vec![batch, m, k], vec![batch, k, n]) };
    let x = dev.from_slice(&a, &sa).unwrap();
    let y = dev.from_slice(&b, &sb).unwrap();
    let got = x.matmul(&y).unwrap().to_vec().unwrap();
    let want = host_matmul(&a, &b, (batch, m, k, n));
    assert_eq!(got.len(), want.len());
    for (i, (&g, &(w, bound))) in got.iter().zip(&want).enumerate() {
        assert!((g as f64 - w).abs() <= bound, "[{batch}, {m}, {k}] @ [{k}, {n}] element {i}: {g} vs {w}");
    }
}

#[test]
fn skinny_matmul_every_narrow_width_batches_and_long_k() {
    let Some(dev) = common::device() else { return };
    for n in [1, 2, 7, 8, 16] {
        check_matmul(&dev, 1, 200, 16, n);
    }
    check_matmul(&dev, 3, 50, 7, 5);
    check_matmul(&dev, 1, 5, 0, 3);
    // Past one launch's loop budget (32,768 steps): the second launch resumes from C.
    check_matmul(&dev, 1, 3, 40_000, 2);
    // The tiled kernel again from 17 columns.
    check_matmul(&dev, 1, 70, 9, 17);
}

#[test]
fn skinny_matmul_past_one_grid_dimension() {
    let Some(dev) = common::device() else { return };
    check_matmul(&dev, 1, MANY_ROWS, 1, 3);
}
