//! [`Pool`]: submitting tasks and collecting their results.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::broadcast::BroadcastData;
use super::builder::PoolBuilder;
use super::error::{TaskError, TaskErrorKind};
use super::handle::{typed, CallbackSink, HandleSink, JobHandle, MapResults, MapSink};
use super::job::{Inputs, Job, JobCtl, Sink};
use super::kind::{Carriage, WorkerKind};
use super::mode::{WorkerMode, WorkerPlan};
use super::rng::{StreamId, Streams};
use super::seeded::Seeded;
use super::state::{Config, PoolState};
use super::task::{ErasedTask, Task, Tasks};
use super::wire;
use crate::shared::payload::{self, Pins};
use polycompute_core::backend::BackendKind;

/// One worker's figures, from [`Pool::workers`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WorkerInfo {
    /// The worker's number.
    pub id: usize,
    /// Its device id.
    pub device: polycompute_core::DeviceId,
    /// Its current process id: process workers only, known once the worker process has
    /// connected back (before that, and for thread workers, 0). After a replacement it is
    /// the new process's id once that one has connected.
    pub pid: u32,
    /// Tasks it finished (results of any kind).
    pub tasks: u64,
    /// Of which failed (error, panic, crash, timeout).
    pub failed: u64,
    /// Times it was replaced (crash, timeout, cancellation, sticky fault, task limit).
    pub restarts: u64,
    /// Time spent running tasks.
    pub busy: Duration,
    /// The worker is gone for good: an MPI rank that stopped answering within its lease
    /// (see `PoolBuilder::rank_lease`), or a worker that could not be started.
    pub lost: bool,
}

/// A pool of workers, one or more per device, running [`Task`]s from one queue (so a fast
/// GPU and a slow CPU share the work in proportion to their speed). Every submitted task
/// ends in exactly one result. Dropping the pool shuts it down.
///
/// ```no_run
/// use polycompute_pool::{Pool, Task, Tasks, WorkerContext, WorkerMode};
/// struct Add;
/// impl Task for Add {
///     const NAME: &'static str = "add";
///     type Input = (i64, i64);
///     type Output = i64;
///     fn run(&self, _: &mut WorkerContext, (a, b): (i64, i64)) -> Result<i64, polycompute_pool::BoxError> {
///         Ok(a + b)
///     }
/// }
/// # fn main() {
/// let tasks = Tasks::new().add(Add);
/// polycompute_pool::worker_main(&tasks); // first thing in main: serves when started as a worker
/// let pool = Pool::builder(&tasks).mode(WorkerMode::Thread).build().unwrap();
/// assert_eq!(pool.submit::<Add>((2, 3)).wait().unwrap(), 5);
/// let sums: Vec<i64> = pool.map::<Add>((0..10).map(|i| (i, i))).into_iter().map(Result::unwrap).collect();
/// assert_eq!(sums, (0..10).map(|i| 2 * i).collect::<Vec<_>>());
/// # }
/// ```
pub struct Pool {
    pub(crate) inner: Arc<PoolState>,
}

impl Pool {
    /// Starts configuring a pool for these tasks.
    pub fn builder(tasks: &Tasks) -> PoolBuilder {
        PoolBuilder::new(tasks)
    }

    pub(crate) fn start(
        tasks: Tasks,
        plan: WorkerPlan,
        cfg: Config,
        devices: Vec<(BackendKind, usize)>,
        per_device: usize,
        broadcast: BroadcastData,
        workers: Box<dyn WorkerKind>,
    ) -> polycompute_core::Result<Pool> {
        let ctrl_c = cfg.ctrl_c;
        let pool = Pool { inner: PoolState::new(tasks, plan, cfg, &devices, per_device, broadcast, workers) };
        if ctrl_c {
            super::interrupt::register(&pool.inner).map_err(polycompute_core::Error::Pool)?;
        }
        let started = pool.inner.workers.start(&pool.inner);
        started
            .map_err(|source| polycompute_core::Error::Io { context: "cannot start worker threads".into(), source })?;
        Ok(pool)
    }

    /// The mode the workers run in (`Thread` or `Process`) and why.
    pub fn plan(&self) -> &WorkerPlan {
        &self.inner.plan
    }

    /// Whether Ctrl-C shut the pool down (see `PoolBuilder::shutdown_on_ctrl_c`).
    pub fn interrupted(&self) -> bool {
        self.inner.interrupted.load(Ordering::Acquire)
    }

    /// The mode the workers run in: `Thread` or `Process`.
    pub fn mode(&self) -> WorkerMode {
        self.inner.mode
    }

