//! The cases: each provokes one behaviour or failure mode and checks its one result.

use std::collections::HashSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use polycompute::pool::{Streams, TaskErrorKind, TaskRng};
use polycompute::WorkerMode::{self, Process, Thread};
use polycompute::{Pool, TaskError};

use crate::support::{builder, within, worker_pids};
use crate::tasks::*;

fn kind<T: std::fmt::Debug>(r: Result<T, TaskError>) -> TaskErrorKind {
    match r {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => e.kind,
    }
}

pub fn results_in_order(mode: WorkerMode) {
    let pool = builder(mode).workers_per_device(2).build().unwrap();
    assert_eq!(pool.mode(), mode);
    let out = pool.map::<Square>((0..1000).map(f64::from));
    let want: Vec<f64> = (0..1000).map(|i| f64::from(i) * f64::from(i)).collect();
    assert_eq!(out.into_iter().map(Result::unwrap).collect::<Vec<_>>(), want);
    assert_eq!(pool.submit::<Square>(1.5).wait().unwrap(), 2.25);
    // Unordered: every position exactly once.
    let mut seen: Vec<u64> = pool
        .map_unordered::<Echo>(0..500)
        .map(|(pos, r)| {
            assert_eq!(r.unwrap(), pos as u64);
            pos as u64
        })
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..500).collect::<Vec<_>>());
    let w = pool.submit::<WhereAmI>(()).wait().unwrap();
    assert_eq!(w.device, "cpu:0");
    assert_eq!(w.in_process, mode == Process);
    assert_eq!(w.pid == std::process::id(), mode == Thread);
    let tasks: u64 = pool.workers().iter().map(|w| w.tasks).sum();
    assert_eq!(tasks, 1000 + 1 + 500 + 1);
}

pub fn task_error(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    let err = pool.submit::<Fail>(3).wait().unwrap_err();
    assert!(
        matches!(&err.kind, TaskErrorKind::Failed { message, sticky_device_fault: false } if message == "deliberate failure 3"),
        "{err:?}"
    );
    assert_eq!(
        (err.task.as_str(), err.worker, err.device.map(|d| d.to_string())),
        ("fail", Some(0), Some("cpu:0".to_string()))
    );
    assert!(err.to_string().contains("deliberate failure 3") && err.to_string().contains("task fail #0"), "{err}");
    // The worker survives a task error.
    assert_eq!(pool.submit::<Echo>(9).wait().unwrap(), 9);
    assert_eq!(pool.workers()[0].restarts, 0);
}

pub fn panic_is_reported(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    let results = pool.map::<Panic>([1, 2]);
    for (i, r) in results.into_iter().enumerate() {
        assert_eq!(kind(r), TaskErrorKind::Panicked { message: format!("deliberate panic {}", i + 1) });
    }
    assert_eq!(pool.submit::<Echo>(4).wait().unwrap(), 4);
    assert_eq!(pool.workers()[0].restarts, 0, "a panic is caught; the worker lives on");
}

