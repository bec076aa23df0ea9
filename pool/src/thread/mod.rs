//! Thread workers: one thread per worker slot, inputs and outputs moved, no serialization.
//! A thread cannot be interrupted, so a timed-out or cancelled task's thread is left to
//! finish on its own (its result discarded) and a fresh thread takes the slot.
//!
//! * [`worker`] — a worker thread's loop, and replacing a thread.
//! * [`watchdog`] — fails tasks that overrun the pool's timeout.

use std::any::Any;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, OnceLock};

use super::error::TaskErrorKind;
use super::job::JobCtl;
use super::kind::{Carriage, WorkerKind};
use super::schedule::Deadline;
use super::state::{PoolState, Slot};
use super::task::ErasedTask;
use polycompute_core::sync::LockUnpoisoned;

mod watchdog;
mod worker;

/// A thread worker's per-slot state, beside the slot's common [`Slot`].
#[derive(Default)]
pub(crate) struct ThreadSlot {
    /// The job the slot's thread runs.
    current: Mutex<Option<Arc<JobCtl>>>,
    /// When the current input started, in ns since the pool's epoch (0: idle).
    item_started: AtomicU64,
    /// Which input of the current job runs (timed pools).
    item: AtomicUsize,
    /// A timed pool's current job inputs, taken one at a time, so that the watchdog can
    /// move the rest of a batch to the queue when a task overruns.
    timed: Mutex<Option<TimedJob>>,
}

/// What the watchdog needs to requeue the rest of a batch.
pub(crate) struct TimedJob {
    task: Arc<dyn ErasedTask>,
    attempt: u32,
    /// A `std::vec::IntoIter<T::Input>`: the inputs not started yet.
    inputs: Box<dyn Any + Send>,
}

/// The thread [`WorkerKind`]. Its per-slot state is made when it starts, one per slot of
/// the pool.
#[derive(Default)]
pub(crate) struct ThreadWorkers {
    slots: OnceLock<Arc<[ThreadSlot]>>,
}

impl WorkerKind for ThreadWorkers {
    fn carriage(&self) -> Carriage {
        Carriage::Moved
    }

    /// Starts one thread per slot, and the timeout watchdog when the pool has a timeout.
    fn start(&self, pool: &Arc<PoolState>) -> io::Result<()> {
        let slots = self.slots.get_or_init(|| pool.slots.iter().map(|_| ThreadSlot::default()).collect());
        for slot in &pool.slots {
            worker::spawn(pool, slots, slot.id, 0)?;
        }
        if let Some(deadline) = Deadline::of(&pool.cfg) {
            let (p, mine) = (pool.clone(), slots.clone());
            let h = std::thread::Builder::new()
                .name("polycompute-watchdog".into())
                .spawn(move || watchdog::run(p, mine, deadline))?;
            pool.add_thread(h);
        }
        Ok(())
    }

    fn abandon(&self, pool: &Arc<PoolState>, slot: &Slot, gen: u64, ctl: &Arc<JobCtl>) {
        let Some(slots) = self.slots.get() else { return };
        let current = slots[slot.id].current.lock_unpoisoned().clone();
        if current.is_some_and(|c| Arc::ptr_eq(&c, ctl)) {
            worker::replace(pool, slots, slot, gen);
        }
    }

    /// Thread workers wait on the queue alone, where shutdown sends each a stop.
    fn wake_for_shutdown(&self) {}

    fn fail_stuck(&self, pool: &PoolState) {
        let Some(slots) = self.slots.get() else { return };
        for (slot, mine) in pool.slots.iter().zip(slots.iter()) {
            let current = mine.current.lock_unpoisoned().take();
            if let Some(ctl) = current {
                ctl.fail_rest(Some((slot.id, slot.device_id)), 1, TaskErrorKind::ShutDown);
            }
        }
    }
}
