//! Helpers shared by the cases.

use std::process::Command;
use std::time::{Duration, Instant};

use polycompute::pool::PoolBuilder;
use polycompute::{Pool, WorkerMode};

use crate::tasks::pool_tasks;

/// A CPU pool builder in `mode`.
pub fn builder(mode: WorkerMode) -> PoolBuilder {
    Pool::builder(&pool_tasks()).cpu().mode(mode)
}

/// `b` with `chunk_size(c)` for `Some(c)`, or the pool's automatic chunking for `None`, built.
pub fn build_chunked(b: PoolBuilder, chunk: Option<usize>) -> Pool {
    match chunk {
        Some(c) => b.chunk_size(c),
        None => b,
    }
    .build()
    .unwrap()
}

#[cfg(unix)]
/// Whether process `pid` still runs (a zombie counts as gone: it runs nothing).
pub fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the field after the parenthesised command name.
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next()) != Some('Z'),
        Err(_) if std::path::Path::new("/proc/self").exists() => false,
        Err(_) => Command::new("kill").args(["-0", &pid.to_string()]).status().is_ok_and(|s| s.success()),
    }
}

#[cfg(unix)]
/// Whether process `pid` exists at all, zombie included (Linux; elsewhere as `running`).
pub fn exists(pid: u32) -> bool {
    if std::path::Path::new("/proc/self").exists() {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    } else {
        running(pid)
    }
}

/// Whether this program runs under Wine rather than on Windows (Wine's `winecfg` is there),
/// for the known differences between the two that docs/windows.md lists.
pub fn under_wine() -> bool {
    cfg!(windows) && std::path::Path::new(r"C:\windows\system32\winecfg.exe").exists()
}

/// Polls `cond` until it holds or `limit` passes; returns how long it took, if it held.
pub fn within(limit: Duration, mut cond: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    loop {
        if cond() {
            return Some(start.elapsed());
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(unix)]
/// Sends signal `sig` (a number, as `kill -N`) to `pid`.
pub fn signal(pid: u32, sig: i32) {
    let status = Command::new("kill").args([format!("-{sig}"), pid.to_string()]).status().expect("run kill");
    assert!(status.success(), "kill -{sig} {pid} failed");
}

/// POSIX signal numbers (the same on Linux and macOS).
#[cfg(unix)]
pub mod sig {
    /// SIGINT.
    pub const INT: i32 = 2;
    /// SIGABRT.
    pub const ABRT: i32 = 6;
    /// SIGKILL.
    pub const KILL: i32 = 9;
    /// SIGSTOP.
    #[cfg(target_os = "linux")]
    pub const STOP: i32 = 19;
    /// SIGSTOP.
    #[cfg(not(target_os = "linux"))]
    pub const STOP: i32 = 17;
}

/// Waits until every worker of `pool` has a process id (process mode) and returns them.
pub fn worker_pids(pool: &Pool) -> Vec<u32> {
    let ok = within(Duration::from_secs(20), || pool.workers().iter().all(|w| w.pid != 0));
    assert!(ok.is_some(), "workers did not start: {:?}", pool.workers());
    pool.workers().iter().map(|w| w.pid).collect()
}
