//! The parent/worker protocol: length-prefixed frames over the worker's socket (never its
//! stdout, which the task's own printing uses).
//!
//! A frame is `u32 length | u32 header length | header | body` (little-endian), the header
//! a postcard-encoded [`ToWorker`] or [`FromWorker`]. A job's body is its inputs and a
//! results body its results, one item per input: `u8 tag | u32 length | bytes`, the tag
//! [`INLINE`] (the postcard-encoded input or output), [`FAILURE`] (an encoded failure,
//! results only) or [`SHARED`] (a [`PayloadRef`]: an encoding too large for the pipe, moved
//! into shared memory).
//!
//! A frame is at most [`MAX_FRAME`] bytes (its length word included). A reader refuses a
//! longer length word as a protocol error — that worker is ended and replaced — before it
//! allocates anything, and grows its buffer only as the bytes arrive, so a peer that lies
//! about a length costs at most what it really sends.

use std::io::{self, Read, Write};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::task::{encode_into, Failure};
pub(crate) use crate::shared::payload::PayloadRef;
use crate::shared::payload::{self, Pins};
use polycompute_core::backend::BackendKind;

/// Item tag: the encoding itself.
pub(crate) const INLINE: u8 = 0;
/// Item tag: an encoded failure (results only).
pub(crate) const FAILURE: u8 = 1;
/// Item tag: a [`PayloadRef`] to the encoding in shared memory.
pub(crate) const SHARED: u8 = 2;

/// Set in a worker's environment: the address to connect to. Its presence is what makes
/// `worker_main` serve instead of returning.
pub(crate) const ENV_ADDR: &str = "POLYCOMPUTE_WORKER_ADDR";
/// Set in a worker's environment: the token it proves itself with.
pub(crate) const ENV_TOKEN: &str = "POLYCOMPUTE_WORKER_TOKEN";
/// Set in a worker's environment: the parent's process id.
pub(crate) const ENV_PARENT: &str = "POLYCOMPUTE_WORKER_PARENT";
/// The argument a worker is started with: shows the role in `ps`, and makes a program whose
/// `main` forgot `worker_main` fail its argument parsing instead of running its real work.
pub(crate) const WORKER_ARG: &str = "--polycompute-worker";

/// Parent to worker.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum ToWorker {
    /// The worker's identity and device; sent once after `Hello`.
    Setup {
        worker: usize,
        kind: BackendKind,
        ordinal: usize,
        seed: u64,
        /// Outputs whose encoding is larger go back through shared memory.
        spill_over: u64,
        /// The broadcast data's type name and encoding (see `super::broadcast`).
        broadcast_type: String,
        broadcast: Option<Vec<u8>>,
        /// The pool's tasks: (name, signature).
        tasks: Vec<(String, String)>,
        /// The worker's progress word in shared memory (see `process::progress`), when
        /// the parent could make one.
        progress: Option<crate::shared::SharedHandle>,
    },
    /// Run `count` inputs (the body) of `task`; input `k` is task `first_index + k` and reads
    /// the random stream `stream.offset(k)`.
    Job { id: u64, task: String, first_index: u64, attempt: u32, count: u32, stream: crate::rng::StreamId },
}

/// Worker to parent.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum FromWorker {
    /// First frame: the token from the environment and the worker's pid.
    Hello { token: String, pid: u32 },
    /// The device is open; jobs may come.
    Ready { device: polycompute_core::DeviceId },
    /// The worker could not start (its device did not open, ...).
    StartFailed { message: String },
    /// The results of inputs `first..first + count` of job `id` (the body), sent as they
    /// finish (results ready together share a frame). With `retire`, the worker exits after
    /// this frame (its device context is poisoned) and the job's later inputs never ran.
    /// With `stopped`, the job's later inputs were not run (its device refused the last
    /// one: see `PoolState::refused`); the parent queues them again. `cpu`: the core the
    /// worker sent it from, where the OS says (an MPI rank's placement hint for rank 0's
    /// scheduler; process workers send `None`).
    Results { id: u64, first: u32, count: u32, retire: Option<String>, stopped: bool, cpu: Option<u32> },
}

/// The largest frame, in bytes: 1 GiB. A single input or output over the pool's
/// shared-memory threshold (1 MiB by default) travels through shared memory, so only a job
/// of very many inputs near that threshold, or broadcast data of this size, comes near it;
/// [`write_frame`] refuses to send more (with a message saying what to change) and
/// [`read_frame`] refuses to read more (a protocol error that ends that worker).
pub(crate) const MAX_FRAME: usize = 1 << 30;

/// What [`read_frame`] reserves before any of a frame's bytes have arrived: a peer's length
/// word alone never makes this process allocate more. 1 MiB, the pool's default
/// shared-memory threshold: a frame up to that size is read into one allocation.
const FIRST_RESERVE: usize = 1 << 20;

