//! Process workers, parent side: a worker slot's driver thread starts the worker (this
//! executable re-executed, never forked), has it served ([`super::serve`]), and replaces it
//! when it crashes, overruns the timeout, is cancelled, retires or reaches its task limit.

use std::io::{BufReader, BufWriter};
use std::net::Shutdown;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::progress::Progress;
use super::result_log::ResultLog;
use super::{serve, ProcessSlot};
use crate::state::{PoolState, Slot};
use crate::sys::process as os;
use crate::sys::socket::{Listener, Stream};
use crate::sys::token::Token;
use crate::wire::{self, FromWorker, ToWorker};
use polycompute_core::sync::LockUnpoisoned;

/// A running worker process.
pub(super) struct Worker {
    pub(super) child: Child,
    pub(super) reader: BufReader<Stream>,
    pub(super) writer: BufWriter<Stream>,
    /// The worker's stdin, never written: it reads EOF when this end closes, that is when
    /// the pool lets it go or this process dies, however it dies.
    lifeline: Option<ChildStdin>,
    pub(super) gen: u64,
    pub(super) next_id: u64,
    pub(super) frame: Vec<u8>,
    /// Where the worker stands (see [`super::progress`]; a word of this process alone, which
    /// tells nothing, when shared memory failed).
    pub(super) progress: Progress,
    /// The results it finished since its last frame (see [`super::result_log`]), read when
    /// it dies; none without shared memory.
    pub(super) log: Option<ResultLog>,
}

/// How serving a worker ended.
pub(super) enum Outcome {
    /// The pool is shutting down.
    Stop,
    /// Replace it gracefully (task limit, sticky fault).
    Retire,
    /// Kill and replace it (timeout, cancellation, protocol error).
    Kill,
    /// It died (and was reaped).
    Exited,
}

/// The driver thread of slot `id`: starts, serves and replaces its worker until shutdown.
pub(super) fn drive(inner: Arc<PoolState>, procs: Arc<[ProcessSlot]>, id: usize) {
    let (slot, mine) = (&inner.slots[id], &procs[id]);
    let mut failures = 0u32;
    let mut first = true;
    while !inner.stopping() {
        let gen = slot.gen.fetch_add(1, Ordering::AcqRel) + 1;
        if !first {
            slot.stats.restarts.fetch_add(1, Ordering::Relaxed);
        }
        first = false;
        let mut worker = match start(&inner, slot, mine, gen) {
            Ok(w) => {
                failures = 0;
                w
            }
            Err(e) => {
                if inner.stopping() {
                    return;
                }
                failures += 1;
                if failures >= 3 {
                    inner.slot_dead(slot, e);
                    return;
                }
                tracing::warn!(
                    "polycompute pool: worker {} ({}) failed to start, retrying: {e}",
                    slot.id,
                    slot.device_id
                );
                let _ = inner.stop_rx.recv_timeout(Duration::from_millis(100 * failures as u64));
                continue;
            }
        };
        slot.pid.store(worker.child.id(), Ordering::Release);
        let outcome = if inner.stopping() { Outcome::Stop } else { serve::serve(&inner, slot, mine, &mut worker) };
        mine.interrupt.lock_unpoisoned().take();
        mine.abandoned.lock_unpoisoned().clear();
        let stop = matches!(outcome, Outcome::Stop);
        match outcome {
            Outcome::Stop | Outcome::Retire => worker.stop(),
            Outcome::Kill => worker.kill(),
            Outcome::Exited => {}
        }
        // Large outputs the worker moved into shared memory that were never read (their
        // task was cancelled or timed out, the worker died mid-frame) go with it.
        crate::shared::remove_leftovers();
        if stop {
            return;
        }
    }
}

/// Starts a worker and waits until its device is open.
fn start(inner: &PoolState, slot: &Slot, mine: &ProcessSlot, gen: u64) -> Result<Worker, String> {
    let listener = Listener::bind().map_err(|e| format!("cannot open a socket for the worker: {e}"))?;
    let exe = match &inner.cfg.worker_exe {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| format!("cannot find the current executable: {e}"))?,
    };
    let token = Token::generate().map_err(|e| format!("cannot make the worker's token: {e}"))?;
    let mut cmd = Command::new(&exe);
    cmd.arg(wire::WORKER_ARG)
        .env(wire::ENV_ADDR, listener.addr())
        .env(wire::ENV_TOKEN, token.to_string())
        .env(wire::ENV_PARENT, std::process::id().to_string())
        .stdin(Stdio::piped());
    let mut child = os::spawn(cmd).map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let lifeline = child.stdin.take();
    let deadline = Instant::now() + inner.cfg.start_timeout;
    // Without shared memory the worker still runs; a crash is then charged to the first
    // unanswered task of its batch.
    let progress = Progress::create().unwrap_or_else(|e| {
        tracing::debug!("polycompute pool: no progress word for worker {}: {e}", slot.id);
        Progress::local()
    });
    let started = handshake(inner, slot, &progress, &listener, &mut child, &token, deadline).and_then(|stream| {
        let clone = |s: &Stream| s.try_clone().map_err(|e| format!("cannot clone the worker's socket: {e}"));
        let reader = BufReader::with_capacity(1 << 16, clone(&stream)?);
        let interrupt = clone(&stream)?;
        Ok((reader, BufWriter::with_capacity(1 << 16, stream), interrupt))
    });
    match started {
        Ok((reader, writer, interrupt)) => {
            #[cfg(windows)]
            mine.worker_pid.store(child.id(), Ordering::Release);
            *mine.interrupt.lock_unpoisoned() = Some(interrupt);
            let log = progress.results_log();
            Ok(Worker { child, reader, writer, lifeline, gen, next_id: 0, frame: Vec::new(), progress, log })
        }
        Err(e) => {
            let _ = child.kill();
            let status = child.wait().map(|s| format!(" ({s})")).unwrap_or_default();
            Err(format!("{e}{status}"))
        }
    }
}

