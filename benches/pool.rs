//! Worker-pool overheads in thread and process mode, beside Python's
//! `multiprocessing.Pool` (spawn, 2 workers) running the same workloads in the same
//! command (benches/pool_mp.py), with the ratios.
//!
//! `cargo bench --bench pool [-- --quick]` (`--quick`: fewer repetitions, for CI smoke runs).
//! Every figure is a median over repetitions; the pool has 2 CPU workers, as Python's.

// Built by libtest (its `[[bench]]` entry with `harness = false` lost), main would be dead.
#![cfg_attr(test, allow(dead_code, unused_imports))]

use std::process::Command;
use std::time::{Duration, Instant};

use polycompute::pool::BoxError;
use polycompute::{Pool, Task, Tasks, WorkerContext, WorkerMode};

/// Returns its input: the pool's own cost, nothing else.
struct Noop;
impl Task for Noop {
    const NAME: &'static str = "noop";
    type Input = u64;
    type Output = u64;
    fn run(&self, _: &mut WorkerContext, x: u64) -> Result<u64, BoxError> {
        Ok(x)
    }
}

fn tasks() -> Tasks {
    Tasks::new().add(Noop)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pool(mode: WorkerMode, chunk: Option<usize>) -> Pool {
    let b = Pool::builder(&tasks()).cpu().workers_per_device(2).mode(mode);
    let b = match chunk {
        Some(c) => b.chunk_size(c),
        None => b,
    };
    b.build().expect("build the pool")
}

/// The figures of one mode.
#[derive(Default)]
struct Figures {
    create_s: f64,
    round_trip_s: f64,
    unbatched_per_s: f64,
    batched_per_s: f64,
}

fn measure(mode: WorkerMode, quick: bool) -> Figures {
    let reps = if quick { 3 } else { 7 };
    let n_map = if quick { 20_000 } else { 100_000 };
    let create_s = median(
        (0..reps)
            .map(|_| {
                let t0 = Instant::now();
                let p = pool(mode, None);
                p.submit::<Noop>(1).wait().expect("first result");
                let dt = t0.elapsed().as_secs_f64();
                drop(p);
                dt
            })
            .collect(),
    );
    let p = pool(mode, None);
    let _ = p.map::<Noop>(0..1000); // warm both workers
    let trips = (0..if quick { 500 } else { 2000 })
        .map(|i| {
            let t0 = Instant::now();
            p.submit::<Noop>(i).wait().expect("noop");
            t0.elapsed().as_secs_f64()
        })
        .collect();
    let round_trip_s = median(trips);
    let rate = |p: &Pool, n: u64| {
        let t0 = Instant::now();
        let out = p.map::<Noop>(0..n);
        let dt = t0.elapsed().as_secs_f64();
        assert!(out.len() == n as usize && out.iter().all(|r| r.is_ok()));
        n as f64 / dt
    };
    let batched_per_s = median((0..reps).map(|_| rate(&p, n_map)).collect());
    drop(p);
    let unbatched = pool(mode, Some(1));
    let _ = unbatched.map::<Noop>(0..1000);
    let unbatched_per_s = median((0..reps).map(|_| rate(&unbatched, n_map / 5)).collect());
    Figures { create_s, round_trip_s, unbatched_per_s, batched_per_s }
}

fn python(quick: bool) -> Option<Figures> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/pool_mp.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script);
    if quick {
        cmd.arg("--quick");
    }
    let out = match cmd.output() {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            eprintln!("pool_mp.py failed: {}", String::from_utf8_lossy(&o.stderr));
            return None;
        }
        Err(e) => {
            eprintln!("python3 not runnable ({e}): no comparison");
            return None;
        }
    };
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let f = |k: &str| v.get(k).and_then(serde_json::Value::as_f64);
    println!("Python {} multiprocessing.Pool(2), spawn:", v.get("python")?.as_str()?);
    Some(Figures {
        create_s: f("create_to_first_result_s")?,
        round_trip_s: f("round_trip_s")?,
        unbatched_per_s: f("map_unbatched_per_s")?,
        batched_per_s: f("map_batched_per_s")?,
    })
}

fn main() {
    polycompute::worker_main(&tasks());
    let quick = std::env::args().any(|a| a == "--quick");
    let thread = measure(WorkerMode::Thread, quick);
    let process = measure(WorkerMode::Process, quick);
    let py = python(quick);
    let dur = |s: f64| format!("{:?}", Duration::from_secs_f64(s));
    // Lower is better for times, higher for rates: each ratio says how many times better.
    let vs_time =
        |ours: f64, f: &dyn Fn(&Figures) -> f64| py.as_ref().map_or("-".into(), |p| format!("{:.1}x", f(p) / ours));
    let vs_rate =
        |ours: f64, f: &dyn Fn(&Figures) -> f64| py.as_ref().map_or("-".into(), |p| format!("{:.1}x", ours / f(p)));
    println!(
        "{:<34} {:>12} {:>12} {:>12} {:>9} {:>9}",
        "median of repetitions", "thread", "process", "python", "thr/py", "proc/py"
    );
    let row_t = |name: &str, f: &dyn Fn(&Figures) -> f64| {
        let p = py.as_ref().map_or("-".into(), |p| dur(f(p)));
        println!(
            "{name:<34} {:>12} {:>12} {p:>12} {:>9} {:>9}",
            dur(f(&thread)),
            dur(f(&process)),
            vs_time(f(&thread), f),
            vs_time(f(&process), f)
        );
    };
    let row_r = |name: &str, f: &dyn Fn(&Figures) -> f64| {
        let p = py.as_ref().map_or("-".into(), |p| format!("{:.0}/s", f(p)));
        println!(
            "{name:<34} {:>12} {:>12} {p:>12} {:>9} {:>9}",
            format!("{:.0}/s", f(&thread)),
            format!("{:.0}/s", f(&process)),
            vs_rate(f(&thread), f),
            vs_rate(f(&process), f)
        );
    };
    row_t("pool creation -> first result", &|f| f.create_s);
    row_t("submit -> result round trip", &|f| f.round_trip_s);
    row_r("map no-op, unbatched (chunk 1)", &|f| f.unbatched_per_s);
    row_r("map no-op, batched (auto | py 256)", &|f| f.batched_per_s);
}
