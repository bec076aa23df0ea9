//! Process workers, parent side: serving a running worker. The driver thread feeds the
//! worker jobs over its socket (a few ahead while they are cheap), reads its results from
//! the same socket (no relay thread: every hop is a thread wake-up), and decides what a
//! closed socket, a timeout or a bad frame means for the jobs in flight.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::parent::{Outcome, Worker};
use super::progress::Mark;
use super::ProcessSlot;
use crate::error::TaskErrorKind;
use crate::job::{Inputs, Job};
use crate::schedule::{Deadline, Next, Wait};
use crate::spin;
use crate::state::{PoolState, Refusal, Slot};
use crate::task::Failure;
use crate::wire::{self, FromWorker, ToWorker, WireResult};
use polycompute_core::sync::LockUnpoisoned;

/// A job sent to the worker.
struct InFlight {
    job: Job,
    id: u64,
    /// When it became the head job (for the per-input cost).
    started: Instant,
    /// Results received so far (a prefix of its inputs).
    received: usize,
    /// Since when its worker's busy time was last counted.
    busy_since: Instant,
}

/// Feeds and reads `w` until it must stop or be replaced.
pub(super) fn serve(inner: &Arc<PoolState>, slot: &Slot, mine: &ProcessSlot, w: &mut Worker) -> Outcome {
    let mut inflight: VecDeque<InFlight> = VecDeque::new();
    let mut served = 0u64;
    let max = inner.cfg.max_tasks.unwrap_or(u64::MAX);
    let who = (slot.id, slot.device_id);
    // What one input of each task costs here (ns, moving average). A job is sent ahead
    // (up to the pool's pipeline depth) only while the work already at the worker is
    // expected to take under a millisecond: the worker then never waits for its next job
    // (2-3x the throughput of tiny tasks, measured), and no job waits more than about a
    // millisecond behind another while some other worker may be idle.
    let mut cost: HashMap<&'static str, u64> = HashMap::new();
    let mut pipe_broken = false;
    // The worker's last progress mark and when it was first seen: a task's start.
    let mut watch = (w.progress.get(), Instant::now());
    let ahead_ok = |cost: &HashMap<&'static str, u64>, inflight: &VecDeque<InFlight>| {
        let expected = inflight.iter().try_fold(0u64, |sum, f| {
            cost.get(f.job.task.name()).map(|ns| sum.saturating_add(ns.saturating_mul(f.job.ctl.len as u64)))
        });
        expected.is_some_and(|ns| ns < 1_000_000)
    };
    loop {
        while !pipe_broken
            && inflight.len() < inner.cfg.depth
            && served < max
            && (inflight.is_empty() || ahead_ok(&cost, &inflight))
        {
            let wait = if inflight.is_empty() { Wait::Spin } else { Wait::Ahead };
            let job = match inner.take(wait) {
                Next::Job(job) => job,
                Next::Stop => return Outcome::Stop,
                Next::Empty => break,
            };
            if inflight.is_empty() && !matches!(w.child.try_wait(), Ok(None)) {
                // It died while idle: not this job's fault.
                let (code, signal) = w.reap(Duration::from_secs(1));
                tracing::warn!(
                    "polycompute pool: idle worker {} ({}) died (code {code:?}, signal {signal:?}); replacing it",
                    slot.id,
                    slot.device_id
                );
                inner.enqueue(job);
                return Outcome::Exited;
            }
            let Some(job) = inner.admit(slot, w.gen, job, wait) else { continue };
            let Inputs::Encoded { body, .. } = &job.inputs else {
                let kind = TaskErrorKind::Serialization { message: "internal: a job with unencoded inputs".into() };
                job.ctl.fail_rest(Some(who), job.attempt, kind);
                continue;
            };
            w.next_id += 1;
            let header = ToWorker::Job {
                id: w.next_id,
                task: job.task.name().to_string(),
                first_index: job.ctl.first_index,
                attempt: job.attempt,
                count: job.ctl.len as u32,
                stream: job.ctl.stream(0),
            };
            if wire::write_frame(&mut w.writer, &header, body).is_err() {
                // The worker is gone (or we shut its socket). This job never reached it: back
                // to the queue. The jobs before it may have been answered: read on, and the
                // end of the stream then tells which job the worker died in.
                inner.requeue(job);
                if inflight.is_empty() {
                    return interrupted(inner, slot, mine, w, inflight);
                }
                pipe_broken = true;
                break;
            }
            served += job.ctl.len as u64;
            let now = Instant::now();
            inflight.push_back(InFlight { job, id: w.next_id, started: now, received: 0, busy_since: now });
        }
        let Some(head) = inflight.front() else {
            return Outcome::Retire; // it reached its task limit
        };
        if let Some(deadline) = Deadline::of(&inner.cfg) {
            // Without a shared progress word, the first unanswered input counts as running
            // from when the one before it answered.
            let mark = if w.progress.is_shared() {
                w.progress.get()
            } else {
                Mark { job: head.id as u32, phase: 2 * head.received as u32 + 1 }
            };
            if mark != watch.0 {
                watch = (mark, Instant::now());
            }
            // Look at the worker's progress a few times per timeout: a task's deadline is its
            // own start (as the progress word shows it) plus the timeout.
            let wait = match mark.running(head.id) {
                Some(k) => {
                    let ran = watch.1.elapsed();
                    if deadline.passed(ran) {
                        timed_out(inner, slot, w, inflight, deadline, k, ran);
                        return Outcome::Kill;
                    }
                    deadline.wait(ran)
                }
                None => deadline.poll(),
            };
            let _ = w.reader.get_ref().set_read_timeout(Some(wait));
        }
        let _ = spin::until_readable(&mut w.reader);
        match wire::read_frame(&mut w.reader, &mut w.frame) {
            Ok(true) => match results(inner, slot, &mut inflight, &w.frame) {
                Ok(Read::Partial) => {}
                Ok(Read::JobDone { task, per_input }) => {
                    let avg = cost.entry(task).or_insert(per_input);
                    *avg = (3 * *avg + per_input) / 4;
                    if let Some(next) = inflight.front_mut() {
                        (next.started, next.busy_since) = (Instant::now(), Instant::now());
                    }
                }
                Ok(Read::Retire(why)) => {
                    tracing::warn!("polycompute pool: worker {} ({}) retires: {why}", slot.id, slot.device_id);
                    // The job it retired in stopped at the fault: the rest of it never ran.
                    if let Some(head) = inflight.pop_front() {
                        inner.requeue_rest(&head.job);
                    }
                    requeue(inner, inflight);
                    return Outcome::Retire;
                }
                Err(e) => {
                    tracing::error!("polycompute pool: bad frame from worker {}: {e}; replacing it", slot.id);
                    if let Some(head) = inflight.pop_front() {
                        let kind = TaskErrorKind::Serialization { message: format!("bad results frame: {e}") };
                        head.job.ctl.fail_rest(Some(who), head.job.attempt, kind);
                    }
                    requeue(inner, inflight);
                    return Outcome::Kill;
                }
            },
            Err(e)
                if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
                    && inner.cfg.timeout.is_some() => {}
            Ok(false) | Err(_) => return interrupted(inner, slot, mine, w, inflight),
        }
    }
}

