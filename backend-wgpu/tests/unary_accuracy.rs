//! The wgpu backend's own formulations of the functions WGSL lacks or states too loosely
//! (`expm1`, `log1p`, `log2`, `log10`) against
//! the CPU backend (Rust's libm, within an ulp), in ULPs, in f32 and (where the adapter runs
//! f64) f64: over tiny arguments (2^-140 to 2^-10, where a naive `exp(x) - 1` loses every
//! bit), small ones, the whole finite range and raw bit patterns.
//! `cargo test -p polycompute-wgpu --test unary_accuracy -- --nocapture` prints the worst
//! distance of each family.

mod common;

use polycompute_core::{BackendKind, Device, DeviceArray, Element, Expr, UnaryOp};
use polycompute_testing::inputs::{bits, uniform};
use polycompute_testing::ulps::{ordered_f32, ordered_f64};

/// The functions checked here, with the largest distance allowed (ULPs): the worst measured on
/// lavapipe and llvmpipe plus one ulp of slack for the CPU's own error.
/// (The CPU's `log10` is glibc's, itself up to 1.7 ulp off in f32 and 1.6 in f64, where the
/// wgpu backend measures within an ulp of the exact value.)
const FUNCTIONS: [(UnaryOp, u64); 4] =
    [(UnaryOp::Expm1, 3), (UnaryOp::Log1p, 2), (UnaryOp::Log2, 2), (UnaryOp::Log10, 3)];

/// Arguments per family.
const LEN: usize = 1 << 16;

/// Families of f64 arguments (rounded to the dtype under test), by name.
fn families() -> Vec<(&'static str, Vec<f64>)> {
    let w = bits(0x90, 2 * LEN);
    let e = uniform::<f64>(0x91, LEN, -140.0, -10.0);
    let tiny = (0..LEN)
        .map(|k| {
            let m = 1.0 + f64::from(w[k]) / 2f64.powi(32);
            let s = if w[LEN + k] & 1 == 0 { 1.0 } else { -1.0 };
            s * m * e[k].floor().exp2()
        })
        .collect();
    let random_bits = (0..LEN)
        .map(|k| f64::from(f32::from_bits(w[k] ^ w[LEN + k].rotate_left(7))))
        .filter(|v| v.is_finite())
        .collect();
    vec![
        ("tiny |x| (2^-140 .. 2^-10)", tiny),
        ("small (-1 .. 1)", uniform::<f64>(0x92, LEN, -1.0, 1.0)),
        ("near 1 (0.5 .. 2)", uniform::<f64>(0x95, LEN, 0.5, 2.0)),
        ("moderate (-20 .. 20)", uniform::<f64>(0x93, LEN, -20.0, 20.0)),
        ("wide (-700 .. 700)", uniform::<f64>(0x94, LEN, -700.0, 700.0)),
        ("random f32 bits", random_bits),
    ]
}

/// Distance in ULPs on the ordered line of values (both zeros at 0); a NaN or infinity
/// mismatch is `u64::MAX`.
fn distance(got: f64, want: f64, ordered: impl Fn(f64) -> i128) -> u64 {
    if got.is_nan() || want.is_nan() {
        return if got.is_nan() == want.is_nan() { 0 } else { u64::MAX };
    }
    if got.is_infinite() || want.is_infinite() {
        return if got == want { 0 } else { u64::MAX };
    }
    u64::try_from((ordered(got) - ordered(want)).unsigned_abs()).unwrap_or(u64::MAX)
}

