//! Helpers shared by the CPU backend's tests: the device, special values, and comparisons
//! of results against references computed independently in f64 / i64.

#![allow(dead_code)]

// Linking the crate registers the CPU backend.
extern crate polycompute_cpu;

use polycompute_core::Device;

pub fn dev() -> Device {
    Device::cpu()
}

/// Floats that exercise the corner cases: signed zeros, infinities, NaN, extremes, halves.
pub fn special_f64() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        3.7,
        -3.7,
        7.0,
        -7.0,
        100.25,
        1e-30,
        1e30,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        3e9,
        -3e9,
    ]
}

pub fn special_f32() -> Vec<f32> {
    let mut v: Vec<f32> = special_f64().into_iter().map(|x| x as f32).collect();
    v.extend([f32::MAX, f32::MIN, f32::MIN_POSITIVE, 16_777_217.0]);
    v
}

pub fn special_i32() -> Vec<i32> {
    vec![0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, i32::MAX, i32::MIN, i32::MAX - 1, i32::MIN + 1, 65_536]
}

pub fn special_u32() -> Vec<u32> {
    vec![0, 1, 2, 3, 7, 100, 65_536, 1 << 31, u32::MAX, u32::MAX - 1, 12_345_678]
}

/// Distance in units in the last place between two finite f64 of the same sign.
fn ulps64(a: f64, b: f64) -> u64 {
    let key = |x: f64| {
        let bits = x.to_bits() as i64;
        if bits < 0 {
            i64::MIN - bits
        } else {
            bits
        }
    };
    key(a).abs_diff(key(b))
}

/// `got` equals `want` (a NaN matching any NaN) or is within `ulps` of it, reading both as
/// f64 values of a float of `mantissa` bits (24 or 53).
pub fn close(got: f64, want: f64, ulps: u64, mantissa: u32) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if ulps == 0 {
        return got.to_bits() == want.to_bits();
    }
    if got == want {
        return true;
    }
    if got.is_infinite() || want.is_infinite() {
        return false;
    }
    // Scale the f64 ulp distance to the float's own precision.
    ulps64(got, want) <= ulps << (53 - mantissa)
}

/// Asserts elementwise [`close`], naming the failing position and `what`.
pub fn assert_close(got: &[f64], want: &[f64], ulps: u64, mantissa: u32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(close(g, w, ulps, mantissa), "{what}: element {i}: got {g:?}, want {w:?}");
    }
}
