//! Parent programs the tests kill or interrupt from outside: this binary, run again with
//! `POOL_SCENARIO` set, builds a pool, prints its worker pids and keeps it busy.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Stdio};

use polycompute::pool::TaskErrorKind;
use polycompute::WorkerMode;

use crate::support::{builder, worker_pids};
use crate::tasks::Sleep;

/// Names the scenario to play.
pub const ENV: &str = "POOL_SCENARIO";
const MODE_ENV: &str = "POOL_SCENARIO_MODE";

/// Starts scenario `which` with a pool in `mode`.
pub fn start(which: &str, mode: WorkerMode) -> Child {
    let exe = std::env::current_exe().expect("the test binary's path");
    Command::new(exe)
        .env(ENV, which)
        .env(MODE_ENV, if mode == WorkerMode::Process { "process" } else { "thread" })
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the scenario")
}

/// Reads the scenario's `PIDS ...` line: its pool is up and busy.
pub fn read_pids(child: &mut Child) -> Vec<u32> {
    let out = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line).expect("read the scenario's output");
    let pids = line.strip_prefix("PIDS").unwrap_or_else(|| panic!("unexpected scenario output {line:?}"));
    pids.split_whitespace().map(|p| p.parse().expect("a pid")).collect()
}

/// Plays scenario `which`.
pub fn run(which: &str) -> ExitCode {
    let mode = match std::env::var(MODE_ENV).as_deref() {
        Ok("process") => WorkerMode::Process,
        _ => WorkerMode::Thread,
    };
    if which == "backend_env" {
        return backend_env();
    }
    let pool = builder(mode).workers_per_device(2).shutdown_on_ctrl_c(true).build().expect("build the pool");
    let pids = if mode == WorkerMode::Process { worker_pids(&pool) } else { Vec::new() };
    match which {
        // Busy workers, then wait to be SIGKILLed.
        "orphan" => {
            let _busy: Vec<_> = (0..4).map(|_| pool.submit::<Sleep>(60_000)).collect();
            announce(&pids);
            std::thread::sleep(std::time::Duration::from_secs(60));
            ExitCode::FAILURE
        }
        // A pool that shuts down on Ctrl-C, in a program that then exits with 130, as a
        // shell expects of a program ended by SIGINT.
        "sigint" => {
            announce(&pids);
            loop {
                let results = pool.map::<Sleep>(vec![50; 8]);
                if results.iter().any(|r| matches!(r, Err(e) if e.kind == TaskErrorKind::ShutDown)) {
                    assert!(pool.interrupted());
                    pool.shutdown(); // returns when the handler's shutdown has finished
                    return ExitCode::from(130);
                }
            }
        }
        other => {
            eprintln!("unknown scenario {other}");
            ExitCode::FAILURE
        }
    }
}

fn announce(pids: &[u32]) {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    println!("PIDS {}", list.join(" "));
}

/// Prints what a pool with the default device selection and `Device::default()` make of
/// this process's `POLYCOMPUTE_BACKEND`: `pool: <ids or error>` and `default: <id or error>`.
fn backend_env() -> ExitCode {
    let pool = polycompute::Pool::builder(&crate::tasks::pool_tasks()).mode(WorkerMode::Thread).build();
    match pool {
        Ok(p) => {
            let ids: Vec<String> = p.workers().iter().map(|w| w.device.to_string()).collect();
            println!("pool: {}", ids.join(","));
        }
        Err(e) => println!("pool: error: {e}"),
    }
    match polycompute::Device::default() {
        Ok(d) => println!("default: {}", d.id()),
        Err(e) => println!("default: error: {e}"),
    }
    ExitCode::SUCCESS
}

/// Runs the `backend_env` scenario with `POLYCOMPUTE_BACKEND=value`: (pool line, default line).
pub fn backend_env_with(value: &str) -> (String, String) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(exe).env(ENV, "backend_env").env("POLYCOMPUTE_BACKEND", value).output().expect("run it");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = |p: &str| {
        text.lines().find_map(|l| l.strip_prefix(p)).unwrap_or_else(|| panic!("no {p:?} in {text:?}")).to_string()
    };
    (line("pool: "), line("default: "))
}
