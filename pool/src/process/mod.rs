//! Process workers: this executable re-executed (never forked), one per worker slot, each
//! talking to its parent over a socket of its own. The parent side and the worker side of
//! the protocol (see [`crate::wire`]) sit side by side:
//!
//! * [`parent`] — a slot's driver thread: starting, stopping and replacing its worker;
//! * [`serve`] — the driver feeding a running worker and reading its results;
//! * [`child`] — the worker process: [`worker_main`];
//! * [`progress`] — the word in shared memory that tells the parent which task of a batch
//!   runs, so a crash or timeout is charged to that task alone;
//! * [`result_log`] — the results a worker finished, in the same shared memory, so that a
//!   crash or timeout never runs a finished task again.
//!
//! How a worker starts and dies with its parent is the OS-specific part, in [`crate::sys`].

use std::io;
use std::sync::{Arc, Mutex, OnceLock};

use super::job::JobCtl;
use super::kind::{Carriage, WorkerKind};
use super::state::{PoolState, Slot};
use crate::sys::socket::Stream;
use polycompute_core::sync::LockUnpoisoned;

mod child;
mod parent;
mod progress;
mod result_log;
mod serve;

pub use child::worker_main;

/// A process worker's per-slot state, beside the slot's common [`Slot`].
#[derive(Default)]
pub(crate) struct ProcessSlot {
    /// Jobs whose worker must be stopped (cancelled while running).
    abandoned: Mutex<Vec<Arc<JobCtl>>>,
    /// The current worker's socket, shut down to interrupt its driver.
    interrupt: Mutex<Option<Stream>>,
    /// The current worker's process id, valid while `interrupt` is `Some` (its driver still
    /// holds its `Child`, so the id is not reused): Windows wakes the driver by ending it.
    #[cfg(windows)]
    worker_pid: std::sync::atomic::AtomicU32,
}

impl ProcessSlot {
    /// Wakes the driver blocked on its worker's socket (and ends the worker, which exits
    /// when its socket closes): the driver then looks for why (shutdown, abandon).
    fn interrupt_driver(&self) {
        if let Some(stream) = self.interrupt.lock_unpoisoned().as_ref() {
            let _ = stream.shutdown(std::net::Shutdown::Both);
            // On Windows the shutdown does not wake a read already blocked on the socket
            // (rust-lang/rust#121594); a dying worker closes it, which does.
            #[cfg(windows)]
            let _ = crate::sys::terminate::terminate(self.worker_pid.load(std::sync::atomic::Ordering::Acquire));
        }
    }
}

/// The process [`WorkerKind`]. Its per-slot state is made when it starts, one per slot of
/// the pool.
#[derive(Default)]
pub(crate) struct ProcessWorkers {
    slots: OnceLock<Arc<[ProcessSlot]>>,
}

impl WorkerKind for ProcessWorkers {
    fn carriage(&self) -> Carriage {
        Carriage::Encoded
    }

    /// Starts one driver thread per slot; each starts its worker.
    fn start(&self, pool: &Arc<PoolState>) -> io::Result<()> {
        let slots = self.slots.get_or_init(|| pool.slots.iter().map(|_| ProcessSlot::default()).collect());
        for slot in &pool.slots {
            let (p, mine, id) = (pool.clone(), slots.clone(), slot.id);
            let h = std::thread::Builder::new()
                .name(format!("polycompute-driver-{id}"))
                .spawn(move || parent::drive(p, mine, id))?;
            pool.add_thread(h);
        }
        Ok(())
    }

    /// The driver notices on its next look at the socket, kills the worker and starts another.
    fn abandon(&self, _pool: &Arc<PoolState>, slot: &Slot, _gen: u64, ctl: &Arc<JobCtl>) {
        let Some(mine) = self.slots.get().and_then(|s| s.get(slot.id)) else { return };
        mine.abandoned.lock_unpoisoned().push(ctl.clone());
        mine.interrupt_driver();
    }

    fn wake_for_shutdown(&self) {
        for mine in self.slots.get().into_iter().flat_map(|s| s.iter()) {
            mine.interrupt_driver();
        }
    }

    /// A driver fails its own jobs in flight when it sees the pool stopping.
    fn fail_stuck(&self, _pool: &PoolState) {}
}