pub fn timeout(mode: WorkerMode) {
    let pool = builder(mode).task_timeout(Duration::from_millis(300)).build().unwrap();
    let t0 = Instant::now();
    let slow = pool.submit::<Sleep>(3_000);
    let err = slow.wait().unwrap_err();
    match err.kind {
        TaskErrorKind::Timeout { after, elapsed } => {
            assert_eq!(after, Duration::from_millis(300));
            assert!(elapsed >= after && elapsed < Duration::from_millis(1000), "{elapsed:?}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_millis(1500), "timeout took {:?}", t0.elapsed());
    // A fresh worker serves the next task at once (the stuck one is gone or abandoned).
    let t1 = Instant::now();
    assert_eq!(pool.submit::<Echo>(5).wait().unwrap(), 5);
    assert!(t1.elapsed() < Duration::from_secs(1));
    assert_eq!(pool.workers()[0].restarts, 1);
    // Fast tasks are unaffected by the timeout.
    assert!(pool.map::<Echo>(0..50).into_iter().all(|r| r.is_ok()));
}

pub fn cancellation(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    let running = pool.submit::<Sleep>(5_000);
    let queued = pool.submit::<Echo>(1);
    std::thread::sleep(Duration::from_millis(150));
    queued.cancel();
    assert_eq!(kind(queued.wait()), TaskErrorKind::Cancelled);
    let t0 = Instant::now();
    running.cancel();
    assert_eq!(kind(running.wait()), TaskErrorKind::Cancelled);
    assert!(t0.elapsed() < Duration::from_millis(500));
    // The worker that ran it was stopped at once (not after its 5 s) and replaced; the pool
    // goes on. A driver that missed the wake-up (Windows: shutting down a socket does not
    // wake a blocked read) would answer only after the sleep.
    assert_eq!(pool.submit::<Echo>(2).wait().unwrap(), 2);
    assert!(t0.elapsed() < Duration::from_secs(2), "the cancelled worker was replaced in {:?}", t0.elapsed());
    // Cancelling a finished task changes nothing.
    let done = pool.submit::<Echo>(3);
    std::thread::sleep(Duration::from_millis(50));
    done.cancel();
    assert_eq!(done.wait().unwrap(), 3);
    // Dropping a map's iterator early cancels what has not started, without hanging.
    let mut it = pool.map_unordered::<Sleep>(vec![20; 200]);
    assert!(it.next().unwrap().1.is_ok());
    let t1 = Instant::now();
    drop(it);
    assert_eq!(pool.submit::<Echo>(4).wait().unwrap(), 4);
    assert!(t1.elapsed() < Duration::from_secs(2), "{:?}", t1.elapsed());
}

pub fn ten_thousand_with_one_percent_crashes(mode: WorkerMode) {
    let seed = 2024;
    let pool = builder(mode).workers_per_device(2).seed(seed).retries(0).build().unwrap();
    let results = pool.map::<Chaos>((0..10_000).map(|i| (i, false)));
    assert_eq!(results.len(), 10_000);
    // Which tasks crash follows from their generators (the pool's first submission: key 0):
    // predict it.
    let doomed: HashSet<u64> =
        (0..10_000u64).filter(|&i| TaskRng::for_submission(seed, 0, i).next_f64() < CHAOS_RATE).collect();
    assert!((50..200).contains(&doomed.len()), "{} doomed", doomed.len());
    let mut crashed = HashSet::new();
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(v) => assert_eq!(v, 2 * i as u64),
            Err(e) => {
                assert_eq!(e.index, i as u64);
                match (mode, &e.kind) {
                    #[cfg(unix)]
                    (Process, TaskErrorKind::Crashed { signal: Some(crate::support::sig::ABRT), .. }) => {}
                    #[cfg(not(unix))]
                    (Process, TaskErrorKind::Crashed { .. }) => {}
                    (Thread, TaskErrorKind::Panicked { .. }) => {}
                    _ => panic!("task {i}: {e}"),
                }
                crashed.insert(i as u64);
            }
        }
    }
    assert_eq!(crashed, doomed, "exactly the doomed tasks failed, each once");
    let counted: u64 = pool.workers().iter().map(|w| w.tasks).sum();
    assert_eq!(counted, 10_000, "no task lost or doubled");
}

pub fn crashed_tasks_are_retried() {
    let seed = 11;
    let pool = builder(Process).workers_per_device(2).seed(seed).retries(1).chunk_size(1).build().unwrap();
    let results = pool.map::<Chaos>((0..300).map(|i| (i, true)));
    let doomed = (0..300u64).filter(|&i| TaskRng::for_submission(seed, 0, i).next_f64() < CHAOS_RATE).count();
    assert!(doomed > 0, "the seed must doom at least one task");
    for (i, r) in results.into_iter().enumerate() {
        assert_eq!(r.unwrap(), 2 * i as u64, "task {i} succeeds on its retry");
    }
    // A crashed worker's retried task can finish on the other worker before the crashed
    // one's replacement is counted: give the count a bounded time to catch up.
    let restarts = || pool.workers().iter().map(|w| w.restarts).sum::<u64>() as usize;
    let deadline = Instant::now() + Duration::from_secs(10);
    while restarts() < doomed && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(restarts(), doomed);
    // Without retries left, the crash is the result, with the attempts made.
    let err = builder(Process).retries(2).build().unwrap().submit::<Die>(Death::Exit(3)).wait().unwrap_err();
    assert_eq!((err.attempts, err.kind), (3, TaskErrorKind::Crashed { code: Some(3), signal: None }));
}

pub fn unknown_task(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    let err = pool.submit::<Unregistered>(()).wait().unwrap_err();
    assert!(matches!(&err.kind, TaskErrorKind::UnknownTask { known } if known.contains(&"echo".to_string())), "{err}");
    let in_parent = pool.submit::<OnlyInParent>(()).wait();
    match mode {
        Thread => in_parent.unwrap(),
        // The worker's main registered fewer tasks than the pool: it says so.
        _ => {
            let kind = kind(in_parent);
            assert!(
                matches!(&kind, TaskErrorKind::UnknownTask { known } if !known.contains(&"only_in_parent".to_string())),
                "{kind:?}"
            );
        }
    }
    assert_eq!(pool.submit::<Echo>(1).wait().unwrap(), 1);
}

pub fn same_seed_same_results() {
    let run = |mode, workers, seed| {
        let pool = builder(mode).workers_per_device(workers).seed(seed).build().unwrap();
        let first = pool.map::<Draw>(vec![3; 200]);
        let second = pool.map::<Draw>(vec![3; 50]);
        first.into_iter().chain(second).map(Result::unwrap).collect::<Vec<_>>()
    };
    let reference = run(Thread, 1, 7);
    assert_eq!(reference[0].0, 0);
    assert_eq!(reference[249].0, 249, "task indices run on across maps");
    for (mode, workers) in [(Thread, 2), (Thread, 4), (Process, 1), (Process, 2), (Process, 4)] {
        assert_eq!(run(mode, workers, 7), reference, "{mode:?} with {workers} workers");
    }
    assert_ne!(run(Thread, 2, 8), reference, "another seed, other numbers");
}

/// A submission's random streams depend on the pool seed, the submission's key and the
/// input's position only: not on what was submitted before, nor on the batching.
pub fn streams_do_not_depend_on_history() {
    type Drawn = Vec<Result<(u64, Vec<u64>, f64), TaskError>>;
    let draws = |rs: Drawn| -> Vec<Vec<u64>> { rs.into_iter().map(|r| r.unwrap().1).collect() };
    let predicted = |key: u64, n: u64| -> Vec<Vec<u64>> {
        (0..n)
            .map(|p| {
                let mut r = TaskRng::for_submission(7, key, p);
                vec![r.next_u64(), r.next_u64()]
            })
            .collect()
    };
    for (mode, chunk) in [(Thread, None), (Thread, Some(3)), (Process, None), (Process, Some(3))] {
        let b = builder(mode).workers_per_device(2).seed(7);
        let pool = match chunk {
            Some(c) => b.chunk_size(c),
            None => b,
        }
        .build()
        .unwrap();
        let what = format!("{mode:?}, chunk {chunk:?}");
        let keyed = draws(pool.seeded(11).map::<Draw>(vec![2; 40]));
        assert_eq!(keyed, predicted(11, 40), "{what}: input p of key 11 reads stream p");
        for _ in 0..3 {
            pool.submit::<Draw>(1).wait().unwrap();
        }
        assert_eq!(draws(pool.seeded(11).map::<Draw>(vec![2; 40])), keyed, "{what}: the same key after other work");
        let one = pool.seeded(11).submit::<Draw>(2).wait().unwrap();
        assert_eq!(one.1, keyed[0], "{what}: a keyed submit is input 0 of its key");
        assert_ne!(draws(pool.seeded(12).map::<Draw>(vec![2; 40])), keyed, "{what}: another key");
        // Unkeyed: the key is the number of submissions before (here 1 + 3 + 1 + 1 + 1 = 7).
        assert_eq!(draws(pool.map::<Draw>(vec![2; 5])), predicted(7, 5), "{what}: unkeyed after 7 submissions");
    }
    // The older rule, kept behind `Streams::ByTaskIndex`: stream = the task's index.
    let pool = builder(Thread).seed(7).streams(Streams::ByTaskIndex).build().unwrap();
    pool.submit::<Echo>(1).wait().unwrap();
    for r in pool.map::<Draw>(vec![2; 5]) {
        let (index, got, _) = r.unwrap();
        let mut g = TaskRng::new(7, index);
        assert_eq!(got, vec![g.next_u64(), g.next_u64()], "task {index} by its index");
    }
}

pub fn serialization(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    let r = pool.submit::<TakesPicky>(Picky(false)).wait();
    match mode {
        Thread => assert_eq!(r.unwrap(), 1, "thread workers move values: nothing is serialized"),
        _ => {
            let kind = kind(r);
            assert!(matches!(&kind, TaskErrorKind::Serialization { message } if message.contains("input")), "{kind:?}");
        }
    }
    // An output that cannot be sent back is that task's error; the worker lives on.
    let out = pool.submit::<ReturnsPicky>(()).wait();
    match mode {
        Thread => assert!(out.is_ok()),
        _ => {
            let kind = kind(out);
            assert!(
                matches!(&kind, TaskErrorKind::Serialization { message } if message.contains("output")),
                "{kind:?}"
            );
        }
    }
    // A bad input in a map fails alone; the inputs around it run.
    let mixed = pool.map::<TakesPicky>([Picky(true), Picky(false), Picky(true), Picky(true)]);
    let ok: Vec<bool> = mixed.iter().map(Result::is_ok).collect();
    assert_eq!(ok, [true, mode == Thread, true, true]);
    assert_eq!(pool.submit::<Echo>(8).wait().unwrap(), 8);
}

pub fn task_printing_does_not_corrupt_the_channel() {
    let pool = builder(Process).build().unwrap();
    let out: Vec<u64> = pool.map::<Noisy>(0..20).into_iter().map(Result::unwrap).collect();
    assert_eq!(out, (0..20).collect::<Vec<_>>());
}

pub fn sticky_device_fault_replaces_the_worker(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    let before = pool.submit::<WhereAmI>(()).wait().unwrap();
    let err = pool.submit::<Poisoned>(()).wait().unwrap_err();
    assert!(matches!(err.kind, TaskErrorKind::Failed { sticky_device_fault: true, .. }), "{err}");
    let after = pool.submit::<WhereAmI>(()).wait().unwrap();
    assert_eq!(pool.workers()[0].restarts, 1, "the poisoned worker was replaced");
    if mode == Process {
        assert_ne!(before.pid, after.pid);
    }
}

pub fn shared_data_and_init(mode: WorkerMode) {
    let pool = builder(mode).workers_per_device(2).shared_data(vec![1.0f64, 2.0, 3.5]).build().unwrap();
    let out = pool.map::<SharedSum>([0.0, 10.0]);
    assert_eq!(out.into_iter().map(Result::unwrap).collect::<Vec<_>>(), vec![6.5, 16.5]);
    // init runs once per worker, before its first task of that kind.
    for r in pool.map::<Inits>(vec![(); 40]) {
        assert_eq!(r.unwrap().1, 1);
    }
    // Asking for the wrong type is an error, not garbage.
    let none = builder(mode).build().unwrap().submit::<SharedSum>(1.0).wait();
    assert!(matches!(kind(none), TaskErrorKind::Failed { message, .. } if message.contains("no shared data")));
}

pub fn drop_shuts_down_within_a_second(mode: WorkerMode) {
    let pool = builder(mode).workers_per_device(2).build().unwrap();
    let pids = if mode == Process { worker_pids(&pool) } else { Vec::new() };
    // Two running and (process mode) two sent ahead to the busy workers; then one queued.
    let busy: Vec<_> = (0..4).map(|_| pool.submit::<Sleep>(if mode == Thread { 1_500 } else { 20_000 })).collect();
    std::thread::sleep(Duration::from_millis(100));
    let queued = pool.submit::<Echo>(1);
    let t0 = Instant::now();
    drop(pool);
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(1), "drop took {took:?}");
    assert_eq!(kind(queued.wait()), TaskErrorKind::ShutDown);
    for h in busy {
        assert_eq!(kind(h.wait()), TaskErrorKind::ShutDown);
    }
    #[cfg(unix)]
    for pid in pids {
        assert!(!crate::support::exists(pid), "worker {pid} is gone and reaped (no zombie)");
    }
    #[cfg(not(unix))]
    drop(pids);
}

