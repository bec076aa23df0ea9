//! The view and data-movement benchmarks: sort, stable argsort, cumsum, take with random indices,
//! concat of two halves (against the copy bandwidth) and a map over a step-2 slice
//! (against the same map over a contiguous array of as many elements), and a matmul of a
//! transposed view (against the same matmul of contiguous operands). Each is checked
//! once against the host before it is timed; figures are millions of elements per second
//! (concat: GB/s moved), so `benches/numpy_views.py` can put numpy beside them.

use ndarray::s;
use polycompute::{Device, DeviceArray};
use rayon::prelude::*;

use super::cases::{Config, Figures};
use super::timing::median_secs_pair;
use super::BenchError;

const MELEM: &str = "Melem/s";
const DEVICE_COPY: &str = "device-to-device copy";

fn melem(n: usize, secs: f64) -> f64 {
    n as f64 / secs / 1e6
}

fn inputs(device: &Device, seed: u64, n: usize) -> Result<DeviceArray<f32>, BenchError> {
    let x = device.uniform::<f32>(seed, &[n])?;
    device.synchronize()?;
    Ok(x)
}

fn synced<T: polycompute::Element>(a: polycompute::Result<DeviceArray<T>>) -> Result<DeviceArray<T>, BenchError> {
    let a = a?;
    a.device().synchronize()?;
    Ok(a)
}

/// The device copy of `x` as the GPU baseline (elements per second), or `cpu` on the CPU.
fn baseline_or_copy<S>(
    device: &Device,
    cfg: &Config,
    x: &DeviceArray<f32>,
    run: impl FnMut() -> Result<DeviceArray<S>, BenchError>,
    cpu: (impl FnMut() -> Result<Vec<f32>, BenchError>, &'static str),
    n: usize,
) -> Result<Figures, BenchError>
where
    S: polycompute::Element,
{
    if device.kind() == polycompute::BackendKind::Cpu {
        let (t, tb) = median_secs_pair(cfg.stream_reps, run, cpu.0)?;
        Ok(Figures { value: melem(n, t), unit: MELEM, baseline: Some(melem(n, tb)), baseline_name: cpu.1 })
    } else {
        let (t, tb) = median_secs_pair(cfg.stream_reps, run, || synced(x.copy()))?;
        Ok(Figures { value: melem(n, t), unit: MELEM, baseline: Some(melem(x.len(), tb)), baseline_name: DEVICE_COPY })
    }
}

/// `sort_f32`: `DeviceArray::sort` of uniform f32; CPU baseline the standard library's
/// `sort_unstable_by(total_cmp)` on one thread.
pub fn sort(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let x = inputs(device, 11, n)?;
    let xh = x.to_vec()?;
    let got = synced(x.sort(0))?.to_vec()?;
    let mut want = xh.clone();
    want.sort_unstable_by(f32::total_cmp);
    if got != want {
        return Err("sort result differs from the standard library's sort".into());
    }
    let host = || {
        let mut v = xh.clone();
        v.sort_unstable_by(f32::total_cmp);
        Ok(v)
    };
    baseline_or_copy(device, cfg, &x, || synced(x.sort(0)), (host, "std sort_unstable, 1 thread"), n)
}

/// `argsort_f32`: stable argsort; CPU baseline the standard library's stable `sort_by_key`
/// of indices on one thread.
pub fn argsort(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let x = inputs(device, 12, n)?;
    let xh = x.to_vec()?;
    let got = synced(x.argsort(0))?.to_vec()?;
    let mut seen = vec![false; n];
    for w in got.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if xh[a] > xh[b] || (xh[a] == xh[b] && a > b) {
            return Err(format!("argsort out of order at indices {a}, {b}").into());
        }
    }
    for &i in &got {
        if std::mem::replace(&mut seen[i as usize], true) {
            return Err(format!("argsort repeats index {i}").into());
        }
    }
    let host = || {
        let mut idx: Vec<u32> = (0..n as u32).collect();
        idx.sort_by(|&a, &b| xh[a as usize].total_cmp(&xh[b as usize]));
        Ok(vec![idx.len() as f32])
    };
    baseline_or_copy(device, cfg, &x, || synced(x.argsort(0)), (host, "std stable sort_by, 1 thread"), n)
}

/// `cumsum_f32`; CPU baseline a serial running-sum loop.
pub fn cumsum(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let x = inputs(device, 13, n)?;
    let xh = x.to_vec()?;
    let got = synced(x.cumsum(0))?.to_vec()?;
    let (mut exact, mut abs) = (0.0f64, 0.0f64);
    for (i, (&g, &v)) in got.iter().zip(&xh).enumerate() {
        exact += v as f64;
        abs += (v as f64).abs();
        let tol = 2.0 * (i + 1) as f64 * f32::EPSILON as f64 * abs + 1e-6;
        if i % 4099 == 0 && ((g as f64) - exact).abs() > tol {
            return Err(format!("cumsum wrong at {i}: got {g}, expected {exact}").into());
        }
    }
    let host = || {
        let mut acc = 0.0f32;
        Ok(xh
            .iter()
            .map(|&v| {
                acc += v;
                acc
            })
            .collect())
    };
    baseline_or_copy(device, cfg, &x, || synced(x.cumsum(0)), (host, "serial loop"), n)
}

