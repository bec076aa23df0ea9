//! The timeout watchdog of thread workers, their liveness: it watches each slot's running
//! input (a thread cannot be interrupted), asks [`Deadline`] whether it overran and has it
//! answered, and gives the slot a fresh thread.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::{worker, ThreadSlot};
use crate::schedule::Deadline;
use crate::state::PoolState;
use polycompute_core::sync::LockUnpoisoned;

/// Fails thread-worker tasks that overrun the timeout and replaces their threads.
pub(super) fn run(inner: Arc<PoolState>, threads: Arc<[ThreadSlot]>, deadline: Deadline) {
    loop {
        crossbeam_channel::select! {
            recv(inner.stop_rx) -> _ => return,
            default(deadline.poll()) => {}
        }
        let now = inner.now_ns();
        for (slot, mine) in inner.slots.iter().zip(threads.iter()) {
            let started = mine.item_started.load(Ordering::Acquire);
            let ran = Duration::from_nanos(now.saturating_sub(started));
            if started == 0 || !deadline.passed(ran) {
                continue;
            }
            let gen = slot.gen.load(Ordering::Acquire);
            let current = mine.current.lock_unpoisoned().clone();
            let mut timed = mine.timed.lock_unpoisoned();
            if mine.item_started.load(Ordering::Acquire) != started {
                continue; // it moved on meanwhile
            }
            let Some(ctl) = current else { continue };
            let k = mine.item.load(Ordering::Acquire);
            // Holding `timed`, the worker cannot take its next input meanwhile.
            if timed.is_none() || !ctl.claim_running(k) {
                continue; // it finished just now, or was abandoned
            }
            let Some(job) = timed.take() else { continue };
            drop(timed);
            // Only the overrunning input fails; the batch's later inputs, not started,
            // go back to the queue without an attempt counted.
            deadline.fail_claimed(slot, &ctl, job.attempt, k, ran);
            if let Some(rest) = ctl.claim_rest() {
                inner.requeue_moved(job.task, job.attempt, job.inputs, &ctl, rest);
            }
            worker::replace(&inner, &threads, slot, gen);
        }
    }
}
