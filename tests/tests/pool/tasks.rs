//! The tasks the pool tests run: plain Rust (no device ops), each provoking one behaviour.

use std::time::Duration;

use polycompute::pool::BoxError;
use polycompute::{Task, Tasks, WorkerContext};
use serde::{Deserialize, Serialize};

/// How the panics the cases provoke begin (the test's panic hook keeps them quiet).
pub const DELIBERATE: &str = "deliberate";

/// Returns its input.
pub struct Echo;
impl Task for Echo {
    const NAME: &'static str = "echo";
    type Input = u64;
    type Output = u64;
    fn run(&self, _: &mut WorkerContext, x: u64) -> Result<u64, BoxError> {
        Ok(x)
    }
}

/// x².
pub struct Square;
impl Task for Square {
    const NAME: &'static str = "square";
    type Input = f64;
    type Output = f64;
    fn run(&self, _: &mut WorkerContext, x: f64) -> Result<f64, BoxError> {
        Ok(x * x)
    }
}

/// Fails with a message naming its input.
pub struct Fail;
impl Task for Fail {
    const NAME: &'static str = "fail";
    type Input = u32;
    type Output = u32;
    fn run(&self, _: &mut WorkerContext, x: u32) -> Result<u32, BoxError> {
        Err(format!("deliberate failure {x}").into())
    }
}

/// Panics with a message naming its input.
pub struct Panic;
impl Task for Panic {
    const NAME: &'static str = "panic";
    type Input = u32;
    type Output = u32;
    fn run(&self, _: &mut WorkerContext, x: u32) -> Result<u32, BoxError> {
        panic!("deliberate panic {x}")
    }
}

/// How a [`Die`] task ends its process.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub enum Death {
    /// `std::process::abort()`.
    Abort,
    /// `std::process::exit(code)`.
    Exit(i32),
}

/// Ends the worker process (only ever run in process workers).
pub struct Die;
impl Task for Die {
    const NAME: &'static str = "die";
    type Input = Death;
    type Output = ();
    fn run(&self, _: &mut WorkerContext, how: Death) -> Result<(), BoxError> {
        match how {
            Death::Abort => std::process::abort(),
            Death::Exit(code) => std::process::exit(code),
        }
    }
}

/// Sleeps the given milliseconds, then returns the worker's pid.
pub struct Sleep;
impl Task for Sleep {
    const NAME: &'static str = "sleep";
    type Input = u64;
    type Output = u32;
    fn run(&self, _: &mut WorkerContext, ms: u64) -> Result<u32, BoxError> {
        std::thread::sleep(Duration::from_millis(ms));
        Ok(std::process::id())
    }
}

/// What ran a task: process id, worker id, device id, task index, attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Where {
    pub pid: u32,
    pub worker: usize,
    pub device: String,
    pub index: u64,
    pub attempt: u32,
    pub in_process: bool,
    /// Identity of the device context within its process.
    pub context: usize,
}

/// Reports where it ran.
pub struct WhereAmI;
impl Task for WhereAmI {
    const NAME: &'static str = "where";
    type Input = ();
    type Output = Where;
    fn run(&self, ctx: &mut WorkerContext, _: ()) -> Result<Where, BoxError> {
        Ok(Where {
            pid: std::process::id(),
            worker: ctx.worker_id(),
            device: ctx.device().id().to_string(),
            index: ctx.task_index(),
            attempt: ctx.attempt(),
            in_process: ctx.in_process_worker(),
            context: std::sync::Arc::as_ptr(ctx.device().backend()) as *const () as usize,
        })
    }
}

/// Draws from the task's generator: the same seed must give the same draws anywhere.
pub struct Draw;
impl Task for Draw {
    const NAME: &'static str = "draw";
    type Input = u32;
    type Output = (u64, Vec<u64>, f64);
    fn run(&self, ctx: &mut WorkerContext, n: u32) -> Result<(u64, Vec<u64>, f64), BoxError> {
        let draws = (0..n).map(|_| ctx.rng().next_u64()).collect();
        Ok((ctx.task_index(), draws, ctx.rng().next_f64()))
    }
}

/// The crash probability of [`Chaos`].
pub const CHAOS_RATE: f64 = 0.01;

/// Crashes its process (or, in a thread worker, panics) with probability [`CHAOS_RATE`],
/// decided by the task's own generator so the test can predict which tasks do; otherwise
/// returns its input doubled. With `only_first_attempt`, a retry succeeds.
pub struct Chaos;
impl Task for Chaos {
    const NAME: &'static str = "chaos";
    type Input = (u64, bool);
    type Output = u64;
    fn run(&self, ctx: &mut WorkerContext, (x, only_first_attempt): (u64, bool)) -> Result<u64, BoxError> {
        if ctx.rng().next_f64() < CHAOS_RATE && (!only_first_attempt || ctx.attempt() == 1) {
            if ctx.in_process_worker() {
                std::process::abort();
            }
            panic!("deliberate chaos in a thread worker");
        }
        Ok(2 * x)
    }
}

