//! Reductions along many short rows, `[200000, 8]` f32 (`Config::short_rows`) along the last axis: the shape of
//! per-point work (distances to 8 centroids, 8 class scores). `sum_rows_f32` is measured beside
//! a hand-written rayon loop; `argmin_rows_f32` beside the sum along the same rows in the same
//! run, since an argmin reads the same bytes and should cost about as much (issue: within 2×).
//! Figures are GB/s read.

use polycompute::{Axis, Device, DeviceArray};
use rayon::prelude::*;

use super::cases::{Config, Figures};
use super::timing::median_secs_pair;
use super::BenchError;

/// Elements per row.
pub const LEN: usize = 8;

fn input(device: &Device, cfg: &Config) -> Result<(DeviceArray<f32>, Vec<f32>), BenchError> {
    let x = device.uniform::<f32>(21, &[cfg.short_rows, LEN])?;
    device.synchronize()?;
    let host = x.to_vec()?;
    Ok((x, host))
}

fn synced<T: polycompute::Element>(a: polycompute::Result<DeviceArray<T>>) -> Result<DeviceArray<T>, BenchError> {
    let a = a?;
    a.device().synchronize()?;
    Ok(a)
}

fn gb_per_s(cfg: &Config, secs: f64) -> f64 {
    (cfg.short_rows * LEN * std::mem::size_of::<f32>()) as f64 / secs / 1e9
}

fn sum_along(x: &DeviceArray<f32>) -> Result<DeviceArray<f32>, BenchError> {
    synced(x.sum(Axis(1)))
}

/// `sum_rows_f32`: the sums of each row, checked against f64 sums.
pub fn sum_rows(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let (x, xh) = input(device, cfg)?;
    let got = sum_along(&x)?.to_vec()?;
    for (r, (&g, row)) in got.iter().zip(xh.chunks_exact(LEN)).enumerate() {
        let exact: f64 = row.iter().map(|&v| v as f64).sum();
        if (g as f64 - exact).abs() > 8.0 * f32::EPSILON as f64 * exact.abs() + 1e-6 {
            return Err(format!("sum along rows wrong at row {r}: got {g}, expected {exact}").into());
        }
    }
    let host = || -> Result<Vec<f32>, BenchError> { Ok(xh.par_chunks_exact(LEN).map(|r| r.iter().sum()).collect()) };
    let (t, tb) = median_secs_pair(cfg.stream_reps, || sum_along(&x), host)?;
    Ok(Figures {
        value: gb_per_s(cfg, t),
        unit: "GB/s",
        baseline: Some(gb_per_s(cfg, tb)),
        baseline_name: "hand-written rayon loop",
    })
}

/// `argmin_rows_f32`: the index of each row's first minimum, checked against the host; its
/// baseline is `sum_rows_f32`'s own call on the same input.
pub fn argmin_rows(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let (x, xh) = input(device, cfg)?;
    let got = synced(x.argmin(Axis(1)))?.to_vec()?;
    for (r, (&g, row)) in got.iter().zip(xh.chunks_exact(LEN)).enumerate() {
        let want = (1..LEN).fold(0, |best, j| if row[j] < row[best] { j } else { best });
        if g as usize != want {
            return Err(format!("argmin along rows wrong at row {r}: got {g}, expected {want}").into());
        }
    }
    let (t, tb) = median_secs_pair(cfg.stream_reps, || synced(x.argmin(Axis(1))), || sum_along(&x))?;
    Ok(Figures {
        value: gb_per_s(cfg, t),
        unit: "GB/s",
        baseline: Some(gb_per_s(cfg, tb)),
        baseline_name: "sum along the same rows",
    })
}
