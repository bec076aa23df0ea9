//! A process worker's log of finished results: a shared-memory area after the progress
//! word, in its segment (see [`super::progress`]), that the worker appends each finished result to *before* its progress word moves
//! past it, and empties each time a results frame has gone out on the socket. The parent
//! reads it only once the worker is dead (a crash, or killed after a timeout): with the
//! frames that reached the socket, it then has every result the worker finished, so a crash
//! re-runs only the input that was running, never a finished one. When results arrive
//! normally the log is never read; the socket stays the fast path.
//!
//! Layout (bytes, from the log's start, 64-byte aligned): a 64-bit atomic at 0, the end of
//! the committed entries (an offset into the entries, which start at [`ENTRIES`]); then entries, each `u32 job | u32 input |
//! item`, the item as in a results body (`u8 tag | u32 length | bytes`: see
//! [`crate::wire`]). An entry's bytes are written before the end word is moved past them
//! (Release), so an entry cut short by a crash is never counted; emptying the log is one
//! store of 0.
//!
//! A result too large for the log is not logged: the worker sends it on the socket before
//! it starts its next input instead (see `child`), which is as safe, only slower.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::shared::SharedArray;
use crate::wire;

/// The log's size in bytes: results of a millisecond of tiny tasks (the bunch a worker
/// sends at once) take a few kilobytes; a result up to about this size (inline, that is
/// under the pool's shared-memory threshold, 1 MiB by default) is logged. Its pages are
/// touched only as far as entries reach between two frames.
pub(super) const BYTES: usize = 2 << 20;

/// Where the entries start (the end word sits alone in its cache line).
const ENTRIES: usize = 64;

/// An entry's own header: the job's id (low 32 bits) and the input.
const ENTRY_HEAD: usize = 8;

/// The log of one worker, as the worker writes it and the parent reads it.
pub(crate) struct ResultLog {
    /// Keeps the mapping alive while `base` points into it.
    _array: SharedArray<u32>,
    /// The log's start in the mapping: [`BYTES`] bytes, 64-byte aligned.
    base: *mut u8,
    /// The end of the committed entries, as the worker last wrote it (only it writes the
    /// end word).
    end: usize,
}

// SAFETY: `base` points into the mapping `_array` keeps alive for as long as `self`; the
// worker writes it from one thread at a time (its outbox lock) and the parent reads it only
// once the worker is dead, so moving the log between threads shares nothing unguarded.
unsafe impl Send for ResultLog {}

impl ResultLog {
    /// The log at `base`, inside `array`'s mapping.
    ///
    /// # Safety
    /// `base` is 64-byte aligned, [`BYTES`] bytes from it lie inside `array`'s data, and
    /// nothing in this process reaches those bytes but this log.
    pub(super) unsafe fn new(array: SharedArray<u32>, base: *mut u8) -> ResultLog {
        ResultLog { _array: array, base, end: 0 }
    }

    fn end_word(&self) -> &AtomicU64 {
        // SAFETY: the log starts 64-byte aligned and holds BYTES bytes (`new`), so its first
        // 8 are a valid, aligned `AtomicU64`; both processes access them only
        // through this atomic type.
        unsafe { AtomicU64::from_ptr(self.base.cast::<u64>()) }
    }

    /// Logs `item` (one result, as in a results body) as input `k` of job `id`; false when
    /// it does not fit in what is left of the log (nothing is written then).
    pub(crate) fn append(&mut self, id: u64, k: usize, item: &[u8]) -> bool {
        let len = ENTRY_HEAD + item.len();
        if len > BYTES - ENTRIES - self.end {
            return false;
        }
        let mut head = [0u8; ENTRY_HEAD];
        head[..4].copy_from_slice(&(id as u32).to_le_bytes());
        head[4..].copy_from_slice(&(k as u32).to_le_bytes());
        // SAFETY: `ENTRIES + end + len <= BYTES` (checked above), inside the mapping; only
        // this worker writes there (one thread at a time), and the parent reads these bytes
        // only after the end word counts them, which it does below.
        unsafe {
            let at = self.base.add(ENTRIES + self.end);
            std::ptr::copy_nonoverlapping(head.as_ptr(), at, ENTRY_HEAD);
            std::ptr::copy_nonoverlapping(item.as_ptr(), at.add(ENTRY_HEAD), item.len());
        }
        self.end += len;
        // Release: the entry's bytes are in memory before the word counts them.
        self.end_word().store(self.end as u64, Ordering::Release);
        true
    }

