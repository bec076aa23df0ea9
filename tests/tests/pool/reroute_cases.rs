//! Capability-aware scheduling: a task its device refuses (`Error::Unsupported` naming the
//! device) runs on another device, and the pool remembers which devices refused each task.

use polycompute::pool::TaskErrorKind;
use polycompute::WorkerMode;
use polycompute::{DeviceId, Pool};

use crate::batch_cases::Log;
use crate::support::builder;
use crate::tasks::{pool_tasks, F64Sum, Refused};

/// Where no device can run a task, it ends with `Unsupported` listing the devices tried;
/// later tasks of that name are not run at all. Rerouting off: the same error, no memory.
pub fn unsupported_everywhere_ends_with_the_devices_tried(mode: WorkerMode) {
    let log = Log::new("refused");
    let pool = builder(mode).build().unwrap();
    let cpu: DeviceId = "cpu:0".parse().unwrap();
    for _ in 0..2 {
        let err = pool.submit::<Refused>(log.path()).wait().unwrap_err();
        match &err.kind {
            TaskErrorKind::Unsupported { message, tried } => {
                assert_eq!(tried, &vec![cpu]);
                assert!(message.contains("deliberately missing op"), "{message}");
            }
            other => panic!("expected Unsupported, got {other:?}"),
        }
        assert_eq!(err.attempts, 1, "a refusal is no crash attempt");
        assert!(err.to_string().contains("tried cpu:0"), "{err}");
    }
    let started = || log.starts().values().sum::<usize>();
    assert_eq!(started(), 1, "the second task was not run where it was refused before");
    let off = builder(mode).reroute_unsupported(false).build().unwrap();
    let err = off.map::<Refused>(vec![log.path(); 2]);
    assert!(err.iter().all(
        |r| matches!(&r.as_ref().unwrap_err().kind, TaskErrorKind::Unsupported { tried, .. } if tried == &vec![cpu])
    ));
    assert_eq!(started(), 3, "without rerouting, nothing is remembered");
    assert_eq!(pool.submit::<crate::tasks::Echo>(3).wait().unwrap(), 3, "the worker lives on");
}

/// The GL adapter (wgpu:1, no f64) beside the CPU: 100 f64 tasks all succeed, and none
/// runs on wgpu:1 after its first refusal.
pub fn f64_tasks_leave_the_gpu_without_f64(mode: WorkerMode) {
    let gl = "wgpu:1";
    let required = std::env::var("POLYCOMPUTE_REQUIRE").unwrap_or_default().split(',').any(|b| b.trim() == "wgpu");
    match polycompute::Device::parse(gl) {
        Ok(d) if d.from_slice(&[1.0f64], &[1]).and_then(|a| a.sum(None)).is_err() => {}
        found => {
            let why = match found {
                Ok(_) => format!("{gl} runs f64 here"),
                Err(e) => e.to_string(),
            };
            assert!(!required, "POLYCOMPUTE_REQUIRE=wgpu but {why}");
            eprintln!("skipped: {why}");
            return;
        }
    }
    let log = Log::new("reroute");
    let pool = Pool::builder(&pool_tasks()).device_ids(&[gl, "cpu"]).mode(mode).chunk_size(4).build().unwrap();
    // Both workers up (the GL adapter's may take a while to open), so the GL worker does
    // take f64 tasks: until then, the CPU worker alone could run all of them.
    let both_up = crate::support::within(std::time::Duration::from_secs(20), || {
        pool.map::<crate::tasks::WhereAmI>(vec![(); 8]).into_iter().any(|w| w.unwrap().device == gl)
    });
    assert!(both_up.is_some(), "the {gl} worker ran nothing in 20 s");
    let inputs: Vec<Vec<f64>> = (0..100).map(|i| (0..10).map(|j| f64::from(i * 10 + j) + 0.25).collect()).collect();
    let results = pool.map::<F64Sum>(inputs.iter().map(|x| (log.path(), x.clone())));
    for (x, r) in inputs.iter().zip(&results) {
        let (sum, device) = r.as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(*sum, x.iter().sum::<f64>());
        assert_eq!(device, "cpu:0");
    }
    let on_gl = crate::tasks::read_log(&log.0).lines().filter(|l| l.ends_with(gl)).count();
    assert_eq!(on_gl, 1, "tasks started on {gl}: the first refusal, then none");
    let counted: u64 = pool.workers().iter().map(|w| w.failed).sum();
    assert_eq!(counted, 0, "a refusal is not a failure");
}
