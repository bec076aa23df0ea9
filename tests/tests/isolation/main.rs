//! Other local users are kept out of a running pool: as root (CI), a probe switched to uid
//! `nobody` must fail to open any of the pool's shared-memory segments, to connect to its
//! worker socket and to join as a worker; a process of the same user that connects with a
//! guessed token, or an oversize frame, is dropped while the real worker still starts.
//!
//! A `harness = false` test: process workers re-execute this binary, and the worker started
//! here runs the socket probes itself, before it connects, while its parent waits on the
//! live socket. Linux only (`/dev/shm`, `/proc`, uid switching).

#[cfg(target_os = "linux")]
mod probe;

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    if let Some(code) = probe::dispatch() {
        return code;
    }
    probe::from_worker_before_it_connects();
    polycompute::worker_main(&probe::tasks());
    let args = libtest_mimic::Arguments::from_args();
    let root = probe::am_root();
    let trial = libtest_mimic::Trial::test("other_users_cannot_reach_a_running_pool", || {
        std::panic::catch_unwind(probe::other_users_cannot_reach_a_running_pool).map_err(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
                .into()
        })
    })
    // Switching to another uid needs root, as CI runs; elsewhere the case says it did not run.
    .with_ignored_flag(!root);
    if !root {
        eprintln!("isolation: not root, so the other-user probe cannot switch to `nobody`: ignored");
    }
    libtest_mimic::run(&args, vec![trial]).exit_code()
}

#[cfg(not(target_os = "linux"))]
fn main() {}