/// Writes one frame and flushes. A frame over [`MAX_FRAME`] is refused, nothing written.
pub(crate) fn write_frame<H: Serialize>(w: &mut impl Write, header: &H, body: &[u8]) -> io::Result<()> {
    let mut head = vec![0u8; 8];
    encode_into(header, &mut head).map_err(io::Error::other)?;
    let header_len = head.len() - 8;
    let total = head.len() + body.len();
    if total > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "a frame of {total} bytes is over the pool's limit of {MAX_FRAME}; submit fewer inputs per task \
                 (chunk_size) or lower shared_memory_threshold so that large values travel through shared memory"
            ),
        ));
    }
    let total = (total - 4) as u32;
    head[0..4].copy_from_slice(&total.to_le_bytes());
    head[4..8].copy_from_slice(&(header_len as u32).to_le_bytes());
    w.write_all(&head)?;
    w.write_all(body)?;
    w.flush()
}

/// Reads one frame into `buf` (its bytes after the length); `false` at a clean end of stream.
/// A length word over [`MAX_FRAME`] is an [`io::ErrorKind::InvalidData`] error, read no
/// further and allocated for nothing; `buf` grows only as the frame's bytes arrive.
/// A read timeout (the parent polls its worker's progress) ends the wait only before a
/// frame began: once its first byte is in, the rest is waited for, so that a timeout never
/// splits a frame.
pub(crate) fn read_frame(r: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<bool> {
    let mut len = [0u8; 4];
    if !fill(r, &mut len, true)? {
        return Ok(false);
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME - 4 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a frame of {} bytes announced, over the limit of {MAX_FRAME}", len + 4),
        ));
    }
    buf.clear();
    // The buffer grows only as the frame's bytes arrive (doubling from FIRST_RESERVE), so a
    // lying length word costs at most that much; a read timeout inside the frame is retried.
    let mut got = 0;
    while got < len {
        let step = (len - got).min(got.max(FIRST_RESERVE));
        buf.resize(got + step, 0);
        if !fill(r, &mut buf[got..got + step], false)? {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("a frame ended after {got} of {len} bytes"),
            ));
        }
        got += step;
    }
    Ok(true)
}

/// Fills `buf`; `false` at an end of stream before its first byte. Before that byte, a read
/// timeout is returned when `may_time_out`; after it, reads are retried.
fn fill(r: &mut impl Read, buf: &mut [u8], may_time_out: bool) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                if got == 0 && may_time_out {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Splits a frame read by [`read_frame`] into its header and body.
pub(crate) fn split_frame<H: DeserializeOwned>(frame: &[u8]) -> io::Result<(H, &[u8])> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "malformed frame");
    let header_len = u32::from_le_bytes(frame.get(0..4).ok_or_else(bad)?.try_into().map_err(|_| bad())?) as usize;
    let end = header_len.checked_add(4).ok_or_else(bad)?;
    let header = frame.get(4..end).ok_or_else(bad)?;
    let header = postcard::from_bytes(header).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok((header, &frame[end..]))
}

/// Appends `value`'s encoding to `out` and answers [`INLINE`]; or, when the encoding is
/// over `limit` bytes, encodes it into a shared-memory segment of its own, appends the
/// encoded [`PayloadRef`] and answers [`SHARED`] with what keeps the segment alive
/// (`hand_over`: the reader removes it, as for a worker's outputs). Where shared memory
/// fails, the value goes inline (slower, same result) and the reason is logged.
pub(crate) fn encode_item<V: Serialize + ?Sized>(
    value: &V,
    out: &mut Vec<u8>,
    limit: usize,
    hand_over: bool,
) -> Result<(u8, Pins), postcard::Error> {
    // Measuring first costs a few ns for a small value and saves a large one the growth
    // of `out` and a copy.
    let size = postcard::serialize_with_flavor(value, postcard::ser_flavors::Size::default())?;
    if size > limit {
        match payload::spill(value, size, hand_over) {
            Ok((r, pins)) => {
                encode_into(&r, out)?;
                return Ok((SHARED, pins));
            }
            Err(e) => tracing::warn!("polycompute pool: a large value goes through the pipe: {e}"),
        }
    }
    out.reserve(size);
    encode_into(value, out)?;
    Ok((INLINE, Pins::default()))
}

/// Appends one input to a job body (see [`encode_item`]).
pub(crate) fn push_input<V: Serialize + ?Sized>(
    body: &mut Vec<u8>,
    value: &V,
    limit: usize,
) -> Result<Pins, postcard::Error> {
    let at = body.len();
    body.extend_from_slice(&[INLINE, 0, 0, 0, 0]);
    match encode_item(value, body, limit, false) {
        Ok((tag, pins)) => {
            body[at] = tag;
            let len = (body.len() - at - 5) as u32;
            body[at + 1..at + 5].copy_from_slice(&len.to_le_bytes());
            Ok(pins)
        }
        Err(e) => {
            body.truncate(at);
            Err(e)
        }
    }
}

