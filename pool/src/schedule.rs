//! The pool's scheduling decisions, the same for every worker kind: which job a worker
//! takes next, when a running input has timed out, and what goes back to the queue (after a
//! timeout, a crash, a lost worker, a refusal or a sticky fault), charged or not. A kind only
//! moves jobs and results (its transport) and notices a worker that hangs or dies (its
//! liveness); it then asks here what to do.

use std::any::Any;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use super::error::TaskErrorKind;
use super::job::{Inputs, Job, JobCtl};
use super::state::{Config, PoolState, Slot, Work};
use super::task::ErasedTask;
use super::wire;

/// The pool's time limit per input ([`crate::PoolBuilder::task_timeout`]), as every kind
/// applies it: counted from the input's own start, also inside a batch.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Deadline {
    limit: Duration,
}

impl Deadline {
    /// The pool's limit, if it has one.
    pub(crate) fn of(cfg: &Config) -> Option<Deadline> {
        cfg.timeout.map(|limit| Deadline { limit })
    }

    /// How often a kind looks at its running inputs: about ten times per limit (so an input
    /// is stopped within about a tenth of the limit after it passes), between 1 and 25 ms.
    pub(crate) fn poll(self) -> Duration {
        (self.limit / 10).clamp(Duration::from_millis(1), Duration::from_millis(25))
    }

    /// Whether an input that has run for `ran` is over the limit.
    pub(crate) fn passed(self, ran: Duration) -> bool {
        ran >= self.limit
    }

    /// How long a kind may wait for news of an input that has run for `ran` (and is not over
    /// the limit) before it looks again: until the limit, at most a poll, at least 100 µs.
    pub(crate) fn wait(self, ran: Duration) -> Duration {
        self.limit.saturating_sub(ran).min(self.poll()).max(Duration::from_micros(100))
    }

    /// The fallback where a kind sees nothing between a job's start and its results (MPI
    /// ranks without heartbeats): whether a job of `inputs` inputs that has run for `ran` is
    /// over `inputs` limits.
    // Only MPI ranks lack a per-input clock so far.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn passed_whole(self, ran: Duration, inputs: usize) -> bool {
        ran > self.limit * inputs as u32
    }

    /// Input `k` of a job at `attempt` has run for `ran`, over the limit, and the caller
    /// claimed it ([`JobCtl::claim_running`], [`JobCtl::claim_rest`]): it fails with
    /// `Timeout`, counted on `slot`.
    pub(crate) fn fail_claimed(self, slot: &Slot, ctl: &JobCtl, attempt: u32, k: usize, ran: Duration) {
        slot.stats.count_failed(1);
        let kind = TaskErrorKind::Timeout { after: self.limit, elapsed: ran };
        ctl.deliver_claimed(k, Err(ctl.error(k, Some((slot.id, slot.device_id)), attempt, kind)));
    }

    /// Input `k` of `job` (encoded inputs) has run for `ran` on `slot`'s worker, over the
    /// limit: it fails with `Timeout` unless it was answered meanwhile; the job's other
    /// unanswered inputs (finished without their result sent, or not started) go back to the
    /// queue without an attempt counted.
    pub(crate) fn time_out(self, pool: &PoolState, slot: &Slot, job: &Job, k: usize, ran: Duration) {
        let Some(rest) = job.ctl.claim_rest() else { return };
        if rest.contains(&k) {
            self.fail_claimed(slot, &job.ctl, job.attempt, k, ran);
            pool.resubmit(job, rest.start..k, job.attempt);
            pool.resubmit(job, k + 1..rest.end, job.attempt);
        } else {
            job.ctl.flush();
            pool.resubmit(job, rest, job.attempt);
        }
    }

    /// The whole-job fallback ([`Deadline::passed_whole`]): every unanswered input of `job`
    /// fails with `Timeout`, counted on `slot`.
    // Only MPI ranks lack a per-input clock so far.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn time_out_whole(self, slot: &Slot, job: &Job, ran: Duration) {
        let kind = TaskErrorKind::Timeout { after: self.limit, elapsed: ran };
        job.ctl.fail_rest_counted(Some((slot.id, slot.device_id)), job.attempt, kind, |n| slot.stats.count_failed(n));
    }
}