/// A value that serializes only when it holds `true`.
#[derive(Debug, Deserialize)]
pub struct Picky(pub bool);
impl Serialize for Picky {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 {
            s.serialize_bool(true)
        } else {
            Err(serde::ser::Error::custom("Picky(false) refuses to be serialized"))
        }
    }
}

/// Takes a [`Picky`].
pub struct TakesPicky;
impl Task for TakesPicky {
    const NAME: &'static str = "takes_picky";
    type Input = Picky;
    type Output = u8;
    fn run(&self, _: &mut WorkerContext, _: Picky) -> Result<u8, BoxError> {
        Ok(1)
    }
}

/// Returns a `Picky(false)`.
pub struct ReturnsPicky;
impl Task for ReturnsPicky {
    const NAME: &'static str = "returns_picky";
    type Input = ();
    type Output = Picky;
    fn run(&self, _: &mut WorkerContext, _: ()) -> Result<Picky, BoxError> {
        Ok(Picky(false))
    }
}

/// Prints to stdout and stderr, unflushed and flushed, then returns its input: a worker's
/// own printing must not reach the parent's channel.
pub struct Noisy;
impl Task for Noisy {
    const NAME: &'static str = "noisy";
    type Input = u64;
    type Output = u64;
    fn run(&self, _: &mut WorkerContext, x: u64) -> Result<u64, BoxError> {
        use std::io::Write;
        print!("noisy task {x} {} ", "#".repeat(100));
        println!("(length-prefixed frames look like this: 12 0 0 0)");
        eprintln!("noisy task {x} on stderr");
        let _ = std::io::stdout().flush();
        Ok(x)
    }
}

/// Returns a sticky device fault, as a poisoned GPU context would.
pub struct Poisoned;
impl Task for Poisoned {
    const NAME: &'static str = "poisoned";
    type Input = ();
    type Output = ();
    fn run(&self, ctx: &mut WorkerContext, _: ()) -> Result<(), BoxError> {
        Err(Box::new(polycompute::Error::DeviceFault {
            device: ctx.device().id(),
            code: 700,
            message: "an illegal address was encountered".into(),
            sticky: true,
        }))
    }
}

/// Sums the pool's shared data (a `Vec<f64>`) and adds its input.
pub struct SharedSum;
impl Task for SharedSum {
    const NAME: &'static str = "shared_sum";
    type Input = f64;
    type Output = f64;
    fn run(&self, ctx: &mut WorkerContext, x: f64) -> Result<f64, BoxError> {
        let data = ctx.shared::<Vec<f64>>()?;
        Ok(data.iter().sum::<f64>() + x)
    }
}

/// Counts, per worker, how often `init` ran (kept in the worker's local state).
pub struct Inits;
impl Task for Inits {
    const NAME: &'static str = "inits";
    type Input = ();
    type Output = (usize, u32);
    fn init(&self, ctx: &mut WorkerContext) -> Result<(), BoxError> {
        let n = ctx.local::<u32>().map_or(0, |n| *n);
        ctx.set_local(n + 1);
        Ok(())
    }
    fn run(&self, ctx: &mut WorkerContext, _: ()) -> Result<(usize, u32), BoxError> {
        let id = ctx.worker_id();
        Ok((id, ctx.local::<u32>().map_or(0, |n| *n)))
    }
}

/// Registered with the pool but not with `worker_main`: process workers do not know it.
pub struct OnlyInParent;
impl Task for OnlyInParent {
    const NAME: &'static str = "only_in_parent";
    type Input = ();
    type Output = ();
    fn run(&self, _: &mut WorkerContext, _: ()) -> Result<(), BoxError> {
        Ok(())
    }
}

/// Named like [`Echo`] but of other types: a pool with it and workers with `Echo` disagree.
pub struct FakeEcho;
impl Task for FakeEcho {
    const NAME: &'static str = "echo";
    type Input = String;
    type Output = String;
    fn run(&self, _: &mut WorkerContext, s: String) -> Result<String, BoxError> {
        Ok(s)
    }
}

/// Registered nowhere.
pub struct Unregistered;
impl Task for Unregistered {
    const NAME: &'static str = "unregistered";
    type Input = ();
    type Output = ();
    fn run(&self, _: &mut WorkerContext, _: ()) -> Result<(), BoxError> {
        Ok(())
    }
}

/// What `main` gives `worker_main`.
pub fn worker_tasks() -> Tasks {
    Tasks::new()
        .add(Echo)
        .add(Square)
        .add(Fail)
        .add(Panic)
        .add(Die)
        .add(Sleep)
        .add(WhereAmI)
        .add(Draw)
        .add(Chaos)
        .add(TakesPicky)
        .add(ReturnsPicky)
        .add(Noisy)
        .add(Poisoned)
        .add(SharedSum)
        .add(Inits)
        .add(crate::shared_cases::ShmSum)
        .add(crate::shared_cases::ShmDouble)
        .add(crate::shared_cases::ShmAttach)
        .add(crate::shared_cases::ShmLockedIncrement)
        .add(crate::large_cases::Relay)
        .add(crate::large_cases::ArraySum)
        .add(Logged)
        .add(F64Sum)
        .add(Refused)
}

