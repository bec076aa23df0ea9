//! [`Pool`] and the state its workers share.

use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::builder::PoolBuilder;
use super::context::SharedData;
use super::error::{TaskError, TaskErrorKind};
use super::handle::{typed, CallbackSink, HandleSink, JobHandle, MapResults, MapSink};
use super::job::{Inputs, Job, JobCtl, Sink};
use super::task::{Task, Tasks};
use super::{process_worker, thread_worker, wire};
use crate::backend::BackendKind;
use crate::platform::process::Stream;
use crate::platform::{WorkerMode, WorkerPlan};

/// The pool's settings, fixed when it is built.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) seed: u64,
    pub(crate) timeout: Option<Duration>,
    pub(crate) retries: u32,
    pub(crate) max_tasks: Option<u64>,
    pub(crate) chunk: Option<usize>,
    pub(crate) progress: bool,
    pub(crate) depth: usize,
    pub(crate) worker_exe: Option<PathBuf>,
    pub(crate) start_timeout: Duration,
}

/// Counters of one worker slot.
#[derive(Default)]
pub(crate) struct SlotStats {
    pub(crate) tasks: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) restarts: AtomicU64,
    pub(crate) busy_ns: AtomicU64,
}

impl SlotStats {
    /// Counts `n` tasks that ended in an error without running to the end.
    pub(crate) fn count_failed(&self, n: u64) {
        self.tasks.fetch_add(n, Ordering::Relaxed);
        self.failed.fetch_add(n, Ordering::Relaxed);
    }
}

/// One worker's place in the pool; a replaced worker takes the same slot, with the next
/// generation.
pub(crate) struct Slot {
    pub(crate) id: usize,
    pub(crate) kind: BackendKind,
    pub(crate) ordinal: usize,
    pub(crate) device_id: String,
    pub(crate) gen: AtomicU64,
    /// The job a thread worker runs.
    pub(crate) current: Mutex<Option<Arc<JobCtl>>>,
    /// When a thread worker's current input started, in ns since the pool's epoch (0: idle).
    pub(crate) item_started: AtomicU64,
    /// Jobs whose process worker must be stopped (cancelled while running).
    pub(crate) abandoned: Mutex<Vec<Arc<JobCtl>>>,
    /// The current process worker's socket, shut down to interrupt its driver.
    pub(crate) interrupt: Mutex<Option<Stream>>,
    pub(crate) pid: AtomicU32,
    pub(crate) dead: AtomicBool,
    pub(crate) stats: SlotStats,
}

impl Slot {
    /// Wakes a process worker's driver blocked on its socket (and ends the worker, which
    /// exits when its socket closes): the driver then looks for why (shutdown, abandon).
    pub(crate) fn interrupt_driver(&self) {
        if let Some(stream) = self.interrupt.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// What workers, handles and the pool share.
pub(crate) struct Inner {
    pub(crate) tasks: Tasks,
    pub(crate) mode: WorkerMode,
    pub(crate) plan: WorkerPlan,
    pub(crate) cfg: Config,
    pub(crate) queue_tx: Sender<Job>,
    pub(crate) queue_rx: Receiver<Job>,
    stop_tx: Mutex<Option<Sender<()>>>,
    pub(crate) stop_rx: Receiver<()>,
    stopping: AtomicBool,
    /// Held while shutting down, so a second caller returns only when the first is done.
    shutdown_lock: Mutex<()>,
    next_index: AtomicU64,
    pub(crate) slots: Vec<Arc<Slot>>,
    broken: Mutex<Option<String>>,
    live: AtomicUsize,
    pub(crate) shared: SharedData,
    threads: Mutex<Vec<JoinHandle<()>>>,
    callbacks: OnceLock<Sender<Box<dyn FnOnce() + Send>>>,
    pub(crate) epoch: Instant,
}

impl Inner {
    pub(crate) fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Nanoseconds since the pool was built (never 0, which means "idle").
    pub(crate) fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64 + 1
    }

    pub(crate) fn add_thread(&self, handle: JoinHandle<()>) {
        self.threads.lock().unwrap_or_else(|p| p.into_inner()).push(handle);
    }

    /// Puts a job (back) in the queue; fails it at once if the pool cannot run it any more.
    pub(crate) fn enqueue(&self, job: Job) {
        if let Err(e) = self.queue_tx.send(job) {
            let job = e.into_inner();
            job.ctl.fail_rest(None, job.attempt, TaskErrorKind::ShutDown);
        }
        // Shutdown or the last worker's death may have drained the queue just before the
        // send: drain again so nothing waits for a worker that will never come.
        if self.stopping() {
            self.fail_queued(TaskErrorKind::ShutDown);
        } else if let Some(msg) = self.broken.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            self.fail_queued(TaskErrorKind::WorkerStart { message: msg });
        }
    }

