//! Shared arrays: what handing a large array to a process worker costs.
//!
//! `cargo run --release --example shared_array [-- MiB]` (default 256 MiB of f32). Prints
//! (medians of 5):
//! 1. the sum of the whole array in the parent, and the same sum by one process worker
//!    handed the array as a `SharedArray` (no copy, no serialization of the data): ratio,
//!    and the first hand-off alone (the worker maps the segment and faults its pages in);
//! 2. 1,000 tasks each summing a different slice, in process and in thread mode: ratio;
//! 3. the same data as a plain `Vec<f32>` task input (no `SharedArray`, no change to the
//!    task): a process worker gets it through shared memory (the pool's default for
//!    encodings over 1 MiB) or through its pipe (threshold off), a thread worker by move.

use std::time::Instant;

use polycompute::pool::BoxError;
use polycompute::shared::SharedArray;
use polycompute::{Pool, Task, Tasks, WorkerContext, WorkerMode};

/// Sums a shared array.
struct Sum;
impl Task for Sum {
    const NAME: &'static str = "sum";
    type Input = SharedArray<f32>;
    type Output = f64;
    fn run(&self, _: &mut WorkerContext, a: SharedArray<f32>) -> Result<f64, BoxError> {
        Ok(sum(a.as_slice()))
    }
}

/// Eight running sums, so the loop vectorizes; f64 accumulators.
fn sum(x: &[f32]) -> f64 {
    let mut acc = [0f64; 8];
    let chunks = x.chunks_exact(8);
    let rest: f64 = chunks.remainder().iter().map(|&v| f64::from(v)).sum();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += f64::from(v);
        }
    }
    acc.iter().sum::<f64>() + rest
}

/// Sums a plain vector: its encoding is what travels.
struct VecSum;
impl Task for VecSum {
    const NAME: &'static str = "vec_sum";
    type Input = Vec<f32>;
    type Output = f64;
    fn run(&self, _: &mut WorkerContext, v: Vec<f32>) -> Result<f64, BoxError> {
        Ok(sum(&v))
    }
}

fn tasks() -> Tasks {
    Tasks::new().add(Sum).add(VecSum)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time(mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    polycompute::worker_main(&tasks());
    let mib: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(256);
    let n = mib * (1 << 20) / 4;
    let mut a = SharedArray::<f32>::zeros(&[n])?;
    // SAFETY: `a` was just made: no other array shares its memory.
    for (i, x) in unsafe { a.as_slice_mut() }.iter_mut().enumerate() {
        *x = (i % 1024) as f32;
    }
    let want = sum(a.as_slice());

    let process = Pool::builder(&tasks()).cpu().mode(WorkerMode::Process).build()?;
    // The worker is up (another segment: kept alive, as every shared input must be, until
    // its task has run).
    let tiny = SharedArray::<f32>::zeros(&[1])?;
    process.submit::<Sum>(tiny.clone()).wait()?;
    let first = time(|| assert_eq!(process.submit::<Sum>(a.clone()).wait().expect("the worker's sum"), want));
    let parent = median((0..5).map(|_| time(|| assert_eq!(std::hint::black_box(sum(a.as_slice())), want))).collect());
    let worker = median(
        (0..5)
            .map(|_| time(|| assert_eq!(process.submit::<Sum>(a.clone()).wait().expect("the worker's sum"), want)))
            .collect(),
    );
    println!(
        "{mib} MiB f32: sum in the parent {:.1} ms; handed to a process worker {:.1} ms (ratio {:.2}), \
         the first time (the worker maps it and faults its pages in) {:.1} ms (ratio {:.2})",
        parent * 1e3,
        worker * 1e3,
        worker / parent,
        first * 1e3,
        first / parent
    );

    let tasks_n = 1000;
    let per = n / tasks_n;
    let slices: Vec<_> = (0..tasks_n).map(|k| a.rows(k * per..(k + 1) * per)).collect::<Result<_, _>>()?;
    let run = |pool: &Pool| {
        median(
            (0..5)
                .map(|_| {
                    time(|| {
                        let total: f64 = pool.map::<Sum>(slices.clone()).into_iter().map(|r| r.expect("a sum")).sum();
                        assert!(total > 0.0);
                    })
                })
                .collect(),
        )
    };
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let p2 = Pool::builder(&tasks()).cpu().mode(WorkerMode::Process).workers_per_device(workers).build()?;
    let t2 = Pool::builder(&tasks()).cpu().mode(WorkerMode::Thread).workers_per_device(workers).build()?;
    let (pt, tt) = (run(&p2), run(&t2));
    println!(
        "{tasks_n} tasks over slices of it, {workers} workers: process {:.1} ms, thread {:.1} ms: \
         process runs at {:.2}x thread speed",
        pt * 1e3,
        tt * 1e3,
        tt / pt
    );
    drop((p2, t2, slices, process));

    let plain = a.as_slice().to_vec();
    drop(a);
    let hand = |pool: &Pool| {
        pool.submit::<VecSum>(plain.clone()).wait().expect("warm up");
        median(
            (0..3).map(|_| time(|| assert_eq!(pool.submit::<VecSum>(plain.clone()).wait().unwrap(), want))).collect(),
        )
    };
    let copy = median((0..3).map(|_| time(|| drop(std::hint::black_box(plain.clone())))).collect());
    let via_shm = hand(&Pool::builder(&tasks()).cpu().mode(WorkerMode::Process).build()?);
    let via_pipe =
        hand(&Pool::builder(&tasks()).cpu().mode(WorkerMode::Process).shared_memory_threshold(usize::MAX).build()?);
    let by_move = hand(&Pool::builder(&tasks()).cpu().mode(WorkerMode::Thread).build()?);
    println!(
        "{mib} MiB as a Vec<f32> input (clone + hand-off + sum): process worker through shared memory {:.1} ms, \
         through the pipe {:.1} ms (shared memory {:.2}x faster); thread worker {:.1} ms; the clone alone {:.1} ms",
        via_shm * 1e3,
        via_pipe * 1e3,
        via_pipe / via_shm,
        by_move * 1e3,
        copy * 1e3
    );
    Ok(())
}
