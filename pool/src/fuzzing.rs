//! Entry points into every decoder that reads bytes from another process, for the fuzz
//! targets in `fuzz/` (cargo-fuzz) and the corpus replay test that CI runs. Not part of the
//! API: enabled by the `fuzzing` feature, hidden from the docs, free to change.
//!
//! Each function takes arbitrary bytes and must return without panicking, hanging or
//! allocating more than the bytes justify, whatever they are:
//!
//! | entry point | decodes |
//! |-------------|---------|
//! | [`frames`] | a byte stream split into frames (the pool wire's `read_frame`), each frame read both ways |
//! | [`to_worker`] | one parent-to-worker frame: its header and every input of a job body |
//! | [`from_worker`] | one worker-to-parent frame: its header and every result of a results body |
//! | [`payload_ref`] | a `PayloadRef` (a large value's place in shared memory), then the reading of it |
//! | [`shared_handle`] | a [`SharedHandle`] decoded and attached, or a live array's handle with a hostile shape and offset |
//! | [`segment_header`] | a segment file's 64-byte header against a file length |

use std::io;

use crate::shared::payload::{self, PayloadRef};
use crate::shared::segment::{self, Header, HEADER};
use crate::shared::{SharedArray, SharedHandle};
use crate::wire::{self, FromWorker, ToWorker, WireResult};

/// Splits `data` into frames as a worker or its parent reads its socket, and decodes each
/// frame both as a parent-to-worker and a worker-to-parent frame.
pub fn frames(data: &[u8]) {
    let mut stream = data;
    let mut frame = Vec::new();
    while let Ok(true) = wire::read_frame(&mut stream, &mut frame) {
        assert!(frame.len() < wire::MAX_FRAME, "a frame over the cap was read");
        to_worker(&frame);
        from_worker(&frame);
    }
}

/// Decodes one parent-to-worker frame (without its length word) as the worker does.
pub fn to_worker(frame: &[u8]) {
    let Ok((header, body)) = wire::split_frame::<ToWorker>(frame) else { return };
    if let ToWorker::Job { count, .. } = header {
        for input in wire::inputs(body).take(count as usize).flatten() {
            let _ = input.with(false, <[u8]>::len);
        }
    }
}

/// Decodes one worker-to-parent frame (without its length word) as the parent does.
pub fn from_worker(frame: &[u8]) {
    let Ok((header, body)) = wire::split_frame::<FromWorker>(frame) else { return };
    if let FromWorker::Results { count, .. } = header {
        for result in wire::results(body).take(count as usize) {
            // Never `remove`: a fuzzer must not delete files (the real reader's check that
            // a name is a segment's of the claimed process runs either way).
            if let Ok(WireResult::Output(output)) = result {
                let _ = output.with(false, <[u8]>::len);
            }
        }
    }
}

/// Decodes a `PayloadRef` and reads what it names.
pub fn payload_ref(data: &[u8]) {
    if let Ok(r) = postcard::from_bytes::<PayloadRef>(data) {
        let _ = payload::read(&r, false, <[u8]>::len);
    }
}

/// First byte even: the rest decoded as a `SharedArray<f32>` (a [`SharedHandle`], then its
/// attaching; or the array's data, copied into a new one), as a task input holding one is. Odd: a live array's handle with the shape,
/// offset and dtype the bytes give, attached and read whole (a bounds error would read
/// outside the mapping, which the address sanitizer reports).
pub fn shared_handle(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    if first & 1 == 0 {
        if let Ok(a) = postcard::from_bytes::<SharedArray<f32>>(rest) {
            let _ = a.as_slice().iter().sum::<f32>();
        }
        return;
    }
    // Without shared memory (a sandbox that forbids it) there is nothing to attach to.
    let Some(live) = live_array() else { return };
    let mut handle = live.handle();
    let mut words = rest.chunks(8).map(|c| c.iter().rev().fold(0u64, |a, &b| (a << 8) | u64::from(b)));
    handle.offset = words.next().unwrap_or(0);
    let dims = (first >> 1) as usize % 5;
    handle.shape = words.by_ref().take(dims).map(|w| (w % 4096) as usize).collect();
    if first & 0x80 != 0 {
        handle.dtype = polycompute_core::DType::F64;
        if let Ok(a) = SharedArray::<f64>::attach(&handle) {
            let _ = a.as_slice().iter().sum::<f64>();
        }
    } else if let Ok(a) = SharedArray::<f32>::attach(&handle) {
        let _ = a.as_slice().iter().sum::<f32>();
    }
}

