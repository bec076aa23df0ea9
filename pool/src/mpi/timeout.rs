//! Task timeouts on worker ranks: what the heartbeats say runs, for [`Deadline`] to decide
//! and answer. A rank cannot be stopped alone, so a task over its timeout is answered on
//! rank 0 and whatever the rank sends back for its job later is dropped.
//!
//! With heartbeats (`MPI_THREAD_MULTIPLE`) the timeout counts from the running input's own
//! start, as for the thread and process kinds: each heartbeat says which input of which job
//! runs and for how long (to within one heartbeat period). The input over its timeout fails
//! as `Timeout`; the job's other inputs (finished ones whose results had not been sent, and
//! those not started) and the jobs sent ahead to that rank go back to the queue, uncharged,
//! for the other ranks (or this one once it is free again).
//!
//! Without heartbeats rank 0 sees nothing between a job's start and its results, so the
//! fallback fails the whole job once it ran `timeout × inputs`.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::job::Job;
use crate::schedule::Deadline;
use crate::state::{PoolState, Slot};

/// A job sent to a rank.
pub(super) struct InFlight {
    pub(super) job: Job,
    pub(super) id: u64,
    pub(super) started: Instant,
    /// Since when its time on the rank has not been counted (`WorkerInfo::busy`).
    pub(super) busy_from: Instant,
    /// Answered on rank 0 (timed out, or queued again elsewhere): whatever the rank sends
    /// back for it is dropped.
    pub(super) timed_out: bool,
}

/// A heartbeat from a rank said input `k` of job `job` (low 32 bits of its id) has run for
/// `ran`: past the timeout, that input fails and the rest of the rank's work is queued
/// again. Returns the id of the newest job so answered, which the rank is then told to skip
/// up to (`tag::SKIP`), so that a rank freed from the hung input does not run again what
/// other ranks took over.
pub(super) fn heartbeat(
    pool: &PoolState,
    slot: &Slot,
    inflight: &mut VecDeque<InFlight>,
    job: u32,
    k: usize,
    ran: Duration,
) -> Option<u64> {
    let deadline = Deadline::of(&pool.cfg)?;
    if !deadline.passed(ran) {
        return None;
    }
    let at = inflight.iter().position(|f| !f.timed_out && f.id as u32 == job)?;
    for (i, f) in inflight.iter_mut().enumerate().skip(at) {
        f.timed_out = true;
        if i == at {
            deadline.time_out(pool, slot, &f.job, k, ran);
        } else {
            pool.requeue_rest(&f.job);
        }
    }
    inflight.back().map(|f| f.id)
}

/// The fallback without heartbeats: fails the head job of every rank once it ran
/// `timeout × inputs` (its start is when the job before it answered).
pub(super) fn whole_jobs(pool: &PoolState, slot: &Slot, inflight: &mut VecDeque<InFlight>) {
    let Some(deadline) = Deadline::of(&pool.cfg) else { return };
    let Some(head) = inflight.iter_mut().find(|f| !f.timed_out) else { return };
    let ran = head.started.elapsed();
    if deadline.passed_whole(ran, head.job.ctl.len) {
        head.timed_out = true;
        deadline.time_out_whole(slot, &head.job, ran);
    }
}
