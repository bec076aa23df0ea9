//! A segment: one memory-mapped file in a RAM-backed directory, with a small header that
//! names its creator and what it holds: elements of one dtype (a [`super::SharedArray`]), or
//! encoded bytes (a large task input or output the pool moved out of its pipe).
//!
//! File layout: a 64-byte header (magic, token, dtype, data length), then the data, so the
//! data starts 64-byte aligned (the mapping itself is page aligned).

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use memmap2::{MmapOptions, MmapRaw};

use crate::sys::liveness;
use crate::sys::shm;
use polycompute_core::dtype::DType;
use polycompute_core::error::{Error, Result};
use polycompute_core::sync::LockUnpoisoned;

/// Every segment file's name starts with this, then `{pid}-{token}-{n}`.
pub(crate) const PREFIX: &str = "polycompute-shm-";
/// Bytes before the data.
pub(crate) const HEADER: usize = 64;
const MAGIC: &[u8; 8] = b"PCSHARR1";

/// One mapped segment. The process that created it removes its file when the last
/// [`Segment`] reference there is dropped; attached ones (other processes) only unmap.
pub(crate) struct Segment {
    pub(crate) name: String,
    path: PathBuf,
    map: MmapRaw,
    pub(crate) data_bytes: usize,
    /// The element type; `None` for encoded bytes.
    pub(crate) dtype: Option<DType>,
    pub(crate) pid: u32,
    pub(crate) token: u64,
    /// Whether dropping it removes the file: its creator's, unless handed over.
    owner: bool,
}

/// The header's dtype code for a segment of encoded bytes.
const BYTES: u32 = 0xFFFF_FFFE;

/// This process's token: 64 bits from the OS's cryptographic generator, fixed for the
/// process's life, part of every name it makes and of every segment's header. It tells one
/// process's segments from another's (a handle of another pool, a reused pid); it is not
/// what keeps other users out — the files' owner-only mode is.
pub(crate) fn process_token() -> Result<u64> {
    static TOKEN: OnceLock<u64> = OnceLock::new();
    if let Some(&t) = TOKEN.get() {
        return Ok(t);
    }
    let fresh = crate::sys::token::random_u64().map_err(|e| Error::SharedMemory {
        segment: String::new(),
        why: "no segment token".into(),
        source: Some(e),
    })?;
    Ok(*TOKEN.get_or_init(|| fresh))
}

/// The segments this process holds, by name, so that a handle coming back (a task's output
/// naming the parent's own segment) reuses the mapping and the ownership.
fn registry() -> &'static Mutex<HashMap<String, Weak<Segment>>> {
    static REG: OnceLock<Mutex<HashMap<String, Weak<Segment>>>> = OnceLock::new();
    REG.get_or_init(Default::default)
}

/// The segments this process attached (made by another process), kept mapped between tasks
/// so that a worker maps each segment and faults its pages in once, not once per task. One
/// is let go at the first attach after its file was removed.
fn kept() -> &'static Mutex<Vec<Arc<Segment>>> {
    static KEPT: OnceLock<Mutex<Vec<Arc<Segment>>>> = OnceLock::new();
    KEPT.get_or_init(Default::default)
}

/// A segment header's dtype code: fixed numbers (a segment outlives the build that wrote it,
/// and another process reads it), never a position in a list that may grow or be reordered.
fn dtype_code(d: Option<DType>) -> u32 {
    match d {
        Some(DType::F32) => 0,
        Some(DType::F64) => 1,
        Some(DType::I32) => 2,
        Some(DType::U32) => 3,
        Some(DType::F16) => 4,
        Some(DType::BF16) => 5,
        Some(DType::I64) => 6,
        Some(DType::U8) => 7,
        Some(DType::Bool) => 8,
        None => BYTES,
    }
}

/// The dtype of a header's code ([`dtype_code`]'s inverse); `None` for an unknown code.
fn dtype_of_code(code: u32) -> Option<DType> {
    match code {
        0 => Some(DType::F32),
        1 => Some(DType::F64),
        2 => Some(DType::I32),
        3 => Some(DType::U32),
        4 => Some(DType::F16),
        5 => Some(DType::BF16),
        6 => Some(DType::I64),
        7 => Some(DType::U8),
        8 => Some(DType::Bool),
        _ => None,
    }
}