    /// Each worker's device and figures.
    pub fn workers(&self) -> Vec<WorkerInfo> {
        self.inner
            .slots
            .iter()
            .map(|s| WorkerInfo {
                id: s.id,
                device: s.device_id,
                pid: s.pid.load(Ordering::Acquire),
                tasks: s.stats.tasks.load(Ordering::Acquire),
                failed: s.stats.failed.load(Ordering::Acquire),
                restarts: s.stats.restarts.load(Ordering::Acquire),
                busy: Duration::from_nanos(s.stats.busy_ns.load(Ordering::Acquire)),
                lost: s.dead.load(Ordering::Acquire),
            })
            .collect()
    }

    /// Submits one task.
    pub fn submit<T: Task>(&self, input: T::Input) -> JobHandle<T> {
        self.submit_keyed(None, input)
    }

    pub(crate) fn submit_keyed<T: Task>(&self, key: Option<u64>, input: T::Input) -> JobHandle<T> {
        let sink = Arc::new(HandleSink::default());
        let ctl = self.enqueue::<T>(key, vec![input], sink.clone(), 1, Arc::new(AtomicBool::new(false)));
        let ctl = ctl.into_iter().next().unwrap_or_else(|| {
            // The input was rejected before queueing (its error is already in the sink).
            JobCtl::new(sink.clone(), T::NAME, 0, 0, 1, Arc::new(AtomicBool::new(false)), StreamId::default())
        });
        JobHandle { sink, ctl, pool: Arc::downgrade(&self.inner), taken: false, _task: PhantomData }
    }

    /// Submits one task whose result goes to `callback`, run on the pool's callback thread
    /// (not the caller's, not a worker's). Returns the task's index.
    pub fn submit_with<T: Task>(
        &self,
        input: T::Input,
        callback: impl FnOnce(Result<T::Output, TaskError>) + Send + 'static,
    ) -> u64 {
        self.submit_with_keyed::<T>(None, input, callback)
    }

    pub(crate) fn submit_with_keyed<T: Task>(
        &self,
        key: Option<u64>,
        input: T::Input,
        callback: impl FnOnce(Result<T::Output, TaskError>) + Send + 'static,
    ) -> u64 {
        let runner = self.inner.callback_runner();
        let index = self.inner.next_index.load(Ordering::Acquire);
        let wrapped = move |r| callback(typed::<T>(r, T::NAME, index));
        let sink = Arc::new(CallbackSink { callback: Mutex::new(Some(Box::new(wrapped))), runner });
        let ctls = self.enqueue::<T>(key, vec![input], sink, 1, Arc::new(AtomicBool::new(false)));
        ctls.first().map_or(index, |c| c.first_index)
    }

    /// Runs `T` on every input; the results come back in input order.
    pub fn map<T: Task>(&self, inputs: impl IntoIterator<Item = T::Input>) -> Vec<Result<T::Output, TaskError>> {
        self.map_keyed::<T>(None, inputs)
    }

    pub(crate) fn map_keyed<T: Task>(
        &self,
        key: Option<u64>,
        inputs: impl IntoIterator<Item = T::Input>,
    ) -> Vec<Result<T::Output, TaskError>> {
        let mut results = self.map_unordered_keyed::<T>(key, inputs);
        let mut out: Vec<Option<Result<T::Output, TaskError>>> = (0..results.remaining()).map(|_| None).collect();
        for (pos, r) in &mut results {
            out[pos] = Some(r);
        }
        let first = results.first_index;
        out.into_iter()
            .enumerate()
            .map(|(pos, r)| {
                r.unwrap_or_else(|| {
                    Err(TaskError {
                        task: T::NAME.into(),
                        index: first + pos as u64,
                        worker: None,
                        device: None,
                        attempts: 1,
                        kind: TaskErrorKind::ShutDown,
                    })
                })
            })
            .collect()
    }

    /// Runs `T` on every input, yielding `(position, result)` as tasks finish. Small tasks
    /// are batched (see `PoolBuilder::chunk_size`). Dropping the iterator early cancels the
    /// tasks that have not started.
    pub fn map_unordered<T: Task>(&self, inputs: impl IntoIterator<Item = T::Input>) -> MapResults<T> {
        self.map_unordered_keyed::<T>(None, inputs)
    }

