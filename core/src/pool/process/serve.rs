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
use super::ProcessSlot;
use crate::pool::error::TaskErrorKind;
use crate::pool::job::{Inputs, Job};
use crate::pool::spin;
use crate::pool::state::{PoolState, Slot, Work};
use crate::pool::wire::{self, FromWorker, ToWorker, WireResult};
use crate::sync::LockUnpoisoned;

/// A job sent to the worker.
struct InFlight {
    job: Job,
    id: u64,
    started: Instant,
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
            let job = if inflight.is_empty() {
                // The queue alone, as thread workers: shutdown sends one stop per slot.
                let mut polled = None;
                spin::until(|| match inner.queue_rx.try_recv() {
                    Ok(work) => {
                        polled = Some(Ok(work));
                        true
                    }
                    Err(e) => e.is_disconnected(),
                });
                match polled.unwrap_or_else(|| inner.queue_rx.recv()) {
                    Ok(Work::Job(job)) => job,
                    Ok(Work::Stop) | Err(_) => return Outcome::Stop,
                }
            } else {
                match inner.queue_rx.try_recv() {
                    Ok(Work::Job(job)) => job,
                    Ok(Work::Stop) => {
                        let _ = inner.queue_tx.send(Work::Stop); // not ours to take while busy
                        break;
                    }
                    Err(_) => break,
                }
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
            if !job.ctl.start(slot.id, w.gen) {
                continue;
            }
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
            };
            if wire::write_frame(&mut w.writer, &header, body).is_err() {
                // The worker is gone (or we shut its socket). This job never reached it: back
                // to the queue. The jobs before it may have been answered: read on, and the
                // end of the stream then tells which job the worker died in.
                job.ctl.requeued();
                inner.enqueue(job);
                if inflight.is_empty() {
                    return interrupted(inner, slot, mine, w, inflight);
                }
                pipe_broken = true;
                break;
            }
            served += job.ctl.len as u64;
            inflight.push_back(InFlight { job, id: w.next_id, started: Instant::now() });
        }
        let Some(head) = inflight.front() else {
            return Outcome::Retire; // it reached its task limit
        };
        let deadline = inner.cfg.timeout.map(|t| (t, head.started + t * head.job.ctl.len as u32));
        if let Some((_, d)) = deadline {
            let left = d.saturating_duration_since(Instant::now()).max(Duration::from_micros(1));
            let _ = w.reader.get_ref().set_read_timeout(Some(left));
        }
        let _ = spin::until_readable(&mut w.reader);
        match wire::read_frame(&mut w.reader, &mut w.frame) {
            Ok(true) => match results(slot, &mut inflight, &w.frame) {
                Ok((None, task, per_input)) => {
                    let avg = cost.entry(task).or_insert(per_input);
                    *avg = (3 * *avg + per_input) / 4;
                    if let Some(next) = inflight.front_mut() {
                        next.started = Instant::now();
                    }
                }
                Ok((Some(why), _, _)) => {
                    tracing::warn!("polycompute pool: worker {} ({}) retires: {why}", slot.id, slot.device_id);
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
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) && deadline.is_some() => {
                let after = deadline.map_or(Duration::ZERO, |(t, _)| t);
                if let Some(head) = inflight.pop_front() {
                    let kind = TaskErrorKind::Timeout { after };
                    head.job.ctl.fail_rest_counted(Some(who), head.job.attempt, kind, |n| slot.stats.count_failed(n));
                }
                requeue(inner, inflight);
                return Outcome::Kill;
            }
            Ok(false) | Err(_) => return interrupted(inner, slot, mine, w, inflight),
        }
    }
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