/// A shared array of 1000 f32s that lives as long as the process, for [`shared_handle`].
fn live_array() -> Option<&'static SharedArray<f32>> {
    static LIVE: std::sync::OnceLock<Option<SharedArray<f32>>> = std::sync::OnceLock::new();
    LIVE.get_or_init(|| SharedArray::zeros(&[1000]).ok()).as_ref()
}

/// The first 64 bytes are a segment header, the next 8 the file's length: a header that
/// passes the checks must describe exactly that file and encode back to the same fields.
pub fn segment_header(data: &[u8]) {
    let Some(header) = data.get(..HEADER).and_then(|h| <&[u8; HEADER]>::try_from(h).ok()) else { return };
    let len = data.get(HEADER..HEADER + 8).and_then(|b| b.try_into().ok()).map_or(0, u64::from_le_bytes);
    if let Ok(parsed) = Header::parse(header, len) {
        assert_eq!(parsed.data_bytes + HEADER as u64, len);
        assert_eq!(Header::parse(&parsed.encode(), len), Ok(parsed));
    }
    if let Ok(name) = std::str::from_utf8(&data[HEADER..]) {
        // A name that passes is one this crate makes: no separator, no "..", the prefix.
        if segment::check_name(name, std::process::id()) {
            assert!(name.starts_with(segment::PREFIX) && !name.contains(['/', '\\', '.']), "{name:?}");
        }
    }
}

