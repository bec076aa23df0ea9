//! The parent/worker channel: a Unix-domain socket where there is one (cheaper than TCP and
//! unreachable from the network), loopback TCP elsewhere. Either way the worker's stdout and
//! stderr stay free for the task's own printing.

use std::io;
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

cfg_if::cfg_if! {
    if #[cfg(unix)] {
        /// One end of a parent/worker connection.
        pub(crate) type Stream = std::os::unix::net::UnixStream;
        type RawListener = std::os::unix::net::UnixListener;

        fn bind_raw() -> io::Result<(RawListener, String, Option<PathBuf>)> {
            let path = std::env::temp_dir().join(format!("polycompute-{}-{:016x}.sock", std::process::id(), unique()));
            let listener = RawListener::bind(&path)?;
            let addr = path.to_string_lossy().into_owned();
            Ok((listener, addr, Some(path)))
        }

        /// Connects a worker to its parent's address.
        pub(crate) fn connect(addr: &str) -> io::Result<Stream> {
            Stream::connect(addr)
        }

        fn tune(_stream: &Stream) -> io::Result<()> {
            Ok(())
        }

        /// A number unlikely to repeat within this process or across processes (socket names).
        fn unique() -> u64 {
            use std::hash::{BuildHasher, Hasher};
            static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            h.finish()
        }
    } else {
        /// One end of a parent/worker connection.
        pub(crate) type Stream = std::net::TcpStream;
        type RawListener = std::net::TcpListener;

        fn bind_raw() -> io::Result<(RawListener, String, Option<PathBuf>)> {
            let listener = RawListener::bind(("127.0.0.1", 0))?;
            let addr = listener.local_addr()?.to_string();
            Ok((listener, addr, None))
        }

        /// Connects a worker to its parent's address.
        pub(crate) fn connect(addr: &str) -> io::Result<Stream> {
            let stream = Stream::connect(addr)?;
            tune(&stream)?;
            Ok(stream)
        }

        fn tune(stream: &Stream) -> io::Result<()> {
            // Frames are small and answered at once: Nagle's delay would add ~40 ms.
            stream.set_nodelay(true)
        }
    }
}

/// Where one worker connects to its parent; made for each worker start.
pub(crate) struct Listener {
    raw: RawListener,
    addr: String,
    path: Option<PathBuf>,
}

impl Listener {
    /// Binds a fresh address.
    pub(crate) fn bind() -> io::Result<Listener> {
        let (raw, addr, path) = bind_raw()?;
        raw.set_nonblocking(true)?;
        Ok(Listener { raw, addr, path })
    }

    /// The address the worker is told (through its environment).
    pub(crate) fn addr(&self) -> &str {
        &self.addr
    }

    /// Waits for `child` to connect, failing early when it exits first or the deadline
    /// passes (a program whose `main` does not call `worker_main` never connects).
    pub(crate) fn accept(&self, child: &mut Child, deadline: Instant) -> io::Result<Stream> {
        let mut pause = Duration::from_micros(20);
        loop {
            match self.raw.accept() {
                Ok((stream, _)) => {
                    // Accepted sockets inherit O_NONBLOCK on some systems (macOS, BSD).
                    stream.set_nonblocking(false)?;
                    tune(&stream)?;
                    return Ok(stream);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            if let Some(status) = child.try_wait()? {
                return Err(io::Error::other(format!("the worker process exited ({status}) before connecting")));
            }
            if Instant::now() >= deadline {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "the worker process did not connect in time"));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(2));
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Two connected ends, for tests of code that reads a [`Stream`].
#[cfg(test)]
pub(crate) fn pair() -> io::Result<(Stream, Stream)> {
    cfg_if::cfg_if! {
        if #[cfg(unix)] {
            Stream::pair()
        } else {
            let (raw, addr, _) = bind_raw()?;
            let a = connect(&addr)?;
            let (b, _) = raw.accept()?;
            tune(&b)?;
            Ok((a, b))
        }
    }
}
