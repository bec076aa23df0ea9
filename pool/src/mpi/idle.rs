//! How a loop that polls MPI waits when there is nothing to do: it yields for a millisecond
//! (a message usually follows soon in a busy pool, and a sleep costs 65 µs or more on the
//! development VM however short it is asked to be), then sleeps for an eighth of the time
//! it has been idle, at most a millisecond (mpi4py.futures' workers back off similarly).
//!
//! A blocking MPI receive would spin at full speed for as long as it waits: an idle
//! worker rank would burn a core that rank 0 or a busy rank needs (on a node with fewer
//! cores than ranks, the round trip then waits for time slices), and rank 0's
//! communication thread would burn one for as long as a long task runs. An eighth keeps
//! the added latency to about 12% of the idle time.

use std::time::{Duration, Instant};

/// Yield (not sleep) while idle for less than this.
const YIELD_FOR: Duration = Duration::from_millis(1);
/// The longest sleep.
const MAX_SLEEP: Duration = Duration::from_millis(1);

/// Idle time since the last message.
pub(super) struct Idle {
    since: Instant,
}

impl Idle {
    pub(super) fn new() -> Idle {
        Idle { since: Instant::now() }
    }

    /// Something happened: the next wait starts short again.
    pub(super) fn reset(&mut self) {
        self.since = Instant::now();
    }

    /// Waits a little, the longer the longer it has been idle.
    pub(super) fn pause(&self) {
        let idle = self.since.elapsed();
        if idle < YIELD_FOR {
            std::thread::yield_now();
        } else {
            std::thread::sleep((idle / 8).min(MAX_SLEEP));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_with_idle_time_up_to_a_millisecond() {
        let idle = Idle { since: Instant::now() - Duration::from_millis(6) };
        let t = Instant::now();
        idle.pause();
        let slept = t.elapsed();
        assert!(slept >= Duration::from_micros(700), "slept {slept:?} after 6 ms idle");
        let idle = Idle { since: Instant::now() - Duration::from_secs(60) };
        let t = Instant::now();
        idle.pause();
        assert!(t.elapsed() >= MAX_SLEEP && t.elapsed() < Duration::from_millis(100), "{:?}", t.elapsed());
    }
}
