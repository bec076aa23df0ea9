//! When and how work is split across rayon's threads.

/// Arrays at least this long are processed in parallel; smaller ones inline, where
/// rayon's hand-off would cost more than the work.
pub(crate) const PAR_MIN: usize = 1 << 16;

/// Elements per parallel task: large enough to amortise a task's set-up (scratch buffers),
/// small enough to balance the load. A multiple of every chunk size used inside a task.
pub(crate) const TASK: usize = 1 << 16;

/// Largest task of a streaming pass: each thread then walks long contiguous runs of every
/// array, which measured a few percent faster than [`TASK`] for `map` on 2^24 elements.
const MAX_STREAM_TASK: usize = 1 << 16;

/// Elements per parallel task of a streaming pass over `len` elements: about four tasks
/// per thread (to balance the load), between `align` and [`MAX_STREAM_TASK`], a multiple of
/// `align`.
pub(crate) fn stream_task(len: usize, align: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    len.div_ceil(4 * threads).clamp(align, MAX_STREAM_TASK).next_multiple_of(align)
}
