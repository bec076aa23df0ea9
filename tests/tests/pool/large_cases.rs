//! Large task inputs and outputs: over the pool's threshold, a process worker's input and
//! output travel through shared memory instead of its pipe, with no change to the task; the
//! segments go once the result is back; a temporary shared array handed to `submit` lives
//! until its task has decoded it.
//!
//! Where bytes were decoded from is observed, not assumed: [`Located`] borrows its bytes
//! from the decoder's input and looks their address up in `/proc/self/maps`.

use std::time::Duration;

use ndarray::Array2;
use polycompute::pool::BoxError;
use polycompute::shared::SharedArray;
use polycompute::{Task, WorkerContext, WorkerMode};
use serde::de::{Deserializer, Error as _, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::shared_cases::ShmSum;
use crate::support::{builder, within};
use crate::tasks::Sleep;

/// Bytes that remember where they were decoded from: the shared-memory file whose mapping
/// held them (Linux), `None` for the pipe's buffer or a moved value.
#[derive(Debug)]
pub struct Located {
    pub data: Vec<u8>,
    pub from: Option<String>,
}

impl Located {
    fn new(len: usize, seed: u8) -> Located {
        Located { data: (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect(), from: None }
    }
}

impl Serialize for Located {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.data)
    }
}

impl<'de> Deserialize<'de> for Located {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Located, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Located;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_borrowed_bytes<E: serde::de::Error>(self, b: &'de [u8]) -> Result<Located, E> {
                Ok(Located { data: b.to_vec(), from: mapping_of(b.as_ptr() as usize) })
            }
            fn visit_bytes<E: serde::de::Error>(self, _: &[u8]) -> Result<Located, E> {
                Err(E::custom("postcard lends its input's bytes; copied bytes say nothing about where they were"))
            }
        }
        d.deserialize_bytes(V).map_err(D::Error::custom)
    }
}

/// The polycompute shared-memory file mapped at `addr` in this process, if any.
fn mapping_of(addr: usize) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let (range, rest) = line.split_once(' ')?;
        let (lo, hi) = range.split_once('-')?;
        let (lo, hi) = (usize::from_str_radix(lo, 16).ok()?, usize::from_str_radix(hi, 16).ok()?);
        let file = rest.split_whitespace().nth(4)?;
        let name = file.rsplit('/').next()?;
        (lo <= addr && addr < hi && name.starts_with("polycompute-shm-")).then(|| name.to_string())
    })
}

/// Where its input was decoded from, and an output of `out_len` bytes.
pub struct Relay;
impl Task for Relay {
    const NAME: &'static str = "relay";
    type Input = (Located, usize);
    type Output = (Option<String>, Vec<u8>, Located);
    fn run(&self, _: &mut WorkerContext, (input, out_len): (Located, usize)) -> Result<Self::Output, BoxError> {
        let digest = input.data.iter().step_by(4096).copied().collect();
        Ok((input.from, digest, Located::new(out_len, input.data[0])))
    }
}

/// Sums an ndarray input (ndarray's `serde` feature): any large encoding takes the path.
pub struct ArraySum;
impl Task for ArraySum {
    const NAME: &'static str = "array_sum";
    type Input = Array2<f32>;
    type Output = f64;
    fn run(&self, _: &mut WorkerContext, a: Array2<f32>) -> Result<f64, BoxError> {
        Ok(a.iter().map(|&x| f64::from(x)).sum())
    }
}

fn shm_file(name: &str) -> std::path::PathBuf {
    std::path::Path::new(crate::shared_cases::dir()).join(name)
}

const MIB: usize = 1 << 20;

