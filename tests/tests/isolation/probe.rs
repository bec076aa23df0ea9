//! The probes and the case. Probe modes (the first argument) run in a copy of this binary:
//! `nobody` (as uid nobody: open segments, connect, join) and `impostor` (same user: join
//! with a guessed token, or send an oversize frame). Each prints one line per attempt.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use polycompute::pool::BoxError;
use polycompute::shared::SharedArray;
use polycompute::{Pool, Task, Tasks, WorkerContext, WorkerMode};

/// Set by the case before it builds its pool (workers inherit it): the file where the worker
/// writes what its socket probes saw.
const ENV_REPORT: &str = "POLYCOMPUTE_ISOLATION_REPORT";
/// What the pool sets in a worker's environment: its socket's path (see `pool::wire`).
const ENV_ADDR: &str = "POLYCOMPUTE_WORKER_ADDR";
const ENV_TOKEN: &str = "POLYCOMPUTE_WORKER_TOKEN";

/// Holds a large input (so the pool moves it into a shared-memory segment) for a while.
pub struct Hold;
impl Task for Hold {
    const NAME: &'static str = "hold";
    type Input = (Vec<u8>, u64);
    type Output = usize;
    fn run(&self, _: &mut WorkerContext, (bytes, ms): (Vec<u8>, u64)) -> Result<usize, BoxError> {
        std::thread::sleep(Duration::from_millis(ms));
        Ok(bytes.len())
    }
}

pub fn tasks() -> Tasks {
    Tasks::new().add(Hold)
}

pub fn am_root() -> bool {
    uid_of_this_process() == Some(0)
}

fn uid_of_this_process() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|ids| ids.split_whitespace().next()?.parse().ok())
}

/// Runs a probe mode when this process is one; `None` otherwise.
pub fn dispatch() -> Option<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("nobody") => Some(as_nobody(&args[1], &args[2..])),
        Some("impostor") => Some(impostor(&args[1], &args[2])),
        _ => None,
    }
}

fn kind(r: std::io::Result<()>) -> String {
    match r {
        Ok(()) => "OPENED".into(),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => "denied".into(),
        Err(e) => format!("error:{e}"),
    }
}

/// As uid nobody: tries to read and write each segment, to connect to the socket at `addr`
/// (`-` for none), and to join as a worker with a guessed token.
fn as_nobody(addr: &str, segments: &[String]) -> ExitCode {
    println!("uid {}", uid_of_this_process().map_or("?".into(), |u| u.to_string()));
    for seg in segments {
        let read = std::fs::File::open(seg).map(drop);
        let write = std::fs::OpenOptions::new().write(true).open(seg).map(drop);
        println!("segment-read {seg} {}", kind(read));
        println!("segment-write {seg} {}", kind(write));
    }
    if addr != "-" {
        println!("connect {}", kind(UnixStream::connect(addr).map(drop)));
        println!("join {}", join(addr, &"0".repeat(32)));
    }
    ExitCode::SUCCESS
}

/// As the same user, started by the worker: `token` (a guessed token) or `oversize` (a
/// length word of 4 GiB - 1); prints how many bytes the parent sent back before closing.
fn impostor(addr: &str, how: &str) -> ExitCode {
    let outcome = match how {
        "token" => join(addr, "0123456789abcdef0123456789abcdef"),
        "silent" => send_and_listen(addr, &[]),
        _ => send_and_listen(addr, &[0xff, 0xff, 0xff, 0xff, 1, 2, 3]),
    };
    println!("impostor-{how} {outcome}");
    ExitCode::SUCCESS
}

/// Connects and sends a worker's hello with `token`: the outcome.
fn join(addr: &str, token: &str) -> String {
    // postcard: FromWorker::Hello is variant 0; a string is its varint length and bytes;
    // the pid a varint (< 128 keeps it one byte: a guessed pid).
    let mut header = vec![0u8, token.len() as u8];
    header.extend_from_slice(token.as_bytes());
    header.push(7);
    let mut frame = ((header.len() + 4) as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&(header.len() as u32).to_le_bytes());
    frame.extend_from_slice(&header);
    send_and_listen(addr, &frame)
}

/// Connects, sends `bytes`, and reads until the other end closes: `closed-after-N-bytes`,
/// or why it could not (`denied` for a refused connect).
fn send_and_listen(addr: &str, bytes: &[u8]) -> String {
    let mut s = match UnixStream::connect(addr) {
        Ok(s) => s,
        Err(e) => return kind(Err(e)),
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
    if let Err(e) = s.write_all(bytes) {
        return format!("write-failed:{e}");
    }
    let mut got = Vec::new();
    match s.read_to_end(&mut got) {
        Ok(_) => format!("closed-after-{}-bytes", got.len()),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => format!("closed-after-{}-bytes", got.len()),
        Err(e) => format!("read-failed:{e}"),
    }
}

/// A copy of this binary that `nobody` may run (the build directory may sit under a home
/// that only root may enter), in a fresh 0755 directory.
fn probe_exe() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("polycompute-isolation-probe-{}", std::process::id()));
    let _ = std::fs::DirBuilder::new().mode(0o755).create(&dir);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.join("probe");
    if !exe.exists() {
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    exe
}

/// Removes this process's copy made by [`probe_exe`] (a debug test binary: tens of MiB).
fn remove_probe_exe() {
    let _ = std::fs::remove_dir_all(
        std::env::temp_dir().join(format!("polycompute-isolation-probe-{}", std::process::id())),
    );
}

/// Removes the probe copy and the report when the case ends, passed or failed.
struct CleanUp(PathBuf);
impl Drop for CleanUp {
    fn drop(&mut self) {
        remove_probe_exe();
        let _ = std::fs::remove_file(&self.0);
    }
}