fn err(segment: &str, why: impl Into<String>) -> Error {
    Error::SharedMemory { segment: segment.to_string(), why: why.into(), source: None }
}

/// A failed system call on segment `segment`, keeping the OS's error as the source.
fn os_err(segment: &str, why: impl Into<String>, source: std::io::Error) -> Error {
    Error::SharedMemory { segment: segment.to_string(), why: why.into(), source: Some(source) }
}

/// Whether `name` is a segment name this module makes (never a path: no separators).
fn valid_name(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    if !rest.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
        return None;
    }
    rest.split('-').next()?.parse().ok()
}

/// A segment's header: what [`Segment::open`] checks before mapping a file another
/// process made. Layout (little-endian): magic (8 bytes), token (u64), dtype code (u32),
/// 4 zero bytes, data length (u64), zeros to 64 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) token: u64,
    /// The element type; `None` for encoded bytes.
    pub(crate) dtype: Option<DType>,
    pub(crate) data_bytes: u64,
}

impl Header {
    /// The 64 header bytes.
    pub(crate) fn encode(&self) -> [u8; HEADER] {
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..16].copy_from_slice(&self.token.to_le_bytes());
        header[16..20].copy_from_slice(&dtype_code(self.dtype).to_le_bytes());
        header[24..32].copy_from_slice(&self.data_bytes.to_le_bytes());
        header
    }

    /// Reads and checks a header from a file of `file_len` bytes: the magic, a known dtype
    /// code, and a data length that is exactly the rest of the file (so every byte a handle
    /// may reach is mapped). The answer is why not, for the error message.
    pub(crate) fn parse(header: &[u8; HEADER], file_len: u64) -> std::result::Result<Header, String> {
        if &header[..8] != MAGIC {
            return Err("not a shared-array segment (bad magic in its header)".into());
        }
        let word = |r: std::ops::Range<usize>| header[r].iter().rev().fold(0u64, |a, &b| (a << 8) | u64::from(b));
        let token = word(8..16);
        let dtype = match word(16..20) as u32 {
            BYTES => None,
            code => Some(dtype_of_code(code).ok_or("unknown dtype in the header")?),
        };
        let data_bytes = word(24..32);
        if file_len.checked_sub(HEADER as u64) != Some(data_bytes) {
            return Err(format!("the file holds {file_len} bytes, its header says {HEADER} + {data_bytes}"));
        }
        Ok(Header { token, dtype, data_bytes })
    }
}

/// Checks a name from another process (a handle, a payload reference) before it is joined to
/// the segment directory: it must be a name this module makes for process `pid`.
pub(crate) fn check_name(name: &str, pid: u32) -> bool {
    valid_name(name) == Some(pid)
}

impl Segment {
    /// Creates a zero-filled segment of `data_bytes` bytes holding `dtype` elements (`None`:
    /// encoded bytes, its pages mapped at once since they are written next). Unless `owner`,
    /// this process never removes its file: whoever reads it does ([`Segment::open_bytes`]),
    /// or, should nobody read it, the cleanup of leftovers once this process has exited.
    pub(crate) fn create(dtype: Option<DType>, data_bytes: usize, owner: bool) -> Result<Arc<Segment>> {
        remove_leftovers();
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let (pid, token) = (std::process::id(), process_token()?);
        let name = format!("{PREFIX}{pid}-{token:016x}-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let path = shm::dir().join(&name);
        let total = data_bytes
            .checked_add(HEADER)
            .ok_or_else(|| Error::TooLarge(format!("a shared array of {data_bytes} bytes")))?;
        let io = |what: &str, e: std::io::Error| os_err(&name, format!("{what} {}", path.display()), e);
        // Owner-only from the `open` call on (mode 0600): other local users can neither read
        // nor write the data, even for an instant.
        let mut file = shm::create_owner_only(&path).map_err(|e| io("cannot create", e))?;
        let made = (|| {
            file.set_len(total as u64)?;
            file.write_all(&Header { token, dtype, data_bytes: data_bytes as u64 }.encode())?;
            let mut options = MmapOptions::new();
            if dtype.is_none() {
                options.populate();
            }
            let map = options.map_raw(&file)?;
            // With huge pages a worker's first touch of a GiB skips 60-110 ms of 4 KiB page
            // faults on the development VM (see `sys::shm`).
            shm::advise_huge_pages(&map);
            Ok(map)
        })();
        let map = match made {
            Ok(map) => map,
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                return Err(io("cannot size or map", e));
            }
        };
        let seg = Arc::new(Segment { name: name.clone(), path, map, data_bytes, dtype, pid, token, owner });
        registry().lock_unpoisoned().insert(name, Arc::downgrade(&seg));
        Ok(seg)
    }

