//! `polycompute demo`: the compute server this project exists for. A pool with one worker
//! per available device (the CPU when there is no GPU) runs a batch of Monte-Carlo tasks
//! built from the op set, shows a progress bar, prints a per-device summary, and checks a
//! sample of the results against a recomputation on the CPU. Everything is f32, so it runs
//! on every device the pool opens, adapters without f64 included. Failed tasks are counted
//! per device with their first error; the estimates cover the successful tasks only.

mod report;
mod workload;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use polycompute::pool::{DeviceSelection, TaskError, TaskErrorKind};
use polycompute::{Device, DeviceId, Pool, WorkerMode};

use report::{CrossCheck, DeviceSummary, Estimates, Report};
pub use workload::tasks;
use workload::{Batch, Estimate, MonteCarlo};

/// Options of `demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Tasks in the batch.
    #[arg(long, default_value_t = 64)]
    tasks: usize,
    /// Random points per task.
    #[arg(long, default_value_t = 1 << 20)]
    samples: usize,
    /// Side of each task's matrix product.
    #[arg(long, default_value_t = 256)]
    size: usize,
    /// Devices (`cuda:0,wgpu:1,cpu`); default: every GPU, the CPU when there is none.
    #[arg(long, value_delimiter = ',')]
    devices: Vec<String>,
    /// Workers per device.
    #[arg(long, default_value_t = 1)]
    workers_per_device: usize,
    /// `thread` or `process` workers (default: POLYCOMPUTE_WORKERS, then the platform plan).
    #[arg(long)]
    mode: Option<String>,
    /// The pool's seed: the same seed gives the same estimates on any devices.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Tasks recomputed on the CPU to check the workers' results.
    #[arg(long, default_value_t = 4)]
    check: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Relative difference, safe at zero.
fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(1e-12)
}

pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mode = match args.mode.as_deref() {
        None => WorkerMode::Auto,
        Some("thread") => WorkerMode::Thread,
        Some("process") => WorkerMode::Process,
        Some(other) => return Err(format!("--mode {other}: use thread or process").into()),
    };
    if args.tasks == 0 {
        return Err("--tasks must be at least 1".into());
    }
    let devices =
        if args.devices.is_empty() { DeviceSelection::Gpus } else { DeviceSelection::Ids(args.devices.clone()) };
    let pool = Pool::builder(&tasks())
        .devices(devices)
        .workers_per_device(args.workers_per_device)
        .mode(mode)
        .seed(args.seed)
        .chunk_size(1) // tasks are large: hand them out one by one, none sent ahead,
        .pipeline_depth(1) // so a slow device never sits on work a fast one could take
        .progress(!args.json)
        // Ctrl-C: the workers stop (remaining tasks end as ShutDown); we report what finished.
        .shutdown_on_ctrl_c(true)
        .build()?;
    let batch = Batch { samples: args.samples, size: args.size };
    let t0 = Instant::now();
    let mut estimates: Vec<Estimate> = Vec::with_capacity(args.tasks);
    let mut errors = Vec::new();
    for (_, result) in pool.seeded(workload::STREAM_KEY).map_unordered::<MonteCarlo>(vec![batch; args.tasks]) {
        match result {
            Ok(e) => estimates.push(e),
            Err(e) if e.kind == TaskErrorKind::ShutDown => {}
            Err(e) => errors.push(e),
        }
    }
    let wall = t0.elapsed();
    let interrupted = pool.interrupted();
    let report = summarize(&pool, &args, batch, &estimates, &errors, wall, interrupted)?;
    pool.shutdown();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    if report.estimates.is_none() && !interrupted {
        // Nothing to summarize: one line that says why (stdout stays JSON under --json).
        eprintln!("error: {}", report::none_succeeded(&report));
        return Ok(ExitCode::FAILURE);
    }
    if !args.json {
        print!("{}", report::table(&report));
    }
    Ok(if interrupted {
        ExitCode::from(130)
    } else if report.failed > 0 || !report.cross_check.ok {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn summarize(
    pool: &Pool,
    args: &Args,
    batch: Batch,
    estimates: &[Estimate],
    errors: &[TaskError],
    wall: Duration,
    interrupted: bool,
) -> Result<Report, Box<dyn std::error::Error>> {
    let n = estimates.len() as f64;
    let mean = |f: fn(&Estimate) -> f64| estimates.iter().map(f).sum::<f64>() / n;
    let mut devices: BTreeMap<DeviceId, DeviceSummary> = BTreeMap::new();
    for w in pool.workers() {
        let d = devices.entry(w.device).or_insert_with(|| DeviceSummary {
            device: w.device,
            workers: 0,
            tasks: 0,
            failed: 0,
            restarts: 0,
            busy_s: 0.0,
            tasks_per_s: 0.0,
            samples_per_s: 0.0,
        });
        d.workers += 1;
        d.tasks += w.tasks;
        d.failed += w.failed;
        d.restarts += w.restarts;
        d.busy_s += w.busy.as_secs_f64();
    }
    for d in devices.values_mut() {
        d.tasks_per_s = d.tasks as f64 / wall.as_secs_f64().max(1e-9);
        d.samples_per_s = d.tasks_per_s * batch.samples as f64;
    }
    // Recompute a spread-out sample on the CPU, in this process, with the tasks' seeds.
    let cpu = Device::cpu();
    let step = (estimates.len() / args.check.max(1)).max(1);
    let mut sorted: Vec<&Estimate> = estimates.iter().collect();
    sorted.sort_by_key(|e| e.index);
    let mut checked = Vec::new();
    let mut max_rel_err = 0.0f64;
    for e in sorted.iter().step_by(step).take(args.check) {
        let again = workload::recompute(&cpu, args.seed, e.index, batch)?;
        max_rel_err =
            max_rel_err.max(rel(e.pi, again.pi)).max(rel(e.gauss, again.gauss)).max(rel(e.gram_mean, again.gram_mean));
        checked.push(e.index);
    }
    // f32 sums on other devices differ in their last bits (summation order, fused multiply-add).
    let tolerance = 1e-4;
    Ok(Report {
        mode: pool.mode(),
        plan: pool.plan().reason.clone(),
        tasks: args.tasks,
        succeeded: estimates.len(),
        failed: errors.len(),
        failures: report::failures(errors),
        wall_s: wall.as_secs_f64(),
        estimates: (!estimates.is_empty()).then(|| Estimates {
            pi: mean(|e| e.pi),
            gauss: mean(|e| e.gauss),
            gram_mean: mean(|e| e.gram_mean),
        }),
        devices: devices.into_values().collect(),
        cross_check: CrossCheck {
            ok: !checked.is_empty() && max_rel_err <= tolerance,
            checked,
            max_rel_err,
            tolerance,
        },
        interrupted,
    })
}
