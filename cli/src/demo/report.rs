//! The demo's summary: per-device throughput, the estimates, the CPU cross-check, and the
//! failed tasks (how many, the first error of each device), as a table or JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use polycompute::pool::TaskError;
use polycompute::{DeviceId, WorkerMode};
use serde::Serialize;

/// One device's share of the work.
#[derive(Serialize)]
pub struct DeviceSummary {
    pub device: DeviceId,
    pub workers: usize,
    pub tasks: u64,
    pub failed: u64,
    pub restarts: u64,
    pub busy_s: f64,
    pub tasks_per_s: f64,
    pub samples_per_s: f64,
}

/// The CPU recomputation of a sample of tasks.
#[derive(Serialize)]
pub struct CrossCheck {
    pub checked: Vec<u64>,
    pub max_rel_err: f64,
    pub tolerance: f64,
    pub ok: bool,
}

/// The failed tasks of one device (`device` is `None` for tasks no worker ran).
#[derive(Debug, PartialEq, Serialize)]
pub struct DeviceFailures {
    pub device: Option<DeviceId>,
    pub failed: usize,
    /// The error of the lowest-numbered failed task, e.g. `#3: failed: map ... on wgpu:1`.
    pub first_error: String,
}

/// The means over the successful tasks.
#[derive(Serialize)]
pub struct Estimates {
    pub pi: f64,
    pub gauss: f64,
    pub gram_mean: f64,
}

/// Everything `demo` reports. `pi`, `gauss` and `gram_mean` are means over the `succeeded`
/// tasks only (absent when none succeeded).
#[derive(Serialize)]
pub struct Report {
    pub mode: WorkerMode,
    pub plan: String,
    /// Tasks submitted.
    pub tasks: usize,
    pub succeeded: usize,
    pub failed: usize,
    pub failures: Vec<DeviceFailures>,
    pub wall_s: f64,
    #[serde(flatten)]
    pub estimates: Option<Estimates>,
    pub devices: Vec<DeviceSummary>,
    pub cross_check: CrossCheck,
    pub interrupted: bool,
}

/// Groups failed tasks by device, devices in order, each with its count and the error of
/// its lowest-numbered task.
pub fn failures(errors: &[TaskError]) -> Vec<DeviceFailures> {
    let mut by_device: BTreeMap<Option<DeviceId>, (usize, &TaskError)> = BTreeMap::new();
    for e in errors {
        let entry = by_device.entry(e.device).or_insert((0, e));
        entry.0 += 1;
        if e.index < entry.1.index {
            entry.1 = e;
        }
    }
    by_device
        .into_iter()
        .map(|(device, (failed, e))| DeviceFailures {
            device,
            failed,
            first_error: format!("#{}: {}", e.index, e.kind),
        })
        .collect()
}

/// `wgpu:1` or, for tasks that reached no worker, `no device`.
fn device_name(d: Option<DeviceId>) -> String {
    d.map_or_else(|| "no device".to_string(), |d| d.to_string())
}

/// The one-line reason when no task succeeded.
pub fn none_succeeded(r: &Report) -> String {
    let why: Vec<String> = r.failures.iter().map(|f| format!("{}: {}", device_name(f.device), f.first_error)).collect();
    let how_many = if r.failed == r.tasks {
        format!("all {} failed", r.tasks)
    } else {
        format!("{} of {} failed, the others were stopped", r.failed, r.tasks)
    };
    if why.is_empty() {
        return format!("no task succeeded: {how_many}");
    }
    format!("no task succeeded: {how_many} ({})", why.join("; "))
}

