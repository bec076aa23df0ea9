//! Thread workers: one thread per worker slot, inputs and outputs moved, no serialization.
//! A thread cannot be interrupted, so a timed-out or cancelled task's thread is left to
//! finish on its own (its result discarded) and a fresh thread takes the slot.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::context::WorkerContext;
use super::error::TaskErrorKind;
use super::job::{Inputs, Job, JobCtl};
use super::shared::{Inner, Slot, Work};
use super::task::Failure;
use crate::device::Device;

/// Starts one thread per slot, and the timeout watchdog when the pool has a timeout.
pub(crate) fn start_all(inner: &Arc<Inner>) -> io::Result<()> {
    for slot in &inner.slots {
        spawn(inner, slot, 0)?;
    }
    if let Some(timeout) = inner.cfg.timeout {
        let i = inner.clone();
        let h = std::thread::Builder::new().name("polycompute-watchdog".into()).spawn(move || watchdog(i, timeout))?;
        inner.add_thread(h);
    }
    Ok(())
}

fn spawn(inner: &Arc<Inner>, slot: &Arc<Slot>, gen: u64) -> io::Result<()> {
    let (i, s) = (inner.clone(), slot.clone());
    let h =
        std::thread::Builder::new().name(format!("polycompute-worker-{}", slot.id)).spawn(move || run(i, s, gen))?;
    inner.add_thread(h);
    Ok(())
}

/// Replaces generation `gen` of `slot` if it is still running `ctl`.
pub(crate) fn abandon(inner: &Arc<Inner>, slot: &Slot, gen: u64, ctl: &Arc<JobCtl>) {
    let current = slot.current.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if current.is_some_and(|c| Arc::ptr_eq(&c, ctl)) {
        replace(inner, slot, gen);
    }
}

/// Retires generation `gen` of `slot` (it may still be inside a task) and starts the next.
pub(crate) fn replace(inner: &Arc<Inner>, slot: &Slot, gen: u64) {
    if slot.gen.compare_exchange(gen, gen + 1, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return;
    }
    slot.current.lock().unwrap_or_else(|p| p.into_inner()).take();
    slot.item_started.store(0, Ordering::Release);
    slot.stats.restarts.fetch_add(1, Ordering::Relaxed);
    if inner.stopping() {
        return;
    }
    if let Err(e) = spawn(inner, &inner.slots[slot.id], gen + 1) {
        inner.slot_dead(slot, format!("cannot start a thread: {e}"));
    }
}

/// The error kind of a failure inside a worker.
pub(crate) fn failure_kind(failure: Failure) -> TaskErrorKind {
    match failure {
        Failure::Failed { message, sticky } => TaskErrorKind::Failed { message, sticky_device_fault: sticky },
        Failure::Panicked(message) => TaskErrorKind::Panicked { message },
        Failure::Serialization(message) => TaskErrorKind::Serialization { message },
        Failure::UnknownTask(known) => TaskErrorKind::UnknownTask { known },
    }
}

