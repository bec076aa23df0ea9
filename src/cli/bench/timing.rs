//! Wall-clock timing: warm-up runs, then the median of several repetitions.

use std::hint::black_box;
use std::time::Instant;

use super::BenchError;

/// How many times to run a measured closure.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Reps {
    /// Untimed runs first (caches, page tables, compiled kernels, thread wake-up).
    pub warmup: usize,
    /// Timed runs; the median is reported. At least 1.
    pub timed: usize,
}

impl Reps {
    /// `warmup` untimed runs, then `timed` timed ones.
    pub const fn new(warmup: usize, timed: usize) -> Reps {
        Reps { warmup, timed }
    }
}

/// Median seconds of one call of `f`. The closure must finish its work (synchronise the
/// device) before it returns; what it returns is dropped after the clock stops, so freeing
/// an output buffer is not counted, for polycompute and for baselines alike.
pub fn median_secs<R>(reps: Reps, mut f: impl FnMut() -> Result<R, BenchError>) -> Result<f64, BenchError> {
    for _ in 0..reps.warmup {
        drop(black_box(f()?));
    }
    let mut times = Vec::with_capacity(reps.timed.max(1));
    for _ in 0..reps.timed.max(1) {
        let start = Instant::now();
        // black_box: an output nobody reads must still be computed (the compiler may
        // otherwise remove a baseline loop whose result is dropped unread).
        let out = black_box(f()?);
        times.push(start.elapsed().as_secs_f64());
        drop(out);
    }
    Ok(median(&mut times))
}

/// Median seconds per call of `f` when it is called `calls` times in a row: for operations
/// far shorter than the clock's resolution and the loop's own cost. Outputs are dropped
/// inside the batch (a caller of a small op frees its results as it goes).
pub fn median_secs_per_call<R>(
    reps: Reps,
    calls: usize,
    mut f: impl FnMut() -> Result<R, BenchError>,
) -> Result<f64, BenchError> {
    let calls = calls.max(1);
    median_secs(reps, || {
        for _ in 0..calls {
            drop(black_box(f()?));
        }
        Ok(())
    })
    .map(|t| t / calls as f64)
}

/// The median of `times` (the mean of the two middle values for an even count).
pub fn median(times: &mut [f64]) -> f64 {
    if times.is_empty() {
        return f64::NAN;
    }
    times.sort_by(f64::total_cmp);
    let mid = times.len() / 2;
    if times.len() % 2 == 1 {
        times[mid]
    } else {
        (times[mid - 1] + times[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn closures_run_warmup_plus_timed_times() {
        let mut n = 0;
        median_secs(Reps::new(2, 3), || {
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 5);
        let mut m = 0;
        median_secs_per_call(Reps::new(1, 2), 10, || {
            m += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(m, 30);
    }

    #[test]
    fn errors_stop_the_measurement() {
        let r = median_secs(Reps::new(0, 3), || Err::<(), BenchError>("boom".into()));
        assert_eq!(r.unwrap_err().to_string(), "boom");
    }
}
