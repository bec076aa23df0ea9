//! The `polycompute` binary as a user runs it: `demo` on every device it can open (f32
//! throughout, so adapters without f64 included) in thread and process mode, its summary when
//! tasks fail, quiet output without `XDG_RUNTIME_DIR`, and `check --json`. Small sizes: each
//! run takes well under a second.

use std::process::{Command, Output};

fn polycompute(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_polycompute"));
    cmd.args(args);
    cmd
}

fn run(cmd: &mut Command) -> (Output, String, String) {
    let out = cmd.output().expect("run the polycompute binary");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}

/// `demo --json` on `devices` with a small batch: the report, after checking that every
/// task succeeded and the CPU cross-check passed.
fn demo_succeeds(devices: &str) -> serde_json::Value {
    let args = ["demo", "--json", "--devices", devices, "--tasks", "6", "--samples", "8192", "--size", "16"];
    let (out, stdout, stderr) = run(&mut polycompute(&args));
    assert!(out.status.success(), "demo --devices {devices} failed:\n{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("demo --json prints JSON");
    assert_eq!((report["tasks"].as_u64(), report["succeeded"].as_u64()), (Some(6), Some(6)), "{report}");
    assert_eq!(report["failed"], 0, "{report}");
    assert_eq!(report["failures"], serde_json::json!([]), "{report}");
    assert_eq!(report["cross_check"]["ok"], true, "{report}");
    let pi = report["pi"].as_f64().expect("pi is reported when tasks succeed");
    assert!((pi - std::f64::consts::PI).abs() < 0.1, "pi ~ {pi}");
    report
}

#[test]
fn demo_on_the_cpu_completes_and_cross_checks() {
    let report = demo_succeeds("cpu");
    assert_eq!(report["devices"][0]["device"], "cpu:0");
}

#[test]
fn demo_without_any_success_says_why_in_one_line_and_exits_1() {
    // 2^33 points per task: past u32 indexing, so every task fails before allocating.
    let args = ["demo", "--devices", "cpu", "--tasks", "3", "--samples", "8589934592", "--size", "4"];
    let (out, stdout, stderr) = run(&mut polycompute(&args));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.is_empty(), "no table, no estimate of nothing: {stdout}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(
        lines[0].starts_with("error: no task succeeded: all 3 failed (cpu:0: #0: failed: array too large"),
        "{stderr}"
    );
}

#[cfg(feature = "wgpu")]
mod wgpu {
    use super::*;
    use polycompute::{registry, BackendKind};

    /// The wgpu device ids here (`wgpu:0`, `wgpu:1`, ...); none is a failure only when
    /// `POLYCOMPUTE_REQUIRE` lists wgpu.
    fn adapters() -> Vec<String> {
        match registry::backend(BackendKind::Wgpu).and_then(|b| b.devices()) {
            Ok(infos) => infos.iter().map(|i| i.id().to_string()).collect(),
            Err(e) => {
                let required = std::env::var("POLYCOMPUTE_REQUIRE").unwrap_or_default().to_lowercase();
                assert!(!required.contains("wgpu"), "wgpu is required but has no adapter: {e}");
                eprintln!("cli: SKIPPED wgpu: {e}");
                Vec::new()
            }
        }
    }

    #[test]
    fn demo_completes_on_each_adapter_alone_and_on_all_of_them_with_the_cpu() {
        let ids = adapters();
        for id in &ids {
            let report = demo_succeeds(id);
            assert_eq!(report["devices"][0]["device"], id.as_str(), "{report}");
        }
        if !ids.is_empty() {
            let all = format!("{},cpu", ids.join(","));
            let report = demo_succeeds(&all);
            assert_eq!(report["devices"].as_array().map(Vec::len), Some(ids.len() + 1), "{report}");
        }
    }

    #[test]
    fn no_mesa_noise_without_xdg_runtime_dir() {
        let ids = adapters();
        if ids.is_empty() {
            return;
        }
        // Named devices, so the result does not depend on which other backends are here.
        let mut args = vec!["check", "--filter", "add_f32_7", "--device", "cpu"];
        ids.iter().for_each(|id| args.extend(["--device", id.as_str()]));
        let (out, stdout, stderr) = run(polycompute(&args).env_remove("XDG_RUNTIME_DIR"));
        assert!(out.status.success(), "{stdout}\n{stderr}");
        assert!(!stderr.contains("XDG_RUNTIME_DIR"), "Mesa's GL probe printed: {stderr}");
        assert!(stdout.ends_with('\n'), "the last line ends with a newline: {stdout:?}");
        let summary = stdout.lines().last().unwrap_or_default();
        assert!(summary.contains(" case(s) on ") && summary.ends_with(" 0 failure(s)"), "its own line: {summary:?}");
        let args = ["demo", "--tasks", "2", "--samples", "4096", "--size", "8"];
        let (out, stdout, stderr) = run(polycompute(&args).env_remove("XDG_RUNTIME_DIR"));
        assert!(out.status.success(), "{stdout}\n{stderr}");
        assert!(!stderr.contains("XDG_RUNTIME_DIR"), "Mesa's GL probe printed: {stderr}");
    }
}

/// `polycompute check --json` end to end on the CPU: the documented keys, one result per
/// op × dtype × device, and the exit status.
#[test]
fn check_json_reports_one_row_per_case_and_device() {
    let (out, stdout, _) = run(&mut polycompute(&["check", "--device", "cpu:0", "--filter", "xor_i32", "--json"]));
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    let want = polycompute_conformance::corpus().iter().filter(|c| c.name.contains("xor_i32")).count();
    assert!(json["cases"] == want && json["failures"] == 0 && out.status.success(), "{json} (exit {})", out.status);
    let results = json["results"].as_array().expect("a results array");
    let keys = ["op", "dtype", "device", "status", "max_ulp"];
    assert!(results.len() == 1 && keys.iter().all(|k| results[0].get(k).is_some()), "one row with {keys:?}: {json}");
    let row = &results[0];
    assert_eq!(
        (row["op"].as_str(), row["dtype"].as_str(), row["device"].as_str(), row["status"].as_str()),
        (Some("xor"), Some("i32"), Some("cpu:0"), Some("pass")),
        "{row}"
    );
}

/// `demo` with two workers per device, as threads and as re-executed worker processes: every
/// task's result, the CPU cross-check, and π within its Monte-Carlo error.
#[test]
fn demo_runs_and_cross_checks_in_both_worker_modes() {
    for mode in ["thread", "process"] {
        let args =
            ["demo", "--tasks", "6", "--samples", "20000", "--size", "24", "--workers-per-device", "2", "--json"];
        let (out, stdout, stderr) = run(polycompute(&args).args(["--mode", mode]));
        assert!(out.status.success(), "demo --mode {mode} failed: {stderr}\n{stdout}");
        let report: serde_json::Value = serde_json::from_str(&stdout).expect("demo --json prints JSON");
        assert_eq!(report["tasks"], 6);
        assert_eq!(report["failed"], 0);
        assert_eq!(report["cross_check"]["ok"], true, "{report}");
        assert_eq!(report["cross_check"]["checked"].as_array().map(Vec::len), Some(4));
        let pi = report["pi"].as_f64().expect("pi in the report");
        assert!((pi - std::f64::consts::PI).abs() < 0.05, "{mode}: pi ~ {pi}");
        let devices = report["devices"].as_array().expect("devices in the report");
        let tasks: u64 = devices.iter().map(|d| d["tasks"].as_u64().unwrap_or(0)).sum();
        assert_eq!(tasks, 6, "{report}");
    }
}