    /// Maps the segment of encoded bytes `name` made by process `pid` with `token`, once (not
    /// kept). With `remove`, its file is removed when the mapping is dropped (the reader of a
    /// handed-over segment). Its creator need not run any more.
    pub(crate) fn open_bytes(name: &str, pid: u32, token: u64, remove: bool) -> Result<Segment> {
        if !check_name(name, pid) {
            return Err(err(name, format!("not a shared-memory segment name of process {pid}")));
        }
        let mut seg = Segment::open(name, pid, false)?;
        if seg.token != token {
            return Err(err(name, "the reference's token is not the segment's"));
        }
        if seg.dtype.is_some() {
            return Err(err(name, "it holds an array, not encoded bytes"));
        }
        seg.owner = remove;
        Ok(seg)
    }

    /// Maps the segment `name` made by process `pid` with `token`; checks that it holds
    /// `dtype` elements. In its creator (or where it is already mapped) the existing mapping
    /// is reused.
    pub(crate) fn attach(name: &str, pid: u32, token: u64, dtype: DType) -> Result<Arc<Segment>> {
        if !check_name(name, pid) {
            return Err(err(name, format!("not a shared-array segment name of process {pid}")));
        }
        let existing = registry().lock_unpoisoned().get(name).and_then(Weak::upgrade);
        let seg = match existing {
            Some(seg) => seg,
            None => {
                let seg = Arc::new(Segment::open(name, pid, true)?);
                registry().lock_unpoisoned().insert(name.to_string(), Arc::downgrade(&seg));
                let mut kept = kept().lock_unpoisoned();
                // Mappings whose file is gone (their creator is done with them) are let go.
                kept.retain(|s| s.path.exists());
                kept.push(seg.clone());
                seg
            }
        };
        if seg.token != token {
            return Err(err(name, "the handle's token is not the segment's: a handle of another process or pool"));
        }
        match seg.dtype {
            Some(found) if found != dtype => {
                return Err(Error::DTypeMismatch { context: format!("shared array {name}"), expected: dtype, found })
            }
            Some(_) => {}
            None => return Err(err(name, "it holds encoded bytes, not an array")),
        }
        Ok(seg)
    }

