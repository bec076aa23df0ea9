//! What a caller holds while tasks run: [`JobHandle`] for one task, [`MapResults`] for a
//! map, and the sinks that feed them.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::error::{TaskError, TaskErrorKind};
use super::job::{JobCtl, Positioned, Sink};
use super::state::PoolState;
use super::task::{Task, Value};
use polycompute_core::sync::{LockUnpoisoned, WaitUnpoisoned};

/// Turns a delivered value back into the task's output type.
pub(crate) fn typed<T: Task>(result: Result<Value, TaskError>, task: &str, index: u64) -> Result<T::Output, TaskError> {
    result.and_then(|v| {
        v.downcast::<T::Output>().map(|b| *b).map_err(|_| TaskError {
            task: task.to_string(),
            index,
            worker: None,
            device: None,
            attempts: 1,
            kind: TaskErrorKind::Serialization { message: "internal: the output has another type".into() },
        })
    })
}

#[derive(Default)]
struct ResultSlot {
    result: Option<Result<Value, TaskError>>,
    detached: bool,
}

/// The sink of one submitted task.
#[derive(Default)]
pub(crate) struct HandleSink {
    slot: Mutex<ResultSlot>,
    ready: AtomicBool,
    cv: Condvar,
}

impl Sink for HandleSink {
    fn deliver(&self, _pos: usize, result: Result<Value, TaskError>) {
        let mut slot = self.slot.lock_unpoisoned();
        if slot.detached {
            if let Err(e) = &result {
                tracing::warn!("{e} (its JobHandle was dropped without waiting for it)");
            }
            return;
        }
        slot.result = Some(result);
        self.ready.store(true, Ordering::Release);
        drop(slot);
        self.cv.notify_all();
    }
}

impl HandleSink {
    /// Waits until the result is there or `deadline` passes, then takes it.
    fn take(&self, deadline: Option<Instant>) -> Option<Result<Value, TaskError>> {
        // Poll for a moment before parking (see `spin`): a short task's result is usually
        // back by then (thread mode, no-op task: 11.5 µs median parking at once, 1.5 µs
        // polling first). A caller that asked to wait less than the window is not kept.
        if deadline.is_none_or(|d| d > Instant::now() + super::spin::WINDOW) {
            super::spin::until(|| self.ready.load(Ordering::Acquire));
        }
        let mut slot = self.slot.lock_unpoisoned();
        loop {
            if let Some(r) = slot.result.take() {
                return Some(r);
            }
            match deadline {
                None => slot = self.cv.wait_unpoisoned(slot),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return None;
                    }
                    slot = self.cv.wait_timeout_unpoisoned(slot, d - now).0;
                }
            }
        }
    }

    /// The handle goes away: log an error that is already there, and any that comes later.
    fn detach(&self) {
        let mut slot = self.slot.lock_unpoisoned();
        slot.detached = true;
        if let Some(Err(e)) = slot.result.take() {
            tracing::warn!("{e} (its JobHandle was dropped without waiting for it)");
        }
    }
}

/// One submitted task. Wait for it, or cancel it; dropping a handle without waiting lets
/// the task run, and logs its error if it fails (failures are never silent).
#[must_use = "a task's result (or error) is only seen through its handle"]
pub struct JobHandle<T: Task> {
    pub(crate) sink: Arc<HandleSink>,
    pub(crate) ctl: Arc<JobCtl>,
    pub(crate) pool: Weak<PoolState>,
    pub(crate) taken: bool,
    pub(crate) _task: PhantomData<fn() -> T>,
}

impl<T: Task> JobHandle<T> {
    /// The task's index.
    pub fn index(&self) -> u64 {
        self.ctl.first_index
    }

    /// Whether the result is there.
    pub fn is_finished(&self) -> bool {
        self.sink.ready.load(Ordering::Acquire)
    }

    /// Waits for the result.
    pub fn wait(mut self) -> Result<T::Output, TaskError> {
        self.taken = true;
        if let Some(pool) = self.pool.upgrade() {
            pool.workers.drive_until(&pool, &|| self.sink.ready.load(Ordering::Acquire));
        }
        let result = self.sink.take(None).unwrap_or_else(|| Err(self.ctl.error(0, None, 1, TaskErrorKind::ShutDown)));
        typed::<T>(result, T::NAME, self.ctl.first_index)
    }

    /// Waits at most `timeout`; gives the handle back when the result is not there yet
    /// (the task keeps running: cancel it to stop it).
    pub fn wait_timeout(mut self, timeout: Duration) -> Result<Result<T::Output, TaskError>, JobHandle<T>> {
        match self.sink.take(Some(Instant::now() + timeout)) {
            Some(result) => {
                self.taken = true;
                Ok(typed::<T>(result, T::NAME, self.ctl.first_index))
            }
            None => Err(self),
        }
    }