/// Appends one item as it is (a tag and its bytes).
pub(crate) fn push_item(body: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    body.push(tag);
    body.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    body.extend_from_slice(bytes);
}

/// The items of a body, in order: `(tag, bytes)`.
pub(crate) fn items(body: &[u8]) -> impl Iterator<Item = io::Result<(u8, &[u8])>> {
    let mut rest = body;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let item = take(&mut rest, 5).and_then(|head| {
            let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
            Ok((head[0], take(&mut rest, len)?))
        });
        if item.is_err() {
            rest = &[];
        }
        Some(item)
    })
}

/// Where an input's or output's encoding is.
pub(crate) enum Encoded<'a> {
    /// In the frame.
    Inline(&'a [u8]),
    /// In shared memory.
    Shared(PayloadRef),
}

impl Encoded<'_> {
    /// Runs `f` on the encoding, mapping it first when it is in shared memory (`remove`:
    /// remove it afterwards, as the reader of a worker's output does).
    pub(crate) fn with<R>(&self, remove: bool, f: impl FnOnce(&[u8]) -> R) -> Result<R, String> {
        match self {
            Encoded::Inline(bytes) => Ok(f(bytes)),
            Encoded::Shared(r) => {
                payload::read(r, remove, f).map_err(|e| format!("reading it from shared memory: {e}"))
            }
        }
    }
}

fn bad_data(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// The inputs of a job body, in order.
pub(crate) fn inputs(body: &[u8]) -> impl Iterator<Item = io::Result<Encoded<'_>>> {
    items(body).map(|item| match item? {
        (INLINE, bytes) => Ok(Encoded::Inline(bytes)),
        (SHARED, bytes) => postcard::from_bytes(bytes).map(Encoded::Shared).map_err(bad_data),
        (tag, _) => Err(bad_data(format!("unknown input tag {tag}"))),
    })
}

fn take<'a>(rest: &mut &'a [u8], n: usize) -> io::Result<&'a [u8]> {
    if rest.len() < n {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "truncated frame body"));
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Ok(head)
}

/// Appends one result to a results body: `run` appends the output as an item (see
/// [`encode_item`]) and answers its tag, or fails.
pub(crate) fn push_result(
    body: &mut Vec<u8>,
    run: impl FnOnce(&mut Vec<u8>) -> Result<u8, Failure>,
) -> Option<Failure> {
    let at = body.len();
    body.extend_from_slice(&[INLINE, 0, 0, 0, 0]);
    let failure = match run(body) {
        Ok(tag) => {
            body[at] = tag;
            None
        }
        Err(f) => {
            body.truncate(at + 5);
            body[at] = FAILURE;
            if encode_into(&f, body).is_err() {
                body.truncate(at + 5);
                let fallback = Failure::Serialization("the failure itself could not be encoded".into());
                let _ = encode_into(&fallback, body);
            }
            Some(f)
        }
    };
    let len = (body.len() - at - 5) as u32;
    body[at + 1..at + 5].copy_from_slice(&len.to_le_bytes());
    failure
}

/// One result of a results body.
pub(crate) enum WireResult<'a> {
    Output(Encoded<'a>),
    Failure(Failure),
}