fn id_of_nobody(flag: &str) -> u32 {
    let out = Command::new("id").args([flag, "nobody"]).output().expect("the `id` command");
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("a `nobody` user")
}

/// Runs the probe `args` (as `nobody` when `other_user`) and returns its output.
fn run_probe(args: &[&str], other_user: bool) -> String {
    let mut cmd = Command::new(probe_exe());
    cmd.args(args).env_remove(ENV_ADDR).env_remove(ENV_TOKEN).env_remove(ENV_REPORT).stdin(Stdio::null());
    if other_user {
        // std drops the supplementary groups too (setgroups(0)) when root switches uid.
        cmd.uid(id_of_nobody("-u")).gid(id_of_nobody("-g"));
    }
    let out = cmd.output().expect("the probe starts");
    assert!(out.status.success(), "probe {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// In a worker the case started, before it connects: the parent waits on the live socket.
/// Probes it as nobody, then as impostors of the same user, and writes what they saw.
pub fn from_worker_before_it_connects() {
    let (Ok(report), Ok(addr)) = (std::env::var(ENV_REPORT), std::env::var(ENV_ADDR)) else { return };
    let dir_mode = std::fs::metadata(Path::new(&addr).parent().unwrap()).unwrap().permissions().mode();
    let mut lines =
        format!("sockdir-mode {:o}\nsock-owner {}\n", dir_mode & 0o777, std::fs::metadata(&addr).unwrap().uid());
    lines += &run_probe(&["nobody", &addr], true);
    lines += &run_probe(&["impostor", &addr, "token"], false);
    lines += &run_probe(&["impostor", &addr, "oversize"], false);
    let start = std::time::Instant::now();
    lines += &run_probe(&["impostor", &addr, "silent"], false);
    lines += &format!("silent-held-ms {}\n", start.elapsed().as_millis());
    remove_probe_exe();
    let partial = format!("{report}.partial");
    std::fs::write(&partial, lines).unwrap();
    std::fs::rename(partial, report).unwrap();
}

fn line<'a>(report: &'a str, key: &str) -> &'a str {
    report
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {key} in:\n{report}"))
}

pub fn other_users_cannot_reach_a_running_pool() {
    let report = std::env::temp_dir().join(format!("polycompute-isolation-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&report);
    let _clean_up = CleanUp(report.clone());
    let array = SharedArray::<f32>::from_slice(&[1.0, 2.0, 3.0, 4.0], &[4]).unwrap();
    // Set before the pool exists, kept until its worker has started (which inherits it).
    std::env::set_var(ENV_REPORT, &report);
    let pool = Pool::builder(&tasks()).cpu().workers_per_device(1).mode(WorkerMode::Process).build().unwrap();
    // A first task: its result comes once the worker has started, after its probes.
    assert_eq!(pool.submit::<Hold>((vec![1u8; 10], 0)).wait().unwrap(), 10);
    std::env::remove_var(ENV_REPORT);

    // The worker socket, probed by the worker before it connected.
    let seen = std::fs::read_to_string(&report).expect("the worker wrote its probe report");
    let nobody = id_of_nobody("-u");
    assert_eq!(line(&seen, "uid"), nobody.to_string(), "the probe really ran as nobody:\n{seen}");
    assert_eq!(line(&seen, "sockdir-mode"), "700", "{seen}");
    assert_eq!(line(&seen, "connect"), "denied", "nobody connects to the worker socket:\n{seen}");
    assert_eq!(line(&seen, "join"), "denied", "nobody joins as a worker:\n{seen}");
    // Same user, wrong token or an oversize frame: closed without a byte of setup, and the
    // real worker started after them (the pool was built).
    assert_eq!(line(&seen, "impostor-token"), "closed-after-0-bytes", "{seen}");
    assert_eq!(line(&seen, "impostor-oversize"), "closed-after-0-bytes", "{seen}");
    // One that connects and says nothing is dropped after the hello wait (2 s), not held
    // until the start's deadline.
    assert_eq!(line(&seen, "impostor-silent"), "closed-after-0-bytes", "{seen}");
    let held: u64 = line(&seen, "silent-held-ms").parse().unwrap();
    assert!((1500..15_000).contains(&held), "a silent connection held the start {held} ms");

    // The segments, while a task holds a large input (a payload segment) and the array's.
    // The hold outlasts the probe (a process started as another user, which took more than
    // 1.5 s on a loaded CI machine): the payload segment is removed when its job ends.
    let job = pool.submit::<Hold>((vec![7u8; 3 << 20], 8000));
    let prefix = format!("polycompute-shm-{}-", std::process::id());
    let mut segments = Vec::new();
    for _ in 0..100 {
        segments = std::fs::read_dir("/dev/shm")
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| e.path())
            .collect();
        if segments.len() >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(segments.len() >= 2, "the array's and the input's segments: {segments:?}");
    assert!(segments.iter().any(|p| p.ends_with(array.segment_name())));
    let paths: Vec<String> = segments.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let mut args = vec!["nobody", "-"];
    args.extend(paths.iter().map(String::as_str));
    let seen = run_probe(&args, true);
    for seg in &paths {
        assert_eq!(line(&seen, &format!("segment-read {seg}")), "denied", "{seen}");
        assert_eq!(line(&seen, &format!("segment-write {seg}")), "denied", "{seen}");
    }
    for seg in &segments {
        let meta = std::fs::metadata(seg).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600, "mode of {}", seg.display());
    }
    assert_eq!(job.wait().unwrap(), 3 << 20, "the pool still works");
}
