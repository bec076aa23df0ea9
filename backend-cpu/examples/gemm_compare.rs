//! Measures the two GEMM candidates, `gemm` (rayon) and `matrixmultiply` (threading
//! feature), on square f32 products, to choose the one the CPU backend calls.
//!
//! `cargo run --release -p polycompute-cpu --example gemm_compare`

#[path = "support/timing.rs"]
mod timing;

/// Alternating rounds of the two candidates.
const ROUNDS: usize = 4;

fn main() {
    let threads = rayon::current_num_threads();
    // matrixmultiply's own thread pool reads this variable; give it the same thread count.
    if std::env::var_os("RMM_NTHREADS").is_none() {
        std::env::set_var("RMM_NTHREADS", threads.to_string());
    }
    println!("threads: {threads}");
    for n in [256usize, 1024, 2048] {
        let a: Vec<f32> = (0..n * n).map(|i| ((i * 7 % 13) as f32) * 0.1).collect();
        let b: Vec<f32> = (0..n * n).map(|i| ((i * 5 % 11) as f32) * 0.1).collect();
        let mut c1 = vec![0f32; n * n];
        let mut c2 = vec![0f32; n * n];
        let reps = if n >= 2048 { 3 } else { 7 };
        let flops = 2.0 * (n * n * n) as f64;
        let mut g = Vec::new();
        let mut m = Vec::new();
        // Interleave the candidates so that load from other processes hits both alike;
        // report the median and the best run (the least disturbed) of each.
        for _ in 0..ROUNDS {
            g.extend(timing::times(reps, || run_gemm(n, &a, &b, &mut c1)));
            m.extend(timing::times(reps, || run_mm(n, &a, &b, &mut c2)));
        }
        g.sort_by(f64::total_cmp);
        m.sort_by(f64::total_cmp);
        let (gm, mm) = (g[g.len() / 2], m[m.len() / 2]);
        let diff = c1.iter().zip(&c2).map(|(x, y)| (x - y).abs() / x.abs().max(1.0)).fold(0f32, f32::max);
        let gf = |t: f64| flops / t / 1e9;
        println!(
            "f32 {n}^3 GFLOP/s (median / best): gemm {:.1} / {:.1}, matrixmultiply {:.1} / {:.1}; \
             gemm/mm {:.2} / {:.2} (max rel diff {diff:.1e})",
            gf(gm),
            gf(g[0]),
            gf(mm),
            gf(m[0]),
            mm / gm,
            m[0] / g[0]
        );
    }
}

fn run_gemm(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    // SAFETY: a, b, c hold n·n elements each, walked as row-major n×n matrices.
    unsafe {
        gemm::gemm(
            n,
            n,
            n,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            n as isize,
            b.as_ptr(),
            1,
            n as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::Rayon(0),
        )
    }
}

fn run_mm(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    // SAFETY: a, b, c hold n·n elements each, walked as row-major n×n matrices.
    unsafe {
        matrixmultiply::sgemm(
            n,
            n,
            n,
            1.0,
            a.as_ptr(),
            n as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        )
    }
}
