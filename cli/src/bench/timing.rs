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

    /// The timed runs that fit in [`TIME_BUDGET_SECS`] when one round (the work of one
    /// timed repetition) took `round_secs` in warm-up: never fewer than 1 nor more than
    /// asked. Keeps a slow device (a software GPU, say) from stretching the bench to hours.
    pub fn timed_within_budget(self, round_secs: Option<f64>) -> usize {
        let asked = self.timed.max(1);
        match round_secs {
            Some(t) if t > 0.0 => ((TIME_BUDGET_SECS / t) as usize).clamp(1, asked),
            _ => asked,
        }
    }
}

/// Seconds of timed repetitions one benchmark may take, when warm-up shows it is slow.
pub const TIME_BUDGET_SECS: f64 = 10.0;

/// Median seconds of one call of `f`. The closure must finish its work (synchronise the
/// device) before it returns; what it returns is dropped after the clock stops, so freeing
/// an output buffer is not counted, for polycompute and for baselines alike.
pub fn median_secs<R>(reps: Reps, mut f: impl FnMut() -> Result<R, BenchError>) -> Result<f64, BenchError> {
    let mut round = None;
    for _ in 0..reps.warmup {
        round = Some(time_once(&mut f)?);
    }
    let mut times = Vec::new();
    for _ in 0..reps.timed_within_budget(round) {
        times.push(time_once(&mut f)?);
    }
    Ok(median(&mut times))
}

/// Median seconds of `a` and of `b`, their repetitions interleaved (a b, b a, a b, ...) so
/// that a change in machine load or clock speed during the run touches both alike: the
/// ratio of the two stays meaningful on a busy machine.
pub fn median_secs_pair<R, S>(
    reps: Reps,
    mut a: impl FnMut() -> Result<R, BenchError>,
    mut b: impl FnMut() -> Result<S, BenchError>,
) -> Result<(f64, f64), BenchError> {
    let mut round = None;
    for _ in 0..reps.warmup {
        round = Some(time_once(&mut a)? + time_once(&mut b)?);
    }
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for i in 0..reps.timed_within_budget(round) {
        if i % 2 == 0 {
            ta.push(time_once(&mut a)?);
            tb.push(time_once(&mut b)?);
        } else {
            tb.push(time_once(&mut b)?);
            ta.push(time_once(&mut a)?);
        }
    }
    Ok((median(&mut ta), median(&mut tb)))
}

/// [`median_secs_pair`] per call, for operations far shorter than the clock's resolution
/// and the loop's own cost: each timed repetition is a batch of `calls` calls. Outputs are
/// dropped inside the batch (a caller of a small op frees its results as it goes).
pub fn median_secs_per_call_pair<R, S>(
    reps: Reps,
    calls: usize,
    mut a: impl FnMut() -> Result<R, BenchError>,
    mut b: impl FnMut() -> Result<S, BenchError>,
) -> Result<(f64, f64), BenchError> {
    let calls = calls.max(1);
    let (ta, tb) = median_secs_pair(reps, || batch(calls, &mut a), || batch(calls, &mut b))?;
    Ok((ta / calls as f64, tb / calls as f64))
}

fn batch<R>(calls: usize, f: &mut impl FnMut() -> Result<R, BenchError>) -> Result<(), BenchError> {
    for _ in 0..calls {
        drop(black_box(f()?));
    }
    Ok(())
}

/// Seconds of one call. black_box: an output nobody reads must still be computed (the
/// compiler may otherwise remove a baseline loop whose result is dropped unread); the
/// output is dropped after the clock stops.
fn time_once<R>(f: &mut impl FnMut() -> Result<R, BenchError>) -> Result<f64, BenchError> {
    let start = Instant::now();
    let out = black_box(f()?);
    let secs = start.elapsed().as_secs_f64();
    drop(out);
    Ok(secs)
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
        let (mut a, mut b) = (Vec::new(), 0);
        let order = std::cell::RefCell::new(String::new());
        median_secs_pair(
            Reps::new(1, 3),
            || {
                order.borrow_mut().push('a');
                a.push(());
                Ok(())
            },
            || {
                order.borrow_mut().push('b');
                b += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((a.len(), b), (4, 4));
        assert_eq!(order.into_inner(), "ababbaab");
        let (mut c, mut d) = (0, 0);
        median_secs_per_call_pair(
            Reps::new(1, 2),
            10,
            || {
                c += 1;
                Ok(())
            },
            || {
                d += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((c, d), (30, 30));
    }

    #[test]
    fn slow_work_gets_fewer_repetitions() {
        let reps = Reps::new(1, 7);
        assert_eq!(reps.timed_within_budget(None), 7);
        assert_eq!(reps.timed_within_budget(Some(0.01)), 7);
        assert_eq!(reps.timed_within_budget(Some(TIME_BUDGET_SECS / 3.0)), 3);
        assert_eq!(reps.timed_within_budget(Some(1e6)), 1);
        assert_eq!(Reps::new(0, 0).timed_within_budget(None), 1);
    }

    #[test]
    fn errors_stop_the_measurement() {
        let r = median_secs(Reps::new(0, 3), || Err::<(), BenchError>("boom".into()));
        assert_eq!(r.unwrap_err().to_string(), "boom");
    }
}