    /// Submissions whose tasks' random streams ([`WorkerContext::rng`]) are keyed by `key`
    /// instead of by the number of submissions made before: the same inputs under the same
    /// pool seed and key draw the same numbers whatever ran on the pool before, on every
    /// worker kind. Input `p` of such a submission draws
    /// [`TaskRng::for_submission`]`(pool seed, key, p)`.
    ///
    /// [`WorkerContext::rng`]: crate::WorkerContext::rng
    /// [`TaskRng::for_submission`]: crate::TaskRng::for_submission
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// use polycompute_pool::{BoxError, Pool, Task, Tasks, WorkerContext, WorkerMode};
    ///
    /// struct Roll;
    /// impl Task for Roll {
    ///     const NAME: &'static str = "roll";
    ///     type Input = ();
    ///     type Output = u64;
    ///     fn run(&self, ctx: &mut WorkerContext, _: ()) -> Result<u64, BoxError> {
    ///         Ok(ctx.rng().below(1000))
    ///     }
    /// }
    ///
    /// let tasks = Tasks::new().add(Roll);
    /// let pool = Pool::builder(&tasks).mode(WorkerMode::Thread).seed(7).build().unwrap();
    /// let first: Vec<u64> = pool.seeded(1).map::<Roll>(vec![(); 4]).into_iter().map(Result::unwrap).collect();
    /// pool.map::<Roll>(vec![(); 3]); // other work in between
    /// let again: Vec<u64> = pool.seeded(1).map::<Roll>(vec![(); 4]).into_iter().map(Result::unwrap).collect();
    /// assert_eq!(first, again);
    /// ```
    pub fn seeded(&self, key: u64) -> Seeded<'_> {
        Seeded { pool: self, key }
    }

    pub(crate) fn map_unordered_keyed<T: Task>(
        &self,
        key: Option<u64>,
        inputs: impl IntoIterator<Item = T::Input>,
    ) -> MapResults<T> {
        let inputs: Vec<T::Input> = inputs.into_iter().collect();
        let n = inputs.len();
        // Timeouts, crashes and results are per input inside a batch too, so a timeout
        // does not change the batching.
        let chunk = self.inner.cfg.chunk.unwrap_or_else(|| (n / (self.inner.slots.len().max(1) * 8)).clamp(1, 1024));
        let (tx, rx) = crossbeam_channel::unbounded();
        let cancel = Arc::new(AtomicBool::new(false));
        let first_index = self.inner.next_index.load(Ordering::Acquire);
        let progress = (self.inner.cfg.progress && n > 0).then(|| {
            let bar = indicatif::ProgressBar::new(n as u64);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{spinner} {msg} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
            {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(T::NAME);
            bar
        });
        let ctls = self.enqueue::<T>(key, inputs, Arc::new(MapSink(tx)), chunk, cancel.clone());
        MapResults {
            rx,
            bunch: Vec::new().into_iter(),
            seen: vec![false; n],
            remaining: n,
            first_index: ctls.first().map_or(first_index, |c| c.first_index),
            cancel,
            progress,
            _task: PhantomData,
        }
    }

    /// Queues `inputs` in jobs of up to `chunk`, as one submission whose random streams are
    /// keyed by `key` (else by the submission's number); returns the jobs' controls.
    fn enqueue<T: Task>(
        &self,
        key: Option<u64>,
        inputs: Vec<T::Input>,
        sink: Arc<dyn Sink>,
        chunk: usize,
        cancel: Arc<AtomicBool>,
    ) -> Vec<Arc<JobCtl>> {
        let inner = &self.inner;
        let n = inputs.len();
        let first_index = inner.next_index.fetch_add(n as u64, Ordering::AcqRel);
        let submission = inner.next_submission.fetch_add(1, Ordering::AcqRel);
        let seed = inner.cfg.seed;
        // The stream of the submission's input 0; input p reads the p-th after it.
        let stream = match (key, inner.cfg.streams) {
            (Some(key), _) => StreamId::per_submission(seed, key, 0),
            (None, Streams::PerSubmission) => StreamId::per_submission(seed, submission, 0),
            (None, Streams::ByTaskIndex) => StreamId::by_task_index(seed, first_index),
        };
        let task = match inner.tasks.get(T::NAME) {
            Some(t) if t.task_type() == std::any::TypeId::of::<T>() => t.clone(),
            found => {
                let mut known = inner.tasks.known();
                if found.is_some() {
                    known.push(format!(
                        "(the task registered as {} is another type than {})",
                        T::NAME,
                        std::any::type_name::<T>()
                    ));
                }
                let ctl = JobCtl::new(sink, T::NAME, first_index, 0, n, cancel, stream);
                ctl.fail_rest(None, 1, TaskErrorKind::UnknownTask { known });
                return vec![ctl];
            }
        };
        if let Some(journal) = &inner.cfg.journal {
            return self.enqueue_journaled::<T>(
                journal.clone(),
                inputs,
                Placement { task, sink, first_index, first_pos: 0, chunk, cancel, stream },
            );
        }
        self.enqueue_placed::<T>(
            inputs,
            Placement { task, sink, first_index, first_pos: 0, chunk: chunk.max(1), cancel, stream },
        )
    }

    fn enqueue_placed<T: Task>(&self, inputs: Vec<T::Input>, place: Placement) -> Vec<Arc<JobCtl>> {
        match self.inner.workers.carriage() {
            Carriage::Moved => self.enqueue_moved::<T>(inputs, place),
            Carriage::Encoded => self.enqueue_encoded::<T>(inputs, place, false),
            Carriage::Sent => {
                let near = self.inner.workers.some_near();
                crate::shared::carry::as_data(|| self.enqueue_encoded::<T>(inputs, place, near))
            }
        }
    }

    /// With a journal: the inputs it holds a result for are answered from it at once; the
    /// runs of the others are queued, their results recorded as they come.
    fn enqueue_journaled<T: Task>(
        &self,
        journal: Arc<super::journal::Journal>,
        inputs: Vec<T::Input>,
        place: Placement,
    ) -> Vec<Arc<JobCtl>> {
        let Placement { task, sink, first_index, chunk, cancel, stream, .. } = place;
        // Digests of the inputs' data: a SharedArray counts by its elements, not by the name of
        // its segment, which differs on every run.
        let digests: Vec<u64> = crate::shared::carry::as_data(|| {
            inputs.iter().map(|i| postcard::to_allocvec(i).map_or(0, |b| super::journal::fnv(&b))).collect()
        });
        let recording: Arc<dyn Sink> = Arc::new(super::journal::JournalSink {
            inner: sink.clone(),
            journal: journal.clone(),
            task: task.clone(),
            first_index,
            inputs: digests.clone(),
        });
        let mut ctls = Vec::new();
        let mut run: Vec<T::Input> = Vec::new();
        let mut run_start = 0;
        for (pos, input) in inputs.into_iter().enumerate() {
            let index = first_index + pos as u64;
            match journal.replay(&*task, index, digests[pos]) {
                Some(result) => {
                    if !run.is_empty() {
                        let place = Placement {
                            task: task.clone(),
                            sink: recording.clone(),
                            first_index: first_index + run_start as u64,
                            first_pos: run_start,
                            chunk: chunk.max(1),
                            cancel: cancel.clone(),
                            stream,
                        };
                        ctls.extend(self.enqueue_placed::<T>(std::mem::take(&mut run), place));
                    }
                    let ctl =
                        JobCtl::new(sink.clone(), T::NAME, index, pos, 1, cancel.clone(), stream.offset(pos as u64));
                    ctl.deliver_from(0, vec![Some(result)]);
                    ctls.push(ctl);
                }
                None => {
                    if run.is_empty() {
                        run_start = pos;
                    }
                    run.push(input);
                }
            }
        }
        if !run.is_empty() {
            let place = Placement {
                task,
                sink: recording,
                first_index: first_index + run_start as u64,
                first_pos: run_start,
                chunk: chunk.max(1),
                cancel,
                stream,
            };
            ctls.extend(self.enqueue_placed::<T>(run, place));
        }
        ctls
    }

    /// Queues values to be moved to the workers: jobs of `chunk` inputs.
    fn enqueue_moved<T: Task>(&self, inputs: Vec<T::Input>, place: Placement) -> Vec<Arc<JobCtl>> {
        let Placement { task, sink, first_index, first_pos, chunk, cancel, stream } = place;
        let inner = &self.inner;
        let n = inputs.len();
        let mut ctls = Vec::with_capacity(n.div_ceil(chunk));
        let mut inputs = inputs.into_iter();
        let mut start = 0;
        while start < n {
            let len = chunk.max(1).min(n - start);
            let batch: Vec<T::Input> = inputs.by_ref().take(len).collect();
            let pos = first_pos + start;
            let ctl = JobCtl::new(
                sink.clone(),
                T::NAME,
                first_index + start as u64,
                pos,
                len,
                cancel.clone(),
                stream.offset(pos as u64),
            );
            ctls.push(ctl.clone());
            inner.enqueue(Job {
                task: task.clone(),
                attempt: 1,
                inputs: Inputs::Local(Box::new(batch.into_iter())),
                ctl,
            });
            start += len;
        }
        ctls
    }

    /// Queues encoded inputs: each input is encoded; one that cannot be fails alone, and the
    /// jobs are cut around it.
    /// `near`: also encode each job whose inputs name a `SharedArray` with the arrays as
    /// handles, for the workers on this host (`Inputs::Encoded`'s `near`).
    fn enqueue_encoded<T: Task>(&self, inputs: Vec<T::Input>, place: Placement, near: bool) -> Vec<Arc<JobCtl>> {
        let Placement { task, sink, first_index, first_pos, chunk, cancel, stream } = place;
        let inner = &self.inner;
        let n = inputs.len();
        let mut ctls = Vec::with_capacity(n.div_ceil(chunk));
        let mut body = Vec::new();
        let mut start = 0;
        let mut count = 0;
        let mut pins = Pins::default();
        let mut near_body: Option<Vec<u8>> = None;
        let flush = |body: &mut Vec<u8>,
                     pins: &mut Pins,
                     near_body: &mut Option<Vec<u8>>,
                     start: usize,
                     count: usize,
                     ctls: &mut Vec<Arc<JobCtl>>| {
            let near = near_body.take();
            if count == 0 {
                return;
            }
            let ctl = JobCtl::new(
                sink.clone(),
                T::NAME,
                first_index + start as u64,
                first_pos + start,
                count,
                cancel.clone(),
                stream.offset((first_pos + start) as u64),
            );
            ctls.push(ctl.clone());
            inner.enqueue(Job {
                task: task.clone(),
                attempt: 1,
                inputs: Inputs::Encoded { body: std::mem::take(body), pins: std::mem::take(pins), near },
                ctl,
            });
        };
        let mut item_bytes = 16;
        for (pos, input) in inputs.iter().enumerate() {
            if count == 0 {
                // Room for a whole job, sized after the inputs seen so far.
                body.reserve(item_bytes * chunk.max(1).min(n - pos));
            }
            let before = body.len();
            // The shared arrays the input names stay alive until its result is back.
            let limit = inner.cfg.spill_over;
            let (pushed, named) = payload::pin_while(|| wire::push_input(&mut body, input, limit));
            match pushed {
                Ok(moved_out) => {
                    if near && (!named.is_empty() || near_body.is_some()) {
                        // The items so far (none named a shared array) are the same in both.
                        let handles = near_body.get_or_insert_with(|| body[..before].to_vec());
                        let again = !named.is_empty()
                            && crate::shared::carry::as_handles(|| wire::push_input(handles, input, limit)).is_ok();
                        if !again {
                            handles.extend_from_slice(&body[before..]);
                        }
                    }
                    pins.extend(named);
                    pins.extend(moved_out);
                    item_bytes = item_bytes.max(body.len() - before);
                    if count == 0 {
                        start = pos;
                    }
                    count += 1;
                    if count == chunk.max(1) {
                        flush(&mut body, &mut pins, &mut near_body, start, count, &mut ctls);
                        count = 0;
                    }
                }
                Err(e) => {
                    flush(&mut body, &mut pins, &mut near_body, start, count, &mut ctls);
                    count = 0;
                    let ctl = JobCtl::new(
                        sink.clone(),
                        T::NAME,
                        first_index + pos as u64,
                        first_pos + pos,
                        1,
                        cancel.clone(),
                        stream.offset((first_pos + pos) as u64),
                    );
                    ctl.fail_rest(
                        None,
                        1,
                        TaskErrorKind::Serialization { message: format!("encoding the input: {e}") },
                    );
                    ctls.push(ctl);
                }
            }
        }
        flush(&mut body, &mut pins, &mut near_body, start, count, &mut ctls);
        ctls
    }

    /// Stops the workers (see [`Drop`]): queued tasks fail with `ShutDown`; returns within
    /// about a second. Later submissions fail with `ShutDown` too.
    ///
    /// Every result that finished before the shutdown is kept, inside a batch too; only the
    /// tasks that had not finished end as `ShutDown` (a thread worker's running task gets
    /// half a second to finish; a process worker's is stopped with its process).
    pub fn shutdown(&self) {
        self.inner.shutdown();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.inner.shutdown();
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("mode", &self.inner.mode)
            .field("workers", &self.inner.slots.iter().map(|s| s.device_id.to_string()).collect::<Vec<_>>())
            .finish()
    }
}

/// Where a submission's jobs go: what [`Pool::enqueue`] hands to the per-carriage halves.
struct Placement {
    task: Arc<dyn ErasedTask>,
    sink: Arc<dyn Sink>,
    first_index: u64,
    /// Position in its submission of the first input.
    first_pos: usize,
    /// Inputs per job, at least 1.
    chunk: usize,
    cancel: Arc<AtomicBool>,
    /// The random stream of the submission's input 0 (not of this placement's first input).
    stream: StreamId,
}
