//! Shared test setup: the wgpu device under test, or a clean skip when there is no adapter
//! and `POLYCOMPUTE_REQUIRE` does not list wgpu (then a missing adapter fails the test).
#![allow(dead_code)]

use std::sync::Arc;

use polycompute_core::{Backend, Device};
use polycompute_wgpu::{is_unavailable, WgpuBackend, WgpuDevice};

/// Whether `POLYCOMPUTE_REQUIRE` lists wgpu.
pub fn required() -> bool {
    std::env::var("POLYCOMPUTE_REQUIRE")
        .map(|v| v.split(',').any(|s| s.trim().eq_ignore_ascii_case("wgpu")))
        .unwrap_or(false)
}

/// The ordinal under test: `POLYCOMPUTE_WGPU_ORDINAL`, or 0.
pub fn ordinal() -> usize {
    std::env::var("POLYCOMPUTE_WGPU_ORDINAL").ok().and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// The concrete device under test, or `None` (skip) when there is none and none is required.
pub fn wgpu_device() -> Option<Arc<WgpuDevice>> {
    match WgpuBackend.open_device(ordinal()) {
        Ok(d) => Some(Arc::new(d)),
        Err(e) if is_unavailable(&e) && !required() => {
            eprintln!("skipping: no wgpu adapter ({e}); set POLYCOMPUTE_REQUIRE=wgpu to make this a failure");
            None
        }
        Err(e) => panic!("wgpu device {} is required but could not be opened: {e}", ordinal()),
    }
}

/// The device under test as a polycompute `Device`.
pub fn device() -> Option<Device> {
    match WgpuBackend.open(ordinal()) {
        Ok(d) => Some(Device::from_backend(d)),
        Err(e) if is_unavailable(&e) && !required() => {
            eprintln!("skipping: no wgpu adapter ({e}); set POLYCOMPUTE_REQUIRE=wgpu to make this a failure");
            None
        }
        Err(e) => panic!("wgpu device {} is required but could not be opened: {e}", ordinal()),
    }
}

/// Whether the device under test runs f64 kernels.
pub fn has_f64(dev: &Device) -> bool {
    dev.info().details.iter().any(|(k, v)| k == "shader_f64" && v == "true")
}

/// Deterministic test data: a simple LCG, independent of the code under test.
pub fn lcg(seed: u64, n: usize) -> Vec<u32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 33) as u32
        })
        .collect()
}

/// Floats in [-scale, scale).
pub fn floats(seed: u64, n: usize, scale: f32) -> Vec<f32> {
    lcg(seed, n).into_iter().map(|w| (w as f32 / (1u64 << 31) as f32 * 2.0 - 1.0) * scale).collect()
}

/// Equality that treats NaN as equal to NaN and distinguishes nothing else by bits.
pub fn same_f32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a == b
}

/// |a - b| within `ulps` units in the last place of the larger (NaN matches NaN).
pub fn close_f32(a: f32, b: f32, ulps: f32) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a == b {
        return true;
    }
    let scale = a.abs().max(b.abs()).max(f32::MIN_POSITIVE);
    (a - b).abs() <= ulps * f32::EPSILON * scale
}