    /// Opens and maps a segment; `live_creator`: refuse it when its creator is gone.
    fn open(name: &str, pid: u32, live_creator: bool) -> Result<Segment> {
        let path = shm::dir().join(name);
        let mut file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let why = if liveness::alive(pid) {
                    "it no longer exists (was every handle in the creating process dropped before the task ran?)"
                        .to_string()
                } else {
                    format!("it no longer exists: the process {pid} that created it is gone")
                };
                return Err(err(name, why));
            }
            Err(e) => return Err(os_err(name, format!("cannot open {}", path.display()), e)),
        };
        let len = file.metadata().map_err(|e| os_err(name, "cannot read its size", e))?.len();
        let mut header = [0u8; HEADER];
        if len < HEADER as u64 || file.read_exact(&mut header).is_err() {
            return Err(err(name, "not a shared-array segment (shorter than its header)"));
        }
        let Header { token, dtype, data_bytes } = Header::parse(&header, len).map_err(|why| err(name, why))?;
        let data_bytes = usize::try_from(data_bytes).map_err(|_| err(name, "too large for this process"))?;
        if live_creator && !liveness::alive(pid) {
            return Err(err(name, format!("the process {pid} that created it is gone")));
        }
        // An array's pages are mapped as tasks touch them (a task may read a few rows of a
        // large array); the mapping is kept, so each page is mapped once per worker. A
        // payload is read whole at once: all its pages in one call.
        let mut options = MmapOptions::new();
        if dtype.is_none() {
            options.populate();
        }
        let map = options.map_raw(&file).map_err(|e| os_err(name, "cannot map", e))?;
        Ok(Segment { name: name.to_string(), path, map, data_bytes, dtype, pid, token, owner: false })
    }

    /// The first data byte.
    pub(crate) fn data_ptr(&self) -> *mut u8 {
        // The mapping is HEADER + data_bytes long (checked at create and open).
        self.map.as_mut_ptr().wrapping_add(HEADER)
    }

    /// The segment's file.
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Whether this process created the segment (and removes its file).
    pub(crate) fn owner(&self) -> bool {
        self.owner
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        let mut reg = registry().lock_unpoisoned();
        if reg.get(&self.name).is_some_and(|w| w.strong_count() == 0) {
            reg.remove(&self.name);
        }
        drop(reg);
        if self.owner {
            if let Err(e) = std::fs::remove_file(&self.path) {
                tracing::warn!("polycompute: cannot remove shared array segment {}: {e}", self.path.display());
            }
        }
    }
}

/// Removes the segment files left by processes that no longer run (a parent that crashed or
/// was SIGKILLed before it could remove its own); returns how many. Runs before every
/// creation; callable at any time.
pub fn remove_leftovers() -> usize {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir(shm::dir()) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(valid_name) else { continue };
        if pid != me && !liveness::alive(pid) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn segment_files_are_owner_only_from_their_creation() {
        use std::os::unix::fs::PermissionsExt;
        // 0600, not the 0644 that the usual umask (022) leaves on a file made without a mode.
        for dtype in [Some(DType::F32), None] {
            let seg = Segment::create(dtype, 100, true).unwrap();
            let mode = std::fs::metadata(seg.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, shm::MODE, "{dtype:?}: mode {mode:o}");
        }
    }

    #[test]
    fn every_dtype_has_its_own_fixed_header_code() {
        let codes: Vec<u32> = DType::ALL.iter().map(|&d| dtype_code(Some(d))).collect();
        // The numbers segments already on disk carry: they must never change.
        assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
        for &d in &DType::ALL {
            assert_eq!(dtype_of_code(dtype_code(Some(d))), Some(d));
        }
        assert_eq!(dtype_of_code(BYTES), None);
        assert_eq!(dtype_of_code(9), None);
    }

    #[test]
    fn headers_round_trip_and_bad_ones_say_why() {
        let h = Header { token: 0xfeed, dtype: Some(DType::I32), data_bytes: 12 };
        let bytes = h.encode();
        assert_eq!(Header::parse(&bytes, 76), Ok(h));
        assert!(Header::parse(&bytes, 75).unwrap_err().contains("75 bytes"));
        assert!(Header::parse(&bytes, 0).unwrap_err().contains("0 bytes"), "shorter than the header");
        let mut bad = bytes;
        bad[0] ^= 1;
        assert!(Header::parse(&bad, 76).unwrap_err().contains("magic"));
        let mut bad = bytes;
        bad[16] = 9;
        assert!(Header::parse(&bad, 76).unwrap_err().contains("dtype"));
        // A length that would overflow when the header is added.
        let huge = Header { token: 1, dtype: None, data_bytes: u64::MAX }.encode();
        assert!(Header::parse(&huge, u64::MAX).is_err());
    }

    #[test]
    fn names_from_another_process_are_checked() {
        assert!(check_name(&format!("{PREFIX}42-00ff-1"), 42));
        assert!(!check_name(&format!("{PREFIX}42-00ff-1"), 43), "another process's");
        for bad in ["../etc/passwd", "polycompute-shm-42/../../x", "polycompute-shm-", "polycompute-shm-42-zz", "x"] {
            assert!(!check_name(bad, 42), "{bad}");
        }
    }
}
