//! The CPU baselines: what a careful person writes by hand with rayon and no library, so
//! that each polycompute figure is read against the machine rather than in a vacuum.
//! The streaming ones write into one output buffer that the caller reuses across
//! repetitions, as polycompute's caching allocator reuses its blocks: the baseline is the
//! loop at the machine's memory speed, and its own page faults (a fresh 64 MiB vector costs
//! 16,384 of them) neither slow it nor disturb the polycompute runs interleaved with it.

use rayon::prelude::*;

/// Elements per rayon task: large enough that scheduling costs nothing, small enough
/// that both cores stay busy to the end.
const CHUNK: usize = 1 << 16;

/// `a * x + y` into `out`: chunks in parallel, a plain indexed loop inside that the
/// compiler vectorises.
pub fn axpy(a: f32, x: &[f32], y: &[f32], out: &mut [f32]) {
    out.par_chunks_mut(CHUNK).zip(x.par_chunks(CHUNK)).zip(y.par_chunks(CHUNK)).for_each(|((o, x), y)| {
        for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
            *o = a * x + y;
        }
    });
}

/// The same on one thread: the baseline for small arrays, where no one would use rayon.
pub fn axpy_serial(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(&x, &y)| a * x + y).collect()
}

/// Lanes of independent partial sums: lets the compiler keep a vector register of
/// accumulators instead of one serial chain of float additions (which it may not reorder).
const LANES: usize = 16;

/// Sum of `x`: chunks in parallel, each summed in [`LANES`] independent accumulators.
pub fn sum(x: &[f32]) -> f32 {
    x.par_chunks(CHUNK).map(sum_chunk).sum()
}

fn sum_chunk(x: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let mut blocks = x.chunks_exact(LANES);
    for block in &mut blocks {
        for (a, &v) in acc.iter_mut().zip(block) {
            *a += v;
        }
    }
    acc.iter().sum::<f32>() + blocks.remainder().iter().sum::<f32>()
}

/// `out` written in parallel (write bandwidth: the bound for any fill, random or not).
pub fn fill(out: &mut [f32], value: f32) {
    out.par_chunks_mut(CHUNK).for_each(|o| o.fill(value));
}

/// Rows of C per rayon task in [`matmul`].
const ROW_BLOCK: usize = 8;
/// Depth of one pass over B in [`matmul`]: `K_BLOCK` rows of B (1 MiB at n = 2048, f32)
/// stay in the 2 MiB L2 while a block of C rows is updated.
const K_BLOCK: usize = 128;

/// `[m, k] @ [k, n]`, row-major: the straightforward blocked loop (blocks of C rows in
/// parallel, k blocked for cache, i-k-j order so the inner loop is a vectorisable
/// `c_row += a_ik * b_row`). No packing, no register tiling: that is what a GEMM library adds.
pub fn matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    if n == 0 {
        return c;
    }
    c.par_chunks_mut(n * ROW_BLOCK).enumerate().for_each(|(block, c_rows)| {
        let i0 = block * ROW_BLOCK;
        for k0 in (0..k).step_by(K_BLOCK) {
            let k1 = (k0 + K_BLOCK).min(k);
            for (r, c_row) in c_rows.chunks_mut(n).enumerate() {
                let a_row = &a[(i0 + r) * k..(i0 + r + 1) * k];
                for (p, &a_ip) in a_row.iter().enumerate().take(k1).skip(k0) {
                    for (c, &b) in c_row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                        *c += a_ip * b;
                    }
                }
            }
        }
    });
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axpy_and_sum_are_right() {
        let x: Vec<f32> = (0..100_000).map(|i| (i % 7) as f32).collect();
        let y = vec![1.0f32; x.len()];
        let mut z = vec![f32::NAN; x.len()];
        axpy(2.0, &x, &y, &mut z);
        assert_eq!(z, axpy_serial(2.0, &x, &y));
        assert_eq!(z[3], 7.0);
        let exact: f64 = x.iter().map(|&v| v as f64).sum();
        assert_eq!(sum(&x) as f64, exact);
        assert_eq!(sum(&[]), 0.0);
        let mut f = vec![f32::NAN; 1000];
        fill(&mut f, 0.5);
        assert!(f.iter().all(|&v| v == 0.5));
    }

    #[test]
    fn matmul_matches_the_definition() {
        let (m, k, n) = (19, 300, 13);
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 3) % 5) as f32 - 2.0).collect();
        let c = matmul(&a, &b, m, k, n);
        for i in 0..m {
            for j in 0..n {
                let want: f32 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                assert_eq!(c[i * n + j], want, "({i}, {j})");
            }
        }
    }
}
