//! The parent/worker protocol: length-prefixed frames over the worker's socket (never its
//! stdout, which the task's own printing uses).
//!
//! A frame is `u32 length | u32 header length | header | body` (little-endian), the header
//! a postcard-encoded [`ToWorker`] or [`FromWorker`]. A job's body is its inputs, each
//! `u32 length | postcard bytes`; a result's body is, per input, `u8 tag | u32 length |
//! bytes`, tag 0 an encoded output, 1 an encoded failure.

use std::io::{self, Read, Write};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::task::{encode_into, Failure};
use crate::backend::BackendKind;

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
        shared_type: String,
        shared: Option<Vec<u8>>,
        /// The pool's tasks: (name, signature).
        tasks: Vec<(String, String)>,
    },
    /// Run `count` inputs (the body) of `task`.
    Job { id: u64, task: String, first_index: u64, attempt: u32, count: u32 },
}

/// Worker to parent.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum FromWorker {
    /// First frame: the token from the environment and the worker's pid.
    Hello { token: String, pid: u32 },
    /// The device is open; jobs may come.
    Ready { device: String },
    /// The worker could not start (its device did not open, ...).
    StartFailed { message: String },
    /// The results of job `id` (the body). With `retire`, the worker exits after this frame
    /// (its device context is poisoned).
    Results { id: u64, count: u32, retire: Option<String> },
}

/// Writes one frame and flushes.
pub(crate) fn write_frame<H: Serialize>(w: &mut impl Write, header: &H, body: &[u8]) -> io::Result<()> {
    let mut head = vec![0u8; 8];
    encode_into(header, &mut head).map_err(io::Error::other)?;
    let header_len = head.len() - 8;
    let total = u32::try_from(head.len() - 4 + body.len())
        .map_err(|_| io::Error::other("a frame over 4 GiB; split the input into smaller tasks"))?;
    head[0..4].copy_from_slice(&total.to_le_bytes());
    head[4..8].copy_from_slice(&(header_len as u32).to_le_bytes());
    w.write_all(&head)?;
    w.write_all(body)?;
    w.flush()
}

/// Reads one frame into `buf` (its bytes after the length); `false` at a clean end of stream.
pub(crate) fn read_frame(r: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<bool> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let len = u32::from_le_bytes(len) as usize;
    buf.clear();
    buf.resize(len, 0);
    r.read_exact(buf)?;
    Ok(true)
}

/// Splits a frame read by [`read_frame`] into its header and body.
pub(crate) fn split_frame<H: DeserializeOwned>(frame: &[u8]) -> io::Result<(H, &[u8])> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "malformed frame");
    let header_len = u32::from_le_bytes(frame.get(0..4).ok_or_else(bad)?.try_into().map_err(|_| bad())?) as usize;
    let header = frame.get(4..4 + header_len).ok_or_else(bad)?;
    let header = postcard::from_bytes(header).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok((header, &frame[4 + header_len..]))
}

/// Appends one input, encoded, to a job body.
pub(crate) fn push_input<V: Serialize + ?Sized>(body: &mut Vec<u8>, value: &V) -> Result<(), postcard::Error> {
    let at = body.len();
    body.extend_from_slice(&[0; 4]);
    if let Err(e) = encode_into(value, body) {
        body.truncate(at);
        return Err(e);
    }
    let len = (body.len() - at - 4) as u32;
    body[at..at + 4].copy_from_slice(&len.to_le_bytes());
    Ok(())
}

/// The inputs of a job body, in order.
pub(crate) fn inputs(body: &[u8]) -> impl Iterator<Item = io::Result<&[u8]>> {
    let mut rest = body;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let item = take(&mut rest, 4)
            .map(|l| u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize)
            .and_then(|len| take(&mut rest, len));
        if item.is_err() {
            rest = &[];
        }
        Some(item)
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

/// Appends one result to a results body: `run` appends the encoded output, or fails.
pub(crate) fn push_result(
    body: &mut Vec<u8>,
    run: impl FnOnce(&mut Vec<u8>) -> Result<(), Failure>,
) -> Option<Failure> {
    let at = body.len();
    body.extend_from_slice(&[0; 5]);
    let failure = match run(body) {
        Ok(()) => None,
        Err(f) => {
            body.truncate(at + 5);
            body[at] = 1;
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
    Output(&'a [u8]),
    Failure(Failure),
}

/// The results of a results body, in order.
pub(crate) fn results(body: &[u8]) -> impl Iterator<Item = io::Result<WireResult<'_>>> {
    let mut rest = body;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let item = (|| {
            let head = take(&mut rest, 5)?;
            let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
            let bytes = take(&mut rest, len)?;
            Ok(match head[0] {
                0 => WireResult::Output(bytes),
                _ => WireResult::Failure(
                    postcard::from_bytes(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?,
                ),
            })
        })();
        if item.is_err() {
            rest = &[];
        }
        Some(item)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let mut body = Vec::new();
        push_input(&mut body, &7u64).unwrap();
        push_input(&mut body, &"hello").unwrap();
        let mut wire = Vec::new();
        let header = ToWorker::Job { id: 3, task: "t".into(), first_index: 10, attempt: 1, count: 2 };
        write_frame(&mut wire, &header, &body).unwrap();
        let mut r = &wire[..];
        let mut frame = Vec::new();
        assert!(read_frame(&mut r, &mut frame).unwrap());
        assert!(!read_frame(&mut r, &mut frame).unwrap(), "clean end of stream");
        let (h, b): (ToWorker, &[u8]) = split_frame(&frame).unwrap();
        assert!(matches!(h, ToWorker::Job { id: 3, count: 2, .. }));
        let items: Vec<&[u8]> = inputs(b).collect::<io::Result<_>>().unwrap();
        assert_eq!(postcard::from_bytes::<u64>(items[0]).unwrap(), 7);
        assert_eq!(postcard::from_bytes::<String>(items[1]).unwrap(), "hello");
    }

    #[test]
    fn results_carry_outputs_and_failures() {
        let mut body = Vec::new();
        assert!(push_result(&mut body, |out| encode_into(&1.5f64, out).map_err(|_| unreachable!())).is_none());
        let f = push_result(&mut body, |out| {
            out.push(99); // partial output is discarded
            Err(Failure::Panicked("boom".into()))
        });
        assert!(matches!(f, Some(Failure::Panicked(_))));
        let got: Vec<_> = results(&body).collect::<io::Result<_>>().unwrap();
        assert!(matches!(got[0], WireResult::Output(b) if postcard::from_bytes::<f64>(b).unwrap() == 1.5));
        assert!(matches!(&got[1], WireResult::Failure(Failure::Panicked(m)) if m == "boom"));
    }

    #[test]
    fn truncated_bodies_are_errors_not_panics() {
        let mut body = Vec::new();
        push_input(&mut body, &123u64).unwrap();
        body.pop();
        assert!(inputs(&body).next().unwrap().is_err());
        assert!(results(&[0, 9, 0, 0, 0, 1]).next().unwrap().is_err());
        assert!(split_frame::<ToWorker>(&[200, 0, 0, 0]).is_err());
    }
}
