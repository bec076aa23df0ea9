//! Everything that differs between operating systems lives here (the rest of the code is
//! the same on Linux, macOS and Windows), plus [`probe`], which reports the platform, each
//! backend's status and the worker plan.

use serde::{Deserialize, Serialize};

use crate::backend::{BackendKind, DeviceInfo};
use crate::registry;

/// How the pool runs its workers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkerMode {
    /// Chosen by the platform table (see [`WorkerPlan`]).
    Auto,
    /// Worker threads in this process.
    Thread,
    /// Worker processes: this executable re-executed (never fork without exec).
    Process,
}

/// The environment variable that overrides the worker mode: `thread` or `process`.
pub const WORKERS_ENV: &str = "POLYCOMPUTE_WORKERS";

/// The worker mode the pool will use here, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerPlan {
    /// `thread` or `process`.
    pub mode: WorkerMode,
    /// Why this mode.
    pub reason: String,
}

/// The per-OS worker table: the default mode under [`WorkerMode::Auto`], and why.
///
/// | OS | default | process worker started by | learns that its parent died by |
/// |----|---------|---------------------------|--------------------------------|
/// | Linux | thread | exec of this executable from one long-lived spawner thread | `PR_SET_PDEATHSIG` (SIGKILL; tied to the spawning thread, hence the long-lived one) plus a `getppid` check, and EOF on its stdin pipe |
/// | macOS | thread | exec of this executable (`posix_spawn`) | EOF on its stdin, a pipe from the parent that is never written (no death signal exists) |
/// | Windows | thread | `CreateProcess` of this executable, put in a Job Object | the Job Object's `KILL_ON_JOB_CLOSE`, and EOF on its stdin pipe |
///
/// Everywhere a worker talks to its parent over a socket of its own (Unix-domain on Unix,
/// loopback TCP on Windows), never its stdout, so the task's printing cannot corrupt it.
///
/// Threads are the default everywhere: one thread per device shares the process's device
/// contexts safely and moves values without serialization. Process workers isolate crashes
/// (a segfault or `abort` costs one worker, not the program) and are chosen with
/// `POLYCOMPUTE_WORKERS=process` or the pool builder.
pub fn worker_plan() -> WorkerPlan {
    if let Ok(v) = std::env::var(WORKERS_ENV) {
        match v.trim().to_ascii_lowercase().as_str() {
            "thread" => return WorkerPlan { mode: WorkerMode::Thread, reason: format!("{WORKERS_ENV}=thread") },
            "process" => return WorkerPlan { mode: WorkerMode::Process, reason: format!("{WORKERS_ENV}=process") },
            _ => {}
        }
    }
    WorkerPlan {
        mode: WorkerMode::Thread,
        reason: format!(
            "{}: one thread per device shares the process's device contexts and moves values without \
             serialization; process workers (this executable re-executed, never forked; {}) isolate crashes \
             and are chosen with {WORKERS_ENV}=process or the pool builder",
            std::env::consts::OS,
            process::PARENT_DEATH
        ),
    }
}

/// One backend's status in a [`Probe`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackendStatus {
    /// The backend.
    pub kind: BackendKind,
    /// Whether it has at least one device.
    pub available: bool,
    /// Why not, when it is not ("not compiled in", "no adapter", ...); empty otherwise.
    pub reason: String,
    /// Its devices.
    pub devices: Vec<DeviceInfo>,
}

/// What [`probe`] found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// `linux`, `macos`, `windows`, ...
    pub os: String,
    /// `x86_64`, `aarch64`, ...
    pub arch: String,
    /// Logical CPU cores.
    pub cores: usize,
    /// Every backend kind, compiled in or not.
    pub backends: Vec<BackendStatus>,
    /// The worker plan.
    pub plan: WorkerPlan,
}

/// Reports the platform, each backend's devices (or why it has none) and the worker plan.
/// Enumerates devices without keeping any context open.
pub fn probe() -> Probe {
    let backends = registry::backends()
        .into_iter()
        .map(|(kind, backend)| {
            let devices = backend.and_then(|b| b.devices());
            match devices {
                Ok(devices) if !devices.is_empty() => {
                    BackendStatus { kind, available: true, reason: String::new(), devices }
                }
                Ok(_) => BackendStatus { kind, available: false, reason: "no devices".into(), devices: Vec::new() },
                Err(crate::Error::BackendNotCompiled { .. }) => {
                    BackendStatus { kind, available: false, reason: "not compiled in".into(), devices: Vec::new() }
                }
                Err(crate::Error::BackendUnavailable { reason, .. }) => {
                    BackendStatus { kind, available: false, reason, devices: Vec::new() }
                }
                Err(e) => BackendStatus { kind, available: false, reason: e.to_string(), devices: Vec::new() },
            }
        })
        .collect();
    Probe {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        backends,
        plan: worker_plan(),
    }
}

