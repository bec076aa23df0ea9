//! Shared timing helper of the examples: medians of repeated runs.

use std::time::Instant;

/// Wall times in seconds of `reps` runs of `f` (after one warm-up run).
pub fn times(reps: usize, mut f: impl FnMut()) -> Vec<f64> {
    f();
    (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect()
}

/// Median wall time in seconds of `reps` runs of `f` (after one warm-up run).
#[allow(dead_code)]
pub fn median_secs(reps: usize, f: impl FnMut()) -> f64 {
    let mut t = times(reps, f);
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}
