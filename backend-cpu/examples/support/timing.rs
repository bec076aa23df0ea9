//! Shared timing helper of the examples: medians of repeated runs.

use std::time::Instant;

/// Median wall time in seconds of `reps` runs of `f` (after one warm-up run).
pub fn median_secs(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}