    /// Cancels the task: a queued task never starts; a running one is stopped (its process
    /// worker is killed and replaced; a thread worker, which cannot be interrupted, is left
    /// to finish on its own, its result discarded, and a fresh thread takes its place).
    /// `wait` then returns a `Cancelled` error, unless the result was already there.
    pub fn cancel(&self) {
        match self.pool.upgrade() {
            Some(pool) => pool.cancel(&self.ctl),
            None => {
                self.ctl.set_cancelled();
                self.ctl.fail_rest(None, 1, TaskErrorKind::Cancelled);
            }
        }
    }
}

impl<T: Task> Drop for JobHandle<T> {
    fn drop(&mut self) {
        if !self.taken {
            self.sink.detach();
        }
    }
}

impl<T: Task> std::fmt::Debug for JobHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JobHandle({} #{}, finished: {})", T::NAME, self.index(), self.is_finished())
    }
}

/// The sink of a map: results travel through a channel in completion order, in bunches.
pub(crate) struct MapSink(pub(crate) Sender<Vec<Positioned>>);

impl Sink for MapSink {
    fn deliver(&self, pos: usize, result: Result<Value, TaskError>) {
        self.deliver_many(vec![(pos, result)]);
    }

    fn deliver_many(&self, results: Vec<Positioned>) {
        // The receiver is gone when the caller dropped the iterator: nobody wants them.
        let _ = self.0.send(results);
    }
}

/// A completion callback, typed results erased.
pub(crate) type Callback = Box<dyn FnOnce(Result<Value, TaskError>) + Send>;

/// A task run for its callback: the callback runs on the pool's callback thread.
pub(crate) struct CallbackSink {
    pub(crate) callback: Mutex<Option<Callback>>,
    pub(crate) runner: Sender<Box<dyn FnOnce() + Send>>,
}

impl Sink for CallbackSink {
    fn deliver(&self, _pos: usize, result: Result<Value, TaskError>) {
        let callback = self.callback.lock_unpoisoned().take();
        if let Some(cb) = callback {
            if let Err(e) = self.runner.send(Box::new(move || cb(result))) {
                tracing::warn!("the pool's callback thread is gone; a completion callback was not run");
                drop(e);
            }
        }
    }
}

/// The results of [`super::Pool::map_unordered`] as they finish: `(position, result)`,
/// each position exactly once. Dropping it cancels the tasks that have not started.
pub struct MapResults<T: Task> {
    pub(crate) rx: Receiver<Vec<Positioned>>,
    pub(crate) bunch: std::vec::IntoIter<Positioned>,
    pub(crate) seen: Vec<bool>,
    pub(crate) remaining: usize,
    pub(crate) first_index: u64,
    pub(crate) cancel: Arc<AtomicBool>,
    pub(crate) progress: Option<indicatif::ProgressBar>,
    pub(crate) _task: PhantomData<fn() -> T>,
}

impl<T: Task> MapResults<T> {
    /// How many results are still to come.
    pub fn remaining(&self) -> usize {
        self.remaining
    }
}

impl<T: Task> Iterator for MapResults<T> {
    type Item = (usize, Result<T::Output, TaskError>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            if let Some(bar) = self.progress.take() {
                bar.finish();
            }
            return None;
        }
        let next = match self.bunch.next() {
            Some(item) => Ok(Some(item)),
            None => self.rx.recv().map(|bunch| {
                self.bunch = bunch.into_iter();
                self.bunch.next()
            }),
        };
        let (pos, result) = match next {
            Ok(Some((pos, result))) if pos < self.seen.len() && !self.seen[pos] => (pos, result),
            Ok(None) => return self.next(),
            Ok(Some((pos, _))) => {
                tracing::error!("polycompute pool: result for position {pos} delivered twice (a bug; please report)");
                return self.next();
            }
            Err(_) => {
                // Every sender is gone with results missing: a bug, but never a hang.
                let pos = self.seen.iter().position(|s| !s)?;
                tracing::error!("polycompute pool: the result of map position {pos} was lost (a bug; please report)");
                let index = self.first_index + pos as u64;
                let err = TaskError {
                    task: T::NAME.into(),
                    index,
                    worker: None,
                    device: None,
                    attempts: 1,
                    kind: TaskErrorKind::ShutDown,
                };
                (pos, Err(err))
            }
        };
        self.seen[pos] = true;
        self.remaining -= 1;
        if let Some(bar) = &self.progress {
            bar.inc(1);
        }
        Some((pos, typed::<T>(result, T::NAME, self.first_index + pos as u64)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T: Task> Drop for MapResults<T> {
    fn drop(&mut self) {
        if self.remaining > 0 {
            self.cancel.store(true, Ordering::Release);
        }
        if let Some(bar) = self.progress.take() {
            bar.abandon();
        }
    }
}
