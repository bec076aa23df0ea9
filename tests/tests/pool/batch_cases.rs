//! Per-task accounting inside batches: a task's timeout, result and crash are its own.
//! Every task logs its start to a file ([`Logged`]), so "never ran" and "ran once" are
//! observed, not assumed.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use polycompute::pool::{TaskErrorKind, TaskRng};
use polycompute::TaskError;
use polycompute::WorkerMode::{self, Process, Thread};

use crate::support::{build_chunked, builder};
use crate::tasks::{Act, Logged, Ran};

/// A fresh log file for one case.
pub struct Log(pub std::path::PathBuf);

impl Log {
    pub fn new(name: &str) -> Log {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
        let path = std::env::temp_dir().join(format!("polycompute-pool-{name}-{}-{nanos}.log", std::process::id()));
        Log(path)
    }

    pub fn path(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }

    /// How often each task index logged `start`.
    pub fn starts(&self) -> HashMap<u64, usize> {
        let mut n = HashMap::new();
        for line in crate::tasks::read_log(&self.0).lines() {
            if let Some(i) = line.strip_prefix("start ") {
                *n.entry(i.parse().unwrap()).or_default() += 1;
            }
        }
        n
    }

    /// When each task logged `end` (ms since the Unix epoch).
    fn ends(&self) -> HashMap<u64, u128> {
        let mut ends = HashMap::new();
        for line in crate::tasks::read_log(&self.0).lines() {
            if let Some(rest) = line.strip_prefix("end ") {
                let (i, ms) = rest.split_once(' ').unwrap();
                ends.insert(i.parse().unwrap(), ms.parse().unwrap());
            }
        }
        ends
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        for part in crate::tasks::log_parts(&self.0) {
            let _ = std::fs::remove_file(part);
        }
    }
}

fn is_timeout_of(r: &Result<Ran, TaskError>, limit: Duration) -> bool {
    matches!(r, Err(TaskError { kind: TaskErrorKind::Timeout { after, elapsed }, .. })
        if *after == limit && *elapsed >= limit && *elapsed < limit * 3)
}

/// The reproduction: one worker, 400 ms timeout, batches of four,
/// `[ok, sleep 5 s, ok, ok, sleep 1.2 s, ok, ok, ok]`.
pub fn timeouts_are_per_task_inside_a_batch(mode: WorkerMode) {
    let log = Log::new("timeouts");
    let limit = Duration::from_millis(400);
    let pool = builder(mode).task_timeout(limit).chunk_size(4).build().unwrap();
    let first = pool.submit::<Logged>((log.path(), Act::Ok)).wait().unwrap().index + 1;
    let acts = [Act::Ok, Act::Sleep(5_000), Act::Ok, Act::Ok, Act::Sleep(1_200), Act::Ok, Act::Ok, Act::Ok];
    let t0 = Instant::now();
    let results = pool.map::<Logged>(acts.iter().map(|a| (log.path(), *a)));
    let took = t0.elapsed();
    for (i, r) in results.iter().enumerate() {
        if matches!(acts[i], Act::Sleep(_)) {
            assert!(is_timeout_of(r, limit), "task {i}: {r:?}");
            let message = r.as_ref().unwrap_err().to_string();
            assert!(message.contains("400ms"), "the error names the real limit: {message}");
        } else {
            let ran = r.as_ref().unwrap_or_else(|e| panic!("task {i}: {e}"));
            assert_eq!((ran.index, ran.attempt), (first + i as u64, 1), "task {i}");
        }
    }
    assert!(took < Duration::from_millis(3_000), "two timeouts of 400 ms took {took:?}");
    let starts = log.starts();
    for i in 0..acts.len() as u64 {
        assert_eq!(starts.get(&(first + i)), Some(&1), "task {i} ran exactly once: {starts:?}");
    }
    assert_eq!(pool.workers()[0].restarts, 2, "one replacement per timeout");
}

/// `shutdown` 500 ms into a map of 200 ms tasks keeps every result that finished.
pub fn shutdown_keeps_finished_results(mode: WorkerMode) {
    let log = Log::new("shutdown");
    let pool = builder(mode).workers_per_device(2).chunk_size(10).build().unwrap();
    let first = pool.submit::<Logged>((log.path(), Act::Ok)).wait().unwrap().index + 1;
    let (results, stopped_at) = std::thread::scope(|s| {
        let mapper = s.spawn(|| pool.map::<Logged>((0..40).map(|_| (log.path(), Act::Sleep(200)))));
        std::thread::sleep(Duration::from_millis(500));
        let at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis();
        pool.shutdown();
        (mapper.join().unwrap(), at)
    });
    let ends = log.ends();
    let mut ok = 0;
    for (i, r) in results.iter().enumerate() {
        let index = first + i as u64;
        match r {
            Ok(ran) => {
                assert_eq!(ran.index, index);
                assert!(ends.contains_key(&index), "task {i} returned, so it ended");
                ok += 1;
            }
            Err(e) => {
                assert_eq!(e.kind, TaskErrorKind::ShutDown, "task {i}: {e}");
                // A task that finished well before the shutdown must have its result.
                if let Some(end) = ends.get(&index) {
                    assert!(*end + 50 > stopped_at, "task {i} ended at {end}, shutdown at {stopped_at}: {e}");
                }
            }
        }
    }
    assert!(ok >= 2, "two workers finish at least a task each in 500 ms of 200 ms tasks: {ok}");
    assert!(ok < 40, "the shutdown came mid-map");
}

