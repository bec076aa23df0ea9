//! Locks that shrug off poisoning: `lock_unpoisoned()` for
//! `lock().unwrap_or_else(|p| p.into_inner())`. A panic while a lock is held poisons it;
//! what the crate keeps behind its locks is updated in single steps (a push, a take, an
//! assignment) that a panic cannot leave half done, so the data is used as it is rather
//! than one panic becoming a panic in every thread that touches the lock.

use std::sync::{Condvar, Mutex, MutexGuard, WaitTimeoutResult};
use std::time::Duration;

/// [`Mutex::lock`] without the poisoning error.
///
/// ```
/// use polycompute_core::sync::LockUnpoisoned;
/// let m = std::sync::Mutex::new(1);
/// *m.lock_unpoisoned() += 1;
/// assert_eq!(*m.lock_unpoisoned(), 2);
/// ```
pub trait LockUnpoisoned<T: ?Sized> {
    /// Locks, taking the data even when a thread panicked while holding the lock.
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> LockUnpoisoned<T> for Mutex<T> {
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// [`Condvar::wait`] and [`Condvar::wait_timeout`] without the poisoning error.
pub trait WaitUnpoisoned {
    /// Waits for a notification, taking the data even when the lock was poisoned meanwhile.
    fn wait_unpoisoned<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T>;

    /// Waits for a notification or `timeout`, as [`Self::wait_unpoisoned`].
    fn wait_timeout_unpoisoned<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> (MutexGuard<'a, T>, WaitTimeoutResult);
}

impl WaitUnpoisoned for Condvar {
    fn wait_unpoisoned<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.wait(guard).unwrap_or_else(|p| p.into_inner())
    }

    fn wait_timeout_unpoisoned<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> (MutexGuard<'a, T>, WaitTimeoutResult) {
        self.wait_timeout(guard, timeout).unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_poisoned_mutex_still_locks_with_its_data() {
        let m = Arc::new(Mutex::new(vec![1]));
        let m2 = m.clone();
        let _ = std::thread::spawn(move || {
            let mut g = m2.lock().unwrap();
            g.push(2);
            panic!("poison it");
        })
        .join();
        assert!(m.is_poisoned());
        assert_eq!(*m.lock_unpoisoned(), vec![1, 2]);
        let cv = Condvar::new();
        let (g, timed_out) = cv.wait_timeout_unpoisoned(m.lock_unpoisoned(), Duration::from_millis(1));
        assert!(timed_out.timed_out());
        assert_eq!(g.len(), 2);
    }
}
