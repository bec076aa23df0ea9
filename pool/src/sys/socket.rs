//! The parent/worker channel: a Unix-domain socket where there is one (cheaper than TCP and
//! unreachable from the network), loopback TCP elsewhere. Either way the worker's stdout and
//! stderr stay free for the task's own printing.
//!
//! Who may connect: on Unix the socket lives in a directory of its own created with mode
//! 0700, so no other user can reach it (connecting needs search permission on the
//! directory); on Linux each connection's `SO_PEERCRED` must also name our user and the
//! worker we started (or a process it started). Loopback TCP (Windows) is open to every
//! local process: there the worker's first frame, its token, is what tells it apart. On
//! every system a connection that fails these checks is closed and logged, and the parent
//! keeps waiting for its worker until the deadline.

use std::io;
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

cfg_if::cfg_if! {
    if #[cfg(unix)] {
        /// One end of a parent/worker connection.
        pub(crate) type Stream = std::os::unix::net::UnixStream;
        type RawListener = std::os::unix::net::UnixListener;

        /// The permission bits of the directory that holds a worker socket: its owner only.
        pub(crate) const DIR_MODE: u32 = 0o700;

        fn bind_raw() -> io::Result<(RawListener, String, Option<PathBuf>)> {
            use std::os::unix::fs::DirBuilderExt;
            // A fresh directory, mode 0700 from its mkdir on (the umask only removes bits);
            // `mkdir` fails rather than reuse a directory someone else made under that name.
            let dir = std::env::temp_dir().join(format!("polycompute-{}-{:016x}", std::process::id(), unique()?));
            std::fs::DirBuilder::new().mode(DIR_MODE).create(&dir)?;
            let path = dir.join("worker.sock");
            let listener = match RawListener::bind(&path) {
                Ok(l) => l,
                Err(e) => {
                    let _ = std::fs::remove_dir(&dir);
                    return Err(e);
                }
            };
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

        /// A number nobody can predict (socket directory names), from the OS generator.
        fn unique() -> io::Result<u64> {
            super::token::random_u64()
        }

        /// Linux: whether the peer of `stream` runs as our user and is `child` or a process
        /// it started (`SO_PEERCRED`, which the kernel fills in at `connect`).
        #[cfg(target_os = "linux")]
        fn check_peer(stream: &Stream, child: u32) -> Result<(), String> {
            use std::os::fd::AsRawFd;
            let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
            let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
            // SAFETY: `cred` and `len` are valid out pointers of the sizes given, and the
            // descriptor is the live socket `stream` owns.
            let r = unsafe {
                libc::getsockopt(
                    stream.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_PEERCRED,
                    (&mut cred as *mut libc::ucred).cast(),
                    &mut len,
                )
            };
            if r != 0 {
                return Err(format!("cannot read its credentials: {}", io::Error::last_os_error()));
            }
            // SAFETY: geteuid has no preconditions.
            let me = unsafe { libc::geteuid() };
            if cred.uid != me {
                return Err(format!("it runs as uid {}, not ours ({me})", cred.uid));
            }
            let pid = u32::try_from(cred.pid).unwrap_or(0);
            if !descends_from(pid, child) {
                return Err(format!("its process {pid} is not the worker {child} we started"));
            }
            Ok(())
        }

        /// Other Unix systems: the 0700 directory alone keeps other users out.
        #[cfg(not(target_os = "linux"))]
        fn check_peer(_stream: &Stream, _child: u32) -> Result<(), String> {
            Ok(())
        }

        /// Whether `pid` is `ancestor` or, up to 16 generations down, a process it started
        /// (a worker executable that is a wrapper starting the real program, say), read from
        /// `/proc/<pid>/stat`.
        #[cfg(target_os = "linux")]
        fn descends_from(mut pid: u32, ancestor: u32) -> bool {
            for _ in 0..16 {
                if pid == ancestor {
                    return true;
                }
                if pid <= 1 {
                    return false;
                }
                let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
                // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
                let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else { return false };
                match after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
                    Some(parent) => pid = parent,
                    None => return false,
                }
            }
            false
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

        /// Loopback TCP tells nothing of its peer here: the worker's token decides.
        fn check_peer(_stream: &Stream, _child: u32) -> Result<(), String> {
            Ok(())
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
    /// passes (a program whose `main` does not call `worker_main` never connects). Each
    /// connection must pass the OS's peer check (see the module docs) and then `admit`
    /// (the worker's token); one that fails either is closed and logged, and the wait goes
    /// on: a hostile local process can neither join nor end a worker's start.
    pub(crate) fn accept(
        &self,
        child: &mut Child,
        deadline: Instant,
        mut admit: impl FnMut(&mut Stream) -> Result<(), String>,
    ) -> io::Result<Stream> {
        let mut pause = Duration::from_micros(20);
        loop {
            match self.raw.accept() {
                Ok((mut stream, _)) => {
                    // Accepted sockets inherit O_NONBLOCK on some systems (macOS, BSD).
                    stream.set_nonblocking(false)?;
                    tune(&stream)?;
                    match check_peer(&stream, child.id()).and_then(|()| admit(&mut stream)) {
                        Ok(()) => return Ok(stream),
                        // Then on to the deadline check below: a stream of bad connections
                        // does not hold the start past its deadline.
                        Err(why) => {
                            tracing::warn!("polycompute: refused a connection to a worker's socket: {why}");
                            let _ = stream.shutdown(std::net::Shutdown::Both);
                        }
                    }
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
            if let Some(dir) = path.parent() {
                let _ = std::fs::remove_dir(dir);
            }
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_socket_lives_in_an_owner_only_directory_that_goes_with_it() {
        let listener = Listener::bind().unwrap();
        let path = PathBuf::from(listener.addr());
        let dir = path.parent().unwrap().to_path_buf();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, DIR_MODE);
        assert_ne!(dir, std::env::temp_dir(), "a directory of its own, not the shared temp dir");
        assert!(path.exists());
        drop(listener);
        assert!(!path.exists() && !dir.exists(), "the socket and its directory are removed");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn peer_credentials_name_the_worker_or_nothing() {
        let (a, _b) = pair().unwrap();
        let me = std::process::id();
        check_peer(&a, me).unwrap();
        let other = check_peer(&a, me + 1).unwrap_err();
        assert!(other.contains("not the worker"), "{other}");
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() } as u32;
        assert!(descends_from(me, parent), "a process started by `ancestor` counts as its");
        assert!(!descends_from(parent, me), "an ancestor is not a descendant");
        assert!(!descends_from(1, me));
    }
}
