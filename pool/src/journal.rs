//! The result journal ([`super::PoolBuilder::journal`]): every finished task's result is
//! appended to a file, and a rerun of the same job returns the recorded results instead of
//! running those tasks again. Nothing computed is lost when the job dies (a killed MPI rank
//! takes the whole launch down), and nothing finished is computed twice.
//!
//! The file is a header naming the job (the program, its tasks' signatures, the pool's
//! seed) and then one record per result, in the order they were delivered. A record is
//! `len: u32 LE`, `check: u64 LE` (FNV-1a of the payload) and the payload (postcard): the
//! task's index, name and input digest, and its output's encoding or its error. Records
//! are written with one `write` per bunch of results, straight to the OS (no buffer kept in
//! the process): a killed program loses nothing it delivered. A record cut short by the
//! kill is dropped (and the file truncated before it) when the journal is opened again.
//!
//! Only results that depend on the task alone are recorded: an output, the task's error,
//! its panic, a refusal by every device. A timeout, a crash, a cancellation or a shutdown is
//! not: the rerun runs those tasks again.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::error::{TaskError, TaskErrorKind};
use super::job::{Positioned, Sink};
use super::task::{ErasedTask, Value};
pub use polycompute_core::error::JournalError;
use polycompute_core::sync::LockUnpoisoned;

/// The first bytes of every journal.
const MAGIC: &[u8; 8] = b"pcjrnl01";
/// Records larger than this are corrupt (nothing valid is that large).
const MAX_RECORD: usize = 1 << 30;

/// What a journal belongs to: a rerun must match it exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JobName {
    /// The program's file name.
    pub(crate) program: String,
    /// Each task's name and signature (its input and output types).
    pub(crate) tasks: Vec<(String, String)>,
    /// The pool's seed (every task's random generator derives from it).
    pub(crate) seed: u64,
}

impl std::fmt::Display for JobName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.tasks.iter().map(|(n, _)| n.as_str()).collect();
        write!(f, "program {}, tasks [{}], seed {:#x}", self.program, names.join(", "), self.seed)
    }
}

/// One recorded result.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    index: u64,
    task: String,
    /// FNV-1a of the input's encoding: a rerun whose input at this index differs runs it.
    input: u64,
    result: Result<Vec<u8>, TaskError>,
}

/// FNV-1a, 64 bits: stable across builds and platforms (unlike std's hasher).
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// An open journal: the results recorded by earlier runs, and the file new ones go to.
pub(crate) struct Journal {
    path: PathBuf,
    file: Mutex<File>,
    recorded: Mutex<HashMap<u64, Record>>,
    /// A write failed (warned once; the job goes on without journaling).
    broken: AtomicBool,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").field("path", &self.path).finish()
    }
}

impl Journal {
    /// Opens (or creates) the journal at `path` for `job`: an error when it belongs to
    /// another job or is not a journal.
    pub(crate) fn open(path: &Path, job: &JobName) -> Result<Journal, JournalError> {
        let io = |source| JournalError::Io { path: path.to_path_buf(), source };
        let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let mut recorded = HashMap::new();
        if bytes.is_empty() {
            let header = postcard::to_allocvec(job).map_err(|e| io(std::io::Error::other(e)))?;
            file.write_all(&frame(MAGIC, &header)).map_err(io)?;
        } else {
            let not = |why: &str| JournalError::NotAJournal { path: path.to_path_buf(), why: why.into() };
            let (header, mut at) = unframe(&bytes, 0, MAGIC).ok_or_else(|| not("no journal header"))?;
            let found: JobName = postcard::from_bytes(header).map_err(|_| not("its header cannot be read"))?;
            if found != *job {
                return Err(JournalError::OtherJob {
                    path: path.to_path_buf(),
                    found: found.to_string(),
                    expected: job.to_string(),
                });
            }
            while let Some((payload, next)) = unframe(&bytes, at, b"") {
                let Ok(record) = postcard::from_bytes::<Record>(payload) else { break };
                recorded.insert(record.index, record);
                at = next;
            }
            if at < bytes.len() {
                // The tail of a record the last run was killed while writing.
                tracing::warn!(
                    "polycompute pool: journal {}: dropping {} bytes of a record cut short",
                    path.display(),
                    bytes.len() - at
                );
                file.set_len(at as u64).map_err(io)?;
            }
            file.seek(SeekFrom::End(0)).map_err(io)?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            recorded: Mutex::new(recorded),
            broken: AtomicBool::new(false),
        })
    }

    /// The recorded result of task `index`, when its input was the same; taken (a task is
    /// replayed once).
    pub(crate) fn replay(&self, task: &dyn ErasedTask, index: u64, input: u64) -> Option<Result<Value, TaskError>> {
        let mut recorded = self.recorded.lock_unpoisoned();
        let record = recorded.get(&index)?;
        if record.task != task.name() || record.input != input {
            tracing::warn!(
                "polycompute pool: journal {}: task #{index} was {} with another input in the journal; it runs again",
                self.path.display(),
                record.task
            );
            recorded.remove(&index);
            return None;
        }
        let record = recorded.remove(&index)?;
        match record.result {
            Ok(bytes) => match task.decode_output(&bytes) {
                Ok(value) => Some(Ok(value)),
                Err(why) => {
                    tracing::warn!(
                        "polycompute pool: journal {}: task #{index}: {why}; it runs again",
                        self.path.display()
                    );
                    None
                }
            },
            Err(e) => Some(Err(e)),
        }
    }

    /// Appends the results that are worth keeping, in one write.
    fn append(&self, task: &dyn ErasedTask, results: &[(u64, u64, &Result<Value, TaskError>)]) {
        if self.broken.load(Ordering::Relaxed) {
            return;
        }
        let mut out = Vec::new();
        for &(index, input, result) in results {
            let result = match result {
                Ok(value) => match task.encode_output(value.as_ref()) {
                    Some(bytes) => Ok(bytes),
                    None => continue,
                },
                Err(e) if recordable(&e.kind) => Err(e.clone()),
                Err(_) => continue,
            };
            let record = Record { index, task: task.name().to_string(), input, result };
            if let Ok(payload) = postcard::to_allocvec(&record) {
                out.extend_from_slice(&frame(b"", &payload));
            }
        }
        if out.is_empty() {
            return;
        }
        if let Err(e) = self.file.lock_unpoisoned().write_all(&out) {
            self.broken.store(true, Ordering::Relaxed);
            tracing::warn!(
                "polycompute pool: journal {}: {e}; results are no longer recorded (a rerun runs them again)",
                self.path.display()
            );
        }
    }
}

