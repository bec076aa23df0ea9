//! Large encoded task inputs and outputs, moved out of the pool's pipe into segments, and
//! the shared arrays a queued job must keep alive until its worker has decoded them.
//!
//! The pool encodes a process worker's input with postcard, as always; when the encoding is
//! larger than the pool's threshold (1 MiB by default), the bytes go into a segment of their
//! own and the pipe carries a [`PayloadRef`] instead. The worker maps the segment and decodes
//! the input straight from the mapping. Outputs travel back the same way. Any input type
//! qualifies — a large `Vec`, an `ndarray` array (with ndarray's `serde` feature), a struct
//! holding one — and the `Task` keeps its types: nothing changes in the task's code.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::segment::Segment;
use super::SharedArray;
use polycompute_core::dtype::Element;
use polycompute_core::error::Result;

/// What the pipe carries instead of a large encoding: where the bytes are.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PayloadRef {
    name: String,
    pid: u32,
    token: u64,
    len: u64,
}

/// Segments a job holds until its results are back: its moved-out inputs and every shared
/// array its inputs name (a temporary `SharedArray` handed straight to `submit` would
/// otherwise be gone before the worker decodes its input). Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Pins(Vec<Arc<Segment>>);

impl Pins {
    /// Adds `other`'s segments.
    pub(crate) fn extend(&mut self, other: Pins) {
        self.0.extend(other.0);
    }