pub fn large_values_travel_through_shared_memory(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    let input = Located::new(3 * MIB, 7);
    let digest: Vec<u8> = input.data.iter().step_by(4096).copied().collect();
    let (input_from, got, output) = pool.submit::<Relay>((input, 2 * MIB)).wait().unwrap();
    assert_eq!(got, digest, "the worker decoded the input intact");
    assert_eq!(output.data, Located::new(2 * MIB, 7).data, "the output came back intact");
    if mode == WorkerMode::Thread {
        assert_eq!((input_from, output.from), (None, None), "thread workers move values: nothing is encoded");
        return;
    }
    if !cfg!(target_os = "linux") {
        // Where bytes were decoded from is read in Linux's /proc/self/maps only: elsewhere
        // this case checks that large values arrive intact through every threshold.
        return thresholds_move_values_intact(mode, &digest);
    }
    let parent = format!("polycompute-shm-{}-", std::process::id());
    let input_file = input_from.expect("the 3 MiB input was decoded from a shared-memory mapping");
    assert!(input_file.starts_with(&parent), "the parent made the input's segment: {input_file}");
    let output_file = output.from.expect("the 2 MiB output was decoded from a shared-memory mapping");
    let worker = format!("polycompute-shm-{}-", crate::support::worker_pids(&pool)[0]);
    assert!(output_file.starts_with(&worker), "the worker made the output's segment: {output_file}");
    // Both go once the result is back (the parent drops the job right after delivering).
    for file in [&input_file, &output_file] {
        assert!(within(Duration::from_secs(2), || !shm_file(file).exists()).is_some(), "{file} was left behind");
    }

    // Small values, and every value with the threshold off, go through the pipe.
    let (small_from, _, small_out) = pool.submit::<Relay>((Located::new(1000, 1), 1000)).wait().unwrap();
    assert_eq!((small_from, small_out.from), (None, None));
    let piped = builder(mode).shared_memory_threshold(usize::MAX).build().unwrap();
    let (from, got, out) = piped.submit::<Relay>((Located::new(3 * MIB, 7), 2 * MIB)).wait().unwrap();
    assert_eq!((from, out.from, got), (None, None, digest));
    // A lower threshold moves smaller values.
    let low = builder(mode).shared_memory_threshold(10_000).build().unwrap();
    let (from, _, out) = low.submit::<Relay>((Located::new(20_000, 3), 20_000)).wait().unwrap();
    assert!(from.is_some() && out.from.is_some(), "20 kB over a 10 kB threshold");
}

/// Without a way to see where bytes came from (no /proc/self/maps): large values still
/// arrive intact with the threshold on, off and lowered.
fn thresholds_move_values_intact(mode: WorkerMode, digest: &[u8]) {
    for threshold in [None, Some(usize::MAX), Some(10_000)] {
        let mut b = builder(mode);
        if let Some(t) = threshold {
            b = b.shared_memory_threshold(t);
        }
        let pool = b.build().unwrap();
        let (_, got, out) = pool.submit::<Relay>((Located::new(3 * MIB, 7), 2 * MIB)).wait().unwrap();
        assert_eq!((got.as_slice(), out.data), (digest, Located::new(2 * MIB, 7).data), "threshold {threshold:?}");
    }
}

pub fn large_ndarray_inputs_need_no_change(mode: WorkerMode) {
    let pool = builder(mode).workers_per_device(2).build().unwrap();
    let inputs: Vec<Array2<f32>> =
        (0..6).map(|k| Array2::from_shape_fn((512, 1024), |(i, j)| ((i * 7 + j + k) % 100) as f32)).collect();
    let want: Vec<f64> = inputs.iter().map(|a| a.iter().map(|&x| f64::from(x)).sum()).collect();
    let got: Vec<f64> = pool.map::<ArraySum>(inputs).into_iter().map(Result::unwrap).collect();
    assert_eq!(got, want);
}

pub fn temporary_shared_inputs_live_until_decoded(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    // The only worker is busy: the next task waits in the queue while its input's last
    // handle in the caller's code is already gone.
    let busy = pool.submit::<Sleep>(300);
    let data: Vec<f32> = (0..10_000).map(|i| (i % 10) as f32).collect();
    let temporary = SharedArray::from_slice(&data, &[100, 100]).unwrap();
    let path = shm_file(temporary.segment_name());
    let queued = pool.submit::<ShmSum>(temporary);
    assert!(path.exists(), "pinned by the queued task");
    busy.wait().unwrap();
    let (sum, _) = queued.wait().unwrap();
    assert_eq!(sum, data.iter().map(|&x| f64::from(x)).sum::<f64>());
    if mode == WorkerMode::Process && crate::support::under_wine() {
        // A known Wine difference (docs/windows.md): the worker still maps the deleted segment,
        // and Wine keeps its name visible until the worker goes; Windows hides it at once.
        assert!(path.exists(), "Wine hid {} at once, as Windows does: drop this exception", path.display());
        drop(pool);
    }
    assert!(within(Duration::from_secs(2), || !path.exists()).is_some(), "the segment goes with the task");
}
