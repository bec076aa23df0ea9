//! [`WorkerContext`]: what a running task knows about its worker.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::broadcast::BroadcastData;
use super::rng::{StreamId, TaskRng};
use super::task::BoxError;
use polycompute_core::device::Device;

/// What a task sees of its worker: the worker's id and open device, the task's index and
/// attempt, a random generator (its stream chosen by the pool seed, the submission's key and
/// the input's position: [`crate::Streams`]), the pool's shared data and per-worker state
/// kept between tasks.
pub struct WorkerContext {
    worker_id: usize,
    device: Device,
    in_process: bool,
    seed: u64,
    task_index: u64,
    attempt: u32,
    rng: TaskRng,
    broadcast: BroadcastData,
    locals: HashMap<TypeId, Box<dyn Any + Send>>,
    /// Tasks whose `init` ran here (a few names: a scan beats hashing per input).
    initialized: Vec<&'static str>,
}

impl WorkerContext {
    pub(crate) fn new(worker_id: usize, device: Device, in_process: bool, seed: u64, broadcast: BroadcastData) -> Self {
        WorkerContext {
            worker_id,
            device,
            in_process,
            seed,
            task_index: 0,
            attempt: 1,
            rng: TaskRng::new(seed, 0),
            broadcast,
            locals: HashMap::new(),
            initialized: Vec::new(),
        }
    }

    /// The MPI rank this task runs on, with its host, node-local rank and device, under an
    /// MPI launch (feature `mpi`; see [`crate::mpi_world`]); `None` otherwise.
    #[cfg(feature = "mpi")]
    pub fn mpi_rank(&self) -> Option<&'static super::mpi::MpiRank> {
        super::mpi::mpi_world().map(|w| w.me())
    }

    /// Prepares for the task numbered `index`, attempt `attempt` (from 1), which draws from
    /// the random stream `stream` (the pool chose it: see [`crate::Streams`]).
    pub(crate) fn begin(&mut self, index: u64, attempt: u32, stream: StreamId) {
        self.task_index = index;
        self.attempt = attempt;
        self.rng = TaskRng::at(stream);
    }

    pub(crate) fn is_initialized(&self, task: &'static str) -> bool {
        self.initialized.iter().any(|t| std::ptr::eq(*t, task) || *t == task)
    }

    pub(crate) fn mark_initialized(&mut self, task: &'static str) {
        if !self.is_initialized(task) {
            self.initialized.push(task);
        }
    }

    /// The worker's number in the pool (a replaced worker keeps its number).
    pub fn worker_id(&self) -> usize {
        self.worker_id
    }

    /// The worker's device, opened by the worker itself when it started.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The task's index: its number in submission order (a `map` takes a consecutive block).
    pub fn task_index(&self) -> u64 {
        self.task_index
    }

    /// 1 on the first try; more when the task is retried after its worker crashed.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The pool's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Whether this worker is a separate process (otherwise a thread of the pool's process).
    pub fn in_process_worker(&self) -> bool {
        self.in_process
    }

    /// The task's random generator, reset for every task: by default input `p` of a
    /// submission keyed `k` reads [`TaskRng::for_submission`]`(pool seed, k, p)`, where `k` is
    /// the key given to [`Pool::seeded`](crate::Pool::seeded) or else the number of
    /// submissions made on the pool before (see [`crate::Streams`]). The same task draws the
    /// same numbers on any worker, in every worker kind.
    pub fn rng(&mut self) -> &mut TaskRng {
        &mut self.rng
    }

    /// The read-only data given to the pool builder (`shared_data`), as type `S`.
    pub fn shared<S: DeserializeOwned + Send + Sync + 'static>(&mut self) -> Result<Arc<S>, BoxError> {
        self.broadcast.get()
    }

    /// Per-worker state of type `S`, kept between tasks (set it in [`super::Task::init`]).
    pub fn local<S: Any + Send>(&mut self) -> Option<&mut S> {
        self.locals.get_mut(&TypeId::of::<S>()).and_then(|b| b.downcast_mut::<S>())
    }

    /// Stores per-worker state of type `S` (replacing any earlier value of that type).
    pub fn set_local<S: Any + Send>(&mut self, value: S) {
        self.locals.insert(TypeId::of::<S>(), Box::new(value));
    }
}

impl std::fmt::Debug for WorkerContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerContext")
            .field("worker_id", &self.worker_id)
            .field("device", &self.device.id())
            .field("task_index", &self.task_index)
            .field("attempt", &self.attempt)
            .finish_non_exhaustive()
    }
}