/// How process workers are started, how they talk to their parent, and how they learn that
/// the parent died: the OS-specific half of the worker pool (the rest is the same everywhere).
pub(crate) mod process {
    use std::io;
    use std::path::PathBuf;
    use std::process::{Child, Command, ExitStatus};
    use std::sync::mpsc;
    use std::sync::{Mutex, OnceLock};
    use std::time::{Duration, Instant};

    cfg_if::cfg_if! {
        if #[cfg(target_os = "linux")] {
            /// How a process worker learns that its parent died (shown in the worker plan).
            pub(crate) const PARENT_DEATH: &str =
                "a worker learns that its parent died by PR_SET_PDEATHSIG, a getppid check and EOF on its stdin pipe";
        } else if #[cfg(unix)] {
            /// How a process worker learns that its parent died (shown in the worker plan).
            pub(crate) const PARENT_DEATH: &str = "a worker learns that its parent died by EOF on its stdin pipe";
        } else if #[cfg(windows)] {
            /// How a process worker learns that its parent died (shown in the worker plan).
            pub(crate) const PARENT_DEATH: &str =
                "workers live in a Job Object with KILL_ON_JOB_CLOSE and also watch for EOF on their stdin pipe";
        } else {
            /// How a process worker learns that its parent died (shown in the worker plan).
            pub(crate) const PARENT_DEATH: &str = "a worker learns that its parent died by EOF on its stdin pipe";
        }
    }

    // The parent/worker channel: a Unix-domain socket where there is one (cheaper than TCP
    // and unreachable from the network), loopback TCP elsewhere. Either way the worker's
    // stdout and stderr stay free for the task's own printing.
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

    /// A number unlikely to repeat within this process or across processes (socket names).
    #[cfg(unix)]
    fn unique() -> u64 {
        use std::hash::{BuildHasher, Hasher};
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        h.finish()
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

    type SpawnRequest = (Command, mpsc::SyncSender<io::Result<Child>>);

    /// Starts a worker process. Every worker is started from one thread that lives as long
    /// as the program: Linux delivers `PR_SET_PDEATHSIG` when the *thread* that started the
    /// child exits, so a short-lived thread would kill its workers with it.
    pub(crate) fn spawn(cmd: Command) -> io::Result<Child> {
        static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
        let spawner = SPAWNER.get_or_init(|| {
            let (tx, rx) = mpsc::channel::<SpawnRequest>();
            let started = std::thread::Builder::new().name("polycompute-spawner".into()).spawn(move || {
                let mut jobs = JobObject::new();
                for (mut cmd, reply) in rx {
                    let result = cmd.spawn().and_then(|mut child| match jobs.adopt(&child) {
                        Ok(()) => Ok(child),
                        Err(e) => {
                            let _ = child.kill();
                            let _ = child.wait();
                            Err(e)
                        }
                    });
                    let _ = reply.send(result);
                }
            });
            if let Err(e) = started {
                tracing::error!("cannot start the worker spawner thread: {e}");
            }
            Mutex::new(tx)
        });
        let (reply_tx, reply_rx) = mpsc::sync_channel(1);
        let sent = spawner.lock().unwrap_or_else(|p| p.into_inner()).send((cmd, reply_tx));
        if sent.is_err() {
            return Err(io::Error::other("the worker spawner thread is not running"));
        }
        reply_rx.recv().unwrap_or_else(|_| Err(io::Error::other("the worker spawner thread stopped")))
    }

    cfg_if::cfg_if! {
        if #[cfg(windows)] {
            use windows_sys::Win32::Foundation::HANDLE;
            use windows_sys::Win32::System::JobObjects::{
                AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
                SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
            };

            /// The Job Object every worker joins. Its handle is never closed: the system
            /// closes it when this process ends, however it ends, and KILL_ON_JOB_CLOSE then
            /// ends every worker.
            struct JobObject(Option<HANDLE>);

            impl JobObject {
                fn new() -> Self {
                    JobObject(None)
                }

                fn handle(&mut self) -> io::Result<HANDLE> {
                    if let Some(h) = self.0 {
                        return Ok(h);
                    }
                    // SAFETY: both arguments may be null (default security, unnamed job).
                    let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
                    if job.is_null() {
                        return Err(io::Error::last_os_error());
                    }
                    // SAFETY: a zeroed JOBOBJECT_EXTENDED_LIMIT_INFORMATION is a valid value
                    // (plain integers); we pass its exact size.
                    let ok = unsafe {
                        let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
                        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
                        SetInformationJobObject(
                            job,
                            JobObjectExtendedLimitInformation,
                            (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
                        )
                    };
                    if ok == 0 {
                        return Err(io::Error::last_os_error());
                    }
                    self.0 = Some(job);
                    Ok(job)
                }

                fn adopt(&mut self, child: &Child) -> io::Result<()> {
                    use std::os::windows::io::AsRawHandle;
                    let job = self.handle()?;
                    // SAFETY: `job` is a live job handle owned by this thread and the child's
                    // handle is valid while `child` is borrowed.
                    let ok = unsafe { AssignProcessToJobObject(job, child.as_raw_handle() as HANDLE) };
                    if ok == 0 {
                        return Err(io::Error::last_os_error());
                    }
                    Ok(())
                }
            }
        } else {
            /// Where there are no Job Objects, workers watch their socket (and, on Linux, a
            /// parent-death signal) instead.
            struct JobObject;

            impl JobObject {
                fn new() -> Self {
                    JobObject
                }

                fn adopt(&mut self, _child: &Child) -> io::Result<()> {
                    Ok(())
                }
            }
        }
    }

    /// Called first thing in a worker process: arranges to die with the parent (`parent_pid`)
    /// and leaves Ctrl-C to the parent, which decides whether workers stop (a terminal sends
    /// SIGINT to the whole process group; a worker killed by it would look like a crash).
    pub(crate) fn init_worker(parent_pid: u32) -> Result<(), String> {
        cfg_if::cfg_if! {
            if #[cfg(target_os = "linux")] {
                // SAFETY: prctl(PR_SET_PDEATHSIG, sig) takes plain integers.
                if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
                    return Err(format!("prctl(PR_SET_PDEATHSIG): {}", io::Error::last_os_error()));
                }
                // The parent may have died before the line above: then no signal will come.
                // SAFETY: getppid has no preconditions.
                let ppid = unsafe { libc::getppid() };
                if u32::try_from(ppid).ok() != Some(parent_pid) {
                    return Err(format!("the parent process {parent_pid} has already exited"));
                }
            } else {
                let _ = parent_pid;
            }
        }
        cfg_if::cfg_if! {
            if #[cfg(unix)] {
                // SAFETY: installing SIG_IGN for SIGINT touches no Rust state.
                unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
            } else if #[cfg(windows)] {
                // SAFETY: a null handler with TRUE makes this process ignore Ctrl-C.
                unsafe { windows_sys::Win32::System::Console::SetConsoleCtrlHandler(None, 1) };
            }
        }
        Ok(())
    }

    /// The exit code and, on Unix, the signal that ended a worker.
    pub(crate) fn exit_details(status: ExitStatus) -> (Option<i32>, Option<i32>) {
        cfg_if::cfg_if! {
            if #[cfg(unix)] {
                use std::os::unix::process::ExitStatusExt;
                (status.code(), status.signal())
            } else {
                (status.code(), None)
            }
        }
    }
}