/// Input `k` of the head job ran `ran`, over the pool's deadline (see
/// [`Deadline::time_out`]); the jobs behind it never started and go back to the queue. The
/// worker is killed first, so that the results it finished before `k` are all in its log
/// or already read: none of them runs again.
fn timed_out(
    inner: &Arc<PoolState>,
    slot: &Slot,
    w: &mut Worker,
    mut inflight: VecDeque<InFlight>,
    deadline: Deadline,
    k: usize,
    ran: Duration,
) {
    let _ = w.child.kill();
    let _ = w.child.wait();
    if let Some(mut head) = inflight.pop_front() {
        recover(inner, slot, w, &mut head);
        deadline.time_out(inner, slot, &head.job, k, ran);
    }
    requeue(inner, inflight);
}

/// The socket closed or failed: the pool is stopping, a job was cancelled (the socket was
/// shut down to wake us), or the worker died.
fn interrupted(
    inner: &Arc<PoolState>,
    slot: &Slot,
    mine: &ProcessSlot,
    w: &mut Worker,
    mut inflight: VecDeque<InFlight>,
) -> Outcome {
    if inner.stopping() {
        for f in inflight {
            f.job.ctl.fail_rest(Some((slot.id, slot.device_id)), f.job.attempt, TaskErrorKind::ShutDown);
        }
        return Outcome::Stop;
    }
    let abandoned = std::mem::take(&mut *mine.abandoned.lock_unpoisoned());
    if !abandoned.is_empty() {
        // Cancelled jobs were answered by the canceller; the rest never ran here.
        inflight.retain(|f| !abandoned.iter().any(|a| Arc::ptr_eq(a, &f.job.ctl)));
        requeue(inner, inflight);
        return Outcome::Kill;
    }
    crashed(inner, slot, w, inflight)
}

/// What [`results`] made of a frame.
enum Read {
    /// Results of some of the head job's inputs; more are to come.
    Partial,
    /// The head job's last results: its task, and the time it took per input (ns).
    JobDone { task: &'static str, per_input: u64 },
    /// The worker retires (why); the head job's remaining inputs never ran.
    Retire(String),
}

/// Delivers the results in `frame`, for the head job's next inputs.
fn results(inner: &Arc<PoolState>, slot: &Slot, inflight: &mut VecDeque<InFlight>, frame: &[u8]) -> io::Result<Read> {
    let (header, body) = wire::split_frame::<FromWorker>(frame)?;
    let FromWorker::Results { id, first, count, retire, stopped, .. } = header else {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("expected results, got {header:?}")));
    };
    let bad = |what: String| Err(io::Error::new(io::ErrorKind::InvalidData, what));
    let Some(head) = inflight.front_mut() else { return bad(format!("results for job {id}, none was sent")) };
    let (first, count) = (first as usize, count as usize);
    if head.id != id || first != head.received || first + count > head.job.ctl.len {
        return bad(format!("results {first}..{} of job {id}, not the ones expected", first + count));
    }
    deliver(inner, slot, head, first, count, body)?;
    let (job, ctl) = (&head.job, &head.job.ctl);
    if let Some(why) = retire {
        return Ok(Read::Retire(why));
    }
    if stopped {
        // The device refused the task: the rest of the job never ran here.
        inner.requeue_rest(job);
        inflight.pop_front();
        return Ok(Read::Partial);
    }
    if head.received < ctl.len {
        return Ok(Read::Partial);
    }
    let took = head.started.elapsed().as_nanos() as u64;
    let task = job.task.name();
    let per_input = took / ctl.len.max(1) as u64;
    inflight.pop_front();
    Ok(Read::JobDone { task, per_input })
}

