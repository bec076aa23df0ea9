//! MPI worker ranks (feature `mpi`): the pool's third kind of worker, in the model of
//! mpi4py.futures. The same program runs on every rank (`mpirun -n 5 ./app`,
//! `srun -n 8 --gpus-per-task=1 ./app`); [`worker_main`] makes ranks ≥ 1 worker ranks that
//! serve tasks and exit when rank 0's program ends, and rank 0 returns to run the program,
//! its [`crate::Pool`] using the worker ranks (plan mode [`WorkerMode::Mpi`]).
//! Launched without an MPI launcher (a singleton), nothing is initialized and the pool runs
//! its local plan as before.
//!
//! * `launch` — detecting a launcher, `MPI_Init`, each rank's host, node-local rank and device;
//! * `device` — the node-local device rule;
//! * `worker` — a worker rank's serving loop;
//! * `comm` — rank 0's one communication thread: a dynamic work queue fed to the ranks;
//! * `poll` — the MPI calls both sides poll with (none waits inside MPI);
//! * `idle` — how the polling loops of both sides wait (yield, then sleep a little).
//!
//! Tasks travel in the process workers' wire encoding (postcard), whole (never through
//! shared memory: ranks may be on other nodes). A [`crate::shared::SharedArray`] in an input,
//! an output or the pool's shared data travels as its data (dtype, shape, elements), not as
//! the handle a process worker maps: rank 0 encodes inputs that way, and a worker rank its
//! results; the receiver gets a shared array of its own holding a copy (a fresh segment in
//! its RAM-backed directory, removed when it drops the array). So a worker rank reads a
//! shared input as usual, but what it writes into one stays on its rank: return results.

use std::io;
use std::sync::Arc;

use super::job::JobCtl;
use super::kind::{Carriage, WorkerKind};
use super::mode::{WorkerMode, WorkerPlan};
use super::state::{PoolState, Slot};

mod comm;
mod device;
mod idle;
mod launch;
mod poll;
mod timeout;
mod worker;

pub use launch::{exit_status_on_lost_ranks, mpi_lost_ranks, mpi_world, MpiRank, MpiWorld};

/// Message tags between rank 0 and the worker ranks.
pub(crate) mod tag {
    /// Rank 0 → worker: a pool's setup (the wire's `Setup` frame).
    pub(crate) const SETUP: i32 = 1;
    /// Rank 0 → worker: a job frame.
    pub(crate) const JOB: i32 = 2;
    /// Rank 0 → worker: the pool stopped; wait for the next setup.
    pub(crate) const STOP: i32 = 3;
    /// Rank 0 → worker: the program ends; finalize and exit.
    pub(crate) const EXIT: i32 = 4;
    /// Rank 0 → worker: an input timed out; every job up to the one numbered in the body
    /// (u64, little-endian) was queued again elsewhere, so the rank skips what is left of
    /// them (`worker::Skip`).
    pub(crate) const SKIP: i32 = 5;
    /// Worker → rank 0: still alive (sent every `HEARTBEAT_EVERY` while serving a pool), with
    /// the input that runs and for how long (`worker::heartbeat_body`).
    pub(crate) const HEARTBEAT: i32 = 13;
    /// Worker → rank 0: `Ready` or `StartFailed` (the wire's frame).
    pub(crate) const READY: i32 = 10;
    /// Worker → rank 0: a results frame.
    pub(crate) const RESULTS: i32 = 11;
    /// Worker → rank 0: the stop was seen; nothing more comes from this pool.
    pub(crate) const STOPPED: i32 = 12;
}

/// How often a worker rank serving a pool tells rank 0 it is alive, also while it runs a
/// long task: rank 0 counts a rank silent for longer than its lease as lost.
pub(crate) const HEARTBEAT_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// How long a worker rank still busy in a task may go on after rank 0's program ended (its
/// exit message waits): then the rank's heartbeat thread ends the process, so that every rank
/// exits within this (plus one heartbeat period and the finalize bound) of rank 0's end.
pub(crate) const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Call first thing in `main` (see [`crate::worker_main`]): under an MPI launcher,
/// worker ranks serve tasks here and exit, never returning; rank 0 and singletons return.
pub fn worker_main(tasks: &super::task::Tasks) {
    launch::start(tasks);
    super::process::worker_main(tasks);
}

/// The MPI plan, when this is rank 0 of a launch with worker ranks.
pub(crate) fn plan() -> Option<WorkerPlan> {
    let world = mpi_world()?;
    (world.size > 1 && world.rank == 0).then(|| WorkerPlan {
        mode: WorkerMode::Mpi,
        reason: format!(
            "launched by MPI with {} ranks on {} host(s): ranks 1..{} are worker ranks, rank 0 schedules",
            world.size,
            world.hosts().len(),
            world.size - 1
        ),
    })
}

/// The devices of the worker ranks, in rank order (slot `i` is rank `i + 1`); an error
/// saying what to do when there are none.
pub(crate) fn worker_devices() -> Result<Vec<(polycompute_core::backend::BackendKind, usize)>, String> {
    let world = mpi_world().ok_or("WorkerMode::Mpi needs an MPI launch: run the program with mpirun or srun")?;
    if world.rank != 0 || world.size < 2 {
        return Err("WorkerMode::Mpi needs at least 2 ranks (rank 0 schedules, the others work): mpirun -n 3".into());
    }
    Ok(world.ranks[1..].iter().map(|r| (r.device.kind, r.device.ordinal)).collect())
}

/// The MPI [`WorkerKind`]: one slot per worker rank, fed by one communication thread (and
/// by callers waiting for a result, see `comm::drive_until`).
#[derive(Default)]
pub(crate) struct MpiWorkers {
    shared: Arc<comm::Shared>,
}

impl WorkerKind for MpiWorkers {
    fn carriage(&self) -> Carriage {
        Carriage::Sent
    }

    fn some_near(&self) -> bool {
        launch::mpi_world().is_some_and(|w| (1..w.size).any(|r| w.beside_root(r)))
    }

    fn start(&self, pool: &Arc<PoolState>) -> io::Result<()> {
        let (p, shared) = (pool.clone(), self.shared.clone());
        let h = std::thread::Builder::new().name("polycompute-mpi".into()).spawn(move || comm::run(p, shared))?;
        pool.add_thread(h);
        Ok(())
    }

    /// A rank cannot be stopped alone: the cancelled job's results were delivered, and
    /// whatever the rank sends back for it is discarded by the claim protocol.
    fn abandon(&self, _pool: &Arc<PoolState>, _slot: &Slot, _gen: u64, _ctl: &Arc<JobCtl>) {}

    /// The communication thread takes a stop from the queue.
    fn wake_for_shutdown(&self) {}

    /// The communication thread fails its own jobs in flight when it stops.
    fn fail_stuck(&self, _pool: &PoolState) {}

    fn drive_until(&self, pool: &PoolState, ready: &dyn Fn() -> bool) {
        comm::drive_until(&self.shared, pool, ready);
    }

    /// One slot per worker rank, on the device the rank chose (slot `i` is rank `i + 1`).
    fn own_devices(&self) -> Option<Result<Vec<(polycompute_core::backend::BackendKind, usize)>, String>> {
        Some(worker_devices())
    }

    /// Ranks may be on other hosts: inputs and outputs travel whole, never through shared
    /// memory.
    fn spill_over(&self, _configured: usize) -> usize {
        usize::MAX
    }
}
