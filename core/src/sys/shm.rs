//! Where shared-memory segment files live, and how they are best mapped.

use std::path::PathBuf;

/// A RAM-backed directory for shared-array segments: `/dev/shm` on Linux (tmpfs), the
/// temporary directory elsewhere (the page cache keeps a mapped file's pages in memory).
pub(crate) fn dir() -> PathBuf {
    cfg_if::cfg_if! {
        if #[cfg(target_os = "linux")] {
            let shm = PathBuf::from("/dev/shm");
            if shm.is_dir() {
                return shm;
            }
            std::env::temp_dir()
        } else {
            std::env::temp_dir()
        }
    }
}

/// Asks for huge pages on a fresh mapping where the OS lets tmpfs use them on request
/// (Linux, `shmem_enabled = advise`): a worker then maps the segment with 512x fewer
/// page-table entries. Only a hint: where huge pages are off, or on other systems, nothing
/// changes.
pub(crate) fn advise_huge_pages(map: &memmap2::MmapRaw) {
    cfg_if::cfg_if! {
        if #[cfg(target_os = "linux")] {
            let _ = map.advise(memmap2::Advice::HugePage);
        } else {
            let _ = map;
        }
    }
}