    /// Fails every queued job with `kind`.
    pub(crate) fn fail_queued(&self, kind: TaskErrorKind) {
        while let Ok(job) = self.queue_rx.try_recv() {
            job.ctl.fail_rest(None, job.attempt, kind.clone());
        }
    }

    /// A worker slot that cannot start again; when it was the last, the pool is broken and
    /// every task fails with the reason instead of waiting for ever.
    pub(crate) fn slot_dead(&self, slot: &Slot, message: String) {
        if slot.dead.swap(true, Ordering::AcqRel) {
            return;
        }
        tracing::error!("polycompute pool: worker {} ({}) cannot start: {message}", slot.id, slot.device_id);
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            let message = format!("worker {} ({}): {message}", slot.id, slot.device_id);
            *self.broken.lock().unwrap_or_else(|p| p.into_inner()) = Some(message.clone());
            self.fail_queued(TaskErrorKind::WorkerStart { message });
        }
    }

    /// Cancels a job (see [`JobHandle::cancel`]).
    pub(crate) fn cancel(self: &Arc<Self>, ctl: &Arc<JobCtl>) {
        ctl.set_cancelled();
        let runner = ctl.runner();
        if ctl.fail_rest(None, 1, TaskErrorKind::Cancelled) == 0 {
            return;
        }
        if let Some((slot, gen)) = runner {
            self.abandon(slot, gen, ctl);
        }
    }

    /// Stops the worker running `ctl` (whose results were delivered already) and replaces it.
    pub(crate) fn abandon(self: &Arc<Self>, slot: usize, gen: u64, ctl: &Arc<JobCtl>) {
        let Some(slot) = self.slots.get(slot) else { return };
        match self.mode {
            WorkerMode::Process => {
                slot.abandoned.lock().unwrap_or_else(|p| p.into_inner()).push(ctl.clone());
                slot.interrupt_driver();
            }
            _ => thread_worker::abandon(self, slot, gen, ctl),
        }
    }

    fn callback_runner(&self) -> Sender<Box<dyn FnOnce() + Send>> {
        self.callbacks
            .get_or_init(|| {
                let (tx, rx) = crossbeam_channel::unbounded::<Box<dyn FnOnce() + Send>>();
                let spawned = std::thread::Builder::new().name("polycompute-callbacks".into()).spawn(move || {
                    for cb in rx {
                        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(cb)) {
                            tracing::error!("a pool completion callback panicked: {}", super::task::panic_message(&*p));
                        }
                    }
                });
                if let Err(e) = spawned {
                    tracing::error!("cannot start the pool's callback thread: {e}");
                }
                tx
            })
            .clone()
    }

    /// Stops every worker: queued tasks fail with `ShutDown`, process workers are stopped
    /// (killed if they do not exit at once), thread workers are joined, or left behind if
    /// a task does not return within the grace period. Returns within about a second, and
    /// not before a concurrent call has finished.
    pub(crate) fn shutdown(&self) {
        let _one_at_a_time = self.shutdown_lock.lock().unwrap_or_else(|p| p.into_inner());
        if self.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        drop(self.stop_tx.lock().unwrap_or_else(|p| p.into_inner()).take());
        for slot in &self.slots {
            slot.interrupt_driver();
        }
        self.fail_queued(TaskErrorKind::ShutDown);
        let deadline = Instant::now() + Duration::from_millis(900);
        let me = std::thread::current().id();
        loop {
            let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
            let mut i = 0;
            while i < threads.len() {
                if threads[i].is_finished() {
                    let _ = threads.swap_remove(i).join();
                } else {
                    i += 1;
                }
            }
            let waiting = threads.iter().any(|t| t.thread().id() != me);
            drop(threads);
            if !waiting || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // Thread workers stuck in a task: their results can no longer be waited for.
        for slot in &self.slots {
            let current = slot.current.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(ctl) = current {
                ctl.fail_rest(Some((slot.id, &slot.device_id)), 1, TaskErrorKind::ShutDown);
            }
        }
        let left = self.threads.lock().unwrap_or_else(|p| p.into_inner()).len();
        if left > 0 {
            tracing::warn!("polycompute pool: {left} worker thread(s) still in a task at shutdown were left behind");
        }
    }
}

/// One worker's figures, from [`Pool::workers`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WorkerInfo {
    /// The worker's number.
    pub id: usize,
    /// Its device id.
    pub device: String,
    /// Its current process id (process workers; 0 otherwise or before it started).
    pub pid: u32,
    /// Tasks it finished (results of any kind).
    pub tasks: u64,
    /// Of which failed (error, panic, crash, timeout).
    pub failed: u64,
    /// Times it was replaced (crash, timeout, cancellation, sticky fault, task limit).
    pub restarts: u64,
    /// Time spent running tasks.
    pub busy: Duration,
}

