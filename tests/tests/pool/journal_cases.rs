//! The result journal (`PoolBuilder::journal`): a run that stops halfway leaves its
//! finished results in the journal; the rerun returns them without running those tasks
//! again and runs only the rest. (The MPI version, with a killed rank, is in tests/tests/mpi.)

use std::collections::HashMap;

use polycompute::pool::{JournalError, TaskErrorKind};
use polycompute::{Error, TaskError, WorkerMode};

use crate::batch_cases::Log;
use crate::support::builder;
use crate::tasks::{Act, Logged, Ran};

/// A journal file of its own, removed at the end.
struct JournalFile(std::path::PathBuf);
impl JournalFile {
    fn new(name: &str) -> JournalFile {
        JournalFile(Log::new(name).0.with_extension("journal"))
    }
}
impl Drop for JournalFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn finished(r: &Result<Ran, TaskError>) -> bool {
    match r {
        Ok(_) => true,
        Err(e) => matches!(e.kind, TaskErrorKind::Failed { .. } | TaskErrorKind::Panicked { .. }),
    }
}

/// 40 tasks (some fail, some panic); the first run is shut down after 12 results. The
/// rerun gives every task's result; no task that finished in the first run starts again,
/// and the replayed results are the first run's, exactly.
pub fn journal_skips_finished_tasks(mode: WorkerMode) {
    let log = Log::new("journal");
    let journal = JournalFile::new("journal");
    let act = |i: usize| match i % 10 {
        3 => Act::Fail,
        7 => Act::Panic,
        _ => Act::Sleep(15),
    };
    let inputs: Vec<(String, Act)> = (0..40).map(|i| (log.path(), act(i))).collect();

    let pool = builder(mode).journal(&journal.0).chunk_size(2).build().unwrap();
    let mut first: HashMap<usize, Result<Ran, TaskError>> = HashMap::new();
    for (pos, r) in pool.map_unordered::<Logged>(inputs.clone()) {
        first.insert(pos, r);
        if first.len() == 12 {
            pool.shutdown();
        }
    }
    drop(pool);
    let done: Vec<usize> = (0..40).filter(|p| first.get(p).is_some_and(finished)).collect();
    assert!(done.len() >= 12 && done.len() < 40, "{} of 40 finished before the shutdown", done.len());
    let before = log.starts();

    let pool = builder(mode).journal(&journal.0).chunk_size(2).build().unwrap();
    let second = pool.map::<Logged>(inputs);
    let after = log.starts();
    for (pos, r) in second.iter().enumerate() {
        let ran_again =
            after.get(&(pos as u64)).copied().unwrap_or(0) - before.get(&(pos as u64)).copied().unwrap_or(0);
        if done.contains(&pos) {
            assert_eq!(ran_again, 0, "task {pos} finished in the first run and ran again");
            assert_eq!(Some(r), first.get(&pos), "task {pos}: the replayed result differs");
        } else {
            assert_eq!(ran_again, 1, "task {pos} had not finished and ran {ran_again} times on the rerun");
        }
        match (act(pos), r) {
            (Act::Fail, Err(TaskError { kind: TaskErrorKind::Failed { .. }, index, .. })) => {
                assert_eq!(*index, pos as u64)
            }
            (Act::Panic, Err(TaskError { kind: TaskErrorKind::Panicked { .. }, index, .. })) => {
                assert_eq!(*index, pos as u64)
            }
            (Act::Sleep(_), Ok(ran)) => assert_eq!(ran.index, pos as u64),
            (a, r) => panic!("task {pos} ({a:?}) gave {r:?}"),
        }
    }
    // A third run finds everything in the journal and runs nothing.
    drop(pool);
    let pool = builder(mode).journal(&journal.0).chunk_size(2).build().unwrap();
    let third = pool.map::<Logged>((0..40).map(|i| (log.path(), act(i))));
    assert_eq!(third, second, "the third run replays the second's results");
    assert_eq!(log.starts(), after, "the third run ran tasks");
}

/// A journal of another job (another seed here) is refused with a typed error, and so is
/// a file that is not a journal; a record cut short at the end (a kill mid-write) is
/// dropped and the rest kept.
pub fn journal_of_another_job_is_refused(mode: WorkerMode) {
    let log = Log::new("journal-other");
    let journal = JournalFile::new("journal-other");
    let pool = builder(mode).journal(&journal.0).seed(1).build().unwrap();
    assert!(pool.map::<Logged>(vec![(log.path(), Act::Ok); 3]).iter().all(Result::is_ok));
    drop(pool);
    match builder(mode).journal(&journal.0).seed(2).build() {
        Err(Error::Journal(JournalError::OtherJob { found, expected, .. })) => {
            assert!(found.contains("seed 0x1") && expected.contains("seed 0x2"), "{found} / {expected}");
        }
        other => panic!("a journal of seed 1 opened for seed 2: {other:?}"),
    }
    // Half a record at the end: the three whole ones still count.
    let mut bytes = std::fs::read(&journal.0).unwrap();
    bytes.extend_from_slice(&[40, 0, 0, 0, 1, 2, 3]);
    std::fs::write(&journal.0, &bytes).unwrap();
    let before = log.starts();
    let pool = builder(mode).journal(&journal.0).seed(1).build().unwrap();
    assert!(pool.map::<Logged>(vec![(log.path(), Act::Ok); 4]).iter().all(Result::is_ok));
    let after = log.starts();
    assert_eq!(after.values().sum::<usize>() - before.values().sum::<usize>(), 1, "only task 3 runs");
    drop(pool);

    let not_one = JournalFile::new("not-a-journal");
    std::fs::write(&not_one.0, b"some other file").unwrap();
    match builder(mode).journal(&not_one.0).build() {
        Err(e @ Error::Journal(JournalError::NotAJournal { .. })) => {
            assert!(e.to_string().contains("not a polycompute journal"), "{e}")
        }
        other => panic!("a file that is not a journal was opened: {other:?}"),
    }
}
