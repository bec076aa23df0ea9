//! The pool's scheduling decisions, the same for every worker kind: when a running input
//! has timed out and what becomes of its job. A kind only moves jobs and results (its
//! transport) and notices a worker that hangs or dies (its liveness); it then asks here what
//! to do.

use std::any::Any;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use super::error::TaskErrorKind;
use super::job::{Inputs, Job, JobCtl};
use super::state::{Config, PoolState, Slot};
use super::task::ErasedTask;

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
