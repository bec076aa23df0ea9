//! [`WorkerKind`]: the one seam between the pool and the kind of its workers. Everything
//! else in the pool (the queue, jobs, handles, shutdown, and the scheduling in
//! [`crate::schedule`]: the next job, timeouts, requeueing) is the same for every kind; the
//! kind is chosen once, in [`for_mode`]. A new kind (workers on other machines, say)
//! implements this trait in a folder of its own, keeping only its transport (a job to its
//! worker, results back) and its liveness (noticing a worker that died or hangs), and is
//! named there.

use std::io;
use std::sync::Arc;

use super::job::JobCtl;
use super::mode::{WorkerMode, WorkerPlan};
use super::process::ProcessWorkers;
use super::state::{PoolState, Slot};
use super::thread::ThreadWorkers;
use polycompute_core::backend::BackendKind;

/// How a job's inputs reach a worker of some kind.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Carriage {
    /// The values themselves, moved (the worker shares this process's memory).
    Moved,
    /// Their encoding (see `wire`), large ones in shared-memory segments.
    Encoded,
    /// Their encoding, whole, with every `SharedArray` written as its data: the workers
    /// may be on other hosts (MPI ranks), where no handle can be mapped.
    Sent,
}

/// A kind of worker: how its workers start, receive their inputs, are stopped early and
/// shut down. Each kind keeps its own per-slot state beside the pool's common [`Slot`]s
/// (indexed alike).
pub(crate) trait WorkerKind: Send + Sync {
    /// How inputs travel to these workers.
    fn carriage(&self) -> Carriage;

    /// With [`Carriage::Sent`]: whether some workers are on this host, where a `SharedArray`
    /// in an input travels as its handle (jobs then carry both encodings, `Inputs::Encoded`'s
    /// `near`).
    fn some_near(&self) -> bool {
        false
    }

    /// Starts a worker in every slot of `pool`, and whatever helper threads the kind needs.
    fn start(&self, pool: &Arc<PoolState>) -> io::Result<()>;

    /// Stops generation `gen` of `slot` if it still runs `ctl` (whose results were
    /// delivered already: it was cancelled) and puts a fresh worker in its place.
    fn abandon(&self, pool: &Arc<PoolState>, slot: &Slot, gen: u64, ctl: &Arc<JobCtl>);

    /// Shutdown began: wakes every worker that waits elsewhere than on the queue.
    fn wake_for_shutdown(&self);

    /// Shutdown's grace period is over: fails the jobs workers still hold.
    fn fail_stuck(&self, pool: &PoolState);

    /// A caller is about to wait for a result (`ready` says when it is there): a kind whose
    /// workers are fed by a thread of the pool may have the caller do that thread's work
    /// for a moment instead, saving the round trip two thread hops (MPI ranks do). Returns
    /// when `ready`, or after a moment; the caller then waits as usual.
    fn drive_until(&self, _pool: &PoolState, _ready: &dyn Fn() -> bool) {}

    /// The devices of the workers, one slot each, when the kind chooses them itself (MPI:
    /// each worker rank opens its node-local device), or an error saying what to do;
    /// `None` when the builder's device selection applies.
    fn own_devices(&self) -> Option<Result<Vec<(BackendKind, usize)>, String>> {
        None
    }

    /// The size over which an encoded input or output travels through shared memory, given
    /// the builder's (`PoolBuilder::spill_over`): workers that may be on other hosts get
    /// everything whole (`usize::MAX`).
    fn spill_over(&self, configured: usize) -> usize {
        configured
    }
}

/// The worker kind of `mode` (its per-slot state is made when it starts, indexed like the
/// pool's slots), or why there is none. `Auto` is resolved by the worker plan before this;
/// should it come, it means threads.
pub(crate) fn for_mode(mode: WorkerMode) -> Result<Box<dyn WorkerKind>, String> {
    Ok(match mode {
        WorkerMode::Process => Box::<ProcessWorkers>::default(),
        #[cfg(feature = "mpi")]
        WorkerMode::Mpi => Box::<super::mpi::MpiWorkers>::default(),
        #[cfg(not(feature = "mpi"))]
        WorkerMode::Mpi => {
            return Err("WorkerMode::Mpi needs polycompute's `mpi` feature and an MPI launch (mpirun or srun)".into())
        }
        WorkerMode::Thread | WorkerMode::Auto => Box::<ThreadWorkers>::default(),
    })
}

/// The plan a launcher makes for `WorkerMode::Auto` (rank 0 of an MPI launch with worker
/// ranks: `WorkerMode::Mpi`), if this process was started by one.
pub(crate) fn launched_plan() -> Option<WorkerPlan> {
    #[cfg(feature = "mpi")]
    if let Some(plan) = super::mpi::plan() {
        return Some(plan);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_workers_take_encoded_inputs_and_threads_moved_ones() {
        let carriage = |mode| for_mode(mode).map(|k| k.carriage());
        assert_eq!(carriage(WorkerMode::Process), Ok(Carriage::Encoded));
        assert_eq!(carriage(WorkerMode::Thread), Ok(Carriage::Moved));
        assert_eq!(carriage(WorkerMode::Auto), Ok(Carriage::Moved));
        #[cfg(feature = "mpi")]
        assert_eq!(carriage(WorkerMode::Mpi), Ok(Carriage::Sent), "MPI ranks get shared arrays as data");
        #[cfg(not(feature = "mpi"))]
        assert!(
            carriage(WorkerMode::Mpi).is_err_and(|e| e.contains("`mpi` feature")),
            "no MPI kind without the feature"
        );
    }
}
