//! Brief busy-waiting before blocking, on the round trip's every hop.
//!
//! On the development VM a blocked thread or process takes 2 µs (thread) to 20 µs
//! (process) to wake, and one `submit -> result` round trip crosses four such hops in
//! process mode: a bare socket ping-pong between two processes there takes 42-45 µs
//! median, and 4.4-6.8 µs when both ends poll for up to 20 µs before blocking. So each
//! waiter on the round trip polls for a short window, yielding its core between polls
//! (a runnable thread that needs the core gets it), and only then blocks.

use std::io::{self, BufRead, BufReader};
use std::time::{Duration, Instant};

use crate::platform::process::Stream;

/// How long a waiter polls before it blocks: long enough to cover a round trip's other
/// hops on a busy 2-core machine, short enough that an idle worker stops burning its core
/// at once (yields in between, so it never holds a core another thread needs).
pub(crate) const WINDOW: Duration = Duration::from_micros(50);

/// Polls `ready` until it answers true or [`WINDOW`] passes; answers whether it became ready.
pub(crate) fn until(mut ready: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    let mut polls = 0u32;
    loop {
        if ready() {
            return true;
        }
        polls += 1;
        if polls < 16 {
            std::hint::spin_loop();
            continue;
        }
        if start.elapsed() >= WINDOW {
            return false;
        }
        std::thread::yield_now();
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
    fn until_stops_at_the_window_or_when_ready() {
        let t = Instant::now();
        assert!(!until(|| false));
        assert!(t.elapsed() >= WINDOW);
        let mut n = 0;
        assert!(until(|| {
            n += 1;
            n == 3
        }));
    }

    #[cfg(unix)]
    #[test]
    fn until_readable_finds_data_and_leaves_the_socket_blocking() {
        use std::io::{Read, Write};
        let (mut a, b) = Stream::pair().unwrap();
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
