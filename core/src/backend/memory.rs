//! [`MemoryStats`]: what a device's caching allocator holds and has done, for any backend
//! that keeps one ([`crate::Device::memory_stats`]).

/// The figures of a device's caching allocator: freed buffers kept for reuse by size
/// class, under a bound.
///
/// ```
/// use polycompute_core::MemoryStats;
/// let s = MemoryStats { hits: 3, misses: 1, ..MemoryStats::default() };
/// assert_eq!(s.hit_rate(), Some(0.75));
/// assert_eq!(MemoryStats::default().hit_rate(), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes of free blocks kept for reuse.
    pub cached_bytes: usize,
    /// Number of free blocks kept for reuse.
    pub cached_blocks: usize,
    /// Bytes of blocks held by live buffers (size classes, so at least their data).
    pub live_bytes: usize,
    /// The bound on `cached_bytes`.
    pub limit_bytes: usize,
    /// Allocations served from the cache.
    pub hits: u64,
    /// Allocations that asked the system for a new block.
    pub misses: u64,
    /// Bytes of cached blocks handed back to the system (bound, pressure, release, drop).
    pub released_bytes: u64,
}

impl MemoryStats {
    /// The share of allocations served from the cache, or `None` before the first one.
    pub fn hit_rate(&self) -> Option<f64> {
        let all = self.hits + self.misses;
        (all > 0).then(|| self.hits as f64 / all as f64)
    }
}
