//! The cases that need Unix signals: crashes by signal, a worker killed from outside, the
//! parent SIGKILLed, Ctrl-C.

use std::time::{Duration, Instant};

use polycompute::pool::TaskErrorKind;
use polycompute::WorkerMode::{self, Process};

use crate::support::{builder, exists, signal, within};
use crate::tasks::*;

fn kind<T: std::fmt::Debug>(r: Result<T, polycompute::TaskError>) -> TaskErrorKind {
    match r {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => e.kind,
    }
}

pub fn abort_and_exit() {
    let pool = builder(Process).build().unwrap();
    let before = pool.submit::<WhereAmI>(()).wait().unwrap().pid;
    let abort = kind(pool.submit::<Die>(Death::Abort).wait());
    assert_eq!(abort, TaskErrorKind::Crashed { code: None, signal: Some(crate::support::sig::ABRT) });
    let exit = kind(pool.submit::<Die>(Death::Exit(7)).wait());
    assert_eq!(exit, TaskErrorKind::Crashed { code: Some(7), signal: None });
    let after = pool.submit::<WhereAmI>(()).wait().unwrap().pid;
    assert_ne!(before, after, "a fresh worker process took over");
    assert!(!exists(before), "the crashed worker was reaped");
    assert_eq!(pool.workers()[0].restarts, 2);
}

pub fn worker_killed_from_outside() {
    let pool = builder(Process).build().unwrap();
    let pid = pool.submit::<WhereAmI>(()).wait().unwrap().pid;
    let handle = pool.submit::<Sleep>(20_000);
    std::thread::sleep(Duration::from_millis(100));
    signal(pid, crate::support::sig::KILL);
    let t0 = Instant::now();
    let err = handle.wait().unwrap_err();
    assert_eq!(err.kind, TaskErrorKind::Crashed { code: None, signal: Some(crate::support::sig::KILL) });
    assert!(t0.elapsed() < Duration::from_secs(2), "the crash was noticed in {:?}", t0.elapsed());
    let next = pool.submit::<WhereAmI>(()).wait().unwrap();
    assert_ne!(next.pid, pid);
}

pub fn parent_sigkill_leaves_no_worker() {
    let mut parent = crate::scenario::start("orphan", Process);
    let pids = crate::scenario::read_pids(&mut parent);
    assert_eq!(pids.len(), 2);
    signal(parent.id(), crate::support::sig::KILL);
    let _ = parent.wait();
    let gone = within(Duration::from_secs(2), || pids.iter().all(|&p| !crate::support::running(p)));
    assert!(gone.is_some(), "workers {pids:?} outlived their SIGKILLed parent by 2 s");
}

pub fn ctrl_c_exits_cleanly(mode: WorkerMode) {
    let mut parent = crate::scenario::start("sigint", mode);
    let pids = crate::scenario::read_pids(&mut parent);
    signal(parent.id(), crate::support::sig::INT);
    let t0 = Instant::now();
    let exited = within(Duration::from_secs(1), || parent.try_wait().ok().flatten().is_some());
    assert!(exited.is_some(), "the parent did not exit within a second of Ctrl-C");
    let status = parent.wait().unwrap();
    assert_eq!(status.code(), Some(130), "it shut its pool down and exited with 130: {status}");
    for pid in pids {
        assert!(!exists(pid), "worker {pid} is gone and reaped");
    }
    assert!(t0.elapsed() < Duration::from_secs(1));
}