impl PoolState {
    /// Queues inputs `range` of `job` (claimed by the caller) as a job of their own, at
    /// `attempt`: a batch split around an input that timed out, crashed or was refused.
    pub(crate) fn resubmit(&self, job: &Job, range: std::ops::Range<usize>, attempt: u32) {
        if range.is_empty() {
            return;
        }
        let sub = job.ctl.sub(range.clone());
        let Inputs::Encoded { body, pins, near } = &job.inputs else {
            let kind = TaskErrorKind::Serialization { message: "internal: a job with unencoded inputs".into() };
            sub.fail_rest(None, attempt, kind);
            return;
        };
        let part = |body: &[u8]| -> Result<Vec<u8>, String> {
            let mut part = Vec::new();
            for (k, item) in wire::items(body).enumerate().skip(range.start).take(range.len()) {
                let (tag, bytes) = item.map_err(|e| format!("input {k}: {e}"))?;
                wire::push_item(&mut part, tag, bytes);
            }
            Ok(part)
        };
        let parts = part(body).and_then(|b| Ok((b, near.as_deref().map(part).transpose()?)));
        let (body, near) = match parts {
            Ok(parts) => parts,
            Err(message) => {
                sub.fail_rest(None, attempt, TaskErrorKind::Serialization { message });
                return;
            }
        };
        // The sub job keeps the batch's segments (a few handles).
        let inputs = Inputs::Encoded { body, pins: pins.clone(), near };
        self.enqueue(Job { task: job.task.clone(), attempt, inputs, ctl: sub });
    }

    /// Puts a job that its worker never started back in the queue (the jobs sent ahead to a
    /// worker that died, timed out or retired): nobody is charged.
    pub(crate) fn requeue(&self, job: Job) {
        job.ctl.requeued();
        self.enqueue(job);
    }

    /// Queues inputs `range` of a thread worker's job (claimed by the caller), whose inputs
    /// not yet started are `inputs` (a `std::vec::IntoIter<T::Input>`), at `attempt`: the
    /// rest of a batch after an input that timed out, was refused or retired the worker.
    pub(crate) fn requeue_moved(
        &self,
        task: Arc<dyn ErasedTask>,
        attempt: u32,
        inputs: Box<dyn Any + Send>,
        ctl: &JobCtl,
        range: Range<usize>,
    ) {
        self.enqueue(Job { task, attempt, inputs: Inputs::Local(inputs), ctl: ctl.sub(range) });
    }

    /// The worker of `slot` died or was lost while it ran `job`. `running` names, among the
    /// job's unanswered inputs, the one that ran (the kind's liveness knows it: a progress
    /// word, a heartbeat), or none when the worker died between inputs. That input alone is
    /// charged: run again as a new attempt while `retries` allows, else it fails with
    /// `died` (`Crashed`); the job's other unanswered inputs go back to the queue uncharged.
    pub(crate) fn charge_lost(
        &self,
        slot: &Slot,
        job: &Job,
        running: impl FnOnce(Range<usize>) -> Option<usize>,
        died: TaskErrorKind,
    ) {
        let Some(rest) = job.ctl.claim_rest() else { return };
        let Some(k) = running(rest.clone()).filter(|k| rest.contains(k)) else {
            self.resubmit(job, rest, job.attempt);
            return;
        };
        self.resubmit(job, rest.start..k, job.attempt);
        if job.attempt <= self.cfg.retries {
            self.resubmit(job, k..k + 1, job.attempt + 1);
        } else {
            slot.stats.count_failed(1);
            let who = Some((slot.id, slot.device_id));
            job.ctl.deliver_claimed(k, Err(job.ctl.error(k, who, job.attempt, died)));
        }
        self.resubmit(job, k + 1..rest.end, job.attempt);
    }

