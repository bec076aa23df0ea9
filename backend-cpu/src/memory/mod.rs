//! The CPU device's caching allocator: buffers freed by dropped arrays are kept in free
//! lists by size class and handed to the next op that needs that size, so a loop of ops of
//! the same sizes stops paying the kernel for memory (PyTorch's caching allocator on GPUs
//! works the same way).
//!
//! Size classes: powers of two up to 512 KiB (at least 64 bytes), then multiples of 2 MiB
//! (huge-page mappings, see [`block`]). The cache holds at most `limit` bytes of free blocks
//! (the least recently used other classes are released first to make room); it is emptied
//! when an allocation fails, when the system runs short of memory (checked at most every
//! [`PRESSURE_CHECK`] as blocks come back), on [`Pool::release_cached`], and when the
//! device is dropped.

pub(crate) mod block;
mod pressure;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytemuck::{CheckedBitPattern, NoUninit};
use polycompute_core::sync::LockUnpoisoned;
use polycompute_core::{DeviceId, Error, MemoryStats, Result};

use block::{Block, HUGE_PAGE, LARGE};

/// Least time between two reads of the system's free memory.
const PRESSURE_CHECK: Duration = Duration::from_millis(100);

/// Frees of small blocks between two looks at the clock for [`PRESSURE_CHECK`].
const SMALL_FREES_PER_CHECK: u32 = 64;

/// Default bound of the cache: 1 GiB, or a quarter of the machine's memory if that is less.
pub(crate) fn default_limit() -> usize {
    let quarter = pressure::total_memory().map_or(usize::MAX, |t| usize::try_from(t / 4).unwrap_or(usize::MAX));
    quarter.min(1 << 30)
}

/// What the caching allocator of one CPU device holds and has done: core's
/// [`MemoryStats`], which [`polycompute_core::Device::memory_stats`] reports for any device.
pub type CacheStats = MemoryStats;

struct State {
    /// Free blocks per size class, the classes in the order a block of theirs was last
    /// freed (most recent last; a program uses a handful of sizes, so a scan from the end
    /// is cheaper than hashing).
    free: Vec<(usize, Vec<Block>)>,
    stats: CacheStats,
    last_pressure_check: Instant,
    /// Blocks taken back so far (wrapping): when a small one looks at the clock.
    frees: u32,
    /// After the device is dropped: blocks go straight back to the system.
    closed: bool,
}

/// One device's caching allocator. Buffers hold an `Arc` to it, so it outlives the device
/// while any of them lives.
pub(crate) struct Pool {
    state: Mutex<State>,
    device: DeviceId,
}

/// The size class of a request of `bytes`.
pub(crate) fn size_class(bytes: usize) -> usize {
    if bytes == 0 {
        0
    } else if bytes < LARGE {
        bytes.next_power_of_two().max(64)
    } else {
        bytes.next_multiple_of(HUGE_PAGE)
    }
}

impl Pool {
    /// An empty cache for `device`, holding at most `limit` bytes of free blocks.
    pub(crate) fn new(device: DeviceId, limit: usize) -> Pool {
        let stats = CacheStats { limit_bytes: limit, ..CacheStats::default() };
        let state = State { free: Vec::new(), stats, last_pressure_check: Instant::now(), frees: 0, closed: false };
        Pool { state: Mutex::new(state), device }
    }

