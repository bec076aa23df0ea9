//! A process worker's progress word: one 64-bit atomic in shared memory that the worker
//! updates around every task and the parent reads without a system call. It is what lets
//! the parent charge a crash or a timeout to the one task that was running inside a batch
//! (or to none, when the worker died between tasks), however few results had come back.
//!
//! The word is `job id (low 32 bits) << 32 | phase`: phase `2k + 1` while input `k` of the
//! job runs, `2k + 2` once it finished (its result may not have been sent yet), 0 before
//! any task ran.
//!
//! The word's segment also holds the worker's log of finished results, from byte 64 on
//! (see [`super::result_log`]): one segment and one handle per worker.

use std::sync::atomic::{AtomicU64, Ordering};

use super::result_log::{self, ResultLog};
use crate::shared::{SharedArray, SharedHandle};

/// The word's part of the segment, in u32s: a cache line of its own.
const WORD_PART: usize = 16;

/// Where a worker stands, as read by the parent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mark {
    /// The low 32 bits of the job's id.
    pub(crate) job: u32,
    /// `2k + 1`: input `k` runs; `2k + 2`: it finished; 0: nothing ran yet.
    pub(crate) phase: u32,
}

impl Mark {
    /// The input of job `id` that runs now, if one does.
    pub(crate) fn running(self, id: u64) -> Option<usize> {
        (self.job == id as u32 && self.phase % 2 == 1).then_some((self.phase / 2) as usize)
    }
}

/// The progress word, in shared memory or (where that failed) in this process only.
pub(crate) struct Progress {
    /// Keeps the mapping alive while `word` points into it.
    array: Option<SharedArray<u32>>,
    /// Used when there is no shared mapping: the worker's own threads still read it.
    local: Box<AtomicU64>,
    /// The word in the mapping (null without one).
    word: *const AtomicU64,
    /// Where the result log starts in the mapping (null without one, or in a segment made
    /// without room for it).
    log: *mut u8,
}

// SAFETY: `word` points to an `AtomicU64` (in `local`, or in the mapping `array` keeps alive
// for as long as `self`); atomics may be shared and sent between threads.
unsafe impl Send for Progress {}
// SAFETY: as for Send: every access goes through the atomic.
unsafe impl Sync for Progress {}

impl Progress {
    /// A word in a new shared-memory segment (the parent's side).
    pub(crate) fn create() -> polycompute_core::Result<Progress> {
        Ok(Progress::over(SharedArray::<u32>::zeros(&[WORD_PART + result_log::BYTES / 4])?))
    }

    /// The word the parent made (the worker's side).
    pub(crate) fn attach(handle: &SharedHandle) -> polycompute_core::Result<Progress> {
        Ok(Progress::over(SharedArray::<u32>::attach(handle)?))
    }

    /// A word nobody else sees (the worker's threads only).
    pub(crate) fn local() -> Progress {
        Progress { array: None, local: Box::new(AtomicU64::new(0)), word: std::ptr::null(), log: std::ptr::null_mut() }
    }

    fn over(mut array: SharedArray<u32>) -> Progress {
        // SAFETY: the parent zeroed and handed out this array only to be this word and the
        // result log: no other reference to its elements exists in this process; the pointer
        // is only used below, through the atomic and the log.
        let ptr = unsafe { array.as_slice_mut() }.as_mut_ptr();
        let has_log = array.len() >= WORD_PART + result_log::BYTES / 4;
        // SAFETY: in bounds when `has_log` (checked); 64 bytes past a 64-byte aligned start.
        let log = if has_log { unsafe { ptr.add(WORD_PART) }.cast::<u8>() } else { std::ptr::null_mut() };
        // SAFETY: the array's data starts 64-byte aligned (segment layout) and holds at least
        // 16 u32s, so its first 8 bytes are a valid, aligned `AtomicU64`; the other process
        // accesses them only through the same atomic type.
        let word = unsafe { AtomicU64::from_ptr(ptr.cast::<u64>()) } as *const AtomicU64;
        Progress { array: Some(array), local: Box::new(AtomicU64::new(0)), word, log }
    }

    /// The worker's result log in this word's segment, where there is one. Each side (the
    /// parent, the worker) takes it once.
    pub(crate) fn results_log(&self) -> Option<ResultLog> {
        let array = self.array.as_ref().filter(|_| !self.log.is_null())?;
        // SAFETY: `log` is 64-byte aligned and `BYTES` bytes from it lie in the array (see
        // `over`); nothing else in this process touches them (each side takes one log).
        Some(unsafe { ResultLog::new(array.clone(), self.log) })
    }

    /// The handle the worker attaches with (none for a local word).
    pub(crate) fn handle(&self) -> Option<SharedHandle> {
        self.array.as_ref().map(SharedArray::handle)
    }

    /// Whether the word is shared with the worker (else the parent cannot see its progress).
    pub(crate) fn is_shared(&self) -> bool {
        self.array.is_some()
    }

    fn word(&self) -> &AtomicU64 {
        if self.array.is_none() {
            return &self.local;
        }
        // SAFETY: with a mapping, `word` points into it (see the type's Send/Sync) and is
        // valid for as long as `self`.
        unsafe { &*self.word }
    }

    /// Input `k` of job `id` starts.
    pub(crate) fn start(&self, id: u64, k: usize) {
        self.set(id, 2 * k as u32 + 1);
    }

    /// Input `k` of job `id` finished.
    pub(crate) fn finish(&self, id: u64, k: usize) {
        self.set(id, 2 * k as u32 + 2);
    }

    fn set(&self, id: u64, phase: u32) {
        self.word().store(((id & 0xFFFF_FFFF) << 32) | u64::from(phase), Ordering::Release);
    }

    /// Where the worker stands.
    pub(crate) fn get(&self) -> Mark {
        let v = self.word().load(Ordering::Acquire);
        Mark { job: (v >> 32) as u32, phase: v as u32 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worker_side_sees_what_the_parent_side_wrote_and_back() {
        let parent = Progress::create().unwrap();
        let worker = Progress::attach(&parent.handle().unwrap()).unwrap();
        assert_eq!(parent.get(), Mark { job: 0, phase: 0 });
        worker.start(7, 3);
        assert_eq!(parent.get().running(7), Some(3));
        assert_eq!(parent.get().running(8), None, "another job");
        worker.finish(7, 3);
        assert_eq!(parent.get().running(7), None, "between tasks");
        let local = Progress::local();
        local.start(1, 0);
        assert_eq!(local.get().running(1), Some(0));
        assert!(local.handle().is_none());
    }
}