    /// Queues again, without an attempt counted, every input of `job` not answered yet: a
    /// job its worker stopped early (a sticky fault, a refusal), or one sent ahead to a
    /// worker whose earlier work timed out.
    pub(crate) fn requeue_rest(&self, job: &Job) {
        if let Some(rest) = job.ctl.claim_rest() {
            job.ctl.flush();
            self.resubmit(job, rest, job.attempt);
        }
    }
}

/// How a worker waits for its next job ([`PoolState::next_job`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Blocks on the queue (an idle thread worker).
    Block,
    /// Spins a moment, then blocks (an idle process worker's driver: a job queued within
    /// the spin window saves a thread wake-up).
    Spin,
    /// Never waits (a kind that polls: MPI's communication step).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    Poll,
    /// Never waits, and leaves a stop in the queue: a job to send ahead of work the worker
    /// already has, which stops only once that work is done.
    Ahead,
}

/// What a worker got from the queue.
pub(crate) enum Next {
    /// A job, marked as run by the worker.
    Job(Job),
    /// The pool stops: the worker that takes this stops.
    Stop,
    /// Nothing queued (only when not waiting).
    Empty,
}

impl PoolState {
    /// The next job for generation `gen` of `slot`: the queue's first job that this worker
    /// may run, marked as run by it. Jobs whose task its device refused before go back to
    /// the queue for the other devices (or fail when none is left), and jobs cancelled or
    /// answered meanwhile are dropped; either way the next one is taken.
    pub(crate) fn next_job(&self, slot: &Slot, gen: u64, wait: Wait) -> Next {
        loop {
            match self.take(wait) {
                Next::Job(job) => {
                    if let Some(job) = self.admit(slot, gen, job, wait) {
                        return Next::Job(job);
                    }
                }
                other => return other,
            }
        }
    }

    /// The queue's next entry, as `wait` says, not yet marked as run ([`PoolState::admit`]
    /// does that): for a kind that must look at its worker between the two.
    pub(crate) fn take(&self, wait: Wait) -> Next {
        let work = match wait {
            Wait::Block => self.queue_rx.recv(),
            Wait::Spin => {
                let mut polled = None;
                crate::spin::until(|| match self.queue_rx.try_recv() {
                    Ok(work) => {
                        polled = Some(Ok(work));
                        true
                    }
                    Err(e) => e.is_disconnected(),
                });
                polled.unwrap_or_else(|| self.queue_rx.recv())
            }
            Wait::Poll | Wait::Ahead => match self.queue_rx.try_recv() {
                Ok(work) => Ok(work),
                Err(_) => return Next::Empty,
            },
        };
        match work {
            Ok(Work::Job(job)) => Next::Job(job),
            Ok(Work::Stop) if wait == Wait::Ahead => {
                // Not this worker's to take while it is busy.
                let _ = self.queue_tx.send(Work::Stop);
                Next::Empty
            }
            Ok(Work::Stop) | Err(_) => Next::Stop,
        }
    }

    /// Whether generation `gen` of `slot` runs `job`, taken from the queue with `wait`; if
    /// so it is marked as run by that worker. A job whose task the slot's device refused
    /// before is bounced to the others (an idle worker then waits a moment before it looks
    /// again, so that it does not spin on jobs only others can take); a cancelled or
    /// answered job is dropped.
    pub(crate) fn admit(&self, slot: &Slot, gen: u64, job: Job, wait: Wait) -> Option<Job> {
        if self.refuses(job.task.name(), slot.device_id) {
            if self.bounce(job) && matches!(wait, Wait::Block | Wait::Spin) {
                std::thread::sleep(Duration::from_millis(1));
            }
            return None;
        }
        job.ctl.start(slot.id, gen).then_some(job)
    }
}
