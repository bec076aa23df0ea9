//! f32 `pow` against the f64 reference over many random finite (x, y) pairs, including the
//! ones whose |y log2 x| reaches the ends of the f32 range (results near overflow, subnormal
//! results), bases a few ulp from 1 with huge exponents, negative bases with integral
//! exponents, and raw random bit patterns. The reference is glibc's f64 `pow` rounded once
//! to f32 (within an ulp of the f32 result's last place).

mod common;

use polycompute_testing::inputs::{bits, uniform};
use polycompute_testing::ulps::ordered_f32;

/// The largest distance measured on lavapipe and llvmpipe over these families is 1 ulp
/// (`cargo test -p polycompute-wgpu --test pow_accuracy -- --nocapture` prints it); one more
/// ulp of slack for devices whose f32 conversions round differently.
const BOUND_ULPS: u64 = 2;

/// Pairs per family.
const PAIRS: usize = 1 << 18;

/// A random finite f32 of any magnitude (subnormals included) from one word, positive.
fn finite_positive(word: u32) -> f32 {
    let v = f32::from_bits(word & 0x7fff_ffff);
    if v.is_finite() {
        v
    } else {
        f32::from_bits(word & 0x7f7f_ffff)
    }
}

/// An exponent that puts y log2 x at `t` (so the result is near 2^t), for x != 1.
fn exponent_for(x: f32, t: f64) -> f32 {
    (t / f64::from(x.abs()).log2()) as f32
}

/// Families of (x, y) pairs, by name.
fn families() -> Vec<(&'static str, Vec<f32>, Vec<f32>)> {
    let w = bits(0x70, 4 * PAIRS);
    let t = uniform::<f64>(0x71, 2 * PAIRS, -152.0, 130.0);
    let mut out = Vec::new();

    // Any positive finite base, the exponent aimed at the whole output range.
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for k in 0..PAIRS {
        let x = finite_positive(w[k]);
        if x != 1.0 {
            xs.push(x);
            ys.push(exponent_for(x, t[k]));
        }
    }
    out.push(("any base, result anywhere in range", xs, ys));

    // Bases within 2^12 ulp of 1 (ln x is all tail), huge exponents.
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for k in 0..PAIRS {
        let steps = (w[PAIRS + k] & 0xfff) + 1;
        let x = if w[PAIRS + k] >> 31 == 0 {
            1.0 + steps as f32 * f32::EPSILON
        } else {
            1.0 - steps as f32 * f32::EPSILON / 2.0
        };
        xs.push(x);
        ys.push(exponent_for(x, t[PAIRS + k]));
    }
    out.push(("base near 1, huge exponent", xs, ys));

    // Negative bases, integral exponents (odd and even): the sign follows the parity.
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for k in 0..PAIRS {
        let x = -finite_positive(w[2 * PAIRS + k]);
        if x != -1.0 {
            let y = exponent_for(x, t[k] * 0.9).round();
            xs.push(x);
            ys.push(y);
        }
    }
    out.push(("negative base, integral exponent", xs, ys));

    // Raw bit patterns for both (mostly overflow, underflow and 1).
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for k in 0..PAIRS {
        let x = f32::from_bits(w[3 * PAIRS + k]);
        let y = f32::from_bits(w[3 * PAIRS + k].rotate_left(13) ^ 0x5bd1_e995);
        if x.is_finite() && y.is_finite() {
            xs.push(x);
            ys.push(y);
        }
    }
    out.push(("random bits", xs, ys));
    out
}

#[test]
fn pow_is_within_the_bound_for_all_finite_inputs() {
    let Some(dev) = common::device() else { return };
    let mut failures = Vec::new();
    for (name, xs, ys) in families() {
        let x = dev.from_slice(&xs, &[xs.len()]).unwrap();
        let y = dev.from_slice(&ys, &[ys.len()]).unwrap();
        let got = x.zip_map(&y, |p, q| p.pow(q)).unwrap().to_vec().unwrap();
        let mut worst = (0u64, 0usize);
        for k in 0..xs.len() {
            let want = (f64::from(xs[k])).powf(f64::from(ys[k])) as f32;
            let dist = if want.is_nan() || got[k].is_nan() {
                if want.is_nan() == got[k].is_nan() {
                    0
                } else {
                    u64::MAX
                }
            } else if want.is_infinite() || got[k].is_infinite() {
                if want == got[k] {
                    0
                } else {
                    u64::MAX
                }
            } else {
                (ordered_f32(got[k]) - ordered_f32(want)).unsigned_abs()
            };
            // A zero result keeps numpy's sign (odd integral exponents of negative bases).
            let dist = if want == 0.0 && got[k] == 0.0 && want.is_sign_negative() != got[k].is_sign_negative() {
                u64::MAX
            } else {
                dist
            };
            if dist > worst.0 {
                worst = (dist, k);
            }
        }
        let (dist, k) = worst;
        let want = (f64::from(xs[k])).powf(f64::from(ys[k])) as f32;
        println!(
            "{name}: {} pairs, worst {dist} ulp at pow({:e}, {:e}) = {:e}, want {want:e}",
            xs.len(),
            xs[k],
            ys[k],
            got[k]
        );
        if dist > BOUND_ULPS {
            failures.push(format!("{name}: {dist} ulp at pow({:e}, {:e}) = {:e}, want {want:e}", xs[k], ys[k], got[k]));
        }
    }
    assert!(failures.is_empty(), "pow beyond {BOUND_ULPS} ulp:\n{}", failures.join("\n"));
}

#[test]
fn pow_at_the_reported_point_and_tanh_of_signed_zeros() {
    let Some(dev) = common::device() else { return };
    // The example: 22 ulp before ln x was carried in fixed point.
    let x = dev.from_slice(&[0.726085f32, 0.726085], &[2]).unwrap();
    let y = dev.from_slice(&[258.46515f32, -258.46515], &[2]).unwrap();
    let got = x.zip_map(&y, |p, q| p.pow(q)).unwrap().to_vec().unwrap();
    for (g, q) in got.iter().zip([258.46515f32, -258.46515]) {
        let want = f64::from(0.726085f32).powf(f64::from(q)) as f32;
        let dist = (ordered_f32(*g) - ordered_f32(want)).unsigned_abs();
        assert!(dist <= BOUND_ULPS, "pow(0.726085, {q}) = {g:e}, want {want:e} ({dist} ulp)");
    }
    let z = dev.from_slice(&[-0.0f32, 0.0, -1e-30, 1e-30], &[4]).unwrap();
    let t = z.map(|p| p.tanh()).unwrap().to_vec().unwrap();
    assert_eq!(t[0].to_bits(), (-0.0f32).to_bits(), "tanh(-0.0) is -0.0 (numpy)");
    assert_eq!(t[1].to_bits(), 0.0f32.to_bits(), "tanh(0.0) is 0.0");
    assert_eq!(t[2], -1e-30);
    assert_eq!(t[3], 1e-30);
}
