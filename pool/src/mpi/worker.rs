//! A worker rank: waits for a pool's setup, opens its device, runs the jobs rank 0 sends
//! (in order) and sends each job's results back, until the pool stops; then waits for the
//! next pool, or for the program's end.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::tag;
use crate::broadcast::BroadcastData;
use crate::context::WorkerContext;
use crate::task::{Failure, Tasks};
use crate::wire::{self, FromWorker, ToWorker};
use polycompute_core::device::Device;
use polycompute_core::sync::LockUnpoisoned;

/// The next message from rank 0, polled (see `idle`: a blocking receive would spin a
/// core for as long as it waits).
fn next_message(world: &SimpleCommunicator) -> (Vec<u8>, mpi::point_to_point::Status) {
    let root = world.process_at_rank(0);
    let idle = super::idle::Idle::new();
    loop {
        {
            let _mpi = mpi_calls();
            if let Some(probed) = super::poll::probe(&root) {
                return super::poll::receive(probed);
            }
        }
        idle.pause();
    }
}

/// The main thread's right to call MPI: held around each of its calls, so that the heartbeat
/// thread can finalize MPI (`end_busy_rank`) with no call of the main thread in flight. Once
/// MPI is finalized the main thread only waits for the process to end.
fn mpi_calls() -> std::sync::MutexGuard<'static, ()> {
    let guard = super::launch::MPI_LOCK.lock_unpoisoned();
    if super::launch::FINALIZED.load(Ordering::Acquire) {
        drop(guard);
        loop {
            std::thread::park(); // the thread that finalized exits the process
        }
    }
    guard
}

/// The jobs rank 0 answered itself because an input of theirs timed out (`tag::SKIP`): every
/// job numbered up to the word. The rank skips what is left of them, answering at once, so
/// a rank freed from a hung input never runs again what other ranks took over.
#[derive(Default)]
struct Skip(AtomicU64);

impl Skip {
    /// Takes in a skip message's body (the newest skipped job's id).
    fn raise(&self, body: &[u8]) {
        if let Some(upto) = body.get(..8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes) {
            self.0.fetch_max(upto, Ordering::AcqRel);
        }
    }

    /// Whether job `id` is to be skipped.
    fn covers(&self, id: u64) -> bool {
        id <= self.0.load(Ordering::Acquire)
    }
}

/// The running job's finished results that rank 0 has not been sent yet, shared with the
/// heartbeat thread: the main thread sends them in bunches of about [`BUNCH_TIME`], and when
/// one input has run for a whole heartbeat period (a long or hung input) the heartbeat thread
/// sends what finished before it. So a result that finished more than a period before its
/// input's job was timed out, skipped or lost has reached rank 0, and is never run again.
#[derive(Default)]
struct Unsent {
    /// The job.
    id: u64,
    /// The index in the job of the first result held.
    first: u32,
    /// How many results are held.
    count: u32,
    /// Their encodings, in order.
    bytes: Vec<u8>,
    /// The core the main thread last ran on (rank 0's placement hint).
    cpu: Option<u32>,
}

impl Unsent {
    /// Starts holding job `id`'s results.
    fn begin(&mut self, id: u64) {
        (self.id, self.first, self.count) = (id, 0, 0);
        self.bytes.clear();
    }

    /// Sends the held results as one message (`retire` and `stopped` on the job's last) and
    /// starts holding the next ones.
    fn send(&mut self, world: &SimpleCommunicator, retire: Option<String>, stopped: bool) -> Result<(), String> {
        let part =
            FromWorker::Results { id: self.id, first: self.first, count: self.count, retire, stopped, cpu: self.cpu };
        send(world, tag::RESULTS, &part, &self.bytes)?;
        self.first += self.count;
        self.count = 0;
        self.bytes.clear();
        Ok(())
    }
}

/// Serves pools until rank 0 says the program ends; returns whether its exit message said
/// ranks were lost (see `launch::finalize_bound`).
pub(super) fn serve(tasks: &Tasks, world: &SimpleCommunicator) -> Result<bool, String> {
    let root = world.process_at_rank(0);
    loop {
        let (bytes, status) = next_message(world);
        match status.tag() {
            tag::EXIT => return Ok(super::launch::exit_after_loss(&bytes)),
            tag::SETUP => {
                if let Some(exit) = serve_pool(tasks, world, &bytes)? {
                    return Ok(exit);
                }
            }
            tag::STOP => super::poll::send(&root, tag::STOPPED, &[0u8]),
            other => return Err(format!("unexpected message (tag {other}) while idle")),
        }
    }
}

