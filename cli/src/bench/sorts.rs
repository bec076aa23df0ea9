//! The sort rows beyond `sort_f32`/`argsort_f32` (`views.rs`): the other dtypes at the
//! stream length (`sort_f64`, `sort_i32`, `sort_u32`, `sort_f16`, uniform or random bits),
//! and along many short rows (`sort_rows_f32`, `argsort_rows_f32`: `[short_rows, 8]` along
//! the last axis). Each is checked once against the host's sort, then timed beside the
//! standard library's sort on one thread, in millions of elements per second, so
//! `benches/numpy_bench.py` can put numpy's `np.sort`/`np.argsort(kind="stable")` beside it.

use polycompute::{f16, Device, DeviceArray, Element};

use super::cases::{Config, Figures};
use super::timing::median_secs_pair;
use super::BenchError;

/// Elements per row of the short-row sorts.
pub const ROW: usize = 8;

fn melem(n: usize, secs: f64) -> f64 {
    n as f64 / secs / 1e6
}

fn synced<T: Element>(a: polycompute::Result<DeviceArray<T>>) -> Result<DeviceArray<T>, BenchError> {
    let a = a?;
    a.device().synchronize()?;
    Ok(a)
}

/// Ascending by `PartialOrd` (the inputs hold no NaN).
fn host_sort<T: Element>(v: &mut [T]) {
    v.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
}

/// `x` (held on the host as `xh`) sorted along its only axis, checked, then timed.
fn sort_1d<T: Element>(x: DeviceArray<T>, xh: Vec<T>, cfg: &Config) -> Result<Figures, BenchError> {
    let n = xh.len();
    let got = synced(x.sort(0))?.to_vec()?;
    let mut want = xh.clone();
    host_sort(&mut want);
    if got != want {
        return Err("sort result differs from the standard library's sort".into());
    }
    let host = || {
        let mut v = xh.clone();
        host_sort(&mut v);
        Ok(v)
    };
    let (t, tb) = median_secs_pair(cfg.stream_reps, || synced(x.sort(0)), host)?;
    Ok(Figures {
        value: melem(n, t),
        unit: "Melem/s",
        baseline: Some(melem(n, tb)),
        baseline_name: "std sort_unstable, 1 thread",
    })
}

/// Uniform `[0, 1)` of `T` made on the device.
fn uniform<T: Element>(device: &Device, seed: u64, n: usize) -> Result<(DeviceArray<T>, Vec<T>), BenchError> {
    let x = synced(device.uniform::<T>(seed, &[n]))?;
    let xh = x.to_vec()?;
    Ok((x, xh))
}

/// Random 32-bit words (xorshift64), uploaded.
fn bits(device: &Device, n: usize, mut s: u64) -> Result<(DeviceArray<u32>, Vec<u32>), BenchError> {
    let xh: Vec<u32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 16) as u32
        })
        .collect();
    Ok((device.from_slice(&xh, &[n])?, xh))
}

/// `sort_f64`: uniform f64.
pub fn sort_f64(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let (x, xh) = uniform::<f64>(device, 31, cfg.stream_len)?;
    sort_1d(x, xh, cfg)
}

/// `sort_f16`: uniform f16 (many ties: 2^10 values per binade).
pub fn sort_f16(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let (x, xh) = uniform::<f16>(device, 32, cfg.stream_len)?;
    sort_1d(x, xh, cfg)
}

/// `sort_u32`: random 32-bit words.
pub fn sort_u32(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let (x, xh) = bits(device, cfg.stream_len, 33)?;
    sort_1d(x, xh, cfg)
}

/// `sort_i32`: random 32-bit words as i32 (both signs).
pub fn sort_i32(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let (_, words) = bits(device, cfg.stream_len, 34)?;
    let xh: Vec<i32> = words.into_iter().map(|w| w as i32).collect();
    let x = device.from_slice(&xh, &[xh.len()])?;
    sort_1d(x, xh, cfg)
}

fn rows_input(device: &Device, cfg: &Config) -> Result<(DeviceArray<f32>, Vec<f32>), BenchError> {
    let x = synced(device.uniform::<f32>(35, &[cfg.short_rows, ROW]))?;
    let xh = x.to_vec()?;
    Ok((x, xh))
}

/// The host's stable order of each row, on one thread.
fn host_row_orders(xh: &[f32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(xh.len());
    for row in xh.chunks_exact(ROW) {
        let mut idx: Vec<u32> = (0..ROW as u32).collect();
        idx.sort_by(|&a, &b| row[a as usize].total_cmp(&row[b as usize]));
        out.extend(idx);
    }
    out
}

/// `sort_rows_f32`: each row of `[short_rows, 8]` sorted.
pub fn sort_rows(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let (x, xh) = rows_input(device, cfg)?;
    let got = synced(x.sort(1))?.to_vec()?;
    let host = || -> Result<Vec<f32>, BenchError> {
        let mut v = xh.clone();
        v.chunks_exact_mut(ROW).for_each(|r| r.sort_unstable_by(f32::total_cmp));
        Ok(v)
    };
    if got != host()? {
        return Err("sort along rows differs from the standard library's sort".into());
    }
    let (t, tb) = median_secs_pair(cfg.stream_reps, || synced(x.sort(1)), host)?;
    let n = xh.len();
    Ok(Figures {
        value: melem(n, t),
        unit: "Melem/s",
        baseline: Some(melem(n, tb)),
        baseline_name: "std sort_unstable per row, 1 thread",
    })
}

/// `argsort_rows_f32`: the stable order of each row of `[short_rows, 8]`.
pub fn argsort_rows(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let (x, xh) = rows_input(device, cfg)?;
    let got = synced(x.argsort(1))?.to_vec()?;
    if got != host_row_orders(&xh) {
        return Err("argsort along rows differs from the standard library's stable sort".into());
    }
    let host = || Ok(host_row_orders(&xh));
    let (t, tb) = median_secs_pair(cfg.stream_reps, || synced(x.argsort(1)), host)?;
    let n = xh.len();
    Ok(Figures {
        value: melem(n, t),
        unit: "Melem/s",
        baseline: Some(melem(n, tb)),
        baseline_name: "std stable sort_by per row, 1 thread",
    })
}