pub fn callback_runs_off_the_caller_thread(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    let (tx, rx) = mpsc::channel();
    let me = std::thread::current().id();
    let tx2 = tx.clone();
    pool.submit_with::<Square>(3.0, move |r| {
        tx.send((r.map_err(|e| e.kind), std::thread::current().id() != me)).unwrap()
    });
    pool.submit_with::<Fail>(1, move |r| tx2.send((r.map(f64::from).map_err(|e| e.kind), true)).unwrap());
    let mut got: Vec<_> = (0..2).map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap()).collect();
    got.sort_by_key(|(r, _)| r.is_err());
    assert_eq!(got[0], (Ok(9.0), true));
    assert!(matches!(&got[1].0, Err(TaskErrorKind::Failed { .. })));
}

pub fn max_tasks_per_worker(mode: WorkerMode) {
    let pool = builder(mode).max_tasks_per_worker(5).chunk_size(1).build().unwrap();
    let places: Vec<Where> = (0..20).map(|_| pool.submit::<WhereAmI>(()).wait().unwrap()).collect();
    // Replaced after tasks 5, 10, 15 (and 20, which may not have happened yet).
    assert!((3..=4).contains(&pool.workers()[0].restarts), "{:?}", pool.workers());
    if mode == Process {
        let pids: HashSet<u32> = places.iter().map(|w| w.pid).collect();
        assert_eq!(pids.len(), 4, "a new process every 5 tasks");
    }
}

