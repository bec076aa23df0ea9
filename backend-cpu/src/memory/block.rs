//! [`Block`]: one allocation of the caching allocator. Small sizes come from the heap;
//! large ones get an anonymous mapping of their own, aligned to a huge page and advised
//! `MADV_HUGEPAGE` on Linux, so that first touching 64 MiB costs 32 page faults instead of
//! 16,384 (on hosts whose transparent-huge-page mode is `madvise`, nothing else gets them).
//!
//! Every block's bytes are initialised: heap blocks are zeroed when made, mappings are
//! zero pages from the kernel, and a recycled block holds what its last user wrote. So a
//! kernel may write its output into a block without a zeroing pass first, and the block is
//! viewed as any of the element types through `bytemuck`, with no `unsafe`. `bool` has
//! invalid bit patterns (every byte but 0 and 1), so its views are checked casts: a bool
//! output's bytes are zeroed before it is handed out to write (a recycled block may hold
//! anything), and reading checks each byte, which cannot fail for a block written as bool.

use std::io;

use bytemuck::{CheckedBitPattern, NoUninit};

/// Transparent huge pages are 2 MiB on x86-64 and (with 4 KiB base pages) on AArch64.
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Blocks of at least this many bytes are mappings aligned to [`HUGE_PAGE`]; smaller ones
/// come from the heap.
pub(crate) const LARGE: usize = 1 << 20;

/// One allocation: its capacity is its size class (see `Pool`), at least the bytes asked.
pub(crate) enum Block {
    /// Heap memory, 8-byte aligned (enough for every dtype).
    Heap(Box<[u64]>),
    /// An anonymous mapping, one huge page longer than `bytes` so that the usable range
    /// can start on a huge-page boundary; the slack is address space only, never touched.
    Mapped {
        /// The whole mapping.
        map: memmap2::MmapMut,
        /// Where the aligned range starts.
        offset: usize,
        /// The aligned range's length.
        bytes: usize,
    },
}

impl Block {
    /// A new block of `bytes` (a multiple of 8).
    pub(crate) fn new(bytes: usize) -> io::Result<Block> {
        if bytes < LARGE {
            return Ok(Block::Heap(vec![0u64; bytes / 8].into_boxed_slice()));
        }
        let len = bytes
            .checked_add(HUGE_PAGE)
            .ok_or_else(|| io::Error::new(io::ErrorKind::OutOfMemory, "block size overflows"))?;
        let map = memmap2::MmapOptions::new().len(len).map_anon()?;
        let offset = map.as_ptr().align_offset(HUGE_PAGE);
        advise_huge_pages(&map, offset, bytes);
        Ok(Block::Mapped { map, offset, bytes })
    }

    /// The capacity in bytes.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Block::Heap(words) => words.len() * 8,
            Block::Mapped { bytes, .. } => *bytes,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        match self {
            Block::Heap(words) => bytemuck::cast_slice(words),
            Block::Mapped { map, offset, bytes } => &map[*offset..*offset + *bytes],
        }
    }

    fn as_bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Block::Heap(words) => bytemuck::cast_slice_mut(words),
            Block::Mapped { map, offset, bytes } => &mut map[*offset..*offset + *bytes],
        }
    }

    /// The first `len` elements as `T` (`len` elements must fit).
    pub(crate) fn typed<T: CheckedBitPattern + NoUninit>(&self, len: usize) -> &[T] {
        // Both kinds of block start at least 8-byte aligned, and a block read as `T` was
        // written as `T`, so the cast cannot fail (for types without invalid bit patterns
        // the check compiles away).
        bytemuck::checked::cast_slice(&self.as_bytes()[..len * size_of::<T>()])
    }

    /// The first `len` elements as `T`, to write (`len` elements must fit).
    pub(crate) fn typed_mut<T: CheckedBitPattern + NoUninit>(&mut self, len: usize) -> &mut [T] {
        let bytes = &mut self.as_bytes_mut()[..len * size_of::<T>()];
        if bytemuck::checked::try_cast_slice::<u8, T>(bytes).is_err() {
            // A recycled block's bytes are not valid `T`s (bools): zero them, which is.
            bytes.fill(0);
        }
        bytemuck::checked::cast_slice_mut(bytes)
    }
}

/// Asks for transparent huge pages over the aligned range. Only advice: where the kernel
/// refuses (THP disabled, an old kernel) the block works the same with base pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages(map: &memmap2::MmapMut, offset: usize, bytes: usize) {
    let _ = map.advise_range(memmap2::Advice::HugePage, offset, bytes);
}

/// Other systems have no `madvise` equivalent that an anonymous mapping can opt into.
#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_map: &memmap2::MmapMut, _offset: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_start_on_a_huge_page_and_read_back_what_was_written() {
        let mut b = Block::new(3 * HUGE_PAGE).unwrap();
        assert!(matches!(b, Block::Mapped { .. }));
        assert_eq!(b.bytes(), 3 * HUGE_PAGE);
        let n = 3 * HUGE_PAGE / 4;
        assert_eq!(b.typed::<f32>(n).as_ptr() as usize % HUGE_PAGE, 0);
        assert!(b.typed::<u32>(n).iter().all(|&v| v == 0), "fresh mappings are zero pages");
        b.typed_mut::<u32>(n).iter_mut().enumerate().for_each(|(i, v)| *v = i as u32);
        assert_eq!(b.typed::<u32>(n)[n - 1], (n - 1) as u32);
    }

    #[test]
    fn small_blocks_are_heap_memory_aligned_for_f64() {
        let mut b = Block::new(64).unwrap();
        assert!(matches!(b, Block::Heap(_)));
        b.typed_mut::<f64>(8)[7] = 2.5;
        assert_eq!(b.typed::<f64>(8)[7], 2.5);
        assert_eq!(Block::new(0).unwrap().typed::<f32>(0).len(), 0);
    }
}