/// Real inputs for each entry point, to seed the fuzzers' corpora: frames as the pool sends
/// them (a setup, jobs with inline and shared-memory inputs, every worker message, results
/// with outputs and failures), a payload reference, handles, a header. `(entry point, bytes)`.
pub fn seeds() -> io::Result<Vec<(&'static str, Vec<u8>)>> {
    use crate::task::Failure;
    use polycompute_core::backend::BackendKind;
    let mut out = Vec::new();
    let mut stream = Vec::new();
    let other = |e: postcard::Error| io::Error::other(e.to_string());

    let setup = ToWorker::Setup {
        worker: 1,
        kind: BackendKind::Cpu,
        ordinal: 0,
        seed: 42,
        spill_over: 1 << 20,
        broadcast_type: "alloc::vec::Vec<f32>".into(),
        broadcast: Some(postcard::to_allocvec(&vec![1.5f32; 8]).map_err(other)?),
        tasks: vec![("scale".into(), "Vec<f32> -> Vec<f32>".into())],
        progress: None,
    };
    let mut body = Vec::new();
    let mut pins = wire::push_input(&mut body, &vec![0.25f32; 16], usize::MAX).map_err(other)?;
    pins.extend(wire::push_input(&mut body, &"an input", usize::MAX).map_err(other)?);
    pins.extend(wire::push_input(&mut body, &vec![7u32; 64], 16).map_err(other)?);
    let array = SharedArray::<f32>::zeros(&[4, 3]).map_err(io::Error::other)?;
    pins.extend(wire::push_input(&mut body, &array.rows(1..3).map_err(io::Error::other)?, usize::MAX).map_err(other)?);
    let job = ToWorker::Job {
        id: 9,
        task: "scale".into(),
        first_index: 100,
        attempt: 0,
        count: 4,
        stream: crate::rng::StreamId::per_submission(42, 0, 100),
    };
    let mut results = Vec::new();
    // Not handed over (the seeds' segments go with `pins`, no file is left behind).
    for (value, limit) in [(vec![2u8; 4], usize::MAX), (vec![3u8; 300], 100)] {
        wire::push_result(&mut results, |o| {
            let (tag, p) = wire::encode_item(&value, o, limit, false).map_err(|_| fail())?;
            pins.extend(p);
            Ok(tag)
        });
    }
    wire::push_result(&mut results, |_| Err(Failure::Panicked("index out of bounds".into())));
    wire::push_result(&mut results, |_| Err(Failure::Failed { message: "device lost".into(), sticky: true }));
    let frames: Vec<(&'static str, Vec<u8>)> = vec![
        ("to_worker", frame(&setup, &[])?),
        ("to_worker", frame(&job, &body)?),
        ("from_worker", frame(&FromWorker::Hello { token: "0".repeat(32), pid: 1234 }, &[])?),
        (
            "from_worker",
            frame(&FromWorker::Ready { device: polycompute_core::DeviceId::new(BackendKind::Cpu, 0) }, &[])?,
        ),
        ("from_worker", frame(&FromWorker::StartFailed { message: "cannot open cuda:0".into() }, &[])?),
        (
            "from_worker",
            frame(
                &FromWorker::Results { id: 9, first: 0, count: 4, retire: None, stopped: false, cpu: None },
                &results,
            )?,
        ),
        (
            "from_worker",
            frame(
                &FromWorker::Results {
                    id: 9,
                    first: 2,
                    count: 2,
                    retire: Some("sticky".into()),
                    stopped: true,
                    cpu: Some(3),
                },
                &results,
            )?,
        ),
    ];
    for (target, f) in &frames {
        stream.extend_from_slice(&(f.len() as u32).to_le_bytes());
        stream.extend_from_slice(f);
        out.push((*target, f.clone()));
    }
    out.push(("frames", stream));

    let spilled = vec![1000u16; 100];
    let size = postcard::to_allocvec(&spilled).map_err(other)?.len();
    let (r, _spilled) = payload::spill(&spilled, size, false).map_err(io::Error::other)?;
    out.push(("payload_ref", postcard::to_allocvec(&r).map_err(other)?));
    let handle = array.handle();
    let mut even = vec![0u8];
    even.extend(postcard::to_allocvec(&array).map_err(other)?);
    out.push(("shared_handle", even));
    // The form an MPI rank gets: the data itself (decoding makes an array of its own).
    let mut data = vec![0u8];
    data.extend(crate::shared::carry::as_data(|| postcard::to_allocvec(&array)).map_err(other)?);
    out.push(("shared_handle", data));
    out.push(("shared_handle", postcard_handle(&SharedHandle { shape: vec![2, 2], offset: 8, ..handle })?));
    let mut odd = vec![0b0000_0011];
    odd.extend_from_slice(&16u64.to_be_bytes());
    odd.extend_from_slice(&100u64.to_be_bytes());
    out.push(("shared_handle", odd));
    for (dtype, bytes) in [(Some(polycompute_core::DType::F32), 48u64), (None, 201)] {
        let mut h = Header { token: 0x1234_5678_9abc_def0, dtype, data_bytes: bytes }.encode().to_vec();
        h.extend_from_slice(&(bytes + HEADER as u64).to_le_bytes());
        h.extend_from_slice(format!("{}{}-00000000deadbeef-3", segment::PREFIX, std::process::id()).as_bytes());
        out.push(("segment_header", h));
    }
    drop(pins);
    Ok(out)
}

fn fail() -> crate::task::Failure {
    crate::task::Failure::Serialization("seed".into())
}

fn postcard_handle(h: &SharedHandle) -> io::Result<Vec<u8>> {
    // The even branch, then variant 0 of a shared array's encoding: a handle.
    let mut v = vec![0u8, 0u8];
    v.extend(postcard::to_allocvec(h).map_err(|e| io::Error::other(e.to_string()))?);
    Ok(v)
}

/// One frame's bytes after its length word, as `read_frame` hands them over.
fn frame<H: serde::Serialize>(header: &H, body: &[u8]) -> io::Result<Vec<u8>> {
    let mut wire = Vec::new();
    wire::write_frame(&mut wire, header, body)?;
    Ok(wire.split_off(4))
}