pub fn worker_that_cannot_start() {
    // A program that exits at once without ever connecting: Unix's `true`; Windows's
    // `hostname`, which rejects the worker argument and exits.
    let exe = if cfg!(windows) { "hostname.exe" } else { "true" };
    let pool = builder(Process).worker_exe(exe).start_timeout(Duration::from_secs(5)).build().unwrap();
    let t0 = Instant::now();
    let err = pool.submit::<Echo>(1).wait().unwrap_err();
    assert!(matches!(&err.kind, TaskErrorKind::WorkerStart { message } if message.contains("worker_main")), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(5));
    // Later submissions fail at once rather than wait for ever.
    assert!(matches!(kind(pool.submit::<Echo>(2).wait()), TaskErrorKind::WorkerStart { .. }));
}

pub fn bad_configuration() {
    use polycompute::Tasks;
    let dup = Tasks::new().add(Echo).add(Echo);
    let err = Pool::builder(&dup).cpu().build().unwrap_err();
    assert!(err.to_string().contains("registered twice"), "{err}");
    let err = builder(Thread).workers_per_device(0).build().unwrap_err();
    assert!(err.to_string().contains("at least 1"), "{err}");
    let err = builder(Thread).device_ids(&["cpu:5"]).build().unwrap_err();
    assert!(matches!(err, polycompute::Error::NoSuchDevice { ordinal: 5, .. }), "{err}");
    let err = builder(Thread).device_ids(&["tpu:0"]).build().unwrap_err();
    assert!(matches!(err, polycompute::Error::UnknownDevice(_)), "{err}");
}

