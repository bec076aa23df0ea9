//! Process workers, worker side: [`worker_main`].

use std::io::{BufReader, BufWriter, Read};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::broadcast::BroadcastData;
use crate::context::WorkerContext;
use crate::process::progress::Progress;
use crate::process::result_log::ResultLog;
use crate::spin;
use crate::sys::process::parent_death;
use crate::sys::socket::{self, Stream};
use crate::task::{Failure, Tasks};
use crate::wire::{self, FromWorker, ToWorker};
use polycompute_core::device::Device;
use polycompute_core::sync::{LockUnpoisoned, WaitUnpoisoned};

/// Call this first thing in `main`, with the program's tasks. In a normal run it returns at
/// once. In a process the pool started as a worker (it sets an environment variable), it
/// serves tasks until the pool lets it go and then exits the process, never returning, the
/// way Python's `multiprocessing` needs `freeze_support()` at the top of the main module.
///
/// ```no_run
/// fn main() {
///     let tasks = polycompute_pool::Tasks::new(); // .add(MyTask) ...
///     polycompute_pool::worker_main(&tasks);
///     // ... the program proper: build a Pool with the same tasks ...
/// }
/// ```
#[allow(clippy::needless_doctest_main)] // where the call goes in `main` is the point
pub fn worker_main(tasks: &Tasks) {
    let Some(addr) = std::env::var_os(wire::ENV_ADDR) else { return };
    let addr = addr.to_string_lossy().into_owned();
    let token = std::env::var(wire::ENV_TOKEN).unwrap_or_default();
    let parent = std::env::var(wire::ENV_PARENT).ok().and_then(|p| p.parse::<u32>().ok()).unwrap_or(0);
    // A task that starts this program again must get a normal run, not a second worker.
    // (Done before any thread of ours exists; edition 2021's remove_var is safe to call.)
    for var in [wire::ENV_ADDR, wire::ENV_TOKEN, wire::ENV_PARENT] {
        std::env::remove_var(var);
    }
    let code = match serve(tasks, &addr, token, parent) {
        Ok(()) => 0,
        Err(Quit::Expected(why)) => {
            // The pool let the worker go, cancelled its task or died: nothing to report.
            tracing::debug!("polycompute worker (pid {}): {why}", std::process::id());
            0
        }
        Err(Quit::Failed(e)) => {
            eprintln!("polycompute worker (pid {}): {e}", std::process::id());
            70
        }
    };
    std::process::exit(code);
}

/// Why a worker stops serving.
enum Quit {
    /// The parent closed the connection or died (shutdown, a cancelled task, its exit).
    Expected(String),
    /// Anything else: printed, as it means a bug or a broken setup.
    Failed(String),
}

impl From<String> for Quit {
    fn from(e: String) -> Quit {
        Quit::Failed(e)
    }
}

/// A failed read or write on the parent's socket: a closed connection is expected.
fn socket_error(what: &str, e: &std::io::Error) -> Quit {
    use std::io::ErrorKind::*;
    let text = format!("{what}: {e}");
    match e.kind() {
        BrokenPipe | ConnectionReset | ConnectionAborted | UnexpectedEof | NotConnected => Quit::Expected(text),
        _ => Quit::Failed(text),
    }
}

/// How long a task may run before the results finished ahead of it in its batch are sent
/// anyway (by the flusher thread), so that the caller has them while it runs (a timeout or
/// crash of that task would not lose them either way: the result log keeps them). The flusher looks this often at first, and less often (up to
/// [`FLUSH_AFTER_MAX`]) while the batch's tasks keep finishing quickly, so that a stream of
/// tiny tasks is not slowed by its wake-ups.
const FLUSH_AFTER: Duration = Duration::from_millis(1);
const FLUSH_AFTER_MAX: Duration = Duration::from_millis(8);

/// Results are sent in bunches that take about this long to compute (one write per bunch
/// instead of one per result); slower tasks send each result as it finishes. (A task that
/// runs long after quick ones does not hold their results back: see [`FLUSH_AFTER`].)
const BUNCH_TIME: Duration = Duration::from_millis(1);

/// The results not sent yet, and the socket they go out on; shared by the worker's main
/// thread and its flusher thread.
struct Outbox {
    out: BufWriter<Stream>,
    /// Pending results (items of `wire`), for inputs `first..first + count` of job `job`.
    body: Vec<u8>,
    job: u64,
    first: u32,
    count: u32,
    /// A batch runs: the flusher watches it.
    batch: bool,
    /// A write failed: the parent is gone.
    broken: bool,
    /// Every result finished since the last frame went out, kept where the parent finds it
    /// should this process die before the next frame (none without shared memory).
    log: Option<ResultLog>,
}

