//! When and how work is split across rayon's threads.

/// Arrays at least this long are processed in parallel; smaller ones inline, where
/// rayon's hand-off would cost more than the work.
pub(crate) const PAR_MIN: usize = 1 << 16;

/// Elements per parallel task: large enough to amortise a task's set-up (scratch buffers),
/// small enough to balance the load. A multiple of every chunk size used inside a task.
pub(crate) const TASK: usize = 1 << 16;