/// What the pools are built with: one task more than the workers know.
pub fn pool_tasks() -> Tasks {
    worker_tasks().add(OnlyInParent)
}

/// What [`Logged`] does after logging its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Act {
    /// Returns at once.
    Ok,
    /// Sleeps this many milliseconds, then returns.
    Sleep(u64),
    /// Returns an error.
    Fail,
    /// Panics.
    Panic,
    /// Aborts its process (process workers only).
    Abort,
    /// Kills its process with SIGSEGV (process workers on Unix only).
    Segfault,
}

/// What a [`Logged`] task returns: its index, process and attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ran {
    pub index: u64,
    pub pid: u32,
    pub attempt: u32,
}

/// Appends `start <task index>` to the log file it is given (one `write` of a whole line
/// in append mode, so lines of concurrent workers do not mix), does `act`, then appends
/// `end <task index> <ms since the Unix epoch>`: the test sees which tasks started, how
/// often, and when they finished.
pub struct Logged;
impl Task for Logged {
    const NAME: &'static str = "logged";
    type Input = (String, Act);
    type Output = Ran;
    fn run(&self, ctx: &mut WorkerContext, (log, act): (String, Act)) -> Result<Ran, BoxError> {
        let index = ctx.task_index();
        append(&log, &format!("start {index}\n"));
        match act {
            Act::Ok => {}
            Act::Sleep(ms) => std::thread::sleep(Duration::from_millis(ms)),
            Act::Fail => return Err(format!("deliberate failure of task {index}").into()),
            Act::Panic => panic!("deliberate panic in task {index}"),
            Act::Abort => std::process::abort(),
            Act::Segfault => {
                // SAFETY: none: this read of an unmapped page is the segmentation fault the
                // test provokes (its process dies of SIGSEGV; only process workers run it).
                let byte = unsafe { std::ptr::read_volatile(std::ptr::without_provenance::<u8>(16)) };
                return Err(format!("read {byte} where no memory is mapped").into());
            }
        }
        let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        append(&log, &format!("end {index} {ms}\n"));
        Ok(Ran { index, pid: std::process::id(), attempt: ctx.attempt() })
    }
}

/// Appends `line` to this thread's own part of the log at `path` (`{path}.{pid}.{thread}`):
/// appends from several processes to one file interleave safely on Linux and Windows, but
/// not under Wine, which appends by seeking to the end first. [`read_log`] reads all parts.
fn append(path: &str, line: &str) {
    use std::io::Write;
    let thread = format!("{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let part = format!("{path}.{}.{thread}", std::process::id());
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(part).expect("open the task log");
    f.write_all(line.as_bytes()).expect("write the task log");
}

/// The parts of the log at `path` (see [`append`]), each part's lines in order.
pub fn log_parts(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    let prefix = format!("{name}.");
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix)))
                .collect()
        })
        .unwrap_or_default()
}

/// Every line the tasks logged at `path`, from all its parts.
pub fn read_log(path: &std::path::Path) -> String {
    log_parts(path).iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect()
}

/// Sums its f64 input on the worker's device after logging `start <index> <device>`;
/// returns the sum and the device. A device without f64 refuses it with
/// `Error::Unsupported`, which the pool reroutes.
pub struct F64Sum;
impl Task for F64Sum {
    const NAME: &'static str = "f64_sum";
    type Input = (String, Vec<f64>);
    type Output = (f64, String);
    fn run(&self, ctx: &mut WorkerContext, (log, x): (String, Vec<f64>)) -> Result<(f64, String), BoxError> {
        let device = ctx.device().id().to_string();
        append(&log, &format!("start {} {device}\n", ctx.task_index()));
        // Long enough that both workers take part in a map of these.
        std::thread::sleep(Duration::from_millis(2));
        let sum = ctx.device().from_slice(&x, &[x.len()])?.sum(None)?.to_vec()?[0];
        Ok((sum, device))
    }
}

/// Always refused by its device, as an op the device lacks would be.
pub struct Refused;
impl Task for Refused {
    const NAME: &'static str = "refused";
    type Input = String;
    type Output = ();
    fn run(&self, ctx: &mut WorkerContext, log: String) -> Result<(), BoxError> {
        append(&log, &format!("start {}\n", ctx.task_index()));
        Err(Box::new(polycompute::Error::Unsupported {
            op: "a deliberately missing op".into(),
            dtype: polycompute::DType::F64,
            device: Some(ctx.device().id()),
        }))
    }
}
