//! Brief busy-waiting before blocking, on the round trip's every hop.
//!
//! Waking a blocked thread, and more so a blocked process, can cost more than a short task
//! (an idle virtual CPU is slow to wake), and one process-mode `submit -> result` round trip
//! crosses four such hops. So each waiter on the round trip polls before it blocks: a short
//! spin, then up to [`WINDOW`] of polls with a `yield` between them.
//!
//! Yielding only costs nothing while this core has no other runnable thread. When it has
//! (the machine is loaded), `yield` hands the core over for a whole time slice, milliseconds,
//! and polling makes the round trip far slower than blocking. Yields that took longer than
//! [`SLOW_YIELD`], [`SLOW_YIELDS`] of them within [`SLOW_SPAN`], are that signal (one alone
//! may be the pool's own work): for the next [`BACK_OFF`] no waiter of this process yields;
//! they block after the spin. The price: a stream of tiny process-mode tasks keeps the cores
//! busy with the pool's own threads, which looks the same, so it runs somewhat slower than
//! with polling that never backs off.
//!
//! The figures behind these choices (wake-up costs, round trips idle and loaded, the back-off's
//! cost) are in `benches/pool.md`, measured on the development machine.

use std::io::{self, BufRead, BufReader};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::sys::socket::Stream;

/// How long a waiter polls before it blocks: long enough to cover a round trip's other
/// hops on an idle 2-core machine, short enough that an idle worker stops burning its core
/// at once.
pub(crate) const WINDOW: Duration = Duration::from_micros(50);

/// A yield slower than this means a thread outside the round trip took the core for a
/// time slice.
const SLOW_YIELD: Duration = Duration::from_millis(1);

/// This many slow yields within [`SLOW_SPAN`] mean a loaded machine; fewer may be the pool's
/// own threads (a long task, the caller encoding a large map's inputs).
const SLOW_YIELDS: u32 = 3;
const SLOW_SPAN: Duration = Duration::from_millis(20);

/// How long waiters skip the yielding polls once the machine looks loaded.
const BACK_OFF: Duration = Duration::from_millis(100);

/// Slow yields counted since [`SLOW_SINCE`] (ns since [`epoch`]).
static SLOW_COUNT: AtomicU32 = AtomicU32::new(0);
static SLOW_SINCE: AtomicU64 = AtomicU64::new(0);

/// Nanoseconds since [`epoch`] until which waiters do not yield (0: they may).
static CONTENDED_UNTIL: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ns() -> u64 {
    epoch().elapsed().as_nanos() as u64
}

/// Counts a slow yield that ended at `now`; the last of [`SLOW_YIELDS`] within [`SLOW_SPAN`]
/// starts a [`BACK_OFF`]. Races between waiters only shift a count by one.
fn slow_yield(now: u64) {
    let since = SLOW_SINCE.load(Ordering::Relaxed);
    let count = if now.saturating_sub(since) > SLOW_SPAN.as_nanos() as u64 {
        SLOW_SINCE.store(now, Ordering::Relaxed);
        SLOW_COUNT.store(1, Ordering::Relaxed);
        1
    } else {
        SLOW_COUNT.fetch_add(1, Ordering::Relaxed) + 1
    };
    if count >= SLOW_YIELDS {
        CONTENDED_UNTIL.store(now + BACK_OFF.as_nanos() as u64, Ordering::Relaxed);
        SLOW_COUNT.store(0, Ordering::Relaxed);
    }
}

/// Polls `ready` (see the module docs) until it answers true or the polling ends; answers
/// whether it became ready.
pub(crate) fn until(mut ready: impl FnMut() -> bool) -> bool {
    // About a microsecond of spinning: a result produced by a running thread is often there.
    for step in 0..7 {
        if ready() {
            return true;
        }
        for _ in 0..1u32 << step {
            std::hint::spin_loop();
        }
    }
    let start = now_ns();
    if start < CONTENDED_UNTIL.load(Ordering::Relaxed) {
        return ready();
    }
    let (window, slow) = (WINDOW.as_nanos() as u64, SLOW_YIELD.as_nanos() as u64);
    let mut before = start;
    loop {
        if ready() {
            return true;
        }
        std::thread::yield_now();
        let after = now_ns();
        if after - before > slow {
            slow_yield(after);
            return ready();
        }
        if after - start >= window {
            return ready();
        }
        before = after;
    }
}

/// Polls `reader` for up to [`WINDOW`] until it has bytes buffered or its socket reached
/// EOF; the next blocking read then finds them without sleeping. Errors other than "no
/// data yet" are left for that read to report.
pub(crate) fn until_readable(reader: &mut BufReader<Stream>) -> io::Result<()> {
    if !reader.buffer().is_empty() {
        return Ok(());
    }
    reader.get_ref().set_nonblocking(true)?;
    until(|| match reader.fill_buf() {
        Ok(_) => true, // bytes, or EOF (an empty buffer): either way, reading will not block
        Err(e) => e.kind() != io::ErrorKind::WouldBlock,
    });
    reader.get_ref().set_nonblocking(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_polls_then_gives_up_or_returns_when_ready() {
        let mut polls = 0;
        assert!(!until(|| {
            polls += 1;
            false
        }));
        assert!(polls >= 8, "{polls}");
        let mut n = 0;
        assert!(until(|| {
            n += 1;
            n == 3
        }));
        assert_eq!(n, 3);
    }

    #[test]
    fn three_slow_yields_make_waiters_only_spin() {
        // Timestamps far past anything this process has seen (a real slow yield may happen).
        let t = now_ns() + 1_000_000_000;
        slow_yield(t);
        slow_yield(t + 1_000);
        assert!(CONTENDED_UNTIL.load(Ordering::Relaxed) < t, "two are not enough");
        slow_yield(t + 2_000);
        assert_eq!(CONTENDED_UNTIL.load(Ordering::Relaxed), t + 2_000 + BACK_OFF.as_nanos() as u64);
        let mut polls = 0;
        assert!(!until(|| {
            polls += 1;
            false
        }));
        CONTENDED_UNTIL.store(0, Ordering::Relaxed);
        assert_eq!(polls, 8, "the spin's 7 polls and a last look: no yielding polls");
    }

    #[test]
    fn until_readable_finds_data_and_leaves_the_socket_blocking() {
        use std::io::{Read, Write};
        let (mut a, b) = crate::sys::socket::pair().unwrap();
        let mut reader = BufReader::new(b);
        until_readable(&mut reader).unwrap(); // nothing yet: gives up after the window
        assert!(reader.buffer().is_empty());
        a.write_all(b"hello").unwrap();
        until_readable(&mut reader).unwrap();
        assert_eq!(reader.buffer(), b"hello");
        let mut got = [0u8; 5];
        reader.read_exact(&mut got).unwrap();
        // Blocking again: a read waits for the writer rather than failing with WouldBlock.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            a.write_all(b"!").unwrap();
        });
        let mut one = [0u8; 1];
        reader.read_exact(&mut one).unwrap();
        assert_eq!(&one, b"!");
        writer.join().unwrap();
    }
}