/// A pool of workers, one or more per device, running [`Task`]s from one queue (so a fast
/// GPU and a slow CPU share the work in proportion to their speed). Every submitted task
/// ends in exactly one result. Dropping the pool shuts it down.
///
/// ```no_run
/// use polycompute_core::{Pool, Task, Tasks, WorkerContext, WorkerMode};
/// struct Add;
/// impl Task for Add {
///     const NAME: &'static str = "add";
///     type Input = (i64, i64);
///     type Output = i64;
///     fn run(&self, _: &mut WorkerContext, (a, b): (i64, i64)) -> Result<i64, polycompute_core::pool::BoxError> {
///         Ok(a + b)
///     }
/// }
/// # fn main() {
/// let tasks = Tasks::new().add(Add);
/// polycompute_core::worker_main(&tasks); // first thing in main: serves when started as a worker
/// let pool = Pool::builder(&tasks).mode(WorkerMode::Thread).build().unwrap();
/// assert_eq!(pool.submit::<Add>((2, 3)).wait().unwrap(), 5);
/// let sums: Vec<i64> = pool.map::<Add>((0..10).map(|i| (i, i))).into_iter().map(Result::unwrap).collect();
/// assert_eq!(sums, (0..10).map(|i| 2 * i).collect::<Vec<_>>());
/// # }
/// ```
pub struct Pool {
    pub(crate) inner: Arc<Inner>,
}

impl Pool {
    /// Starts configuring a pool for these tasks.
    pub fn builder(tasks: &Tasks) -> PoolBuilder {
        PoolBuilder::new(tasks)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        tasks: Tasks,
        mode: WorkerMode,
        plan: WorkerPlan,
        cfg: Config,
        devices: Vec<(BackendKind, usize)>,
        per_device: usize,
        shared: SharedData,
    ) -> crate::Result<Pool> {
        let (queue_tx, queue_rx) = crossbeam_channel::unbounded();
        let (stop_tx, stop_rx) = crossbeam_channel::bounded(0);
        let mut slots = Vec::new();
        for &(kind, ordinal) in &devices {
            for _ in 0..per_device {
                slots.push(Arc::new(Slot {
                    id: slots.len(),
                    kind,
                    ordinal,
                    device_id: format!("{kind}:{ordinal}"),
                    gen: AtomicU64::new(0),
                    current: Mutex::new(None),
                    item_started: AtomicU64::new(0),
                    abandoned: Mutex::new(Vec::new()),
                    interrupt: Mutex::new(None),
                    pid: AtomicU32::new(0),
                    dead: AtomicBool::new(false),
                    stats: SlotStats::default(),
                }));
            }
        }
        let inner = Arc::new(Inner {
            tasks,
            mode,
            plan,
            cfg,
            queue_tx,
            queue_rx,
            stop_tx: Mutex::new(Some(stop_tx)),
            stop_rx,
            stopping: AtomicBool::new(false),
            shutdown_lock: Mutex::new(()),
            next_index: AtomicU64::new(0),
            live: AtomicUsize::new(slots.len()),
            slots,
            broken: Mutex::new(None),
            shared,
            threads: Mutex::new(Vec::new()),
            callbacks: OnceLock::new(),
            epoch: Instant::now(),
        });
        let pool = Pool { inner };
        let started = match mode {
            WorkerMode::Process => process_worker::start_all(&pool.inner),
            _ => thread_worker::start_all(&pool.inner),
        };
        started.map_err(|e| crate::Error::Pool(format!("cannot start worker threads: {e}")))?;
        Ok(pool)
    }