/// A message's frame: the wire's frame without its length prefix.
pub(super) fn frame<H: serde::Serialize>(header: &H, body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(body.len() + 64);
    wire::write_frame(&mut out, header, body).map_err(|e| e.to_string())?;
    out.drain(..4);
    Ok(out)
}

fn send(world: &SimpleCommunicator, tag: i32, header: &FromWorker, body: &[u8]) -> Result<(), String> {
    let bytes = frame(header, body)?;
    let _mpi = mpi_calls();
    super::poll::send(&world.process_at_rank(0), tag, &bytes);
    Ok(())
}

/// Where this rank stands, for its heartbeat: `job id (low 32 bits) << 32 | phase`, with
/// phase `2k + 1` while input `k` of the job runs and 0 between jobs (the process kind's
/// progress word). One store per input and no clock read: the heartbeat thread times the
/// word itself.
#[derive(Default)]
struct Running(AtomicU64);

impl Running {
    /// Whether an input runs now.
    fn busy(word: u64) -> bool {
        word % 2 == 1
    }

    fn start(&self, id: u64, k: usize) {
        self.0.store(((id & 0xFFFF_FFFF) << 32) | (2 * k as u64 + 1), Ordering::Release);
    }

    fn idle(&self) {
        self.0.store(0, Ordering::Release);
    }
}

/// A heartbeat's body: the running word and for how long it has not changed, in µs (both
/// little-endian u64). The heartbeat thread samples the word every
/// [`super::HEARTBEAT_EVERY`], so the time it reports is short by at most one period.
pub(super) fn heartbeat_body(word: u64, unchanged: Duration) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&word.to_le_bytes());
    out[8..].copy_from_slice(&(unchanged.as_micros() as u64).to_le_bytes());
    out
}

/// Reads a heartbeat's body: `(job id low 32 bits, running input, how long it ran)`, or
/// `None` when no input runs (or the body is an old, empty one).
pub(super) fn read_heartbeat(body: &[u8]) -> Option<(u32, usize, Duration)> {
    let word = u64::from_le_bytes(body.get(..8)?.try_into().ok()?);
    let us = u64::from_le_bytes(body.get(8..16)?.try_into().ok()?);
    let phase = word as u32;
    (phase % 2 == 1).then_some(((word >> 32) as u32, (phase / 2) as usize, Duration::from_micros(us)))
}

/// Sends rank 0 a heartbeat every [`super::HEARTBEAT_EVERY`] until dropped, carrying which
/// input of which job runs and since when (rank 0 times out that input from it). Between
/// beats it takes in skip messages (`tag::SKIP`: the main thread may be stuck in a hung
/// input), and when rank 0's program has ended (its exit message waits) while an input still
/// runs here, it ends the rank after [`super::EXIT_GRACE`].
struct Heartbeat {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    fn start(running: Arc<Running>, skip: Arc<Skip>, unsent: Arc<std::sync::Mutex<Unsent>>) -> Heartbeat {
        if !super::launch::THREAD_MULTIPLE.load(Ordering::Acquire) {
            // Without MPI_THREAD_MULTIPLE no second thread may call MPI: no heartbeat (rank
            // 0 then hears from this rank only through its results).
            return Heartbeat { stop: None, thread: None };
        }
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("polycompute-heartbeat".into())
            .spawn(move || {
                let world = SimpleCommunicator::world();
                let root = world.process_at_rank(0);
                let mut seen = (0u64, Instant::now());
                let mut program_ended: Option<Instant> = None;
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(super::HEARTBEAT_EVERY)
                {
                    let word = running.0.load(Ordering::Acquire);
                    if word != seen.0 {
                        seen = (word, Instant::now());
                    } else if Running::busy(word) {
                        // One input has run for a whole period: what finished before it goes
                        // now, ahead of this heartbeat (rank 0 may time that input out next).
                        let mut held = unsent.lock_unpoisoned();
                        if held.count > 0 && held.send(&world, None, false).is_err() {
                            // A frame that cannot be written now cannot be later either;
                            // the main thread meets the same error on its next send.
                        }
                    }
                    let body = heartbeat_body(word, seen.1.elapsed());
                    super::poll::send(&root, tag::HEARTBEAT, &body);
                    while let Some(probed) = super::poll::probe_tag(&root, tag::SKIP) {
                        skip.raise(&super::poll::receive(probed).0);
                    }
                    // The exit message is only looked at: an idle main thread takes it itself.
                    if program_ended.is_none() && root.immediate_probe_with_tag(tag::EXIT).is_some() {
                        program_ended = Some(Instant::now());
                    }
                    if program_ended.is_some_and(|t| t.elapsed() >= super::EXIT_GRACE) && Running::busy(word) {
                        end_busy_rank(&world, seen.1.elapsed());
                    }
                }
            })
            .ok();
        Heartbeat { stop: Some(stop), thread }
    }
}

