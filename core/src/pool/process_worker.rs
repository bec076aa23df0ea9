//! Process workers, parent side: one driver thread per worker slot starts the worker (this
//! executable re-executed, never forked), feeds it jobs over its socket, and replaces it
//! when it crashes, overruns the timeout, is cancelled, retires or reaches its task limit.

use std::collections::VecDeque;
use std::io::{self, BufReader, BufWriter};
use std::net::Shutdown;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::error::TaskErrorKind;
use super::job::{Inputs, Job};
use super::runtime::{Event, Inner, Slot};
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
    writer: BufWriter<Stream>,
    stream: Stream,
    gen: u64,
    next_id: u64,
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
        let outcome = serve(&inner, &slot, &mut worker);
        match outcome {
            Outcome::Stop => {
                worker.stop();
                return;
            }
            Outcome::Retire => worker.stop(),
            Outcome::Kill => worker.kill(),
            Outcome::Exited => {}
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
        .stdin(Stdio::null());
    let mut child = os::spawn(cmd).map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let deadline = Instant::now() + inner.cfg.start_timeout;
    match handshake(inner, slot, &listener, &mut child, &token, deadline) {
        Ok(stream) => {
            let reader = stream.try_clone().map_err(|e| e.to_string())?;
            let writer = BufWriter::with_capacity(1 << 16, stream.try_clone().map_err(|e| e.to_string())?);
            let events = slot.events_tx.clone();
            let spawned =
                std::thread::Builder::new().name(format!("polycompute-reader-{}", slot.id)).spawn(move || {
                    let mut r = BufReader::with_capacity(1 << 16, reader);
                    loop {
                        let mut frame = Vec::new();
                        match wire::read_frame(&mut r, &mut frame) {
                            Ok(true) => {
                                if events.send(super::runtime::Event::Frame { gen, frame }).is_err() {
                                    return;
                                }
                            }
                            _ => {
                                let _ = events.send(super::runtime::Event::Eof { gen });
                                return;
                            }
                        }
                    }
                });
            if let Err(e) = spawned {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("cannot start a reader thread: {e}"));
            }
            Ok(Worker { child, writer, stream, gen, next_id: 0 })
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
        shared_type: inner.shared.type_name.clone(),
        shared: inner.shared.bytes.as_ref().map(|b| b.to_vec()),
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
    /// Closes the socket (the worker exits on EOF) and reaps it; kills it if it lingers.
    fn stop(mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
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
    loop {
        // Keep up to `depth` jobs at the worker, so it never waits for the next one.
        while inflight.len() < inner.cfg.depth && served < max {
            let job = if inflight.is_empty() {
                crossbeam_channel::select! {
                    recv(inner.queue_rx) -> job => match job {
                        Ok(job) => job,
                        Err(_) => return Outcome::Stop,
                    },
                    recv(slot.events_rx) -> ev => match ev {
                        Ok(Event::Eof { gen }) if gen == w.gen => {
                            let (code, signal) = w.reap(Duration::from_secs(1));
                            tracing::warn!(
                                "polycompute pool: idle worker {} ({}) died (code {code:?}, signal {signal:?}); replacing it",
                                slot.id, slot.device_id
                            );
                            return Outcome::Exited;
                        }
                        Ok(Event::Frame { gen, .. }) if gen == w.gen => {
                            tracing::error!("polycompute pool: worker {} sent a frame while idle; replacing it", slot.id);
                            return Outcome::Kill;
                        }
                        _ => continue, // a stale event, or the cancellation of a finished job
                    },
                    recv(inner.stop_rx) -> _ => return Outcome::Stop,
                }
            } else {
                match inner.queue_rx.try_recv() {
                    Ok(job) => job,
                    Err(_) => break,
                }
            };
            if !job.ctl.start(slot.id, w.gen) {
                continue;
            }
            let Inputs::Encoded(body) = &job.inputs else {
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
            let sent = wire::write_frame(&mut w.writer, &header, body);
            served += job.ctl.len as u64;
            inflight.push_back(InFlight { job, id: w.next_id, started: Instant::now() });
            if sent.is_err() {
                return crashed(inner, slot, w, inflight); // the worker is gone
            }
        }
        let Some(head) = inflight.front() else {
            return Outcome::Retire; // it reached its task limit
        };
        let deadline = inner.cfg.timeout.map(|t| (t, head.started + t * head.job.ctl.len as u32));
        let event = match deadline {
            Some((t, d)) => crossbeam_channel::select! {
                recv(slot.events_rx) -> ev => ev,
                recv(inner.stop_rx) -> _ => return stop(slot, inflight),
                default(d.saturating_duration_since(Instant::now())) => {
                    if let Some(head) = inflight.pop_front() {
                        let n = head.job.ctl.fail_rest(Some(who), head.job.attempt, TaskErrorKind::Timeout { after: t });
                        slot.stats.tasks.fetch_add(n as u64, Ordering::Relaxed);
                        slot.stats.failed.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    requeue(inner, inflight);
                    return Outcome::Kill;
                },
            },
            None => crossbeam_channel::select! {
                recv(slot.events_rx) -> ev => ev,
                recv(inner.stop_rx) -> _ => return stop(slot, inflight),
            },
        };
        match event {
            Ok(Event::Frame { gen, frame }) if gen == w.gen => match results(inner, slot, &mut inflight, &frame) {
                Ok(None) => {
                    if let Some(next) = inflight.front_mut() {
                        next.started = Instant::now();
                    }
                }
                Ok(Some(why)) => {
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
            Ok(Event::Eof { gen }) if gen == w.gen => return crashed(inner, slot, w, inflight),
            Ok(Event::Abandon { ctl }) => {
                if let Some(pos) = inflight.iter().position(|f| Arc::ptr_eq(&f.job.ctl, &ctl)) {
                    inflight.remove(pos);
                    requeue(inner, inflight);
                    return Outcome::Kill;
                }
            }
            _ => {}
        }
    }
}

/// Delivers the results in `frame` for the head job; `Some(why)` when the worker retires.
fn results(inner: &Inner, slot: &Slot, inflight: &mut VecDeque<InFlight>, frame: &[u8]) -> io::Result<Option<String>> {
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
    let mut got = 0;
    let mut failed = 0;
    for (k, item) in wire::results(body).enumerate().take(ctl.len) {
        let result = match item? {
            WireResult::Output(bytes) => job
                .task
                .decode_output(bytes)
                .map_err(|message| ctl.error(k, Some(who), job.attempt, TaskErrorKind::Serialization { message })),
            WireResult::Failure(f) => Err(ctl.error(k, Some(who), job.attempt, failure_kind(f))),
        };
        failed += result.is_err() as u64;
        ctl.deliver(k, result);
        got += 1;
    }
    if got < ctl.len {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "fewer results than inputs"));
    }
    slot.stats.tasks.fetch_add(got as u64, Ordering::Relaxed);
    slot.stats.failed.fetch_add(failed, Ordering::Relaxed);
    slot.stats.busy_ns.fetch_add(head.started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    let _ = inner;
    Ok(retire)
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
            let Inputs::Encoded(body) = &job.inputs else { return Outcome::Exited };
            for (k, item) in wire::inputs(body).enumerate() {
                if !rest.contains(&k) {
                    continue;
                }
                let sub = job.ctl.sub(k..k + 1);
                match item {
                    Ok(bytes) => {
                        let mut one = Vec::with_capacity(bytes.len() + 4);
                        one.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                        one.extend_from_slice(bytes);
                        inner.enqueue(Job {
                            task: job.task.clone(),
                            attempt: job.attempt,
                            inputs: Inputs::Encoded(one),
                            ctl: sub,
                        });
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
        let n =
            job.ctl.fail_rest(Some((slot.id, &slot.device_id)), job.attempt, TaskErrorKind::Crashed { code, signal });
        slot.stats.tasks.fetch_add(n as u64, Ordering::Relaxed);
        slot.stats.failed.fetch_add(n as u64, Ordering::Relaxed);
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

/// The pool stops: jobs in flight fail with `ShutDown`.
fn stop(slot: &Slot, inflight: VecDeque<InFlight>) -> Outcome {
    for f in inflight {
        f.job.ctl.fail_rest(Some((slot.id, &slot.device_id)), f.job.attempt, TaskErrorKind::ShutDown);
    }
    Outcome::Stop
}
