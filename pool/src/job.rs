//! Jobs: one or more consecutive inputs of one task, queued as a unit, and the claim
//! protocol that makes every input end in exactly one result whoever races to deliver it
//! (the worker, a timeout, a cancellation, a crash, shutdown).

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::error::{TaskError, TaskErrorKind};
use super::task::{ErasedTask, Value};
use crate::rng::StreamId;
use crate::shared::payload::Pins;
use polycompute_core::sync::LockUnpoisoned;

/// A result and its position in its submission.
pub(crate) type Positioned = (usize, Result<Value, TaskError>);

/// Where results go: a job handle, a map's channel, a callback.
pub(crate) trait Sink: Send + Sync {
    /// Delivers the result of the input at position `pos` of its submission.
    fn deliver(&self, pos: usize, result: Result<Value, TaskError>);

    /// Delivers several results at once: one wake-up of the receiver instead of one each.
    fn deliver_many(&self, results: Vec<Positioned>) {
        for (pos, result) in results {
            self.deliver(pos, result);
        }
    }
}

/// A job's inputs: moved values for thread workers, encodings for process workers.
pub(crate) enum Inputs {
    /// A `std::vec::IntoIter<T::Input>`.
    Local(Box<dyn Any + Send>),
    /// The items section of a job frame (see `wire`), and the shared-memory segments it
    /// needs until its results are back. `near`: for MPI ranks, when an input names a
    /// `SharedArray`, the same items with every shared array written as its handle, for the
    /// ranks on rank 0's node (`body` writes them as data, for the others).
    Encoded { body: Vec<u8>, pins: Pins, near: Option<Vec<u8>> },
}

/// A queued unit of work.
pub(crate) struct Job {
    pub(crate) task: Arc<dyn ErasedTask>,
    pub(crate) attempt: u32,
    pub(crate) inputs: Inputs,
    pub(crate) ctl: Arc<JobCtl>,
}

const QUEUED: u8 = 0;
const RUNNING: u8 = 1;

/// The shared state of a job: who runs it and which of its results were delivered.
pub(crate) struct JobCtl {
    sink: Arc<dyn Sink>,
    task: &'static str,
    /// Task index of the first input.
    pub(crate) first_index: u64,
    /// Position of the first input in its submission.
    first_pos: usize,
    /// The random stream of the first input (the next inputs read the streams after it).
    stream: StreamId,
    /// Number of inputs.
    pub(crate) len: usize,
    /// Results delivered so far (always a prefix: workers deliver in order).
    delivered: AtomicUsize,
    state: AtomicU8,
    /// `slot << 32 | generation` of the worker running the job.
    runner: AtomicU64,
    /// The submission's cancel flag (shared by every job of a map).
    cancel: Arc<AtomicBool>,
    /// Results claimed by a thread worker but not sent yet: sending them in bunches saves
    /// the receiver a wake-up per result. Whoever fails the rest of the job sends these
    /// first, so a worker stuck after staging never holds results back.
    staged: Mutex<Vec<Positioned>>,
}

impl JobCtl {
    pub(crate) fn new(
        sink: Arc<dyn Sink>,
        task: &'static str,
        first_index: u64,
        first_pos: usize,
        len: usize,
        cancel: Arc<AtomicBool>,
        stream: StreamId,
    ) -> Arc<JobCtl> {
        Arc::new(JobCtl {
            sink,
            task,
            first_index,
            first_pos,
            stream,
            len,
            delivered: AtomicUsize::new(0),
            state: AtomicU8::new(QUEUED),
            runner: AtomicU64::new(u64::MAX),
            cancel,
            staged: Mutex::new(Vec::new()),
        })
    }

    /// A job for inputs `range` of this one (claimed with [`JobCtl::claim_rest`]): the rest
    /// of a batch moved to another worker, or one input run alone.
    pub(crate) fn sub(&self, range: std::ops::Range<usize>) -> Arc<JobCtl> {
        JobCtl::new(
            self.sink.clone(),
            self.task,
            self.first_index + range.start as u64,
            self.first_pos + range.start,
            range.len(),
            self.cancel.clone(),
            self.stream.offset(range.start as u64),
        )
    }

    /// The random stream of input `k` of this job.
    pub(crate) fn stream(&self, k: usize) -> StreamId {
        self.stream.offset(k as u64)
    }

    /// Marks the job as taken by worker `slot`, generation `gen`; false when it was
    /// cancelled (its remaining results are then delivered as `Cancelled`).
    pub(crate) fn start(&self, slot: usize, gen: u64) -> bool {
        if self.cancel.load(Ordering::Acquire) {
            self.fail_rest(None, 1, TaskErrorKind::Cancelled);
            return false;
        }
        if self.is_done() {
            return false;
        }
        self.runner.store(((slot as u64) << 32) | (gen & 0xFFFF_FFFF), Ordering::Release);
        self.state.store(RUNNING, Ordering::Release);
        true
    }

    /// Back in the queue (its worker died before running it).
    pub(crate) fn requeued(&self) {
        self.state.store(QUEUED, Ordering::Release);
    }