fn run(inner: Arc<Inner>, slot: Arc<Slot>, gen: u64) {
    let device = match Device::open(slot.kind, slot.ordinal) {
        Ok(d) => d,
        Err(e) => {
            inner.slot_dead(&slot, e.to_string());
            return;
        }
    };
    let mut ctx = WorkerContext::new(slot.id, device, false, inner.cfg.seed, inner.shared.clone());
    let alive = || slot.gen.load(Ordering::Acquire) == gen;
    let who = (slot.id, slot.device_id.as_str());
    let mut served = 0u64;
    loop {
        let job = match inner.queue_rx.recv() {
            Ok(Work::Job(job)) => job,
            Ok(Work::Stop) | Err(_) => return,
        };
        if !job.ctl.start(slot.id, gen) {
            continue;
        }
        *slot.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(job.ctl.clone());
        let Job { task, attempt, inputs, ctl } = job;
        let Inputs::Local(mut inputs) = inputs else {
            ctl.fail_rest(Some(who), attempt, TaskErrorKind::Serialization { message: "internal: encoded job".into() });
            continue;
        };
        let mut retire = false;
        // Reading the clock can cost more than a no-op task (35% of the time in a profile
        // here), so it is read once per bunch of results, not per input: results go out
        // in bunches sized to take about a millisecond, one at a time for slow tasks. Only
        // a pool with a timeout stamps every input's start, for its watchdog.
        let timed = inner.cfg.timeout.is_some();
        let mut last = inner.now_ns();
        slot.item_started.store(last, Ordering::Release);
        let (mut unflushed, mut bunch) = (0u64, 1u64);
        for k in 0..ctl.len {
            if k > 0 && ctl.is_cancelled() {
                ctl.fail_rest(Some(who), attempt, TaskErrorKind::Cancelled);
                break;
            }
            if timed && k > 0 {
                slot.item_started.store(inner.now_ns(), Ordering::Release);
            }
            ctx.begin(ctl.first_index + k as u64, attempt);
            let result = task.run_local(&mut ctx, inputs.as_mut());
            let abandoned = !alive();
            slot.stats.tasks.fetch_add(1, Ordering::Relaxed);
            let result = result.map_err(|f| {
                retire |= matches!(f, Failure::Failed { sticky: true, .. });
                slot.stats.failed.fetch_add(1, Ordering::Relaxed);
                ctl.error(k, Some(who), attempt, failure_kind(f))
            });
            ctl.stage(k, result);
            if abandoned {
                // The slot has a new thread (timeout, cancel): whoever abandoned this job
                // answered the input that overran. Anything left unanswered goes back to
                // the queue rather than being lost.
                ctl.flush();
                if let Some(rest) = ctl.claim_rest() {
                    let sub = ctl.sub(rest);
                    inner.enqueue(Job { task: task.clone(), attempt, inputs: Inputs::Local(inputs), ctl: sub });
                }
                return;
            }
            if retire && k + 1 < ctl.len {
                // The device context is poisoned: the rest of the batch goes to other workers.
                ctl.flush();
                if let Some(rest) = ctl.claim_rest() {
                    let sub = ctl.sub(rest);
                    inner.enqueue(Job { task: task.clone(), attempt, inputs: Inputs::Local(inputs), ctl: sub });
                }
                break;
            }
            unflushed += 1;
            if unflushed >= bunch {
                ctl.flush();
                let now = inner.now_ns();
                let per_input = (now - last) / unflushed;
                bunch = (1_000_000 / per_input.max(1)).clamp(1, 1024);
                slot.stats.busy_ns.fetch_add(now - last, Ordering::Relaxed);
                (last, unflushed) = (now, 0);
            }
        }
        ctl.flush();
        slot.stats.busy_ns.fetch_add(inner.now_ns() - last, Ordering::Relaxed);
        slot.item_started.store(0, Ordering::Release);
        slot.current.lock().unwrap_or_else(|p| p.into_inner()).take();
        served += ctl.len as u64;
        if retire || inner.cfg.max_tasks.is_some_and(|max| served >= max) {
            // After a sticky fault the context is poisoned: the fresh worker must open a new
            // one, not get this one back from the registry (other workers may still hold it).
            drop(ctx);
            if retire {
                crate::registry::forget(slot.kind, slot.ordinal);
            }
            replace(&inner, &slot, gen);
            return;
        }
    }
}

/// Fails thread-worker tasks that overrun the timeout and replaces their threads.
fn watchdog(inner: Arc<Inner>, timeout: Duration) {
    let period = (timeout / 4).clamp(Duration::from_millis(1), Duration::from_millis(50));
    let limit = timeout.as_nanos() as u64;
    loop {
        crossbeam_channel::select! {
            recv(inner.stop_rx) -> _ => return,
            default(period) => {}
        }
        let now = inner.now_ns();
        for slot in &inner.slots {
            let started = slot.item_started.load(Ordering::Acquire);
            if started == 0 || now.saturating_sub(started) < limit {
                continue;
            }
            let gen = slot.gen.load(Ordering::Acquire);
            let current = slot.current.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if slot.item_started.load(Ordering::Acquire) != started {
                continue; // it moved on meanwhile
            }
            if let Some(ctl) = current {
                let kind = TaskErrorKind::Timeout { after: timeout };
                ctl.fail_rest_counted(Some((slot.id, &slot.device_id)), 1, kind, |n| slot.stats.count_failed(n));
                replace(&inner, slot, gen);
            }
        }
    }
}