/// Runs the entry point named `target` (a fuzz target's name) on `data`; `false` for an
/// unknown name.
pub fn run(target: &str, data: &[u8]) -> bool {
    match target {
        "frames" => frames(data),
        "to_worker" => to_worker(data),
        "from_worker" => from_worker(data),
        "payload_ref" => payload_ref(data),
        "shared_handle" => shared_handle(data),
        "segment_header" => segment_header(data),
        _ => return false,
    }
    true
}

/// The fuzz targets' names, as in `fuzz/fuzz_targets/`.
pub const TARGETS: [&str; 6] = ["frames", "to_worker", "from_worker", "payload_ref", "shared_handle", "segment_header"];

/// The short fuzz step CI runs (`scripts/fuzz-replay.sh`): every checked-in seed and
/// regression input of `fuzz/`, then mutations of them (bit flips, boundary values, cuts,
/// splices, random bytes) from a fixed-seed generator, through every entry point.
#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn fuzz_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
    }

    /// The checked-in inputs of `target`: its seeds and any regression inputs (findings).
    fn corpus(target: &str) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for dir in ["seeds", "regressions"] {
            let Ok(entries) = std::fs::read_dir(fuzz_dir().join(dir).join(target)) else { continue };
            let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            out.extend(paths.iter().map(|p| std::fs::read(p).unwrap()));
        }
        out
    }

    /// xorshift64*: a fixed sequence, so a failure replays exactly.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
        let mut v = input.to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(v.len() + 1);
            let last = v.len().saturating_sub(1);
            match rng.below(7) {
                0 if !v.is_empty() => v[at.min(last)] ^= 1 << rng.below(8),
                1 if !v.is_empty() => v[at.min(last)] = [0, 1, 0x7f, 0x80, 0xff][rng.below(5)],
                2 => v.truncate(at),
                3 => v.splice(at..at, (0..rng.below(16)).map(|_| rng.next() as u8)).for_each(drop),
                4 => {
                    // A length word or varint at its extremes.
                    let word = [u32::MAX, 1 << 30, (1 << 30) - 4, 0x8000_0000][rng.below(4)];
                    let end = (at + 4).min(v.len());
                    v.splice(at..end, word.to_le_bytes()).for_each(drop);
                }
                5 => {
                    let from = rng.below(other.len() + 1);
                    v.truncate(at);
                    v.extend_from_slice(&other[from..]);
                }
                _ => v = (0..rng.below(200)).map(|_| rng.next() as u8).collect(),
            }
        }
        v
    }

    #[test]
    fn the_checked_in_seeds_are_real_frames() {
        for seed in corpus("to_worker") {
            wire::split_frame::<ToWorker>(&seed).unwrap();
        }
        for seed in corpus("from_worker") {
            wire::split_frame::<FromWorker>(&seed).unwrap();
        }
        let stream = &corpus("frames")[0];
        let (mut r, mut frame, mut n) = (&stream[..], Vec::new(), 0);
        while wire::read_frame(&mut r, &mut frame).unwrap() {
            n += 1;
        }
        assert_eq!(n, 7, "the frames seed is the seven frames of a worker's life");
        postcard::from_bytes::<PayloadRef>(&corpus("payload_ref")[0]).unwrap();
        // Fresh seeds are made the same way (what `fuzz/seed.rs` writes).
        let fresh = seeds().unwrap();
        for target in TARGETS {
            let (checked_in, made) = (corpus(target).len(), fresh.iter().filter(|(t, _)| *t == target).count());
            assert!(checked_in >= made && made > 0, "{target}: {checked_in} checked in, {made} made");
        }
    }

    #[test]
    fn every_decoder_survives_the_corpus_and_its_mutations() {
        let cases: usize = std::env::var("POLYCOMPUTE_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(2000);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for target in TARGETS {
            let inputs = corpus(target);
            assert!(!inputs.is_empty(), "no seeds for {target} in fuzz/seeds");
            for input in &inputs {
                assert!(run(target, input));
            }
            for _ in 0..cases {
                let input = &inputs[rng.below(inputs.len())];
                let other = &inputs[rng.below(inputs.len())];
                run(target, &mutate(&mut rng, input, other));
            }
        }
        assert!(!run("no such target", &[]));
    }
}