/// `take_f32`: `take` of n random `u32` indices from n elements; CPU baseline a rayon
/// gather loop. The index range check (two reductions) is part of the timed call.
pub fn take(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let x = inputs(device, 14, n)?;
    let raw = synced(device.uniform::<u32>(15, &[n]))?;
    let bound = n as u32;
    let idx: DeviceArray<u32> = synced(raw.map(|r| r % bound))?;
    let (xh, ih) = (x.to_vec()?, idx.to_vec()?);
    let got = synced(x.take(&idx, 0))?.to_vec()?;
    for k in (0..n).step_by(997) {
        if got[k].to_bits() != xh[ih[k] as usize].to_bits() {
            return Err(format!("take wrong at {k}").into());
        }
    }
    let host = || Ok(ih.par_iter().map(|&i| xh[i as usize]).collect());
    baseline_or_copy(device, cfg, &x, || synced(x.take(&idx, 0)), (host, "rayon gather loop"), n)
}

/// `concat_f32`: two halves joined, in GB/s moved, beside the copy of the whole array.
pub fn concat(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let half = n / 2;
    let (a, b) = (inputs(device, 16, half)?, inputs(device, 17, n - half)?);
    let whole = inputs(device, 18, n)?;
    let got = synced(DeviceArray::concat(&[&a, &b], 0))?.to_vec()?;
    let (ah, bh) = (a.to_vec()?, b.to_vec()?);
    if got[..half] != ah[..] || got[half..] != bh[..] {
        return Err("concat result differs from the two halves".into());
    }
    let (t, tb) =
        median_secs_pair(cfg.stream_reps, || synced(DeviceArray::concat(&[&a, &b], 0)), || synced(whole.copy()))?;
    let gbs = |secs: f64| 2.0 * 4.0 * n as f64 / secs / 1e9;
    Ok(Figures { value: gbs(t), unit: "GB/s", baseline: Some(gbs(tb)), baseline_name: "copy of the whole array" })
}

/// `map_step2_f32`: `x * 1.5 + 1` over `x[::2]` (a view, read in place) beside the same
/// map over a contiguous array of as many elements.
pub fn map_step2(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let x = inputs(device, 19, 2 * n)?;
    let view = x.slice(s![..;2])?;
    let dense = inputs(device, 20, n)?;
    let f = |a: &DeviceArray<f32>| synced(a.map(|v| v * 1.5f32 + 1.0f32));
    let xh = x.to_vec()?;
    let got = f(&view)?.to_vec()?;
    for k in (0..n).step_by(101) {
        if got[k] != xh[2 * k] * 1.5 + 1.0 && (got[k] - (xh[2 * k] * 1.5 + 1.0)).abs() > 1e-6 {
            return Err(format!("map over a step-2 slice wrong at {k}").into());
        }
    }
    let (t, tb) = median_secs_pair(cfg.stream_reps, || f(&view), || f(&dense))?;
    Ok(Figures { value: melem(n, t), unit: MELEM, baseline: Some(melem(n, tb)), baseline_name: "contiguous map" })
}

/// `matmul_t_f32_1024`: `a.transpose() @ b` (the transposed view is read in place by the
/// GEMM, no copy) beside `a @ b` of contiguous operands of the same size, in GFLOP/s.
pub fn matmul_transposed(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let size = cfg.matmul_sizes[0];
    let stored = device.uniform::<f32>(23, &[size, size])?;
    let (a, b) = (device.uniform::<f32>(24, &[size, size])?, device.uniform::<f32>(25, &[size, size])?);
    device.synchronize()?;
    let at = stored.transpose()?;
    let (sh, bh) = (stored.to_vec()?, b.to_vec()?);
    let got = synced(at.matmul(&b))?.to_vec()?;
    for t in 0..16usize {
        let (i, j) = ((7 * t + 3) % size, (13 * t + 5) % size);
        // (a.T)[i][p] = stored[p][i].
        let (want, mag) = (0..size).fold((0.0f64, 0.0f64), |(w, m), p| {
            let x = sh[p * size + i] as f64 * bh[p * size + j] as f64;
            (w + x, m + x.abs())
        });
        let g = got[i * size + j] as f64;
        if (g - want).abs() > 2.0 * size as f64 * f32::EPSILON as f64 * mag + 1e-6 {
            return Err(format!("matmul of a transposed view wrong at ({i}, {j}): got {g}, expected {want}").into());
        }
    }
    let (t, tb) = median_secs_pair(cfg.matmul_reps, || synced(at.matmul(&b)), || synced(a.matmul(&b)))?;
    let gflops = |secs: f64| 2.0 * (size as f64).powi(3) / secs / 1e9;
    Ok(Figures { value: gflops(t), unit: "GFLOP/s", baseline: Some(gflops(tb)), baseline_name: "contiguous matmul" })
}