impl Outbox {
    /// Sends the pending results (and `retire`, if any) in one frame.
    fn send(&mut self, retire: Option<String>, stopped: bool) -> std::io::Result<()> {
        if self.count == 0 && retire.is_none() && !stopped {
            return Ok(());
        }
        let header =
            FromWorker::Results { id: self.job, first: self.first, count: self.count, retire, stopped, cpu: None };
        let sent = wire::write_frame(&mut self.out, &header, &self.body);
        self.body.clear();
        self.first += self.count;
        self.count = 0;
        self.broken |= sent.is_err();
        if sent.is_ok() {
            // The frame is with the OS, which hands it to the parent even if this process
            // dies now: the log need not keep its results.
            if let Some(log) = &mut self.log {
                log.clear();
            }
        }
        sent
    }

    /// Logs `item`, the result of input `k` of job `id`, before the progress word says it
    /// finished; when the log is full, the pending results are sent first (which empties
    /// it). False when the result does not fit even in an empty log: the caller then sends
    /// it before the next input starts, which keeps it as safe.
    fn log(&mut self, id: u64, k: usize, item: &[u8]) -> std::io::Result<bool> {
        let Some(log) = &mut self.log else { return Ok(true) };
        if log.append(id, k, item) {
            return Ok(true);
        }
        if self.count == 0 {
            return Ok(false);
        }
        self.send(None, false)?;
        Ok(self.log.as_mut().is_some_and(|log| log.append(id, k, item)))
    }
}

struct Shared {
    outbox: Mutex<Outbox>,
    wake: Condvar,
    progress: Progress,
}

/// The flusher thread: when a task of a batch runs longer than [`FLUSH_AFTER`], sends the
/// results finished before it, so that they are delivered while it runs.
fn flusher(shared: Arc<Shared>) {
    let mut outbox = shared.outbox.lock_unpoisoned();
    let mut period = FLUSH_AFTER;
    loop {
        while !outbox.batch {
            if outbox.broken {
                return;
            }
            period = FLUSH_AFTER;
            outbox = shared.wake.wait_unpoisoned(outbox);
        }
        let seen = shared.progress.get();
        drop(outbox);
        std::thread::sleep(period);
        outbox = shared.outbox.lock_unpoisoned();
        let now = shared.progress.get();
        if now != seen {
            period = (period * 2).min(FLUSH_AFTER_MAX);
        } else if outbox.batch && outbox.count > 0 && now.phase % 2 == 1 {
            let _ = outbox.send(None, false);
            period = FLUSH_AFTER;
        }
    }
}