/// Delivers `body`, the results of inputs `first..first + count` of `head` (the next ones
/// it expects), from a frame or from the dead worker's log.
fn deliver(
    inner: &Arc<PoolState>,
    slot: &Slot,
    head: &mut InFlight,
    first: usize,
    count: usize,
    body: &[u8],
) -> io::Result<()> {
    let bad = |what: String| Err(io::Error::new(io::ErrorKind::InvalidData, what));
    let who = (slot.id, slot.device_id);
    let (job, ctl) = (&head.job, &head.job.ctl);
    let mut out = Vec::with_capacity(count);
    let mut failed = 0;
    for (i, item) in wire::results(body).enumerate().take(count) {
        let k = first + i;
        let result = match item? {
            WireResult::Output(encoded) => encoded
                .with(true, |bytes| job.task.decode_output(bytes))
                .and_then(|decoded| decoded)
                .map_err(|message| ctl.error(k, Some(who), job.attempt, TaskErrorKind::Serialization { message })),
            WireResult::Failure(Failure::Unsupported { message, device }) => {
                match inner.refused(job.task.name(), device, message) {
                    Refusal::Reroute => {
                        out.push(None); // queued again below, for another device
                        continue;
                    }
                    Refusal::Final(kind) => Err(ctl.error(k, Some(who), job.attempt, kind)),
                }
            }
            WireResult::Failure(f) => Err(ctl.error(k, Some(who), job.attempt, f.into())),
        };
        failed += result.is_err() as u64;
        out.push(Some(result));
    }
    if out.len() < count {
        return bad("fewer results than announced".into());
    }
    slot.stats.tasks.fetch_add(count as u64, Ordering::Relaxed);
    slot.stats.failed.fetch_add(failed, Ordering::Relaxed);
    let now = Instant::now();
    slot.stats.busy_ns.fetch_add(now.saturating_duration_since(head.busy_since).as_nanos() as u64, Ordering::Relaxed);
    head.busy_since = now;
    for k in ctl.deliver_from(first, out) {
        inner.resubmit(job, k..k + 1, job.attempt);
    }
    head.received += count;
    Ok(())
}

/// The worker is dead (reaped): delivers the results of `head` it had finished whose
/// frames never arrived, from its log. Those frames can no longer arrive, so each result is
/// delivered once; what the log lacks (without shared memory, say) runs again, uncharged.
fn recover(inner: &Arc<PoolState>, slot: &Slot, w: &Worker, head: &mut InFlight) {
    let Some(log) = &w.log else { return };
    let (body, count) = log.recover(head.id, head.received);
    let count = count.min(head.job.ctl.len.saturating_sub(head.received));
    if count == 0 {
        return;
    }
    let first = head.received;
    if let Err(e) = deliver(inner, slot, head, first, count, &body) {
        tracing::warn!("polycompute pool: worker {}'s result log: {e}", slot.id);
    }
}

/// The worker died with jobs in flight. The head job's results it finished without their
/// frame sent are delivered from its log; its progress word tells which input was running:
/// that one is retried (a new attempt) or fails as `Crashed`; the others that had not
/// answered (not started) go back to the queue without an attempt counted, as do the jobs
/// behind it. A worker that died between tasks charges nobody.
fn crashed(inner: &Arc<PoolState>, slot: &Slot, w: &mut Worker, mut inflight: VecDeque<InFlight>) -> Outcome {
    let (code, signal) = w.reap(Duration::from_secs(1));
    let Some(mut head) = inflight.pop_front() else { return Outcome::Exited };
    requeue(inner, inflight);
    recover(inner, slot, w, &mut head);
    // Without a shared progress word, the first unanswered input is the best guess.
    let running = |rest: std::ops::Range<usize>| {
        if w.progress.is_shared() {
            w.progress.get().running(head.id)
        } else {
            Some(rest.start)
        }
    };
    inner.charge_lost(slot, &head.job, running, TaskErrorKind::Crashed { code, signal });
    Outcome::Exited
}

/// Puts jobs that never started back in the queue.
fn requeue(inner: &PoolState, inflight: VecDeque<InFlight>) {
    for f in inflight {
        inner.requeue(f.job);
    }
}
