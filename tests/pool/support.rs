//! Helpers shared by the cases.

use std::time::{Duration, Instant};

use polycompute::pool::PoolBuilder;
use polycompute::{Pool, WorkerMode};

use crate::tasks::pool_tasks;

/// A CPU pool builder in `mode`.
pub fn builder(mode: WorkerMode) -> PoolBuilder {
    Pool::builder(&pool_tasks()).cpu().mode(mode)
}

#[cfg(unix)]
/// Whether process `pid` still runs (a zombie counts as gone: it runs nothing).
pub fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the field after the parenthesised command name.
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next()) != Some('Z'),
        Err(_) if std::path::Path::new("/proc/self").exists() => false,
        // SAFETY: kill with signal 0 only checks whether the process exists.
        Err(_) => unsafe { libc::kill(pid as libc::pid_t, 0) == 0 },
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
/// Sends `sig` to `pid`.
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill takes plain integers.
    let rc = unsafe { libc::kill(pid as libc::pid_t, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig}) failed");
}

/// Waits until every worker of `pool` has a process id (process mode) and returns them.
pub fn worker_pids(pool: &Pool) -> Vec<u32> {
    let ok = within(Duration::from_secs(20), || pool.workers().iter().all(|w| w.pid != 0));
    assert!(ok.is_some(), "workers did not start: {:?}", pool.workers());
    pool.workers().iter().map(|w| w.pid).collect()
}