    /// A buffer of `len` elements of `T`, from the cache when a block of its class is free.
    /// Its contents are unspecified (zeros or an earlier buffer's data): write every element.
    pub(crate) fn alloc<T: NoUninit>(self: &Arc<Self>, len: usize) -> Result<Pooled> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| self.oom(u64::MAX))?;
        let class = size_class(bytes);
        {
            let mut s = self.state.lock_unpoisoned();
            if let Some(block) = s.take(class) {
                s.stats.cached_bytes -= class;
                s.stats.cached_blocks -= 1;
                s.stats.live_bytes += class;
                s.stats.hits += 1;
                return Ok(Pooled { block: Some(block), pool: self.clone() });
            }
            s.stats.misses += 1;
        }
        let block = match Block::new(class) {
            Ok(b) => b,
            // The system may only be short of what this cache holds.
            Err(_) => {
                self.release_cached();
                Block::new(class).map_err(|_| self.oom(class as u64))?
            }
        };
        self.state.lock_unpoisoned().stats.live_bytes += class;
        Ok(Pooled { block: Some(block), pool: self.clone() })
    }

    fn oom(&self, bytes: u64) -> Error {
        Error::OutOfMemory { device: self.device, bytes }
    }

    /// Takes back a block whose buffer was dropped: keeps it for reuse when it fits the
    /// bound, releasing other classes' blocks (least recently freed first) to make room.
    fn give_back(&self, block: Block) {
        let class = block.bytes();
        let mut released = Vec::new();
        {
            let mut s = self.state.lock_unpoisoned();
            s.stats.live_bytes -= class;
            if s.closed || class > s.stats.limit_bytes || class == 0 {
                released.push(block);
            } else {
                while s.stats.cached_bytes + class > s.stats.limit_bytes {
                    match s.evict_one() {
                        Some(b) => released.push(b),
                        None => break,
                    }
                }
                s.stats.cached_bytes += class;
                s.stats.cached_blocks += 1;
                let mut list = match s.free.iter().rposition(|(c, _)| *c == class) {
                    Some(i) => s.free.remove(i).1,
                    None => Vec::new(),
                };
                list.push(block);
                s.free.push((class, list));
                // Reading the clock shows in a loop of small ops: small blocks look at it
                // every [`SMALL_FREES_PER_CHECK`] frees only.
                s.frees = s.frees.wrapping_add(1);
                let look = class >= LARGE || s.frees % SMALL_FREES_PER_CHECK == 0;
                if look && s.last_pressure_check.elapsed() >= PRESSURE_CHECK {
                    s.last_pressure_check = Instant::now();
                    drop(s);
                    if pressure::memory_is_low() {
                        self.release_cached();
                    }
                }
            }
        }
        // Unmapping happens outside the lock.
        self.count_released(&released);
    }

    fn count_released(&self, blocks: &[Block]) {
        let bytes: usize = blocks.iter().map(Block::bytes).sum();
        if bytes > 0 {
            self.state.lock_unpoisoned().stats.released_bytes += bytes as u64;
        }
    }

    /// Hands every cached block back to the system.
    pub(crate) fn release_cached(&self) {
        let released: Vec<Block> = {
            let mut s = self.state.lock_unpoisoned();
            s.stats.cached_bytes = 0;
            s.stats.cached_blocks = 0;
            s.free.drain(..).flat_map(|(_, blocks)| blocks).collect()
        };
        self.count_released(&released);
    }

    /// Releases the cache and stops caching: the device is gone, so blocks of buffers that
    /// outlive it go straight back to the system.
    pub(crate) fn close(&self) {
        self.state.lock_unpoisoned().closed = true;
        self.release_cached();
    }

    /// A snapshot of the figures.
    pub(crate) fn stats(&self) -> CacheStats {
        self.state.lock_unpoisoned().stats
    }
}

impl State {
    /// A cached block of `class`, if any (the counts are the caller's to update).
    fn take(&mut self, class: usize) -> Option<Block> {
        let i = self.free.iter().rposition(|(c, _)| *c == class)?;
        let block = self.free[i].1.pop();
        if self.free[i].1.is_empty() {
            self.free.remove(i);
        }
        block
    }

    /// Removes one cached block of the least recently freed class.
    fn evict_one(&mut self) -> Option<Block> {
        let (class, list) = self.free.first_mut()?;
        let (class, block) = (*class, list.pop()?);
        if list.is_empty() {
            self.free.remove(0);
        }
        self.stats.cached_bytes -= class;
        self.stats.cached_blocks -= 1;
        Some(block)
    }
}

