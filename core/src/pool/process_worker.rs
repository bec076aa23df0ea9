//! Process workers, parent side: one driver thread per worker slot starts the worker (this
//! executable re-executed, never forked), feeds it jobs over its socket, reads its results
//! from the same socket (no relay thread: every hop is a thread wake-up), and replaces it
//! when it crashes, overruns the timeout, is cancelled, retires or reaches its task limit.

use std::collections::{HashMap, VecDeque};
use std::io::{self, BufReader, BufWriter};
use std::net::Shutdown;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::error::TaskErrorKind;
use super::job::{Inputs, Job};
use super::shared::{Inner, Slot, Work};
use super::spin;
use super::thread_worker::failure_kind;
use super::wire::{self, FromWorker, ToWorker, WireResult};
use crate::platform::process::{self as os, Listener, Stream};

/// Starts one driver thread per slot.
pub(crate) fn start_all(inner: &Arc<Inner>) -> io::Result<()> {
    for slot in &inner.slots {
        let (i, s) = (inner.clone(), slot.clone());
        let h =
            std::thread::Builder::new().name(format!("polycompute-driver-{}", slot.id)).spawn(move || drive(i, s))?;
        inner.add_thread(h);
    }
    Ok(())
}

/// A running worker process.
struct Worker {
    child: Child,
    reader: BufReader<Stream>,
    writer: BufWriter<Stream>,
    /// The worker's stdin, never written: it reads EOF when this end closes, that is when
    /// the pool lets it go or this process dies, however it dies.
    lifeline: Option<ChildStdin>,
    gen: u64,
    next_id: u64,
    frame: Vec<u8>,
}

/// How serving a worker ended.
enum Outcome {
    /// The pool is shutting down.
    Stop,
    /// Replace it gracefully (task limit, sticky fault).
    Retire,
    /// Kill and replace it (timeout, cancellation, protocol error).
    Kill,
    /// It died (and was reaped).
    Exited,
}