pub fn wait_timeout_and_is_finished(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    let h = pool.submit::<Sleep>(300);
    let h = match h.wait_timeout(Duration::from_millis(20)) {
        Err(h) => h,
        Ok(r) => panic!("finished too early: {r:?}"),
    };
    assert!(!h.is_finished());
    let r = h.wait_timeout(Duration::from_secs(10)).unwrap_or_else(|_| panic!("not finished after 10 s"));
    assert!(r.is_ok());
    let quick = pool.submit::<Echo>(6);
    assert!(within(Duration::from_secs(5), || quick.is_finished()).is_some());
    assert_eq!(quick.wait().unwrap(), 6);
}

pub fn mismatched_task_types_are_refused() {
    let tasks = polycompute::Tasks::new().add(FakeEcho);
    let pool = Pool::builder(&tasks).cpu().mode(Process).build().unwrap();
    let err = pool.submit::<FakeEcho>("x".into()).wait().unwrap_err();
    match &err.kind {
        TaskErrorKind::WorkerStart { message } => {
            assert!(message.contains("echo is") && message.contains("same Tasks"), "{message}")
        }
        other => panic!("expected WorkerStart, got {other:?}"),
    }
}

pub fn sticky_fault_gets_a_fresh_context_in_thread_mode() {
    let pool = builder(Thread).workers_per_device(2).build().unwrap();
    // Both workers must hold the context before the fault (else, freed, its address could
    // come back for the new one): run tasks until both have run one.
    let (mut before, mut workers) = (HashSet::new(), HashSet::new());
    for _ in 0..100 {
        for w in pool.map::<WhereAmI>(vec![(); 8]).into_iter().map(Result::unwrap) {
            before.insert(w.context);
            workers.insert(w.worker);
        }
        if workers.len() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(workers.len(), 2, "both workers ran tasks");
    assert_eq!(before.len(), 1, "the workers of one device share its context");
    let faulted = pool.submit::<Poisoned>(()).wait().unwrap_err().worker.expect("a worker ran it");
    // The other worker still holds the old context; the replacement must not get it back.
    // Bounded by time, not tries: on a loaded machine the replacement thread may need tens
    // of milliseconds to start, while the idle worker answers each probe in microseconds.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let fresh = std::iter::from_fn(|| (std::time::Instant::now() < deadline).then_some(())).find_map(|_| {
        let w = pool.submit::<WhereAmI>(()).wait().unwrap();
        if w.worker != faulted {
            std::thread::sleep(Duration::from_millis(1));
        }
        (w.worker == faulted).then_some(w.context)
    });
    let fresh = fresh.expect("the replaced worker took a task");
    assert!(!before.contains(&fresh), "the replaced worker opened a new context");
}

