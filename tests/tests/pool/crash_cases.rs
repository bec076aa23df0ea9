//! A process worker's crash re-runs the input that was running and nothing else: the
//! results its worker finished but had not sent yet come back from its result log, never
//! from a second run. Every task logs its start ([`Logged`]), so a second run is seen.

use std::time::Duration;

use polycompute::pool::{TaskErrorKind, TaskRng};
use polycompute::WorkerMode::Process;

use crate::batch_cases::Log;
use crate::support::{build_chunked, builder};
use crate::tasks::{Act, Logged};

/// Fast tasks of which about 3% abort or segfault, on 2 process workers with a 1 s timeout
/// and one retry: each crashing task runs twice (its retry crashes too) and fails as
/// `Crashed` after 2 attempts; every other task runs exactly once and returns its value.
pub fn finished_tasks_never_run_again(chunk: Option<usize>) {
    let log = Log::new("finished");
    let mut rng = TaskRng::new(7, chunk.unwrap_or(0) as u64);
    let acts: Vec<Act> = (0..4000)
        .map(|_| match rng.next_f64() {
            x if x < 0.015 => Act::Abort,
            x if x < 0.03 => Act::Segfault,
            _ => Act::Ok,
        })
        .collect();
    let crashing = |a: &Act| matches!(a, Act::Abort | Act::Segfault);
    assert!(acts.iter().filter(|a| crashing(a)).count() >= 80, "the mix crashes");
    let b = builder(Process).workers_per_device(2).retries(1).task_timeout(Duration::from_secs(1));
    let pool = build_chunked(b, chunk);
    let first = pool.submit::<Logged>((log.path(), Act::Ok)).wait().unwrap().index + 1;
    let mut seen = vec![0u32; acts.len()];
    for (pos, r) in pool.map_unordered::<Logged>(acts.iter().map(|a| (log.path(), *a))) {
        seen[pos] += 1;
        let index = first + pos as u64;
        let right = match (acts[pos], &r) {
            (Act::Ok, Ok(ran)) => ran.index == index && ran.attempt == 1,
            (Act::Abort, Err(e)) => matches!(e.kind, TaskErrorKind::Crashed { signal: Some(6), .. }) && e.attempts == 2,
            (Act::Segfault, Err(e)) => {
                matches!(e.kind, TaskErrorKind::Crashed { signal: Some(11), .. }) && e.attempts == 2
            }
            _ => false,
        };
        assert!(right, "task {pos} ({:?}) got {r:?}", acts[pos]);
    }
    assert!(seen.iter().all(|&n| n == 1), "exactly one result per task");
    let starts = log.starts();
    let wrong: Vec<String> = acts
        .iter()
        .enumerate()
        .filter_map(|(pos, a)| {
            let runs = starts.get(&(first + pos as u64)).copied().unwrap_or(0);
            let want = if crashing(a) { 2 } else { 1 };
            (runs != want).then(|| format!("task {pos} ({a:?}) ran {runs} times"))
        })
        .collect();
    assert!(wrong.is_empty(), "{} tasks ran a wrong number of times: {:?}", wrong.len(), &wrong[..wrong.len().min(10)]);
}

pub fn finished_tasks_never_run_again_chunk_1() {
    finished_tasks_never_run_again(Some(1));
}

pub fn finished_tasks_never_run_again_chunk_4() {
    finished_tasks_never_run_again(Some(4));
}

pub fn finished_tasks_never_run_again_chunk_auto() {
    finished_tasks_never_run_again(None);
}