/// Rank 0's program ended [`super::EXIT_GRACE`] ago and a task still runs here (rank 0 has
/// answered it already, as timed out or shut down): ends this rank now, finalizing MPI within
/// its bound, so that the launch ends within a bound of rank 0's end. Runs on the heartbeat
/// thread; the main thread makes no MPI call meanwhile (`mpi_calls`).
fn end_busy_rank(world: &SimpleCommunicator, running_for: Duration) -> ! {
    let lost = {
        let _mpi = super::launch::MPI_LOCK.lock_unpoisoned();
        let root = world.process_at_rank(0);
        super::poll::probe_tag(&root, tag::EXIT)
            .map(|probed| super::launch::exit_after_loss(&super::poll::receive(probed).0))
            .unwrap_or(false)
    };
    eprintln!(
        "polycompute worker rank {}: rank 0's program ended over {:?} ago while a task still ran here (for {running_for:.1?}); \
         ending the rank without it (rank 0 already answered that task)",
        world.rank(),
        super::EXIT_GRACE
    );
    super::launch::finalize_within(super::launch::finalize_bound(lost), 0);
    // SAFETY: `_exit` ends the process at once; the main thread is inside a task, and no
    // destructor or exit handler may run under it.
    unsafe { libc::_exit(0) }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One pool: from its setup to its stop. `Some(lost)` when rank 0's program ended instead
/// (`lost`: its exit message said ranks were lost).
fn serve_pool(tasks: &Tasks, world: &SimpleCommunicator, setup: &[u8]) -> Result<Option<bool>, String> {
    let root = world.process_at_rank(0);
    let setup = wire::split_frame::<ToWorker>(setup).map_err(|e| e.to_string())?.0;
    let ToWorker::Setup { worker, kind, ordinal, seed, spill_over, broadcast_type, broadcast, tasks: theirs, .. } =
        setup
    else {
        return Err("rank 0 sent a setup that is not one".into());
    };
    let mismatches = tasks.mismatches(&theirs);
    let failed = |message: String| send(world, tag::READY, &FromWorker::StartFailed { message }, &[]).map(|()| None);
    if !mismatches.is_empty() {
        return failed(format!(
            "rank {}'s tasks differ from rank 0's: {}; every rank must run the same program",
            world.rank(),
            mismatches.join("; ")
        ));
    }
    let device = match Device::open(kind, ordinal) {
        Ok(d) => d,
        Err(e) => return failed(format!("cannot open {kind}:{ordinal} on rank {}: {e}", world.rank())),
    };
    let broadcast = BroadcastData {
        value: None,
        type_name: broadcast_type,
        bytes: broadcast.map(std::sync::Arc::new),
        near_bytes: None,
    };
    let spill_over = usize::try_from(spill_over).unwrap_or(usize::MAX);
    let mut ctx = WorkerContext::new(worker, device.clone(), true, seed, broadcast);
    send(world, tag::READY, &FromWorker::Ready { device: device.id() }, &[])?;
    let running = Arc::new(Running::default());
    let skip = Arc::new(Skip::default());
    let unsent = Arc::new(std::sync::Mutex::new(Unsent::default()));
    let heartbeat = Heartbeat::start(running.clone(), skip.clone(), unsent.clone());

    // One input's result, before it joins the unsent ones.
    let mut result = Vec::new();
    // Results per bunch, learnt from how long tasks take (see BUNCH_TIME).
    let bunch = &mut 1usize;
    loop {
        let (bytes, status) = next_message(world);
        match status.tag() {
            tag::JOB => {}
            tag::STOP => {
                // No heartbeat may follow the stop's answer.
                drop(heartbeat);
                super::poll::send(&root, tag::STOPPED, &[0u8]);
                return Ok(None);
            }
            tag::EXIT => return Ok(Some(super::launch::exit_after_loss(&bytes))),
            tag::SKIP => {
                skip.raise(&bytes);
                continue;
            }
            other => return Err(format!("unexpected message (tag {other}) while serving")),
        }
        let (header, body) = wire::split_frame::<ToWorker>(&bytes).map_err(|e| e.to_string())?;
        let ToWorker::Job { id, task, first_index, attempt, count, stream } = header else {
            return Err("unexpected setup frame".into());
        };
        let entry = tasks.get(&task);
        unsent.lock_unpoisoned().begin(id);
        let mut retire = None;
        // Results stream back in bunches of about BUNCH_TIME (one per input for tasks of a
        // millisecond or more), so that when this rank is lost rank 0 knows which inputs
        // finished and charges only the one that ran; the heartbeat sends a bunch that a
        // long input holds up (see `Unsent`).
        let (mut timed, mut since) = (0usize, Instant::now());
        let mut skipped = false;
        // Results go to rank 0, maybe on another host: shared arrays in them travel as data.
        crate::shared::carry::as_data(|| -> Result<(), String> {
            for (k, input) in wire::inputs(body).enumerate().take(count as usize) {
                if skip.covers(id) {
                    skipped = true; // rank 0 answered the rest of this job: other ranks run it
                    break;
                }
                running.start(id, k);
                ctx.begin(first_index + k as u64, attempt, stream.offset(k as u64));
                result.clear();
                let failure = wire::push_result(&mut result, |out| {
                    let input = input.map_err(|e| Failure::Serialization(e.to_string()))?;
                    let Some(t) = entry else { return Err(Failure::UnknownTask(tasks.known())) };
                    input
                        .with(false, |bytes| t.run_encoded(&mut ctx, bytes, out, spill_over))
                        .map_err(|why| Failure::Serialization(format!("the input: {why}")))?
                });
                if let Some(Failure::Failed { sticky: true, message }) = failure {
                    retire = Some(format!("sticky device fault: {message}"));
                }
                let mut held = unsent.lock_unpoisoned();
                held.bytes.extend_from_slice(&result);
                held.count += 1;
                timed += 1;
                if retire.is_some() || k + 1 == count as usize {
                    break;
                }
                if held.count as usize >= *bunch {
                    // The clock is read once per bunch: per task it would cost more than a
                    // no-op task.
                    let now = Instant::now();
                    let per_task = (now - since).as_nanos() as usize / timed;
                    *bunch = (BUNCH_TIME.as_nanos() as usize / per_task.max(1)).clamp(1, 4096);
                    (since, timed) = (now, 0);
                    held.cpu = crate::sys::cpu::current();
                    held.send(world, None, false)?;
                }
            }
            Ok(())
        })?;
        running.idle();
        // The job's last results; `stopped` when the rest was skipped.
        let mut held = unsent.lock_unpoisoned();
        held.cpu = crate::sys::cpu::current();
        held.send(world, retire, skipped)?;
    }
}

/// About how long a bunch of results waits on a rank before it is sent (the process
/// workers' figure): tasks of this or longer send each result as it finishes.
const BUNCH_TIME: Duration = Duration::from_millis(1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heartbeat_names_the_running_input_and_its_time() {
        let running = Running::default();
        let idle = heartbeat_body(running.0.load(Ordering::Acquire), Duration::from_millis(5));
        assert_eq!(read_heartbeat(&idle), None, "nothing runs before the first input");
        running.start(0x1_0000_0007, 41);
        let body = heartbeat_body(running.0.load(Ordering::Acquire), Duration::from_micros(300_250));
        assert_eq!(read_heartbeat(&body), Some((7, 41, Duration::from_micros(300_250))));
        running.idle();
        assert_eq!(read_heartbeat(&heartbeat_body(running.0.load(Ordering::Acquire), Duration::ZERO)), None);
        assert_eq!(read_heartbeat(&[]), None, "an empty heartbeat says nothing runs");
    }
}
