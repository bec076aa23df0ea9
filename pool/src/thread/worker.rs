//! A thread worker's loop, and replacing a thread that overran, was cancelled, hit a sticky
//! fault or reached its task limit.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{ThreadSlot, TimedJob};
use crate::context::WorkerContext;
use crate::error::TaskErrorKind;
use crate::job::{Inputs, Job};
use crate::schedule::{Next, Wait};
use crate::state::{PoolState, Refusal, Slot};
use crate::task::Failure;
use polycompute_core::device::Device;
use polycompute_core::sync::LockUnpoisoned;

/// Starts generation `gen` of slot `id`'s thread.
pub(super) fn spawn(pool: &Arc<PoolState>, mine: &Arc<[ThreadSlot]>, id: usize, gen: u64) -> io::Result<()> {
    let (p, m) = (pool.clone(), mine.clone());
    let h = std::thread::Builder::new().name(format!("polycompute-worker-{id}")).spawn(move || run(p, m, id, gen))?;
    pool.add_thread(h);
    Ok(())
}

/// Retires generation `gen` of `slot` (it may still be inside a task) and starts the next.
pub(super) fn replace(pool: &Arc<PoolState>, mine: &Arc<[ThreadSlot]>, slot: &Slot, gen: u64) {
    if slot.gen.compare_exchange(gen, gen + 1, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return;
    }
    mine[slot.id].current.lock_unpoisoned().take();
    mine[slot.id].timed.lock_unpoisoned().take();
    mine[slot.id].item_started.store(0, Ordering::Release);
    slot.stats.restarts.fetch_add(1, Ordering::Relaxed);
    if pool.stopping() {
        return;
    }
    if let Err(e) = spawn(pool, mine, slot.id, gen + 1) {
        pool.slot_dead(slot, format!("cannot start a thread: {e}"));
    }
}