/// The OS-specific part of [`crate::shared`]: where segments live and whether their creator
/// still runs.
pub(crate) mod shm {
    use std::path::PathBuf;

    /// A RAM-backed directory for shared-array segments: `/dev/shm` on Linux (tmpfs), the
    /// temporary directory elsewhere (the page cache keeps a mapped file's pages in memory).
    pub(crate) fn dir() -> PathBuf {
        cfg_if::cfg_if! {
            if #[cfg(target_os = "linux")] {
                let shm = PathBuf::from("/dev/shm");
                if shm.is_dir() {
                    return shm;
                }
                std::env::temp_dir()
            } else {
                std::env::temp_dir()
            }
        }
    }

    /// Whether process `pid` may still run (Unix: `kill(pid, 0)`; Windows: its exit code).
    /// Where this cannot be told, `true`: a leftover is then kept rather than a live
    /// process's segment removed.
    pub(crate) fn alive(pid: u32) -> bool {
        cfg_if::cfg_if! {
            if #[cfg(unix)] {
                let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
                if pid <= 0 {
                    return false;
                }
                // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
                let r = unsafe { libc::kill(pid, 0) };
                r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
            } else if #[cfg(windows)] {
                use windows_sys::Win32::Foundation::{CloseHandle, GetLastError, ERROR_ACCESS_DENIED, STILL_ACTIVE};
                use windows_sys::Win32::System::Threading::{
                    GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
                };
                // SAFETY: OpenProcess takes plain values and returns a handle or null.
                let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
                if handle.is_null() {
                    // No such process; one we may not query still runs.
                    // SAFETY: reads this thread's last error code.
                    return unsafe { GetLastError() } == ERROR_ACCESS_DENIED;
                }
                let mut code = 0u32;
                // SAFETY: `handle` is a process handle we own; `code` is a valid out pointer.
                let ok = unsafe { GetExitCodeProcess(handle, &mut code) };
                // SAFETY: closes the handle opened above, once.
                unsafe { CloseHandle(handle) };
                // A process that exited with code 259 (STILL_ACTIVE) looks alive: kept, not removed.
                ok == 0 || code == STILL_ACTIVE as u32
            } else {
                let _ = pid;
                true
            }
        }
    }
}
