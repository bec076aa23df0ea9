//! [`PoolState`]: what a pool's workers, handles and the pool itself share — settings,
//! worker slots, the queue, the stop signal, and shutdown. (Not to be confused with
//! [`crate::shared`], arrays in shared memory, nor with [`super::broadcast`], the data a
//! pool hands every worker.)

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::broadcast::BroadcastData;
use super::error::TaskErrorKind;
use super::job::{Job, JobCtl};
use super::kind::WorkerKind;
use super::mode::{WorkerMode, WorkerPlan};
use super::task::Tasks;
use polycompute_core::backend::BackendKind;
use polycompute_core::sync::LockUnpoisoned;

/// What the queue carries.
pub(crate) enum Work {
    /// A job to run.
    Job(Job),
    /// The pool shuts down: the worker that takes this stops.
    Stop,
}

/// The pool's settings, fixed when it is built.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) seed: u64,
    /// How a task's random stream is chosen (`PoolBuilder::streams`).
    pub(crate) streams: crate::rng::Streams,
    pub(crate) timeout: Option<Duration>,
    pub(crate) retries: u32,
    pub(crate) max_tasks: Option<u64>,
    pub(crate) chunk: Option<usize>,
    /// Encoded inputs and outputs larger than this travel through shared memory.
    pub(crate) spill_over: usize,
    pub(crate) progress: bool,
    pub(crate) ctrl_c: bool,
    pub(crate) depth: usize,
    pub(crate) worker_exe: Option<PathBuf>,
    pub(crate) start_timeout: Duration,
    /// Send a task its device refused (`Error::Unsupported`) to the pool's other devices.
    pub(crate) reroute: bool,
    /// MPI worker ranks: how long a rank may stay silent before it counts as lost.
    pub(crate) rank_lease: Duration,
    /// The result journal (`PoolBuilder::journal`).
    pub(crate) journal: Option<Arc<super::journal::Journal>>,
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

/// One worker's place in the pool, whatever its kind; a replaced worker takes the same
/// slot, with the next generation. (Each kind keeps its own per-slot state beside these:
/// see [`WorkerKind`].)
pub(crate) struct Slot {
    pub(crate) id: usize,
    pub(crate) kind: BackendKind,
    pub(crate) ordinal: usize,
    pub(crate) device_id: polycompute_core::DeviceId,
    pub(crate) gen: AtomicU64,
    /// The worker's process id (process workers; 0 otherwise or before it started).
    pub(crate) pid: AtomicU32,
    pub(crate) dead: AtomicBool,
    pub(crate) stats: SlotStats,
}

/// What workers, handles and the pool share.
pub(crate) struct PoolState {
    pub(crate) tasks: Tasks,
    pub(crate) mode: WorkerMode,
    /// The kind of the workers: everything that differs between thread and process workers.
    pub(crate) workers: Box<dyn WorkerKind>,
    pub(crate) plan: WorkerPlan,
    pub(crate) cfg: Config,
    pub(crate) queue_tx: Sender<Work>,
    pub(crate) queue_rx: Receiver<Work>,
    stop_tx: Mutex<Option<Sender<()>>>,
    pub(crate) stop_rx: Receiver<()>,
    stopping: AtomicBool,
    /// Held while shutting down, so a second caller returns only when the first is done.
    shutdown_lock: Mutex<()>,
    pub(crate) next_index: AtomicU64,
    /// Submissions made so far: the default key of the next one's random streams.
    pub(crate) next_submission: AtomicU64,
    pub(crate) slots: Vec<Arc<Slot>>,
    broken: Mutex<Option<String>>,
    live: AtomicUsize,
    pub(crate) broadcast: BroadcastData,
    threads: Mutex<Vec<JoinHandle<()>>>,
    callbacks: OnceLock<Sender<Box<dyn FnOnce() + Send>>>,
    pub(crate) epoch: Instant,
    /// Set when Ctrl-C shut the pool down.
    pub(crate) interrupted: AtomicBool,
    /// Per task name, the devices that refused it (see [`PoolState::refused`]) and the last
    /// refusal's message.
    refusals: Mutex<HashMap<&'static str, (Vec<polycompute_core::DeviceId>, String)>>,
    /// Whether `refusals` holds anything (read by every worker for every job).
    any_refusal: AtomicBool,
}