fn drive(inner: Arc<Inner>, slot: Arc<Slot>) {
    let mut failures = 0u32;
    let mut first = true;
    while !inner.stopping() {
        let gen = slot.gen.fetch_add(1, Ordering::AcqRel) + 1;
        if !first {
            slot.stats.restarts.fetch_add(1, Ordering::Relaxed);
        }
        first = false;
        let mut worker = match start(&inner, &slot, gen) {
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
                    inner.slot_dead(&slot, e);
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
        let outcome = if inner.stopping() { Outcome::Stop } else { serve(&inner, &slot, &mut worker) };
        slot.interrupt.lock().unwrap_or_else(|p| p.into_inner()).take();
        slot.abandoned.lock().unwrap_or_else(|p| p.into_inner()).clear();
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
fn start(inner: &Inner, slot: &Slot, gen: u64) -> Result<Worker, String> {
    let listener = Listener::bind().map_err(|e| format!("cannot open a socket for the worker: {e}"))?;
    let exe = match &inner.cfg.worker_exe {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| format!("cannot find the current executable: {e}"))?,
    };
    let token = format!("{:016x}{:016x}", random(), random());
    let mut cmd = Command::new(&exe);
    cmd.arg(wire::WORKER_ARG)
        .env(wire::ENV_ADDR, listener.addr())
        .env(wire::ENV_TOKEN, &token)
        .env(wire::ENV_PARENT, std::process::id().to_string())
        .stdin(Stdio::piped());
    let mut child = os::spawn(cmd).map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let lifeline = child.stdin.take();
    let deadline = Instant::now() + inner.cfg.start_timeout;
    let started = handshake(inner, slot, &listener, &mut child, &token, deadline).and_then(|stream| {
        let clone = |s: &Stream| s.try_clone().map_err(|e| format!("cannot clone the worker's socket: {e}"));
        let reader = BufReader::with_capacity(1 << 16, clone(&stream)?);
        let interrupt = clone(&stream)?;
        Ok((reader, BufWriter::with_capacity(1 << 16, stream), interrupt))
    });
    match started {
        Ok((reader, writer, interrupt)) => {
            *slot.interrupt.lock().unwrap_or_else(|p| p.into_inner()) = Some(interrupt);
            Ok(Worker { child, reader, writer, lifeline, gen, next_id: 0, frame: Vec::new() })
        }
        Err(e) => {
            let _ = child.kill();
            let status = child.wait().map(|s| format!(" ({s})")).unwrap_or_default();
            Err(format!("{e}{status}"))
        }
    }
}

fn handshake(
    inner: &Inner,
    slot: &Slot,
    listener: &Listener,
    child: &mut Child,
    token: &str,
    deadline: Instant,
) -> Result<Stream, String> {
    let mut stream = listener.accept(child, deadline).map_err(|e| {
        format!("{e}; does the program's main call polycompute::worker_main(&tasks) before anything else?")
    })?;
    let left = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let mut frame = Vec::new();
    let read = |stream: &mut Stream, frame: &mut Vec<u8>| -> Result<FromWorker, String> {
        stream.set_read_timeout(Some(left())).map_err(|e| e.to_string())?;
        match wire::read_frame(stream, frame) {
            Ok(true) => wire::split_frame::<FromWorker>(frame).map(|(h, _)| h).map_err(|e| e.to_string()),
            Ok(false) => Err("the worker process exited during startup".into()),
            Err(e) => Err(format!("the worker process did not answer during startup: {e}")),
        }
    };
    match read(&mut stream, &mut frame)? {
        FromWorker::Hello { token: t, .. } if t == token => {}
        _ => return Err("a process that is not our worker connected to its socket".into()),
    }
    let setup = ToWorker::Setup {
        worker: slot.id,
        kind: slot.kind,
        ordinal: slot.ordinal,
        seed: inner.cfg.seed,
        spill_over: inner.cfg.spill_over as u64,
        shared_type: inner.shared.type_name.clone(),
        shared: inner.shared.bytes.as_ref().map(|b| b.to_vec()),
        tasks: inner.tasks.signatures(),
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

/// 64 random bits from the standard library's per-process random hasher keys.
fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish()
}

impl Worker {
    /// Closes its socket and lifeline (it exits on EOF) and reaps it; kills it if it lingers.
    fn stop(mut self) {
        let _ = self.writer.get_ref().shutdown(Shutdown::Both);
        drop(self.lifeline.take());
        self.reap(Duration::from_millis(300));
    }

    /// Kills and reaps it.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits up to `grace` for it to exit, then kills it; returns (exit code, signal).
    fn reap(&mut self, grace: Duration) -> (Option<i32>, Option<i32>) {
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

/// A job sent to the worker.
struct InFlight {
    job: Job,
    id: u64,
    started: Instant,
}

fn serve(inner: &Arc<Inner>, slot: &Slot, w: &mut Worker) -> Outcome {
    let mut inflight: VecDeque<InFlight> = VecDeque::new();
    let mut served = 0u64;
    let max = inner.cfg.max_tasks.unwrap_or(u64::MAX);
    let who = (slot.id, slot.device_id.as_str());
    // What one input of each task costs here (ns, moving average). A job is sent ahead
    // (up to the pool's pipeline depth) only while the work already at the worker is
    // expected to take under a millisecond: the worker then never waits for its next job
    // (2-3x the throughput of tiny tasks, measured), and no job waits more than about a
    // millisecond behind another while some other worker may be idle.
    let mut cost: HashMap<&'static str, u64> = HashMap::new();
    let mut pipe_broken = false;
    let ahead_ok = |cost: &HashMap<&'static str, u64>, inflight: &VecDeque<InFlight>| {
        let expected = inflight.iter().try_fold(0u64, |sum, f| {
            cost.get(f.job.task.name()).map(|ns| sum.saturating_add(ns.saturating_mul(f.job.ctl.len as u64)))
        });
        expected.is_some_and(|ns| ns < 1_000_000)
    };
    loop {
        while !pipe_broken
            && inflight.len() < inner.cfg.depth
            && served < max
            && (inflight.is_empty() || ahead_ok(&cost, &inflight))
        {
            let job = if inflight.is_empty() {
                // The queue alone, as thread workers: shutdown sends one stop per slot.
                let mut polled = None;
                spin::until(|| match inner.queue_rx.try_recv() {
                    Ok(work) => {
                        polled = Some(Ok(work));
                        true
                    }
                    Err(e) => e.is_disconnected(),
                });
                match polled.unwrap_or_else(|| inner.queue_rx.recv()) {
                    Ok(Work::Job(job)) => job,
                    Ok(Work::Stop) | Err(_) => return Outcome::Stop,
                }
            } else {
                match inner.queue_rx.try_recv() {
                    Ok(Work::Job(job)) => job,
                    Ok(Work::Stop) => {
                        let _ = inner.queue_tx.send(Work::Stop); // not ours to take while busy
                        break;
                    }
                    Err(_) => break,
                }
            };
            if inflight.is_empty() && !matches!(w.child.try_wait(), Ok(None)) {
                // It died while idle: not this job's fault.
                let (code, signal) = w.reap(Duration::from_secs(1));
                tracing::warn!(
                    "polycompute pool: idle worker {} ({}) died (code {code:?}, signal {signal:?}); replacing it",
                    slot.id,
                    slot.device_id
                );
                inner.enqueue(job);
                return Outcome::Exited;
            }
            if !job.ctl.start(slot.id, w.gen) {
                continue;
            }
            let Inputs::Encoded { body, .. } = &job.inputs else {
                let kind = TaskErrorKind::Serialization { message: "internal: a job with unencoded inputs".into() };
                job.ctl.fail_rest(Some(who), job.attempt, kind);
                continue;
            };
            w.next_id += 1;
            let header = ToWorker::Job {
                id: w.next_id,
                task: job.task.name().to_string(),
                first_index: job.ctl.first_index,
                attempt: job.attempt,
                count: job.ctl.len as u32,
            };
            if wire::write_frame(&mut w.writer, &header, body).is_err() {
                // The worker is gone (or we shut its socket). This job never reached it: back
                // to the queue. The jobs before it may have been answered: read on, and the
                // end of the stream then tells which job the worker died in.
                job.ctl.requeued();
                inner.enqueue(job);
                if inflight.is_empty() {
                    return interrupted(inner, slot, w, inflight);
                }
                pipe_broken = true;
                break;
            }
            served += job.ctl.len as u64;
            inflight.push_back(InFlight { job, id: w.next_id, started: Instant::now() });
        }
        let Some(head) = inflight.front() else {
            return Outcome::Retire; // it reached its task limit
        };
        let deadline = inner.cfg.timeout.map(|t| (t, head.started + t * head.job.ctl.len as u32));
        if let Some((_, d)) = deadline {
            let left = d.saturating_duration_since(Instant::now()).max(Duration::from_micros(1));
            let _ = w.reader.get_ref().set_read_timeout(Some(left));
        }
        let _ = spin::until_readable(&mut w.reader);
        match wire::read_frame(&mut w.reader, &mut w.frame) {
            Ok(true) => match results(slot, &mut inflight, &w.frame) {
                Ok((None, task, per_input)) => {
                    let avg = cost.entry(task).or_insert(per_input);
                    *avg = (3 * *avg + per_input) / 4;
                    if let Some(next) = inflight.front_mut() {
                        next.started = Instant::now();
                    }
                }
                Ok((Some(why), _, _)) => {
                    tracing::warn!("polycompute pool: worker {} ({}) retires: {why}", slot.id, slot.device_id);
                    requeue(inner, inflight);
                    return Outcome::Retire;
                }
                Err(e) => {
                    tracing::error!("polycompute pool: bad frame from worker {}: {e}; replacing it", slot.id);
                    if let Some(head) = inflight.pop_front() {
                        let kind = TaskErrorKind::Serialization { message: format!("bad results frame: {e}") };
                        head.job.ctl.fail_rest(Some(who), head.job.attempt, kind);
                    }
                    requeue(inner, inflight);
                    return Outcome::Kill;
                }
            },
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) && deadline.is_some() => {
                let after = deadline.map_or(Duration::ZERO, |(t, _)| t);
                if let Some(head) = inflight.pop_front() {
                    let kind = TaskErrorKind::Timeout { after };
                    head.job.ctl.fail_rest_counted(Some(who), head.job.attempt, kind, |n| slot.stats.count_failed(n));
                }
                requeue(inner, inflight);
                return Outcome::Kill;
            }
            Ok(false) | Err(_) => return interrupted(inner, slot, w, inflight),
        }
    }
}

/// The socket closed or failed: the pool is stopping, a job was cancelled (the socket was
/// shut down to wake us), or the worker died.
fn interrupted(inner: &Arc<Inner>, slot: &Slot, w: &mut Worker, mut inflight: VecDeque<InFlight>) -> Outcome {
    if inner.stopping() {
        for f in inflight {
            f.job.ctl.fail_rest(Some((slot.id, &slot.device_id)), f.job.attempt, TaskErrorKind::ShutDown);
        }
        return Outcome::Stop;
    }
    let abandoned = std::mem::take(&mut *slot.abandoned.lock().unwrap_or_else(|p| p.into_inner()));
    if !abandoned.is_empty() {
        // Cancelled jobs were answered by the canceller; the rest never ran here.
        inflight.retain(|f| !abandoned.iter().any(|a| Arc::ptr_eq(a, &f.job.ctl)));
        requeue(inner, inflight);
        return Outcome::Kill;
    }
    crashed(inner, slot, w, inflight)
}

/// What [`results`] found: why the worker retires (if it does), the job's task, and the time
/// it took per input (ns).
type Finished = (Option<String>, &'static str, u64);

/// Delivers the results in `frame` for the head job.
fn results(slot: &Slot, inflight: &mut VecDeque<InFlight>, frame: &[u8]) -> io::Result<Finished> {
    let (header, body) = wire::split_frame::<FromWorker>(frame)?;
    let FromWorker::Results { id, count, retire } = header else {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("expected results, got {header:?}")));
    };
    let head = match inflight.front() {
        Some(h) if h.id == id && h.job.ctl.len == count as usize => inflight.pop_front(),
        _ => None,
    };
    let Some(head) = head else {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("results for job {id}, not the one sent")));
    };
    let who = (slot.id, slot.device_id.as_str());
    let (job, ctl) = (&head.job, &head.job.ctl);
    let mut out = Vec::with_capacity(ctl.len);
    let mut failed = 0;
    for (k, item) in wire::results(body).enumerate().take(ctl.len) {
        let result = match item? {
            WireResult::Output(encoded) => encoded
                .with(true, |bytes| job.task.decode_output(bytes))
                .and_then(|decoded| decoded)
                .map_err(|message| ctl.error(k, Some(who), job.attempt, TaskErrorKind::Serialization { message })),
            WireResult::Failure(f) => Err(ctl.error(k, Some(who), job.attempt, failure_kind(f))),
        };
        failed += result.is_err() as u64;
        out.push(result);
    }
    let got = out.len();
    if got < ctl.len {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "fewer results than inputs"));
    }
    slot.stats.tasks.fetch_add(got as u64, Ordering::Relaxed);
    slot.stats.failed.fetch_add(failed, Ordering::Relaxed);
    let took = head.started.elapsed().as_nanos() as u64;
    slot.stats.busy_ns.fetch_add(took, Ordering::Relaxed);
    ctl.deliver_all(out);
    Ok((retire, job.task.name(), took / got.max(1) as u64))
}

