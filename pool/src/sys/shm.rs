//! Where shared-memory segment files live, how they are created owner-only, and how they
//! are best mapped.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// The permission bits of every segment file on Unix: read and write for its owner only.
#[cfg(unix)]
pub(crate) const MODE: u32 = 0o600;

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

/// Creates the new file `path` for reading and writing, failing if it exists. On Unix it is
/// created with mode [`MODE`] by the `open` call itself (`O_CREAT|O_EXCL`, mode 0600), so no
/// other user can open it even for the instant a later `chmod` would leave; the umask can
/// only take bits away. On Windows the file inherits the temporary directory's ACL, which
/// grants the user (and administrators) alone.
pub(crate) fn create_owner_only(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(MODE);
    }
    options.open(path)
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