fn run(inner: Arc<PoolState>, threads: Arc<[ThreadSlot]>, id: usize, gen: u64) {
    let (slot, mine) = (&inner.slots[id], &threads[id]);
    let device = match Device::open(slot.kind, slot.ordinal) {
        Ok(d) => d,
        Err(e) => {
            inner.slot_dead(slot, e.to_string());
            return;
        }
    };
    let mut ctx = WorkerContext::new(slot.id, device, false, inner.cfg.seed, inner.broadcast.clone());
    let alive = || slot.gen.load(Ordering::Acquire) == gen;
    let who = (slot.id, slot.device_id);
    let mut served = 0u64;
    let reroute = inner.can_reroute();
    loop {
        let job = match inner.next_job(slot, gen, Wait::Block) {
            Next::Job(job) => job,
            Next::Stop | Next::Empty => return,
        };
        *mine.current.lock_unpoisoned() = Some(job.ctl.clone());
        let Job { task, attempt, inputs, ctl } = job;
        let Inputs::Local(mut inputs) = inputs else {
            ctl.fail_rest(Some(who), attempt, TaskErrorKind::Serialization { message: "internal: encoded job".into() });
            continue;
        };
        let mut retire = false;
        // Reading the clock can cost more than a no-op task (35% of the time in a profile
        // here), so it is read once per bunch of results, not per input: results go out
        // in bunches sized to take about a millisecond, one at a time for slow tasks. Only
        // a pool with a timeout stamps every input's start, for its watchdog, and takes
        // the inputs one at a time from where the watchdog can move the rest elsewhere.
        // A pool that may reroute a refused input keeps each input's encoding while it runs
        // (the task consumes the value), taking them one at a time as a timed pool does.
        let timed = inner.cfg.timeout.is_some() || reroute;
        if timed {
            let job = TimedJob { task: task.clone(), attempt, inputs };
            *mine.timed.lock_unpoisoned() = Some(job);
            inputs = Box::new(());
        }
        let mut last = inner.now_ns();
        mine.item_started.store(last, Ordering::Release);
        let (mut unflushed, mut bunch) = (0u64, 1u64);
        for k in 0..ctl.len {
            if k > 0 && (ctl.is_cancelled() || inner.stopping()) {
                // Finished results stay; only the inputs not run end so.
                let why = if ctl.is_cancelled() { TaskErrorKind::Cancelled } else { TaskErrorKind::ShutDown };
                ctl.fail_rest(Some(who), attempt, why);
                break;
            }
            ctx.begin(ctl.first_index + k as u64, attempt, ctl.stream(k));
            let mut copy = None;
            let result = if timed {
                let one = {
                    let mut timed = mine.timed.lock_unpoisoned();
                    // The watchdog took the rest (this worker overran and was replaced).
                    let Some(job) = timed.as_mut().filter(|_| alive()) else { return };
                    let one = task.take_one(job.inputs.as_mut());
                    if reroute {
                        copy = one.as_deref().and_then(|one| task.encode_one(one));
                    }
                    mine.item.store(k, Ordering::Release);
                    mine.item_started.store(inner.now_ns(), Ordering::Release);
                    one
                };
                match one {
                    Some(mut one) => task.run_local(&mut ctx, one.as_mut()),
                    None => {
                        Err(Failure::Serialization(format!("internal: input {k} of task {} is missing", task.name())))
                    }
                }
            } else {
                task.run_local(&mut ctx, inputs.as_mut())
            };
            let abandoned = !alive();
            let mut final_kind: Option<TaskErrorKind> = None;
            if let (false, Err(Failure::Unsupported { message, device })) = (abandoned || !inner.cfg.reroute, &result) {
                match inner.refused(task.name(), *device, message.clone()) {
                    Refusal::Final(kind) => final_kind = Some(kind),
                    Refusal::Reroute => {
                        // This input and the batch's rest go back to the queue, for another device.
                        ctl.flush();
                        let rest_inputs = {
                            let mut timed = mine.timed.lock_unpoisoned();
                            if !alive() {
                                return;
                            }
                            timed.take().map(|j| j.inputs)
                        };
                        if let Some(rest) = ctl.claim_rest() {
                            match copy.take().and_then(|bytes| task.decode_one(&bytes)) {
                                Some(one) => inner.requeue_moved(task.clone(), attempt, one, &ctl, k..k + 1),
                                None => {
                                    let kind =
                                        TaskErrorKind::Unsupported { message: message.clone(), tried: vec![*device] };
                                    ctl.deliver_claimed(k, Err(ctl.error(k, Some(who), attempt, kind)));
                                }
                            }
                            if let (true, Some(rest_inputs)) = (rest.end > k + 1, rest_inputs) {
                                inner.requeue_moved(task.clone(), attempt, rest_inputs, &ctl, k + 1..rest.end);
                            }
                        }
                        break;
                    }
                }
            }
            slot.stats.tasks.fetch_add(1, Ordering::Relaxed);
            let result = result.map_err(|f| {
                retire |= matches!(f, Failure::Failed { sticky: true, .. });
                slot.stats.failed.fetch_add(1, Ordering::Relaxed);
                ctl.error(k, Some(who), attempt, final_kind.take().unwrap_or_else(|| f.into()))
            });
            ctl.stage(k, result);
            if abandoned {
                // The slot has a new thread (timeout, cancel): whoever abandoned this job
                // answered the input that overran (and, timed, requeued the rest). Anything
                // left unanswered goes back to the queue rather than being lost.
                ctl.flush();
                if !timed {
                    if let Some(rest) = ctl.claim_rest() {
                        inner.requeue_moved(task.clone(), attempt, inputs, &ctl, rest);
                    }
                }
                return;
            }
            if retire && k + 1 < ctl.len {
                // The device context is poisoned: the rest of the batch goes to other workers.
                ctl.flush();
                let rest_inputs = if timed {
                    let mut timed = mine.timed.lock_unpoisoned();
                    if !alive() {
                        return;
                    }
                    timed.take().map(|j| j.inputs)
                } else {
                    Some(std::mem::replace(&mut inputs, Box::new(())))
                };
                if let (Some(rest), Some(rest_inputs)) = (ctl.claim_rest(), rest_inputs) {
                    inner.requeue_moved(task.clone(), attempt, rest_inputs, &ctl, rest);
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
        if timed {
            let mut timed = mine.timed.lock_unpoisoned();
            if !alive() {
                return;
            }
            timed.take();
        }
        ctl.flush();
        slot.stats.busy_ns.fetch_add(inner.now_ns() - last, Ordering::Relaxed);
        mine.item_started.store(0, Ordering::Release);
        mine.current.lock_unpoisoned().take();
        served += ctl.len as u64;
        if retire || inner.cfg.max_tasks.is_some_and(|max| served >= max) {
            // After a sticky fault the context is poisoned: the fresh worker must open a new
            // one, not get this one back from the registry (other workers may still hold it).
            drop(ctx);
            if retire {
                polycompute_core::registry::forget(slot.kind, slot.ordinal);
            }
            replace(&inner, &threads, slot, gen);
            return;
        }
    }
}