/// What becomes of a task its device refused.
pub(crate) enum Refusal {
    /// Another device of the pool may run it: queue it again.
    Reroute,
    /// No device can (or rerouting is off): it ends with `TaskErrorKind::Unsupported`.
    Final(TaskErrorKind),
}

impl PoolState {
    pub(crate) fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Nanoseconds since the pool was built (never 0, which means "idle").
    pub(crate) fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64 + 1
    }

    pub(crate) fn add_thread(&self, handle: JoinHandle<()>) {
        self.threads.lock_unpoisoned().push(handle);
    }

    /// Puts a job (back) in the queue; fails it at once if the pool cannot run it any more.
    pub(crate) fn enqueue(&self, job: Job) {
        if let Err(e) = self.queue_tx.send(Work::Job(job)) {
            if let Work::Job(job) = e.into_inner() {
                job.ctl.fail_rest(None, job.attempt, TaskErrorKind::ShutDown);
            }
        }
        // Shutdown or the last worker's death may have drained the queue just before the
        // send: drain again so nothing waits for a worker that will never come.
        if self.stopping() {
            self.fail_queued(TaskErrorKind::ShutDown);
        } else if let Some(msg) = self.broken.lock_unpoisoned().clone() {
            self.fail_queued(TaskErrorKind::WorkerStart { message: msg });
        }
    }

    /// Fails every queued job with `kind` (stop signals stay queued).
    pub(crate) fn fail_queued(&self, kind: TaskErrorKind) {
        let mut stops = 0;
        while let Ok(work) = self.queue_rx.try_recv() {
            match work {
                Work::Job(job) => {
                    job.ctl.fail_rest(None, job.attempt, kind.clone());
                }
                Work::Stop => stops += 1,
            }
        }
        for _ in 0..stops {
            let _ = self.queue_tx.send(Work::Stop);
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
            *self.broken.lock_unpoisoned() = Some(message.clone());
            self.fail_queued(TaskErrorKind::WorkerStart { message });
        }
    }

    /// Whether `device` refused task `task` before: its workers leave such jobs to others.
    pub(crate) fn refuses(&self, task: &str, device: polycompute_core::DeviceId) -> bool {
        self.any_refusal.load(Ordering::Acquire)
            && self.refusals.lock_unpoisoned().get(task).is_some_and(|(tried, _)| tried.contains(&device))
    }

    /// Whether more than one device runs workers here (otherwise nothing can be rerouted).
    pub(crate) fn can_reroute(&self) -> bool {
        self.cfg.reroute && self.slots.iter().any(|s| s.device_id != self.slots[0].device_id)
    }

    /// `device` refused task `task` with `message`: remembered (later tasks of that name go
    /// to other devices from the start), and the task is rerouted while some live device of
    /// the pool has not refused it.
    pub(crate) fn refused(&self, task: &'static str, device: polycompute_core::DeviceId, message: String) -> Refusal {
        if !self.cfg.reroute {
            return Refusal::Final(TaskErrorKind::Unsupported { message, tried: vec![device] });
        }
        let mut refusals = self.refusals.lock_unpoisoned();
        let (tried, last) = refusals.entry(task).or_default();
        if !tried.contains(&device) {
            tried.push(device);
            tracing::debug!("polycompute pool: {device} cannot run task {task}; rerouting it: {message}");
        }
        *last = message;
        self.any_refusal.store(true, Ordering::Release);
        let open = self.slots.iter().any(|s| !s.dead.load(Ordering::Acquire) && !tried.contains(&s.device_id));
        if open {
            Refusal::Reroute
        } else {
            Refusal::Final(TaskErrorKind::Unsupported { message: last.clone(), tried: tried.clone() })
        }
    }

    /// A worker on `device` took a job whose task that device refused before: the job goes
    /// back to the queue for another device, or fails when none is left. Returns whether it
    /// was queued again (the worker then waits a moment before it looks again, so that it
    /// does not spin on jobs that only others can take).
    pub(crate) fn bounce(&self, job: Job) -> bool {
        let verdict = {
            let refusals = self.refusals.lock_unpoisoned();
            let Some((tried, last)) = refusals.get(job.task.name()) else {
                drop(refusals);
                self.enqueue(job);
                return true;
            };
            let open = self.slots.iter().any(|s| !s.dead.load(Ordering::Acquire) && !tried.contains(&s.device_id));
            (!open).then(|| TaskErrorKind::Unsupported { message: last.clone(), tried: tried.clone() })
        };
        match verdict {
            Some(kind) => {
                job.ctl.fail_rest(None, job.attempt, kind);
                false
            }
            None => {
                self.enqueue(job);
                true
            }
        }
    }

    /// Cancels a job (see [`crate::JobHandle::cancel`]).
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
        self.workers.abandon(self, slot, gen, ctl);
    }

    pub(crate) fn callback_runner(&self) -> Sender<Box<dyn FnOnce() + Send>> {
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
    /// a task does not return within the half-second grace period. Returns well within a
    /// second, and not before a concurrent call has finished.
    pub(crate) fn shutdown(&self) {
        let _one_at_a_time = self.shutdown_lock.lock_unpoisoned();
        if self.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        drop(self.stop_tx.lock_unpoisoned().take());
        self.workers.wake_for_shutdown();
        self.fail_queued(TaskErrorKind::ShutDown);
        // Thread workers wait on the queue alone (a select over two channels would cost
        // them half their round trip): one stop signal each.
        for _ in &self.slots {
            let _ = self.queue_tx.send(Work::Stop);
        }
        // Process workers exit as soon as their socket closes (and are killed after 300 ms);
        // a thread worker in a long task gets half a second to finish it.
        let deadline = Instant::now() + Duration::from_millis(500);
        let me = std::thread::current().id();
        loop {
            let mut threads = self.threads.lock_unpoisoned();
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
        // Workers stuck in a task: their results can no longer be waited for.
        self.workers.fail_stuck(self);
        let left = self.threads.lock_unpoisoned().len();
        if left > 0 {
            tracing::warn!("polycompute pool: {left} worker thread(s) still in a task at shutdown were left behind");
        }
    }
}

impl PoolState {
    /// The shared state of a new pool: its slots, queue and stop signal (no worker yet).
    pub(crate) fn new(
        tasks: Tasks,
        plan: WorkerPlan,
        cfg: Config,
        devices: &[(BackendKind, usize)],
        per_device: usize,
        broadcast: BroadcastData,
        workers: Box<dyn WorkerKind>,
    ) -> Arc<PoolState> {
        let mode = plan.mode;
        let (queue_tx, queue_rx) = crossbeam_channel::unbounded();
        let (stop_tx, stop_rx) = crossbeam_channel::bounded(0);
        let mut slots = Vec::new();
        for &(kind, ordinal) in devices {
            for _ in 0..per_device {
                slots.push(Arc::new(Slot {
                    id: slots.len(),
                    kind,
                    ordinal,
                    device_id: polycompute_core::DeviceId::new(kind, ordinal),
                    gen: AtomicU64::new(0),
                    pid: AtomicU32::new(0),
                    dead: AtomicBool::new(false),
                    stats: SlotStats::default(),
                }));
            }
        }
        Arc::new(PoolState {
            tasks,
            mode,
            workers,
            plan,
            cfg,
            queue_tx,
            queue_rx,
            stop_tx: Mutex::new(Some(stop_tx)),
            stop_rx,
            stopping: AtomicBool::new(false),
            shutdown_lock: Mutex::new(()),
            next_index: AtomicU64::new(0),
            next_submission: AtomicU64::new(0),
            live: AtomicUsize::new(slots.len()),
            slots,
            broken: Mutex::new(None),
            broadcast,
            threads: Mutex::new(Vec::new()),
            callbacks: OnceLock::new(),
            epoch: Instant::now(),
            interrupted: AtomicBool::new(false),
            refusals: Mutex::new(HashMap::new()),
            any_refusal: AtomicBool::new(false),
        })
    }
}
