//! [`SharedLock`]: a lock for serial sections, shared by the parent and its workers.

use std::fs::OpenOptions;

use serde::{Deserialize, Serialize};

use super::SharedArray;
use polycompute_core::error::{Error, Result};

/// A lock across the parent and its workers, threads and processes alike: a file lock
/// (`flock` on Unix, `LockFileEx` on Windows) on a small segment file that lives and is
/// cleaned up like a [`SharedArray`]'s. Create it in the parent, hand it to tasks in their
/// input (it serializes as a handle), and run serial sections with [`SharedLock::with`].
///
/// ```
/// use polycompute_pool::shared::SharedLock;
/// let lock = SharedLock::new().unwrap();
/// let two = lock.with(|| 1 + 1).unwrap();
/// assert_eq!(two, 2);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SharedLock {
    seg: SharedArray<u32>,
}

impl SharedLock {
    /// A new lock.
    pub fn new() -> Result<SharedLock> {
        Ok(SharedLock { seg: SharedArray::zeros(&[0])? })
    }

    /// The lock's name (its segment's file name).
    pub fn name(&self) -> &str {
        self.seg.segment_name()
    }

    /// Runs `f` holding the lock: no other `with` of this lock, in any thread or process,
    /// runs at the same time. Blocks until the lock is free. Not reentrant: calling `with`
    /// again inside `f` deadlocks.
    pub fn with<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        let err = |what: &str, e: std::io::Error| Error::SharedMemory {
            segment: self.name().to_string(),
            why: what.to_string(),
            source: Some(e),
        };
        // Each call opens the file anew: a file lock belongs to an open file, so two threads
        // of one process exclude each other too.
        let file = OpenOptions::new().read(true).write(true).open(self.seg.segment_path());
        let mut lock = fd_lock::RwLock::new(file.map_err(|e| err("cannot open the lock file", e))?);
        let guard = lock.write().map_err(|e| err("cannot take the lock", e))?;
        let out = f();
        drop(guard);
        Ok(out)
    }
}
