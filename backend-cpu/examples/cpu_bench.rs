//! The CPU backend's performance targets, measured through the public API against
//! hand-written rayon baselines in the same process (medians of repeated runs, the two
//! sides interleaved so that outside load hits both alike).
//!
//! `cargo run --release -p polycompute-cpu --example cpu_bench [section ...]`, sections:
//! `axpy sum reduce small uniform matmul` (all by default).

#[path = "support/timing.rs"]
mod timing;

// Linking the crate registers the CPU backend.
extern crate polycompute_cpu;

use polycompute_core::{map, Device, DeviceArray};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Instant;
use timing::median_secs;

/// Timed (ours, baseline) pairs; the reported figures are medians.
const ROUNDS: usize = 21;

fn main() -> polycompute_core::Result<()> {
    let only: Vec<String> = std::env::args().skip(1).collect();
    let want = |s: &str| only.is_empty() || only.iter().any(|o| o == s);
    let d = Device::cpu();
    let n = 1 << 24;
    println!("{} ({} rayon threads), n = 2^24", d.info().name, rayon::current_num_threads());

    let xs: Vec<f32> = d.uniform::<f32>(1, &[n])?.to_vec()?;
    let ys: Vec<f32> = d.uniform::<f32>(2, &[n])?.to_vec()?;
    let (x, y) = (d.from_slice(&xs, &[n])?, d.from_slice(&ys, &[n])?);
    let a = 2.5f32;

    let axpy = || -> DeviceArray<f32> { map(&[&x, &y], |v| &v[0] * a + &v[1]).unwrap() };
    let base_axpy = || -> Vec<f32> { xs.par_iter().zip(&ys).map(|(&x, &y)| a * x + y).collect() };
    if want("axpy") {
        assert_eq!(axpy().to_vec()?, base_axpy());
        let bytes = 3.0 * 4.0 * n as f64;
        report("map_axpy_f32 (GB/s)", bytes, axpy, base_axpy);
        // The same loop over a zeroed output in chunks of 2^16 (as `polycompute bench`).
        let base_chunks = || {
            let mut out = vec![0f32; n];
            out.par_chunks_mut(1 << 16).zip(xs.par_chunks(1 << 16)).zip(ys.par_chunks(1 << 16)).for_each(
                |((o, x), y)| {
                    for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
                        *o = a * x + y;
                    }
                },
            );
            out
        };
        report("map_axpy_f32 vs chunked baseline (GB/s)", bytes, axpy, base_chunks);
    }

    let sum = || x.sum(None).unwrap().to_scalar().unwrap();
    let base_sum = || xs.par_chunks(1 << 16).map(|c| c.iter().sum::<f32>()).sum::<f32>();
    // A stronger baseline: 16 independent accumulators per chunk, which LLVM vectorises.
    let lanes_sum = || xs.par_chunks(1 << 16).map(lanes_sum_chunk).sum::<f32>();
    let exact: f64 = xs.iter().map(|&v| v as f64).sum();
    if want("sum") {
        println!(
            "sum rel. error: ours {:.1e}, baseline {:.1e}",
            (sum() as f64 - exact).abs() / exact,
            (base_sum() as f64 - exact).abs() / exact
        );
        report("sum_f32 (GB/s)", 4.0 * n as f64, sum, base_sum);
        report("sum_f32 vs 16-lane baseline (GB/s)", 4.0 * n as f64, sum, lanes_sum);
    }

    let m2 = x.reshape(&[4096, 4096])?;
    if want("reduce") {
        for axis in [0, 1] {
            let t = median_secs(9, || drop(m2.sum(Some(axis)).unwrap()));
            println!("sum_f32 [4096, 4096] along axis {axis}: {:.2} GB/s", 4.0 * n as f64 / t / 1e9);
        }
        let t = median_secs(9, || drop(x.argmax(None).unwrap()));
        println!("argmax_f32 of 2^24: {:.2} GB/s", 4.0 * n as f64 / t / 1e9);
        let t = median_secs(9, || drop(m2.transpose().unwrap()));
        println!("transpose_f32 [4096, 4096]: {:.2} GB/s (read + write)", 8.0 * n as f64 / t / 1e9);
    }

    if want("small") {
        let small = d.from_slice(&xs[..1024], &[1024])?;
        let per_call = median_secs(20_000, || drop(small.map(|v| &v * 2.0 + 1.0).unwrap()));
        println!("map of 1,024 f32 through the public API: {:.2} us per call", per_call * 1e6);
    }

    if want("uniform") {
        let uniform = || d.uniform::<f32>(7, &[n]).unwrap();
        // Write bandwidth into a fresh vector: the bound of any fill.
        let base_fill = || {
            let mut v = vec![0f32; n];
            v.par_chunks_mut(1 << 16).for_each(|c| c.fill(0.5));
            v
        };
        report("uniform_f32 fill vs constant-fill baseline (GB/s)", 4.0 * n as f64, uniform, base_fill);
    }

    for m in [1024usize, 2048].into_iter().filter(|_| want("matmul")) {
        let a = d.uniform::<f32>(3, &[m, m])?;
        let b = d.uniform::<f32>(4, &[m, m])?;
        let t = median_secs(5, || drop(a.matmul(&b).unwrap()));
        println!("matmul_f32_{m}: {:.1} GFLOP/s", 2.0 * (m * m * m) as f64 / t / 1e9);
    }
    Ok(())
}

/// Sum of a chunk in 16 independent lanes.
fn lanes_sum_chunk(x: &[f32]) -> f32 {
    let mut acc = [0f32; 16];
    let mut blocks = x.chunks_exact(16);
    for b in &mut blocks {
        for (a, &v) in acc.iter_mut().zip(b) {
            *a += v;
        }
    }
    acc.iter().sum::<f32>() + blocks.remainder().iter().sum::<f32>()
}

/// Prints throughput of `ours` and `base` (`units` per run) and their ratio: single runs
/// alternating between the two, medians; each result is dropped outside the timed region.
fn report<R, S>(name: &str, units: f64, mut ours: impl FnMut() -> R, mut base: impl FnMut() -> S) {
    fn once<X>(f: &mut impl FnMut() -> X) -> f64 {
        let start = Instant::now();
        let out = black_box(f());
        let t = start.elapsed().as_secs_f64();
        drop(out);
        t
    }
    for _ in 0..2 {
        once(&mut ours);
        once(&mut base);
    }
    let (mut o, mut b) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS {
        // Alternate who goes first, so that neither always runs after the other's free.
        if i % 2 == 0 {
            o.push(once(&mut ours));
            b.push(once(&mut base));
        } else {
            b.push(once(&mut base));
            o.push(once(&mut ours));
        }
    }
    o.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (to, tb) = (o[ROUNDS / 2], b[ROUNDS / 2]);
    println!("{name}: ours {:.2}, baseline {:.2}, ratio {:.2}", units / to / 1e9, units / tb / 1e9, tb / to);
}