/// A worker SIGKILLed after a job was handed to it but before its task started charges no
/// task: the worker is stopped (SIGSTOP) while idle, the job is sent, then it is killed.
#[cfg(unix)]
pub fn killed_between_tasks_charges_nobody() {
    use crate::support::{sig, signal};
    let log = Log::new("between");
    let pool = builder(Process).retries(0).build().unwrap();
    let before = pool.submit::<Logged>((log.path(), Act::Ok)).wait().unwrap();
    signal(before.pid, sig::STOP);
    let handle = pool.submit::<Logged>((log.path(), Act::Ok));
    std::thread::sleep(Duration::from_millis(200)); // the job is in the stopped worker's socket
    assert!(!handle.is_finished());
    signal(before.pid, sig::KILL);
    let ran = handle.wait().expect("the task never ran in the killed worker: it is not charged");
    assert_ne!(ran.pid, before.pid, "it ran on the replacement");
    assert_eq!(ran.attempt, 1, "no attempt was counted");
    assert_eq!(log.starts().get(&ran.index), Some(&1), "it started once");

    // Inside a batch: killed while the batch's first task runs, that task is charged; the
    // two behind it never started and run once, uncharged, on the replacement.
    let batch = builder(Process).retries(0).chunk_size(3).build().unwrap();
    let pid = batch.submit::<Logged>((log.path(), Act::Ok)).wait().unwrap().pid;
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        signal(pid, sig::KILL);
    });
    let results = batch.map::<Logged>([Act::Sleep(5_000), Act::Ok, Act::Ok].map(|a| (log.path(), a)));
    killer.join().unwrap();
    let err = results[0].as_ref().unwrap_err();
    assert_eq!(err.kind, TaskErrorKind::Crashed { code: None, signal: Some(sig::KILL) });
    for r in &results[1..] {
        let ran = r.as_ref().unwrap();
        assert_eq!((ran.attempt, log.starts().get(&ran.index)), (1, Some(&1)), "{ran:?}");
        assert_ne!(ran.pid, pid);
    }
}

/// 4,000 tasks with random aborts, segfaults, panics, errors and timeouts: exactly one
/// result each, classified by what the task did, every "ok" value right.
pub fn random_failures_are_each_their_own(mode: WorkerMode, chunk: Option<usize>) {
    let log = Log::new("random");
    let limit = Duration::from_millis(250);
    let mut rng = TaskRng::new(99, chunk.unwrap_or(0) as u64);
    let acts: Vec<Act> = (0..4000)
        .map(|_| {
            let x = rng.next_f64();
            let crash = mode == Process && cfg!(unix);
            match x {
                _ if x < 0.01 && crash => Act::Abort,
                _ if x < 0.015 && crash => Act::Segfault,
                _ if x < 0.025 => Act::Panic,
                _ if x < 0.035 => Act::Fail,
                _ if x < 0.036 => Act::Sleep(1_000),
                _ => Act::Ok,
            }
        })
        .collect();
    let b = builder(mode).workers_per_device(2).retries(0).task_timeout(limit);
    let pool = build_chunked(b, chunk);
    let first = pool.submit::<Logged>((log.path(), Act::Ok)).wait().unwrap().index + 1;
    let mut seen = vec![0u32; acts.len()];
    for (pos, r) in pool.map_unordered::<Logged>(acts.iter().map(|a| (log.path(), *a))) {
        seen[pos] += 1;
        let index = first + pos as u64;
        let kind = r.as_ref().err().map(|e| &e.kind);
        let right = match (acts[pos], kind) {
            (Act::Ok, None) => r.as_ref().unwrap().index == index,
            (Act::Sleep(_), _) => is_timeout_of(&r, limit),
            (Act::Fail, Some(TaskErrorKind::Failed { message, .. })) => message.contains(&format!("task {index}")),
            (Act::Panic, Some(TaskErrorKind::Panicked { message })) => message.contains(&format!("task {index}")),
            (Act::Abort, Some(TaskErrorKind::Crashed { signal, .. })) => *signal == Some(6),
            (Act::Segfault, Some(TaskErrorKind::Crashed { signal, .. })) => *signal == Some(11),
            _ => false,
        };
        assert!(right, "task {pos} ({:?}) got {r:?}", acts[pos]);
        if let Err(e) = &r {
            assert_eq!(e.index, index);
        }
    }
    assert!(seen.iter().all(|&n| n == 1), "exactly one result per task");
    // Every task ran once: without retries, a crash or a timeout runs nothing again (a
    // process worker's finished results come back from its result log).
    let starts = log.starts();
    let reruns: usize = starts.values().map(|&n| n - 1).sum();
    for (pos, a) in acts.iter().enumerate() {
        assert!(starts.contains_key(&(first + pos as u64)), "task {pos} ({a:?}) started");
    }
    assert_eq!(reruns, 0, "no task runs twice");
}

pub fn random_failures_chunk_1(mode: WorkerMode) {
    random_failures_are_each_their_own(mode, Some(1));
}

pub fn random_failures_chunk_4(mode: WorkerMode) {
    random_failures_are_each_their_own(mode, Some(4));
}

pub fn random_failures_chunk_auto(mode: WorkerMode) {
    random_failures_are_each_their_own(mode, None);
}