/// `op` on the wgpu device and on the CPU for each family, in dtype `T`; the failures.
fn check<T: Element + Into<f64>>(
    wgpu: &Device,
    cpu: &Device,
    op: UnaryOp,
    bound: u64,
    from_f64: impl Fn(f64) -> T,
    ordered: impl Fn(f64) -> i128 + Copy,
) -> Vec<String> {
    let mut failures = Vec::new();
    for (name, xs) in families() {
        let xs: Vec<T> = xs.into_iter().map(&from_f64).collect();
        let run = |dev: &Device| -> Vec<T> {
            let x: DeviceArray<T> = dev.from_slice(&xs, &[xs.len()]).unwrap();
            x.map(|e: Expr| e.unary(op)).unwrap().to_vec().unwrap()
        };
        let (got, want) = (run(wgpu), run(cpu));
        let (mut worst, mut at) = (0u64, 0usize);
        for k in 0..xs.len() {
            let d = distance(got[k].into(), want[k].into(), ordered);
            if d > worst {
                (worst, at) = (d, k);
            }
        }
        let (x, g, w): (f64, f64, f64) = (xs[at].into(), got[at].into(), want[at].into());
        let line = format!("{}({}) {name}: worst {worst} ulp at x = {x:e}: {g:e}, cpu {w:e}", op.name(), T::DTYPE);
        println!("{line}");
        if worst > bound {
            failures.push(line);
        }
    }
    failures
}

#[test]
fn functions_without_a_wgsl_builtin_are_within_a_few_ulp_of_the_cpu() {
    let Some(wgpu) = common::device() else { return };
    // Referencing the crate links it, which registers the CPU backend.
    let _ = polycompute_cpu::CpuBackend;
    let cpu = Device::open(BackendKind::Cpu, 0).unwrap();
    let f64_too = common::has_f64(&wgpu);
    let mut failures = Vec::new();
    for (op, bound) in FUNCTIONS {
        failures.extend(check::<f32>(&wgpu, &cpu, op, bound, |v| v as f32, |v| i128::from(ordered_f32(v as f32))));
        if f64_too {
            failures.extend(check::<f64>(&wgpu, &cpu, op, bound, |v| v, ordered_f64));
        }
    }
    assert!(failures.is_empty(), "beyond the bound:\n{}", failures.join("\n"));
}

/// `log2` at powers of two and `log10` at the powers of ten the dtype holds exactly give the
/// exponent exactly, as the CPU's libm (glibc) and numpy do.
#[test]
fn logarithms_of_exact_powers_are_exact() {
    let Some(wgpu) = common::device() else { return };
    let check = |op: UnaryOp, xs: Vec<f64>, want: Vec<f64>, f64_only: bool| {
        if !f64_only {
            let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
            let x: DeviceArray<f32> = wgpu.from_slice(&x32, &[x32.len()]).unwrap();
            let got = x.map(|e: Expr| e.unary(op)).unwrap().to_vec().unwrap();
            for k in 0..xs.len() {
                assert_eq!(f64::from(got[k]), want[k], "{}({:e}) in f32", op.name(), xs[k]);
            }
        }
        if common::has_f64(&wgpu) {
            let x: DeviceArray<f64> = wgpu.from_slice(&xs, &[xs.len()]).unwrap();
            let got = x.map(|e: Expr| e.unary(op)).unwrap().to_vec().unwrap();
            for k in 0..xs.len() {
                assert_eq!(got[k], want[k], "{}({:e}) in f64", op.name(), xs[k]);
            }
        }
    };
    // exp2 is exact at integers (powi(-1074) would divide by an overflowed 2^1074); the
    // products 10^k are exact up to 10^22.
    let powers = |base: f64, ks: std::ops::RangeInclusive<i32>| -> (Vec<f64>, Vec<f64>) {
        ks.map(|k| (if base == 2.0 { f64::from(k).exp2() } else { base.powi(k) }, f64::from(k))).unzip()
    };
    // f32's exponents, subnormals included, and f64's.
    let (xs, ks) = powers(2.0, -149..=127);
    check(UnaryOp::Log2, xs, ks, false);
    let (xs, ks) = powers(2.0, -1074..=1023);
    check(UnaryOp::Log2, xs, ks, true);
    // The powers of ten each dtype holds exactly: to 1e10 in f32 (5^10 < 2^24), 1e22 in f64
    // (5^22 < 2^53).
    let (xs, ks) = powers(10.0, 0..=10);
    check(UnaryOp::Log10, xs, ks, false);
    let (xs, ks) = powers(10.0, 0..=22);
    check(UnaryOp::Log10, xs, ks, true);
}