/// The results of a results body, in order.
pub(crate) fn results(body: &[u8]) -> impl Iterator<Item = io::Result<WireResult<'_>>> {
    items(body).map(|item| match item? {
        (INLINE, bytes) => Ok(WireResult::Output(Encoded::Inline(bytes))),
        (SHARED, bytes) => {
            postcard::from_bytes(bytes).map(|r| WireResult::Output(Encoded::Shared(r))).map_err(bad_data)
        }
        (FAILURE, bytes) => postcard::from_bytes(bytes).map(WireResult::Failure).map_err(bad_data),
        (tag, _) => Err(bad_data(format!("unknown result tag {tag}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let mut body = Vec::new();
        push_input(&mut body, &7u64, usize::MAX).unwrap();
        push_input(&mut body, &"hello", usize::MAX).unwrap();
        let mut wire = Vec::new();
        let header = ToWorker::Job {
            id: 3,
            task: "t".into(),
            first_index: 10,
            attempt: 1,
            count: 2,
            stream: crate::rng::StreamId::default(),
        };
        write_frame(&mut wire, &header, &body).unwrap();
        let mut r = &wire[..];
        let mut frame = Vec::new();
        assert!(read_frame(&mut r, &mut frame).unwrap());
        assert!(!read_frame(&mut r, &mut frame).unwrap(), "clean end of stream");
        let (h, b): (ToWorker, &[u8]) = split_frame(&frame).unwrap();
        assert!(matches!(h, ToWorker::Job { id: 3, count: 2, .. }));
        let items: Vec<Encoded> = inputs(b).collect::<io::Result<_>>().unwrap();
        let decode = |e: &Encoded| e.with(false, |b| postcard::from_bytes::<String>(b).ok()).unwrap();
        assert_eq!(items[0].with(false, |b| postcard::from_bytes::<u64>(b).unwrap()).unwrap(), 7);
        assert_eq!(decode(&items[1]).as_deref(), Some("hello"));
    }

    #[test]
    fn results_carry_outputs_and_failures() {
        let mut body = Vec::new();
        assert!(push_result(&mut body, |out| Ok(encode_item(&1.5f64, out, 100, true).unwrap().0)).is_none());
        let f = push_result(&mut body, |out| {
            out.push(99); // partial output is discarded
            Err(Failure::Panicked("boom".into()))
        });
        assert!(matches!(f, Some(Failure::Panicked(_))));
        let got: Vec<_> = results(&body).collect::<io::Result<_>>().unwrap();
        assert!(
            matches!(got[0], WireResult::Output(Encoded::Inline(b)) if postcard::from_bytes::<f64>(b).unwrap() == 1.5)
        );
        assert!(matches!(&got[1], WireResult::Failure(Failure::Panicked(m)) if m == "boom"));
    }

    #[test]
    fn large_items_move_to_shared_memory_and_back() {
        let big: Vec<u32> = (0..10_000).collect();
        let mut body = Vec::new();
        assert_eq!(push_input(&mut body, &1u8, 100).unwrap().len(), 0, "small: stays");
        let at = body.len();
        let pins = push_input(&mut body, &big, 100).unwrap();
        assert_eq!(pins.len(), 1);
        assert!(body.len() - at < 100, "the pipe carries a reference");
        let items: Vec<Encoded> = inputs(&body).collect::<io::Result<_>>().unwrap();
        assert!(matches!(items[1], Encoded::Shared(_)));
        let back = items[1].with(false, |b| postcard::from_bytes::<Vec<u32>>(b).unwrap()).unwrap();
        assert_eq!(back, big);
        drop(pins);
        let gone = items[1].with(false, |_| ()).unwrap_err();
        assert!(gone.contains("shared memory"), "{gone}");
    }

    #[test]
    fn an_oversize_length_word_is_refused_before_any_allocation() {
        // A peer announcing 4 GiB - 1, or just over the cap, then nothing.
        for announced in [u32::MAX, (MAX_FRAME - 3) as u32] {
            let wire = announced.to_le_bytes();
            let mut frame = Vec::new();
            let e = read_frame(&mut &wire[..], &mut frame).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
            assert!(e.to_string().contains("over the limit"), "{e}");
            assert_eq!(frame.capacity(), 0, "nothing allocated for an oversize frame");
        }
        // Just under the cap but a lie: the buffer grows only with what really arrives.
        let mut wire = ((MAX_FRAME - 4) as u32).to_le_bytes().to_vec();
        wire.extend_from_slice(&[7; 100]);
        let mut frame = Vec::new();
        let e = read_frame(&mut &wire[..], &mut frame).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
        assert!(frame.capacity() <= 2 * FIRST_RESERVE, "{} bytes reserved for 100 sent", frame.capacity());
    }

    #[test]
    fn a_frame_over_the_cap_is_not_sent() {
        // Zeroed pages from the allocator: never touched, since nothing is written.
        let body = vec![0u8; MAX_FRAME];
        let mut wire = Vec::new();
        let e = write_frame(
            &mut wire,
            &FromWorker::Ready { device: polycompute_core::DeviceId::new(BackendKind::Cpu, 0) },
            &body,
        )
        .unwrap_err();
        assert!(e.to_string().contains("chunk_size"), "{e}");
        assert!(wire.is_empty());
        // Under the cap it is sent and read back.
        let body = vec![1u8; 1000];
        write_frame(
            &mut wire,
            &FromWorker::Ready { device: polycompute_core::DeviceId::new(BackendKind::Cpu, 0) },
            &body,
        )
        .unwrap();
        let mut frame = Vec::new();
        assert!(read_frame(&mut &wire[..], &mut frame).unwrap());
        assert_eq!(frame.len(), wire.len() - 4);
    }

    #[test]
    fn truncated_bodies_are_errors_not_panics() {
        let mut body = Vec::new();
        push_input(&mut body, &123u64, usize::MAX).unwrap();
        body.pop();
        assert!(inputs(&body).next().unwrap().is_err());
        assert!(results(&[0, 9, 0, 0, 0, 1]).next().unwrap().is_err());
        assert!(split_frame::<ToWorker>(&[200, 0, 0, 0]).is_err());
    }
}