/// What [`results`] found: why the worker retires (if it does), the job's task, and the time
/// it took per input (ns).
type Finished = (Option<String>, &'static str, u64);

/// Delivers the results in `frame` for the head job.
fn results(slot: &Slot, inflight: &mut VecDeque<InFlight>, frame: &[u8]) -> io::Result<Finished> {
    let (header, body) = wire::split_frame::<FromWorker>(frame)?;
    let FromWorker::Results { id, count, retire } = header else {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("expected results, got {header:?}")));
    };
    let head = match inflight.front() {
        Some(h) if h.id == id && h.job.ctl.len == count as usize => inflight.pop_front(),
        _ => None,
    };
    let Some(head) = head else {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("results for job {id}, not the one sent")));
    };
    let who = (slot.id, slot.device_id);
    let (job, ctl) = (&head.job, &head.job.ctl);
    let mut out = Vec::with_capacity(ctl.len);
    let mut failed = 0;
    for (k, item) in wire::results(body).enumerate().take(ctl.len) {
        let result = match item? {
            WireResult::Output(encoded) => encoded
                .with(true, |bytes| job.task.decode_output(bytes))
                .and_then(|decoded| decoded)
                .map_err(|message| ctl.error(k, Some(who), job.attempt, TaskErrorKind::Serialization { message })),
            WireResult::Failure(f) => Err(ctl.error(k, Some(who), job.attempt, f.into())),
        };
        failed += result.is_err() as u64;
        out.push(result);
    }
    let got = out.len();
    if got < ctl.len {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "fewer results than inputs"));
    }
    slot.stats.tasks.fetch_add(got as u64, Ordering::Relaxed);
    slot.stats.failed.fetch_add(failed, Ordering::Relaxed);
    let took = head.started.elapsed().as_nanos() as u64;
    slot.stats.busy_ns.fetch_add(took, Ordering::Relaxed);
    ctl.deliver_all(out);
    Ok((retire, job.task.name(), took / got.max(1) as u64))
}

/// The worker died with jobs in flight. The head job was running: it is retried, failed as
/// `Crashed`, or (a batch, where which input crashed is unknown) split into single-input
/// jobs. The jobs behind it never started: they go back to the queue.
fn crashed(inner: &Arc<PoolState>, slot: &Slot, w: &mut Worker, mut inflight: VecDeque<InFlight>) -> Outcome {
    let (code, signal) = w.reap(Duration::from_secs(1));
    let Some(head) = inflight.pop_front() else { return Outcome::Exited };
    requeue(inner, inflight);
    let job = head.job;
    if job.ctl.len > 1 {
        if let Some(rest) = job.ctl.claim_rest() {
            let Inputs::Encoded { body, pins } = &job.inputs else { return Outcome::Exited };
            for (k, item) in wire::items(body).enumerate() {
                if !rest.contains(&k) {
                    continue;
                }
                let sub = job.ctl.sub(k..k + 1);
                match item {
                    Ok((tag, bytes)) => {
                        let mut one = Vec::with_capacity(bytes.len() + 5);
                        wire::push_item(&mut one, tag, bytes);
                        // Each single-input job keeps the batch's segments (a few handles).
                        let inputs = Inputs::Encoded { body: one, pins: pins.clone() };
                        inner.enqueue(Job { task: job.task.clone(), attempt: job.attempt, inputs, ctl: sub });
                    }
                    Err(e) => {
                        sub.fail_rest(None, job.attempt, TaskErrorKind::Serialization { message: e.to_string() });
                    }
                }
            }
        }
    } else if job.attempt <= inner.cfg.retries {
        job.ctl.requeued();
        inner.enqueue(Job { attempt: job.attempt + 1, ..job });
    } else {
        let kind = TaskErrorKind::Crashed { code, signal };
        job.ctl.fail_rest_counted(Some((slot.id, slot.device_id)), job.attempt, kind, |n| slot.stats.count_failed(n));
    }
    Outcome::Exited
}

/// Puts jobs that never started back in the queue.
fn requeue(inner: &PoolState, inflight: VecDeque<InFlight>) {
    for f in inflight {
        f.job.ctl.requeued();
        inner.enqueue(f.job);
    }
}