/// A block lent to one buffer; returns to its pool when dropped.
pub(crate) struct Pooled {
    block: Option<Block>,
    pool: Arc<Pool>,
}

impl Pooled {
    /// The first `len` elements as `T`.
    pub(crate) fn typed<T: CheckedBitPattern + NoUninit>(&self, len: usize) -> &[T] {
        self.block().typed(len)
    }

    /// The first `len` elements as `T`, to write.
    pub(crate) fn typed_mut<T: CheckedBitPattern + NoUninit>(&mut self, len: usize) -> &mut [T] {
        match &mut self.block {
            Some(b) => b.typed_mut(len),
            None => unreachable!("a pooled block is present until drop"),
        }
    }

    fn block(&self) -> &Block {
        match &self.block {
            Some(b) => b,
            None => unreachable!("a pooled block is present until drop"),
        }
    }
}

impl std::fmt::Debug for Pooled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pooled({} bytes)", self.block().bytes())
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(b) = self.block.take() {
            self.pool.give_back(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute_core::BackendKind;

    fn pool(limit: usize) -> Arc<Pool> {
        Arc::new(Pool::new(DeviceId::new(BackendKind::Cpu, 0), limit))
    }

    #[test]
    fn size_classes_are_powers_of_two_then_huge_pages() {
        assert_eq!([size_class(0), size_class(1), size_class(65), size_class(4096)], [0, 64, 128, 4096]);
        assert_eq!(size_class(LARGE - 1), LARGE);
        assert_eq!(size_class(LARGE), HUGE_PAGE);
        assert_eq!(size_class(HUGE_PAGE + 1), 2 * HUGE_PAGE);
    }

    #[test]
    fn a_freed_block_is_reused_for_the_same_class() {
        let p = pool(1 << 30);
        let a = p.alloc::<f32>(1000).unwrap();
        let addr = a.typed::<f32>(1000).as_ptr();
        drop(a);
        assert_eq!(p.stats().cached_blocks, 1);
        let b = p.alloc::<f32>(900).unwrap(); // same 4 KiB class
        assert_eq!(b.typed::<f32>(900).as_ptr(), addr);
        let s = p.stats();
        assert_eq!((s.hits, s.misses, s.cached_blocks, s.live_bytes), (1, 1, 0, 4096));
    }

    #[test]
    fn the_cache_stays_within_its_bound_releasing_the_oldest_class() {
        let p = pool(4 * HUGE_PAGE);
        let (a, b) = (p.alloc::<u8>(HUGE_PAGE).unwrap(), p.alloc::<u8>(2 * HUGE_PAGE).unwrap());
        let c = p.alloc::<u8>(2 * HUGE_PAGE).unwrap();
        drop(a);
        drop(b);
        assert_eq!(p.stats().cached_bytes, 3 * HUGE_PAGE);
        drop(c); // needs room: the 2 MiB block, freed first, goes; the 4 MiB ones stay
        let s = p.stats();
        assert_eq!((s.cached_bytes, s.cached_blocks, s.released_bytes), (4 * HUGE_PAGE, 2, HUGE_PAGE as u64));
        let big = p.alloc::<u8>(5 * HUGE_PAGE).unwrap();
        drop(big); // over the bound on its own: released, not cached
        assert_eq!((p.stats().cached_bytes, p.stats().released_bytes), (4 * HUGE_PAGE, 6 * HUGE_PAGE as u64));
    }

    #[test]
    fn release_and_close_hand_everything_back() {
        let p = pool(1 << 30);
        drop(p.alloc::<f64>(10).unwrap());
        let kept = p.alloc::<f64>(1 << 20).unwrap();
        p.release_cached();
        assert_eq!((p.stats().cached_bytes, p.stats().released_bytes), (0, 128));
        p.close();
        drop(kept); // outlives the device: not cached
        let s = p.stats();
        assert_eq!((s.cached_bytes, s.live_bytes, s.released_bytes), (0, 0, 128 + (8 << 20) as u64));
    }
}