    /// Forgets every entry: their results went out on the socket, whose bytes reach the
    /// parent even if this process dies now.
    pub(crate) fn clear(&mut self) {
        if self.end != 0 {
            self.end = 0;
            self.end_word().store(0, Ordering::Release);
        }
    }

    /// The parent's side, once the worker is dead: the results logged for inputs `from..`
    /// of job `id`, in order and without a gap, as a results body, and how many there are.
    /// Entries of other jobs, of inputs before `from` (their frames arrived) and anything
    /// malformed are skipped: what is not recovered here runs again, as before the log.
    pub(crate) fn recover(&self, id: u64, from: usize) -> (Vec<u8>, usize) {
        let end = (self.end_word().load(Ordering::Acquire) as usize).min(BYTES - ENTRIES);
        let mut bytes = vec![0u8; end];
        // SAFETY: `ENTRIES + end <= BYTES`, inside the mapping; the worker that wrote it is
        // dead, so nothing writes it while it is copied.
        unsafe { std::ptr::copy_nonoverlapping(self.base.add(ENTRIES), bytes.as_mut_ptr(), end) };
        let (mut body, mut next) = (Vec::new(), from);
        let mut rest = bytes.as_slice();
        while rest.len() >= ENTRY_HEAD + 5 {
            let job = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
            let k = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
            let Some(Ok((tag, item))) = wire::items(&rest[ENTRY_HEAD..]).next() else { break };
            if job == id as u32 && k == next {
                wire::push_item(&mut body, tag, item);
                next += 1;
            }
            rest = &rest[ENTRY_HEAD + 5 + item.len()..];
        }
        (body, next - from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::progress::Progress;

    fn item(bytes: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        wire::push_item(&mut v, wire::INLINE, bytes);
        v
    }

    fn pair() -> (Progress, ResultLog, ResultLog) {
        let parent = Progress::create().unwrap();
        let log = parent.results_log().unwrap();
        let worker = Progress::attach(&parent.handle().unwrap()).unwrap().results_log().unwrap();
        (parent, log, worker)
    }

    #[test]
    fn the_parent_recovers_what_the_worker_logged_from_where_its_frames_stopped() {
        let (_progress, parent, mut worker) = pair();
        assert_eq!(parent.recover(7, 0), (Vec::new(), 0));
        for k in 0..4 {
            assert!(worker.append(7, k, &item(&[k as u8; 3])));
        }
        let (body, n) = parent.recover(7, 2);
        assert_eq!(n, 2);
        let items: Vec<_> = wire::items(&body).map(|i| i.unwrap()).collect();
        assert_eq!(items, [(wire::INLINE, &[2u8; 3][..]), (wire::INLINE, &[3u8; 3][..])]);
        assert_eq!(parent.recover(8, 0).1, 0, "another job's entries are not this one's");
        assert_eq!(parent.recover(7, 5).1, 0, "nothing logged from there");
        worker.clear();
        assert_eq!(parent.recover(7, 0).1, 0, "sent results are forgotten");
        assert!(worker.append(7, 4, &item(b"x")));
        assert_eq!(parent.recover(7, 4).1, 1);
    }

    #[test]
    fn a_result_larger_than_the_log_is_refused_whole() {
        let (_progress, parent, mut worker) = pair();
        assert!(!worker.append(1, 0, &item(&vec![0u8; BYTES])));
        assert!(worker.append(1, 0, &item(&vec![1u8; BYTES / 2])));
        assert!(!worker.append(1, 1, &item(&vec![1u8; BYTES / 2])), "no room left");
        assert_eq!(parent.recover(1, 0).1, 1);
    }
}