fn serve(tasks: &Tasks, addr: &str, token: String, parent: u32) -> Result<(), Quit> {
    parent_death::arrange(parent).map_err(|e| {
        if e.contains("already exited") {
            Quit::Expected(e)
        } else {
            Quit::Failed(e)
        }
    })?;
    let stream = socket::connect(addr).map_err(|e| format!("cannot connect to the parent at {addr}: {e}"))?;
    let mut reader = BufReader::with_capacity(1 << 16, stream.try_clone().map_err(|e| e.to_string())?);
    let mut out = BufWriter::with_capacity(1 << 16, stream);
    wire::write_frame(&mut out, &FromWorker::Hello { token, pid: std::process::id() }, &[])
        .map_err(|e| socket_error("saying hello", &e))?;

    // stdin is the lifeline: the parent never writes to it, and it reads EOF when the parent
    // lets the worker go or dies, however it dies (even while a task runs here).
    std::thread::Builder::new()
        .name("polycompute-lifeline".into())
        .spawn(|| {
            let mut buf = [0u8; 64];
            loop {
                match std::io::stdin().read(&mut buf) {
                    Ok(0) | Err(_) => std::process::exit(0),
                    Ok(_) => {}
                }
            }
        })
        .map_err(|e| e.to_string())?;

    // EOF on the socket: the pool let the worker go.
    let mut frame = Vec::new();
    let mut recv = |frame: &mut Vec<u8>| match spin::until_readable(&mut reader)
        .and_then(|()| wire::read_frame(&mut reader, frame))
    {
        Ok(true) => Ok(()),
        Ok(false) => std::process::exit(0),
        Err(e) => Err(socket_error("reading from the parent", &e)),
    };
    recv(&mut frame)?;
    let setup = wire::split_frame::<ToWorker>(&frame).map_err(|e| e.to_string())?.0;
    let ToWorker::Setup { worker, kind, ordinal, seed, spill_over, broadcast_type, broadcast, tasks: theirs, progress } =
        setup
    else {
        return Err("the parent did not send a setup first".to_string().into());
    };
    let mismatches = tasks.mismatches(&theirs);
    if !mismatches.is_empty() {
        let message = format!(
            "the worker's tasks differ from the pool's: {}; give worker_main the same Tasks as the pool",
            mismatches.join("; ")
        );
        let _ = wire::write_frame(&mut out, &FromWorker::StartFailed { message }, &[]);
        return Ok(());
    }
    let device = match Device::open(kind, ordinal) {
        Ok(d) => d,
        Err(e) => {
            let message = format!("cannot open {kind}:{ordinal} in the worker: {e}");
            let _ = wire::write_frame(&mut out, &FromWorker::StartFailed { message }, &[]);
            return Ok(());
        }
    };
    // Without the shared word the parent charges a crash to the first unanswered task.
    let progress = progress.and_then(|h| Progress::attach(&h).ok()).unwrap_or_else(Progress::local);
    let log = progress.results_log();
    let broadcast = BroadcastData {
        value: None,
        type_name: broadcast_type,
        bytes: broadcast.map(std::sync::Arc::new),
        near_bytes: None,
    };
    let spill_over = usize::try_from(spill_over).unwrap_or(usize::MAX);
    let mut ctx = WorkerContext::new(worker, device.clone(), true, seed, broadcast);
    wire::write_frame(&mut out, &FromWorker::Ready { device: device.id() }, &[])
        .map_err(|e| socket_error("saying ready", &e))?;

    let outbox = Outbox { out, body: Vec::new(), job: 0, first: 0, count: 0, batch: false, broken: false, log };
    let shared = Arc::new(Shared { outbox: Mutex::new(outbox), wake: Condvar::new(), progress });
    let for_flusher = shared.clone();
    std::thread::Builder::new()
        .name("polycompute-flusher".into())
        .spawn(move || flusher(for_flusher))
        .map_err(|e| e.to_string())?;

    let mut item = Vec::new();
    // Results per bunch (see BUNCH_TIME), learnt from how long tasks take.
    let mut bunch = 1usize;
    loop {
        recv(&mut frame)?;
        let (header, body) = wire::split_frame::<ToWorker>(&frame).map_err(|e| e.to_string())?;
        let ToWorker::Job { id, task, first_index, attempt, count, stream } = header else {
            return Err("unexpected setup frame".to_string().into());
        };
        let entry = tasks.get(&task);
        {
            let mut o = shared.outbox.lock_unpoisoned();
            (o.job, o.first, o.count, o.batch) = (id, 0, 0, count > 1);
        }
        if count > 1 {
            shared.wake.notify_one();
        }
        let (mut unsent, mut since) = (0usize, Instant::now());
        let mut retire = None;
        let count = count as usize;
        for (k, input) in wire::inputs(body).enumerate().take(count) {
            ctx.begin(first_index + k as u64, attempt, stream.offset(k as u64));
            shared.progress.start(id, k);
            item.clear();
            let failure = wire::push_result(&mut item, |out| {
                let input = input.map_err(|e| Failure::Serialization(e.to_string()))?;
                let Some(t) = entry else { return Err(Failure::UnknownTask(tasks.known())) };
                // A large input is decoded straight from its shared-memory mapping.
                input
                    .with(false, |bytes| t.run_encoded(&mut ctx, bytes, out, spill_over))
                    .map_err(|why| Failure::Serialization(format!("the input: {why}")))?
            });
            if let Some(Failure::Failed { sticky: true, message }) = &failure {
                retire = Some(format!("sticky device fault: {message}"));
            }
            // The device refused the task: the batch's later inputs (of the same task) are
            // left for the pool to send elsewhere.
            let stopped = matches!(failure, Some(Failure::Unsupported { .. })) && k + 1 < count;
            let mut o = shared.outbox.lock_unpoisoned();
            // Logged before the word says finished: from then on a crash loses no result.
            let logged = o.log(id, k, &item).map_err(|e| socket_error("sending results", &e))?;
            shared.progress.finish(id, k);
            if o.body.is_empty() {
                std::mem::swap(&mut o.body, &mut item);
            } else {
                o.body.extend_from_slice(&item);
            }
            o.count += 1;
            unsent += 1;
            let last = k + 1 == count || retire.is_some() || stopped;
            if last {
                o.batch = false;
                let retiring = retire.is_some();
                o.send(retire.take(), stopped).map_err(|e| socket_error("sending results", &e))?;
                if retiring {
                    return Ok(()); // the device context is poisoned: the pool starts a fresh worker
                }
                break;
            }
            if !logged {
                // Too large for the log: it leaves before the next input can crash.
                o.send(None, false).map_err(|e| socket_error("sending results", &e))?;
                continue;
            }
            if unsent >= bunch {
                // The clock is read once per bunch: per task it would cost more than a no-op task.
                let now = Instant::now();
                let per_task = (now - since).as_nanos() as usize / unsent;
                bunch = (BUNCH_TIME.as_nanos() as usize / per_task.max(1)).clamp(1, 4096);
                (unsent, since) = (0, now);
                o.send(None, false).map_err(|e| socket_error("sending results", &e))?;
            }
        }
        let mut o = shared.outbox.lock_unpoisoned();
        if o.batch || o.count > 0 {
            // Fewer inputs than announced (a malformed body): answer what ran.
            o.batch = false;
            o.send(None, false).map_err(|e| socket_error("sending results", &e))?;
        }
    }
}