/// The worker died with jobs in flight. The head job was running: it is retried, failed as
/// `Crashed`, or (a batch, where which input crashed is unknown) split into single-input
/// jobs. The jobs behind it never started: they go back to the queue.
fn crashed(inner: &Arc<Inner>, slot: &Slot, w: &mut Worker, mut inflight: VecDeque<InFlight>) -> Outcome {
    let (code, signal) = w.reap(Duration::from_secs(1));
    let Some(head) = inflight.pop_front() else { return Outcome::Exited };
    requeue(inner, inflight);
    let job = head.job;
    if job.ctl.len > 1 {
        if let Some(rest) = job.ctl.claim_rest() {
            let Inputs::Encoded { body, pins } = &job.inputs else { return Outcome::Exited };
            for (k, item) in wire::items(body).enumerate() {
                if !rest.contains(&k) {
                    continue;
                }
                let sub = job.ctl.sub(k..k + 1);
                match item {
                    Ok((tag, bytes)) => {
                        let mut one = Vec::with_capacity(bytes.len() + 5);
                        wire::push_item(&mut one, tag, bytes);
                        // Each single-input job keeps the batch's segments (a few handles).
                        let inputs = Inputs::Encoded { body: one, pins: pins.clone() };
                        inner.enqueue(Job { task: job.task.clone(), attempt: job.attempt, inputs, ctl: sub });
                    }
                    Err(e) => {
                        sub.fail_rest(None, job.attempt, TaskErrorKind::Serialization { message: e.to_string() });
                    }
                }
            }
        }
    } else if job.attempt <= inner.cfg.retries {
        job.ctl.requeued();
        inner.enqueue(Job { attempt: job.attempt + 1, ..job });
    } else {
        let kind = TaskErrorKind::Crashed { code, signal };
        job.ctl.fail_rest_counted(Some((slot.id, &slot.device_id)), job.attempt, kind, |n| slot.stats.count_failed(n));
    }
    Outcome::Exited
}

/// Puts jobs that never started back in the queue.
fn requeue(inner: &Inner, inflight: VecDeque<InFlight>) {
    for f in inflight {
        f.job.ctl.requeued();
        inner.enqueue(f.job);
    }
}
