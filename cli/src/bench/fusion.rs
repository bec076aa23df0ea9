//! The lazy elementwise layer's benchmarks (issue 30), each beside its comparison in the
//! same run: a five-call chain (`exp`, `*`, `+`, `sqrt`, cast to f16) fused against the
//! same calls with fusion off and against one closure map; `((x - y) * (x - y)).sum()`
//! fused (map→reduce) against fusion off and against a plain `x.sum()`; the 1,024-element
//! map loop with fusion on (its small-size fast path) against fusion off.

use polycompute::{f16, DType, Device, DeviceArray};

use super::cases::{Config, Figures};
use super::timing::{median_secs_pair, median_secs_per_call_pair};
use super::BenchError;

const F32: usize = std::mem::size_of::<f32>();
const F16: usize = std::mem::size_of::<f16>();

/// Random inputs in [0, 1) made on the device.
fn inputs(device: &Device, seed: u64, n: usize) -> Result<DeviceArray<f32>, BenchError> {
    let x = device.uniform::<f32>(seed, &[n])?;
    device.synchronize()?;
    Ok(x)
}

/// Runs `f` with fusion `on`, then puts the device's setting back.
fn with_fusion<R>(device: &Device, on: bool, f: impl FnOnce() -> Result<R, BenchError>) -> Result<R, BenchError> {
    let was = device.fusion_enabled();
    device.set_fusion(on);
    let r = f();
    device.set_fusion(was);
    r
}

/// The chain as five calls, read back to the device's memory (synchronised).
fn five_calls(x: &DeviceArray<f32>, y: &DeviceArray<f32>) -> Result<DeviceArray<f16>, BenchError> {
    let e = x.exp()?;
    let m = (&e * y)?;
    let a = (&m + x)?;
    let s = a.sqrt()?;
    let h: DeviceArray<f16> = s.cast()?;
    h.buffer()?;
    x.device().synchronize()?;
    Ok(h)
}

/// The same chain as one closure.
fn one_closure(x: &DeviceArray<f32>, y: &DeviceArray<f32>) -> Result<DeviceArray<f16>, BenchError> {
    let h: DeviceArray<f16> = polycompute::map((x, y), |(x, y)| (x.exp() * y + &x).sqrt().cast(DType::F16))?;
    h.buffer()?;
    x.device().synchronize()?;
    Ok(h)
}

fn bits(a: &DeviceArray<f16>) -> Result<Vec<u16>, BenchError> {
    Ok(a.to_vec()?.iter().map(|v| v.to_bits()).collect())
}

fn gb_per_s(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e9
}

/// `fusion_chain_f32` (`closure == false`: against fusion off) and
/// `fusion_chain_closure_f32` (against one closure map), in GB/s of the fused traffic.
pub(super) fn chain(device: &Device, cfg: &Config, closure: bool) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let (x, y) = (inputs(device, 1, n)?, inputs(device, 2, n)?);
    let fused = || with_fusion(device, true, || five_calls(&x, &y));
    let eager = || with_fusion(device, false, || five_calls(&x, &y));
    let want = bits(&eager()?)?;
    if bits(&fused()?)? != want {
        return Err("the fused chain differs from the eager one".into());
    }
    let bytes = 2 * F32 * n + F16 * n;
    let (t, tb, name) = if closure {
        let (t, tb) = median_secs_pair(cfg.stream_reps, fused, || one_closure(&x, &y))?;
        (t, tb, "one closure map")
    } else {
        let (t, tb) = median_secs_pair(cfg.stream_reps, fused, eager)?;
        (t, tb, "five calls, fusion off")
    };
    Ok(Figures { value: gb_per_s(bytes, t), unit: "GB/s", baseline: Some(gb_per_s(bytes, tb)), baseline_name: name })
}

fn sq_diff_sum(x: &DeviceArray<f32>, y: &DeviceArray<f32>) -> Result<f32, BenchError> {
    let d = (x - y)?;
    Ok((&d * &d)?.sum(None)?.to_scalar()?)
}

/// `fusion_sqdiff_sum_f32` (`plain == false`: against fusion off) and
/// `fusion_sqdiff_sum_plain_f32` (against `x.sum()` of one input), in GB/s counting both
/// inputs for the fused sum and one for the plain one.
pub(super) fn sq_diff(device: &Device, cfg: &Config, plain: bool) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let (x, y) = (inputs(device, 3, n)?, inputs(device, 4, n)?);
    let fused = || with_fusion(device, true, || sq_diff_sum(&x, &y));
    let eager = || with_fusion(device, false, || sq_diff_sum(&x, &y));
    let (a, b) = (fused()?, eager()?);
    if a.to_bits() != b.to_bits() {
        return Err(format!("fused sum {a} differs from the eager {b}").into());
    }
    let (value, baseline, name) = if plain {
        let (t, tb) = median_secs_pair(cfg.stream_reps, fused, || Ok(x.sum(None)?.to_scalar()?))?;
        (gb_per_s(2 * F32 * n, t), gb_per_s(F32 * n, tb), "x.sum() of one input")
    } else {
        let (t, tb) = median_secs_pair(cfg.stream_reps, fused, eager)?;
        (gb_per_s(2 * F32 * n, t), gb_per_s(2 * F32 * n, tb), "fusion off")
    };
    Ok(Figures { value, unit: "GB/s", baseline: Some(baseline), baseline_name: name })
}

/// `fusion_small_map_f32`: µs per call of a 1,024-element map read into device memory,
/// fusion on (the device's default) against fusion off.
pub(super) fn small(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.small_len;
    let (x, y) = (inputs(device, 5, n)?, inputs(device, 6, n)?);
    let call = |on: bool| {
        with_fusion(device, on, || {
            let z: DeviceArray<f32> = polycompute::map(&[&x, &y], |a| &a[0] * 1.5 + &a[1])?;
            z.buffer()?;
            Ok(z)
        })
    };
    let (t, tb) = median_secs_per_call_pair(cfg.stream_reps, cfg.small_calls, || call(true), || call(false))?;
    Ok(Figures { value: t * 1e6, unit: "us/call", baseline: Some(tb * 1e6), baseline_name: "fusion off" })
}
