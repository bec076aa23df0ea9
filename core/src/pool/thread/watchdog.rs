//! The timeout watchdog of thread workers: a thread cannot be interrupted, so a task that
//! overruns the pool's timeout is failed here and its slot gets a fresh thread.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::{worker, ThreadSlot};
use crate::pool::error::TaskErrorKind;
use crate::pool::state::PoolState;
use crate::sync::LockUnpoisoned;

/// Fails thread-worker tasks that overrun the timeout and replaces their threads.
pub(super) fn run(inner: Arc<PoolState>, threads: Arc<[ThreadSlot]>, timeout: Duration) {
    let period = (timeout / 4).clamp(Duration::from_millis(1), Duration::from_millis(50));
    let limit = timeout.as_nanos() as u64;
    loop {
        crossbeam_channel::select! {
            recv(inner.stop_rx) -> _ => return,
            default(period) => {}
        }
        let now = inner.now_ns();
        for (slot, mine) in inner.slots.iter().zip(threads.iter()) {
            let started = mine.item_started.load(Ordering::Acquire);
            if started == 0 || now.saturating_sub(started) < limit {
                continue;
            }
            let gen = slot.gen.load(Ordering::Acquire);
            let current = mine.current.lock_unpoisoned().clone();
            if mine.item_started.load(Ordering::Acquire) != started {
                continue; // it moved on meanwhile
            }
            if let Some(ctl) = current {
                let kind = TaskErrorKind::Timeout { after: timeout };
                ctl.fail_rest_counted(Some((slot.id, slot.device_id)), 1, kind, |n| slot.stats.count_failed(n));
                worker::replace(&inner, &threads, slot, gen);
            }
        }
    }
}