fn handshake(
    inner: &PoolState,
    slot: &Slot,
    progress: &Progress,
    listener: &Listener,
    child: &mut Child,
    token: &Token,
    deadline: Instant,
) -> Result<Stream, String> {
    let left = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let mut frame = Vec::new();
    // The first frame must be the worker's hello with our token: anything else is some
    // other local process, which `accept` closes and logs, waiting on. (The pid a hello
    // claims proves nothing; on Linux `accept` checked the real one, SO_PEERCRED.)
    let hello = |stream: &mut Stream| -> Result<(), String> {
        stream.set_read_timeout(Some(left().min(HELLO_WAIT))).map_err(|e| e.to_string())?;
        let mut frame = Vec::new();
        match wire::read_frame(stream, &mut frame) {
            Ok(true) => {}
            Ok(false) => return Err("it closed the connection without a word".into()),
            Err(e) => return Err(format!("no hello from it: {e}")),
        }
        match wire::split_frame::<FromWorker>(&frame) {
            Ok((FromWorker::Hello { token: t, .. }, _)) if token.matches(&t) => Ok(()),
            Ok((FromWorker::Hello { pid, .. }, _)) => Err(format!("a wrong token (it says it is process {pid})")),
            Ok((other, _)) => Err(format!("its first message is no hello: {}", message_name(&other))),
            Err(e) => Err(format!("its first frame is malformed: {e}")),
        }
    };
    let mut stream = listener.accept(child, deadline, hello).map_err(|e| {
        format!("{e}; does the program's main call polycompute::worker_main(&tasks) before anything else?")
    })?;
    let read = |stream: &mut Stream, frame: &mut Vec<u8>| -> Result<FromWorker, String> {
        stream.set_read_timeout(Some(left())).map_err(|e| e.to_string())?;
        match wire::read_frame(stream, frame) {
            Ok(true) => wire::split_frame::<FromWorker>(frame).map(|(h, _)| h).map_err(|e| e.to_string()),
            Ok(false) => Err("the worker process exited during startup".into()),
            Err(e) => Err(format!("the worker process did not answer during startup: {e}")),
        }
    };
    let setup = ToWorker::Setup {
        worker: slot.id,
        kind: slot.kind,
        ordinal: slot.ordinal,
        seed: inner.cfg.seed,
        spill_over: inner.cfg.spill_over as u64,
        broadcast_type: inner.broadcast.type_name.clone(),
        broadcast: inner.broadcast.bytes.as_ref().map(|b| b.to_vec()),
        tasks: inner.tasks.signatures(),
        progress: progress.handle(),
    };
    wire::write_frame(&mut stream, &setup, &[]).map_err(|e| format!("cannot send the worker its setup: {e}"))?;
    match read(&mut stream, &mut frame)? {
        FromWorker::Ready { .. } => {}
        FromWorker::StartFailed { message } => return Err(message),
        other => return Err(format!("unexpected message from the worker during startup: {other:?}")),
    }
    stream.set_read_timeout(None).map_err(|e| e.to_string())?;
    Ok(stream)
}

/// How long a connection may take to send its hello before it is dropped (at most: the
/// start's deadline comes first). A worker sends it right after connecting; a silent
/// connection (another local process, on loopback TCP) holds the start no longer than this.
const HELLO_WAIT: Duration = Duration::from_secs(2);

/// A message's kind, never its contents (a hostile peer's text stays out of the log).
fn message_name(m: &FromWorker) -> &'static str {
    match m {
        FromWorker::Hello { .. } => "Hello",
        FromWorker::Ready { .. } => "Ready",
        FromWorker::StartFailed { .. } => "StartFailed",
        FromWorker::Results { .. } => "Results",
    }
}

impl Worker {
    /// Closes its socket and lifeline (it exits on EOF) and reaps it; kills it if it lingers.
    pub(super) fn stop(mut self) {
        let _ = self.writer.get_ref().shutdown(Shutdown::Both);
        drop(self.lifeline.take());
        self.reap(Duration::from_millis(300));
    }

    /// Kills and reaps it.
    pub(super) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits up to `grace` for it to exit, then kills it; returns (exit code, signal).
    pub(super) fn reap(&mut self, grace: Duration) -> (Option<i32>, Option<i32>) {
        let deadline = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return os::exit_details(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
                _ => {
                    let _ = self.child.kill();
                    return self.child.wait().map(os::exit_details).unwrap_or((None, None));
                }
            }
        }
    }
}