/// Whether an error is the task's own (it would be the same on a rerun).
fn recordable(kind: &TaskErrorKind) -> bool {
    matches!(kind, TaskErrorKind::Failed { .. } | TaskErrorKind::Panicked { .. } | TaskErrorKind::Unsupported { .. })
}

/// `magic`, length, checksum, payload.
fn frame(magic: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(magic.len() + 12 + payload.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&fnv(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payload of the frame at `at` and where the next begins; `None` when it is cut
/// short or corrupt.
fn unframe<'a>(bytes: &'a [u8], at: usize, magic: &[u8]) -> Option<(&'a [u8], usize)> {
    let rest = bytes.get(at..)?;
    let rest = rest.strip_prefix(magic)?;
    let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    let check = u64::from_le_bytes(rest.get(4..12)?.try_into().ok()?);
    if len > MAX_RECORD {
        return None;
    }
    let payload = rest.get(12..12 + len)?;
    (fnv(payload) == check).then_some((payload, at + magic.len() + 12 + len))
}

/// A submission's sink that records each result in the journal before passing it on.
pub(crate) struct JournalSink {
    pub(crate) inner: Arc<dyn Sink>,
    pub(crate) journal: Arc<Journal>,
    pub(crate) task: Arc<dyn ErasedTask>,
    /// Index of the submission's first input (position 0).
    pub(crate) first_index: u64,
    /// Each position's input digest.
    pub(crate) inputs: Vec<u64>,
}

impl JournalSink {
    fn entry<'a>(&self, pos: usize, result: &'a Result<Value, TaskError>) -> (u64, u64, &'a Result<Value, TaskError>) {
        (self.first_index + pos as u64, self.inputs.get(pos).copied().unwrap_or(0), result)
    }
}

impl Sink for JournalSink {
    fn deliver(&self, pos: usize, result: Result<Value, TaskError>) {
        self.journal.append(&*self.task, &[self.entry(pos, &result)]);
        self.inner.deliver(pos, result);
    }

    fn deliver_many(&self, results: Vec<Positioned>) {
        let entries: Vec<_> = results.iter().map(|(pos, r)| self.entry(*pos, r)).collect();
        self.journal.append(&*self.task, &entries);
        self.inner.deliver_many(results);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_the_published_fnv1a_64() {
        // The FNV-1a test vectors: a journal written by another build must read the same.
        assert_eq!(fnv(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn a_frame_cut_short_or_altered_is_refused() {
        let whole = frame(MAGIC, b"payload");
        assert_eq!(unframe(&whole, 0, MAGIC), Some((&b"payload"[..], whole.len())));
        for cut in 0..whole.len() {
            assert_eq!(unframe(&whole[..cut], 0, MAGIC), None, "cut at {cut}");
        }
        let mut altered = whole.clone();
        *altered.last_mut().unwrap() ^= 1;
        assert_eq!(unframe(&altered, 0, MAGIC), None);
    }
}