pub fn many_threads_submit_at_once(mode: WorkerMode) {
    let pool = builder(mode).workers_per_device(2).build().unwrap();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let pool = &pool;
            s.spawn(move || {
                let handles: Vec<_> = (0..200).map(|i| (i, pool.submit::<Echo>(t * 1000 + i))).collect();
                for (i, h) in handles {
                    assert_eq!(h.wait().unwrap(), t * 1000 + i);
                }
                let mapped = pool.map::<Echo>((0..300).map(|i| t * 1000 + i));
                assert!(mapped.into_iter().enumerate().all(|(i, r)| r.unwrap() == t * 1000 + i as u64));
            });
        }
    });
    let tasks: u64 = pool.workers().iter().map(|w| w.tasks).sum();
    assert_eq!(tasks, 4 * (200 + 300));
}

/// `POLYCOMPUTE_BACKEND` chooses the default pool's devices, with `Device::default()`'s errors.
pub fn backend_env_selects_the_devices() {
    use crate::scenario::backend_env_with;
    assert_eq!(backend_env_with("cpu"), ("cpu:0".to_string(), "cpu:0".to_string()));
    assert_eq!(backend_env_with("cpu:0").0, "cpu:0");
    for bad in ["cpu:3", "tpu", "cuda", "cuda:1", "wgpu:7"] {
        let (pool, default) = backend_env_with(bad);
        if default.starts_with("error: ") {
            assert_eq!(pool, default, "POLYCOMPUTE_BACKEND={bad}: the pool fails as Device::default() does");
        } else {
            // Compiled and present here (the CUDA or wgpu feature): the pool uses it.
            let kind = bad.split(':').next().unwrap();
            assert!(pool.split(',').all(|id| id.starts_with(kind)), "{bad}: {pool}");
            assert!(pool.split(',').any(|id| id == default), "{bad}: {pool} has {default}");
        }
    }
}
