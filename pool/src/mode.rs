//! [`WorkerMode`] and [`WorkerPlan`]: whether the pool runs thread or process workers, and
//! why.

use serde::{Deserialize, Serialize};

use crate::sys::process::parent_death;

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
    /// Worker ranks of an MPI launch (`mpirun -n 5 ./app`; feature `mpi`): rank 0 runs
    /// the program and schedules, ranks ≥ 1 work. The plan under an MPI launcher.
    Mpi,
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
    if let Some(plan) = super::kind::launched_plan() {
        return plan;
    }
    WorkerPlan {
        mode: WorkerMode::Thread,
        reason: format!(
            "{}: one thread per device shares the process's device contexts and moves values without \
             serialization; process workers (this executable re-executed, never forked; {}) isolate crashes \
             and are chosen with {WORKERS_ENV}=process or the pool builder",
            std::env::consts::OS,
            parent_death::HOW
        ),
    }
}