    /// The worker running the job, as `(slot, generation)`, if it runs.
    pub(crate) fn runner(&self) -> Option<(usize, u64)> {
        if self.state.load(Ordering::Acquire) != RUNNING {
            return None;
        }
        let r = self.runner.load(Ordering::Acquire);
        (r != u64::MAX).then_some(((r >> 32) as usize, r & 0xFFFF_FFFF))
    }

    /// Whether every result was delivered.
    pub(crate) fn is_done(&self) -> bool {
        self.delivered.load(Ordering::Acquire) >= self.len
    }

    /// Whether the submission was cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Acquire)
    }

    /// Sets the submission's cancel flag.
    pub(crate) fn set_cancelled(&self) {
        self.cancel.store(true, Ordering::Release);
    }

    /// Claims input `k` (the next one): false when someone else already answered it.
    fn claim(&self, k: usize) -> bool {
        self.delivered.compare_exchange(k, k + 1, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Stages the result of input `k` unless someone else already answered it; [`JobCtl::flush`]
    /// sends what is staged.
    pub(crate) fn stage(&self, k: usize, result: Result<Value, TaskError>) {
        if self.claim(k) {
            self.staged.lock_unpoisoned().push((self.first_pos + k, result));
        }
    }

    /// Sends the staged results.
    pub(crate) fn flush(&self) {
        let staged = std::mem::take(&mut *self.staged.lock_unpoisoned());
        if !staged.is_empty() {
            self.sink.deliver_many(staged);
        }
    }

    /// Delivers the results of inputs `first..first + results.len()` (a process worker's
    /// results as they stream back, in order), each unless someone else already answered
    /// it (cancelled, shut down).
    /// A `None` is claimed but not delivered: the caller queued that input again.
    /// Returns the inputs of those it claimed (they are the caller's to answer).
    pub(crate) fn deliver_from(&self, first: usize, results: Vec<Option<Result<Value, TaskError>>>) -> Vec<usize> {
        let mut out: Vec<Positioned> = Vec::with_capacity(results.len());
        let mut kept = Vec::new();
        let end = first + results.len();
        // Usually nobody else answered any of them: one claim for all.
        let all = self.delivered.compare_exchange(first, end, Ordering::AcqRel, Ordering::Acquire).is_ok();
        for (i, r) in results.into_iter().enumerate() {
            if all || self.claim(first + i) {
                match r {
                    Some(r) => out.push((self.first_pos + first + i, r)),
                    None => kept.push(first + i),
                }
            }
        }
        if !out.is_empty() {
            self.sink.deliver_many(out);
        }
        kept
    }

    /// Claims input `k` alone, the one running now (every input before it answered):
    /// false when it was answered meanwhile. The caller delivers it with
    /// [`JobCtl::deliver_claimed`] and owes the inputs after it a result too.
    pub(crate) fn claim_running(&self, k: usize) -> bool {
        self.claim(k)
    }

    /// Delivers the result of input `k`, which the caller claimed ([`JobCtl::claim_rest`],
    /// [`JobCtl::claim_running`]); staged results go first.
    pub(crate) fn deliver_claimed(&self, k: usize, result: Result<Value, TaskError>) {
        self.flush();
        self.sink.deliver(self.first_pos + k, result);
    }

    /// Claims every input not delivered yet, without delivering anything: the caller now
    /// owes them a result (through [`JobCtl::sub`] jobs, say). `None` when none was left.
    pub(crate) fn claim_rest(&self) -> Option<std::ops::Range<usize>> {
        let mut cur = self.delivered.load(Ordering::Acquire);
        loop {
            if cur >= self.len {
                return None;
            }
            match self.delivered.compare_exchange(cur, self.len, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(cur..self.len),
                Err(now) => cur = now,
            }
        }
    }

    /// Claims every input not delivered yet and delivers `kind` for each; returns how many.
    pub(crate) fn fail_rest(
        &self,
        worker: Option<(usize, polycompute_core::DeviceId)>,
        attempts: u32,
        kind: TaskErrorKind,
    ) -> usize {
        self.fail_rest_counted(worker, attempts, kind, |_| {})
    }

    /// [`JobCtl::fail_rest`], calling `count` with how many before they are delivered (so
    /// a waiter woken by the results sees the worker's figures already updated).
    pub(crate) fn fail_rest_counted(
        &self,
        worker: Option<(usize, polycompute_core::DeviceId)>,
        attempts: u32,
        kind: TaskErrorKind,
        count: impl FnOnce(u64),
    ) -> usize {
        let Some(range) = self.claim_rest() else {
            self.flush();
            return 0;
        };
        self.flush();
        let n = range.len();
        count(n as u64);
        let errors =
            range.map(|k| (self.first_pos + k, Err(self.error(k, worker, attempts, kind.clone())))).collect::<Vec<_>>();
        self.sink.deliver_many(errors);
        n
    }

    /// The error for input `k`.
    pub(crate) fn error(
        &self,
        k: usize,
        worker: Option<(usize, polycompute_core::DeviceId)>,
        attempts: u32,
        kind: TaskErrorKind,
    ) -> TaskError {
        TaskError {
            task: self.task.to_string(),
            index: self.first_index + k as u64,
            worker: worker.map(|w| w.0),
            device: worker.map(|w| w.1),
            attempts,
            kind,
        }
    }
}
