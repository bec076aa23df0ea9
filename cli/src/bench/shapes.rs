//! `matmul_skinny_f32`: `[200000, 16] @ [16, 8]` f32 (`Config::short_rows` rows), the shape
//! of projecting many points onto a few directions. It is memory-bound (256 flops per 96
//! bytes), so the figure is GB/s of A read and C written, beside a hand-written rayon loop
//! on the CPU and the device copy of A on a GPU.

use polycompute::{BackendKind, Device, DeviceArray};
use rayon::prelude::*;

use super::cases::{Config, Figures};
use super::timing::median_secs_pair;
use super::BenchError;

/// Inner dimension (columns of A).
pub const K: usize = 16;
/// Columns of B and C.
pub const N: usize = 8;

fn synced(a: polycompute::Result<DeviceArray<f32>>) -> Result<DeviceArray<f32>, BenchError> {
    let a = a?;
    a.device().synchronize()?;
    Ok(a)
}

/// Host `a @ b` for `[rows, K] @ [K, N]`, one row per rayon task.
fn host(a: &[f32], b: &[f32]) -> Vec<f32> {
    let mut c = vec![0.0f32; a.len() / K * N];
    c.par_chunks_exact_mut(N).zip(a.par_chunks_exact(K)).for_each(|(c, a)| {
        for (p, &av) in a.iter().enumerate() {
            for (cj, &bv) in c.iter_mut().zip(&b[p * N..(p + 1) * N]) {
                *cj += av * bv;
            }
        }
    });
    c
}

/// `matmul_skinny_f32`, checked against an f64 product within `K * eps * sum|a*b|`.
pub fn matmul_skinny(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let rows = cfg.short_rows;
    let a = device.uniform::<f32>(31, &[rows, K])?;
    let b = device.uniform::<f32>(32, &[K, N])?;
    device.synchronize()?;
    let (ah, bh) = (a.to_vec()?, b.to_vec()?);
    let got = synced(a.matmul(&b))?.to_vec()?;
    for (r, (c, ar)) in got.chunks_exact(N).zip(ah.chunks_exact(K)).enumerate() {
        for (j, &g) in c.iter().enumerate() {
            let terms = ar.iter().enumerate().map(|(p, &av)| av as f64 * bh[p * N + j] as f64);
            let (want, mag) = terms.fold((0.0, 0.0), |(s, m), t| (s + t, m + t.abs()));
            if (g as f64 - want).abs() > K as f64 * f32::EPSILON as f64 * mag + 1e-6 {
                return Err(format!("skinny matmul wrong at ({r}, {j}): got {g}, expected {want}").into());
            }
        }
    }
    let bytes = (rows * (K + N) * std::mem::size_of::<f32>()) as f64;
    let gb_per_s = |secs: f64| bytes / secs / 1e9;
    let run = || synced(a.matmul(&b));
    let (t, tb, baseline_name) = if device.kind() == BackendKind::Cpu {
        let (t, tb) = median_secs_pair(cfg.stream_reps, run, || Ok(host(&ah, &bh)))?;
        (t, tb, "hand-written rayon loop")
    } else {
        let (t, tb) = median_secs_pair(cfg.stream_reps, run, || synced(a.copy()))?;
        // The copy reads and writes A: its bytes, not the product's.
        (t, tb * bytes / (2 * rows * K * std::mem::size_of::<f32>()) as f64, "device-to-device copy of A")
    };
    Ok(Figures { value: gb_per_s(t), unit: "GB/s", baseline: Some(gb_per_s(tb)), baseline_name })
}