/// The table `demo` prints.
pub fn table(r: &Report) -> String {
    let mut out = String::new();
    let mode = match r.mode {
        WorkerMode::Process => "process",
        WorkerMode::Mpi => "MPI rank",
        _ => "thread",
    };
    if r.interrupted {
        let _ = writeln!(out, "interrupted: {} tasks finished before Ctrl-C", r.succeeded + r.failed);
    }
    let wall = Duration::from_secs_f64(r.wall_s);
    let _ = writeln!(
        out,
        "{} tasks: {} succeeded, {} failed, in {wall:.2?} with {mode} workers",
        r.tasks, r.succeeded, r.failed
    );
    let _ = writeln!(
        out,
        "{:<10} {:>7} {:>7} {:>7} {:>9} {:>10} {:>14}",
        "device", "workers", "tasks", "failed", "busy", "tasks/s", "samples/s"
    );
    for d in &r.devices {
        let _ = writeln!(
            out,
            "{:<10} {:>7} {:>7} {:>7} {:>8.2}s {:>10.1} {:>14.3e}",
            d.device, d.workers, d.tasks, d.failed, d.busy_s, d.tasks_per_s, d.samples_per_s
        );
    }
    if r.failed > 0 {
        let _ = writeln!(out, "FAILED: {} of {} tasks; the first error of each device:", r.failed, r.tasks);
        for f in &r.failures {
            let _ = writeln!(out, "  {} ({} failed) {}", device_name(f.device), f.failed, f.first_error);
        }
    }
    let Some(e) = &r.estimates else {
        let _ = writeln!(out, "{}", none_succeeded(r));
        return out;
    };
    if r.failed > 0 {
        let _ = writeln!(out, "the estimates and the cross-check cover only the {} successful tasks:", r.succeeded);
    }
    let _ = writeln!(out, "pi        ~ {:.6} (error {:.2e})", e.pi, (e.pi - std::f64::consts::PI).abs());
    let _ = writeln!(out, "gauss     ~ {:.6} (exact 0.557746)", e.gauss);
    let _ = writeln!(out, "gram mean ~ {:.4}", e.gram_mean);
    let c = &r.cross_check;
    let _ = writeln!(
        out,
        "cross-check: tasks {:?} recomputed on the CPU, max relative error {:.1e} (tolerance {:.0e}): {}",
        c.checked,
        c.max_rel_err,
        c.tolerance,
        if c.ok { "ok" } else { "MISMATCH" }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute::pool::TaskErrorKind;
    use polycompute::BackendKind;

    fn error(index: u64, device: Option<DeviceId>, message: &str) -> TaskError {
        TaskError {
            task: "demo.monte_carlo".into(),
            index,
            worker: device.map(|_| 0),
            device,
            attempts: 1,
            kind: TaskErrorKind::Failed { message: message.into(), sticky_device_fault: false },
        }
    }

    fn report(succeeded: usize, errors: &[TaskError]) -> Report {
        Report {
            mode: WorkerMode::Thread,
            plan: String::new(),
            tasks: succeeded + errors.len(),
            succeeded,
            failed: errors.len(),
            failures: failures(errors),
            wall_s: 1.0,
            estimates: (succeeded > 0).then_some(Estimates { pi: 3.125, gauss: 0.55, gram_mean: 6.0 }),
            devices: Vec::new(),
            cross_check: CrossCheck { checked: vec![0], max_rel_err: 0.0, tolerance: 1e-4, ok: succeeded > 0 },
            interrupted: false,
        }
    }

    #[test]
    fn failures_are_counted_per_device_with_the_first_error() {
        let gl = DeviceId::new(BackendKind::Wgpu, 1);
        let cpu = DeviceId::new(BackendKind::Cpu, 0);
        let errors =
            [error(7, Some(gl), "late"), error(2, Some(gl), "early"), error(5, Some(cpu), "cpu"), error(9, None, "x")];
        let f = failures(&errors);
        let summary: Vec<(Option<DeviceId>, usize, &str)> =
            f.iter().map(|f| (f.device, f.failed, f.first_error.as_str())).collect();
        assert_eq!(
            summary,
            vec![(None, 1, "#9: failed: x"), (Some(cpu), 1, "#5: failed: cpu"), (Some(gl), 2, "#2: failed: early")]
        );
    }

    #[test]
    fn the_table_says_what_failed_and_what_the_estimates_cover() {
        let gl = DeviceId::new(BackendKind::Wgpu, 1);
        let t = table(&report(6, &[error(3, Some(gl), "map is not supported"), error(4, Some(gl), "again")]));
        assert!(t.contains("8 tasks: 6 succeeded, 2 failed"), "{t}");
        assert!(
            t.contains("FAILED: 2 of 8 tasks") && t.contains("wgpu:1 (2 failed) #3: failed: map is not supported"),
            "{t}"
        );
        assert!(t.contains("cover only the 6 successful tasks") && t.contains("pi        ~ 3.125000"), "{t}");
        let ok = table(&report(8, &[]));
        assert!(!ok.contains("FAILED") && !ok.contains("cover only"), "{ok}");
    }

    #[test]
    fn no_success_is_one_line_and_no_estimate() {
        let cpu = DeviceId::new(BackendKind::Cpu, 0);
        let r = report(0, &[error(0, Some(cpu), "array too large"), error(1, Some(cpu), "array too large")]);
        let line = none_succeeded(&r);
        assert_eq!(line, "no task succeeded: all 2 failed (cpu:0: #0: failed: array too large)");
        let t = table(&r);
        assert!(!t.contains("pi ") && !t.contains("cross-check"), "{t}");
    }
}