    /// The mode the workers run in (`Thread` or `Process`) and why.
    pub fn plan(&self) -> &WorkerPlan {
        &self.inner.plan
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
                device: s.device_id.clone(),
                pid: s.pid.load(Ordering::Acquire),
                tasks: s.stats.tasks.load(Ordering::Acquire),
                failed: s.stats.failed.load(Ordering::Acquire),
                restarts: s.stats.restarts.load(Ordering::Acquire),
                busy: Duration::from_nanos(s.stats.busy_ns.load(Ordering::Acquire)),
            })
            .collect()
    }

    /// Submits one task.
    pub fn submit<T: Task>(&self, input: T::Input) -> JobHandle<T> {
        let sink = Arc::new(HandleSink::default());
        let ctl = self.enqueue::<T>(vec![input], sink.clone(), 1, Arc::new(AtomicBool::new(false)));
        let ctl = ctl.into_iter().next().unwrap_or_else(|| {
            // The input was rejected before queueing (its error is already in the sink).
            JobCtl::new(sink.clone(), T::NAME, 0, 0, 1, Arc::new(AtomicBool::new(false)))
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
        let runner = self.inner.callback_runner();
        let index = self.inner.next_index.load(Ordering::Acquire);
        let wrapped = move |r| callback(typed::<T>(r, T::NAME, index));
        let sink = Arc::new(CallbackSink { callback: Mutex::new(Some(Box::new(wrapped))), runner });
        let ctls = self.enqueue::<T>(vec![input], sink, 1, Arc::new(AtomicBool::new(false)));
        ctls.first().map_or(index, |c| c.first_index)
    }

    /// Runs `T` on every input; the results come back in input order.
    pub fn map<T: Task>(&self, inputs: impl IntoIterator<Item = T::Input>) -> Vec<Result<T::Output, TaskError>> {
        let mut results = self.map_unordered::<T>(inputs);
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
        let inputs: Vec<T::Input> = inputs.into_iter().collect();
        let n = inputs.len();
        let chunk = self.inner.cfg.chunk.unwrap_or_else(|| {
            if self.inner.cfg.timeout.is_some() {
                1 // a timeout fails the rest of a batch with it: keep batches to one input
            } else {
                (n / (self.inner.slots.len().max(1) * 8)).clamp(1, 1024)
            }
        });
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
        let ctls = self.enqueue::<T>(inputs, Arc::new(MapSink(tx)), chunk, cancel.clone());
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

    /// Queues `inputs` in jobs of up to `chunk`; returns the jobs' controls.
    fn enqueue<T: Task>(
        &self,
        inputs: Vec<T::Input>,
        sink: Arc<dyn Sink>,
        chunk: usize,
        cancel: Arc<AtomicBool>,
    ) -> Vec<Arc<JobCtl>> {
        let inner = &self.inner;
        let n = inputs.len();
        let first_index = inner.next_index.fetch_add(n as u64, Ordering::AcqRel);
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
                let ctl = JobCtl::new(sink, T::NAME, first_index, 0, n, cancel);
                ctl.fail_rest(None, 1, TaskErrorKind::UnknownTask { known });
                return vec![ctl];
            }
        };
        let mut ctls = Vec::with_capacity(n.div_ceil(chunk.max(1)));
        match inner.mode {
            WorkerMode::Process => {
                // Encode each input; an input that cannot be encoded fails alone, and the
                // jobs are cut around it.
                let mut body = Vec::new();
                let mut start = 0;
                let mut count = 0;
                let flush = |body: &mut Vec<u8>, start: usize, count: usize, ctls: &mut Vec<Arc<JobCtl>>| {
                    if count == 0 {
                        return;
                    }
                    let ctl =
                        JobCtl::new(sink.clone(), T::NAME, first_index + start as u64, start, count, cancel.clone());
                    ctls.push(ctl.clone());
                    inner.enqueue(Job {
                        task: task.clone(),
                        attempt: 1,
                        inputs: Inputs::Encoded(std::mem::take(body)),
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
                    match wire::push_input(&mut body, input) {
                        Ok(()) => {
                            item_bytes = item_bytes.max(body.len() - before);
                            if count == 0 {
                                start = pos;
                            }
                            count += 1;
                            if count == chunk.max(1) {
                                flush(&mut body, start, count, &mut ctls);
                                count = 0;
                            }
                        }
                        Err(e) => {
                            flush(&mut body, start, count, &mut ctls);
                            count = 0;
                            let ctl =
                                JobCtl::new(sink.clone(), T::NAME, first_index + pos as u64, pos, 1, cancel.clone());
                            ctl.fail_rest(
                                None,
                                1,
                                TaskErrorKind::Serialization { message: format!("encoding the input: {e}") },
                            );
                            ctls.push(ctl);
                        }
                    }
                }
                flush(&mut body, start, count, &mut ctls);
            }
            _ => {
                let mut inputs = inputs.into_iter();
                let mut start = 0;
                while start < n {
                    let len = chunk.max(1).min(n - start);
                    let batch: Vec<T::Input> = inputs.by_ref().take(len).collect();
                    let ctl =
                        JobCtl::new(sink.clone(), T::NAME, first_index + start as u64, start, len, cancel.clone());
                    ctls.push(ctl.clone());
                    inner.enqueue(Job {
                        task: task.clone(),
                        attempt: 1,
                        inputs: Inputs::Local(Box::new(batch.into_iter())),
                        ctl,
                    });
                    start += len;
                }
            }
        }
        ctls
    }

    /// Stops the workers (see [`Drop`]): queued tasks fail with `ShutDown`; returns within
    /// about a second. Later submissions fail with `ShutDown` too.
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
            .field("workers", &self.inner.slots.iter().map(|s| s.device_id.as_str()).collect::<Vec<_>>())
            .finish()
    }
}