    /// Whether no segment is pinned.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many segments are pinned.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

thread_local! {
    static PINNING: std::cell::RefCell<Option<Vec<Arc<Segment>>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `encode` (which serializes a task input) and returns, with its result, the segments
/// of every [`SharedArray`] it serialized on this thread.
pub(crate) fn pin_while<R>(encode: impl FnOnce() -> R) -> (R, Pins) {
    let outer = PINNING.with(|p| p.borrow_mut().replace(Vec::new()));
    let r = encode();
    let pinned = PINNING.with(|p| std::mem::replace(&mut *p.borrow_mut(), outer)).unwrap_or_default();
    (r, Pins(pinned))
}

/// Called by [`SharedArray`]'s `Serialize`: pins its segment while [`pin_while`] runs.
pub(super) fn note_serialized<T: Element>(array: &SharedArray<T>) {
    PINNING.with(|p| {
        if let Some(pinned) = p.borrow_mut().as_mut() {
            if !pinned.iter().any(|s| Arc::ptr_eq(s, &array.seg)) {
                pinned.push(array.seg.clone());
            }
        }
    });
}

/// Encodes `value` (postcard, `size` bytes: its `serialized_size`) straight into a new
/// segment. The parent's inputs (`hand_over` false): the returned pins remove the file
/// when dropped. A worker's outputs (`hand_over` true): the parent removes it after
/// reading it ([`read`] with `remove`).
pub(crate) fn spill<V: Serialize + ?Sized>(value: &V, size: usize, hand_over: bool) -> Result<(PayloadRef, Pins)> {
    let seg = Segment::create(None, size, !hand_over)?;
    // SAFETY: the segment was just made and nobody else knows its name yet; its data area
    // is `size` bytes long and lives as long as `seg`.
    let dest = unsafe { std::slice::from_raw_parts_mut(seg.data_ptr(), size) };
    let written = postcard::to_slice(value, dest).map(|w| w.len());
    if written.as_ref().ok() != Some(&size) {
        let why = match written {
            Ok(n) => format!("the value encoded to {n} bytes, {size} were measured"),
            Err(e) => format!("encoding into it: {e}"),
        };
        if hand_over {
            let _ = std::fs::remove_file(seg.path()); // nobody will read it
        }
        return Err(polycompute_core::Error::SharedMemory { segment: seg.name.clone(), why, source: None });
    }
    let r = PayloadRef { name: seg.name.clone(), pid: seg.pid, token: seg.token, len: size as u64 };
    Ok((r, Pins(vec![seg])))
}

/// Maps the bytes `r` names and runs `f` on them; with `remove`, removes their segment
/// afterwards (the reader of a handed-over payload).
pub(crate) fn read<R>(r: &PayloadRef, remove: bool, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
    let seg = Segment::open_bytes(&r.name, r.pid, r.token, remove)?;
    if r.len != seg.data_bytes as u64 {
        return Err(polycompute_core::Error::SharedMemory {
            segment: r.name.clone(),
            why: format!("it holds {} bytes, the reference says {}", seg.data_bytes, r.len),
            source: None,
        });
    }
    // SAFETY: the mapping holds `data_bytes` bytes after the header and lives until `seg`
    // is dropped, after `f` returns; nobody writes a payload segment after its creation.
    let bytes = unsafe { std::slice::from_raw_parts(seg.data_ptr(), seg.data_bytes) };
    Ok(f(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_bytes_read_back_and_the_file_goes_with_its_owner() {
        let data: Vec<u32> = (0..100_000).collect();
        let size = postcard::to_allocvec(&data).unwrap().len();
        let (r, pins) = spill(&data, size, false).unwrap();
        let path = crate::sys::shm::dir().join(&r.name);
        assert!(path.exists());
        assert!(read(&r, false, |b| b == postcard::to_allocvec(&data).unwrap()).unwrap());
        assert!(path.exists(), "a reader without `remove` leaves the file");
        drop(pins);
        assert!(!path.exists(), "the creator's pins remove the file");
        assert!(read(&r, false, |_| ()).is_err());
    }

    #[test]
    fn handed_over_bytes_are_removed_by_their_reader() {
        let (r, pins) = spill("payload", 8, true).unwrap();
        let path = crate::sys::shm::dir().join(&r.name);
        drop(pins);
        assert!(path.exists(), "handed over: the creator leaves it");
        assert_eq!(read(&r, true, |b| postcard::from_bytes::<String>(b).unwrap()).unwrap(), "payload");
        assert!(!path.exists(), "the reader removed it");
    }

    #[test]
    fn bad_references_are_errors() {
        let short = spill("abc", 3, true).err().unwrap().to_string();
        assert!(short.contains("encoding into it"), "{short}");
        let long = spill("abc", 5, false).err().unwrap().to_string();
        assert!(long.contains("encoded to 4 bytes, 5 were measured"), "{long}");
        let (r, _pins) = spill("abc", 4, false).unwrap();
        let bad = PayloadRef { len: 5, ..r.clone() };
        assert!(read(&bad, false, |_| ()).unwrap_err().to_string().contains("4 bytes"));
        let bad = PayloadRef { token: r.token ^ 1, ..r.clone() };
        assert!(read(&bad, false, |_| ()).unwrap_err().to_string().contains("token"));
        let array = SharedArray::<f32>::zeros(&[4]).unwrap();
        let h = array.handle();
        let bad = PayloadRef { name: h.name, pid: h.pid, token: h.token, len: 16 };
        assert!(read(&bad, false, |_| ()).unwrap_err().to_string().contains("array"));
    }

    #[test]
    fn serializing_shared_arrays_pins_their_segments() {
        let a = SharedArray::<f32>::zeros(&[8]).unwrap();
        let path = a.segment_path().to_path_buf();
        let (bytes, pins) = pin_while(|| postcard::to_allocvec(&(a.clone(), a.rows(0..2).unwrap(), 7u8)).unwrap());
        assert_eq!(pins.len(), 1, "one segment, pinned once");
        drop(a);
        assert!(path.exists(), "pinned: still there");
        let back: (SharedArray<f32>, SharedArray<f32>, u8) = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.1.shape(), &[2]);
        drop((back, pins));
        assert!(!path.exists());
        // Outside pin_while nothing is pinned.
        let b = SharedArray::<f32>::zeros(&[1]).unwrap();
        let ((), none) = pin_while(|| ());
        let _ = postcard::to_allocvec(&b).unwrap();
        assert_eq!(none.len(), 0);
    }
}
