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

/// The next message from rank 0, polled (see `idle`: a blocking receive would spin a
/// core for as long as it waits).
fn next_message(world: &SimpleCommunicator) -> (Vec<u8>, mpi::point_to_point::Status) {
    let root = world.process_at_rank(0);
    let idle = super::idle::Idle::new();
    loop {
        if let Some(probed) = super::poll::probe(&root) {
            return super::poll::receive(probed);
        }
        idle.pause();
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
/// input of which job runs and since when (rank 0 times out that input from it).
struct Heartbeat {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    fn start(running: Arc<Running>) -> Heartbeat {
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
                let mut seen = (0u64, Instant::now());
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(super::HEARTBEAT_EVERY)
                {
                    let word = running.0.load(Ordering::Acquire);
                    if word != seen.0 {
                        seen = (word, Instant::now());
                    }
                    let body = heartbeat_body(word, seen.1.elapsed());
                    super::poll::send(&world.process_at_rank(0), tag::HEARTBEAT, &body);
                }
            })
            .ok();
        Heartbeat { stop: Some(stop), thread }
    }
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
    let broadcast = BroadcastData { value: None, type_name: broadcast_type, bytes: broadcast.map(std::sync::Arc::new) };
    let spill_over = usize::try_from(spill_over).unwrap_or(usize::MAX);
    let mut ctx = WorkerContext::new(worker, device.clone(), true, seed, broadcast);
    send(world, tag::READY, &FromWorker::Ready { device: device.id() }, &[])?;
    let running = Arc::new(Running::default());
    let heartbeat = Heartbeat::start(running.clone());

    let mut results = Vec::new();
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
            other => return Err(format!("unexpected message (tag {other}) while serving")),
        }
        let (header, body) = wire::split_frame::<ToWorker>(&bytes).map_err(|e| e.to_string())?;
        let ToWorker::Job { id, task, first_index, attempt, count, stream } = header else {
            return Err("unexpected setup frame".into());
        };
        let entry = tasks.get(&task);
        results.clear();
        let mut retire = None;
        // Results go to rank 0, maybe on another host: shared arrays in them travel as data.
        crate::shared::carry::as_data(|| {
            for (k, input) in wire::inputs(body).enumerate().take(count as usize) {
                running.start(id, k);
                ctx.begin(first_index + k as u64, attempt, stream.offset(k as u64));
                let failure = wire::push_result(&mut results, |out| {
                    let input = input.map_err(|e| Failure::Serialization(e.to_string()))?;
                    let Some(t) = entry else { return Err(Failure::UnknownTask(tasks.known())) };
                    input
                        .with(false, |bytes| t.run_encoded(&mut ctx, bytes, out, spill_over))
                        .map_err(|why| Failure::Serialization(format!("the input: {why}")))?
                });
                if let Some(Failure::Failed { sticky: true, message }) = failure {
                    retire = Some(format!("sticky device fault: {message}"));
                }
            }
        });
        running.idle();
        send(
            world,
            tag::RESULTS,
            &FromWorker::Results { id, first: 0, count, retire, stopped: false, cpu: crate::sys::cpu::current() },
            &results,
        )?;
    }
}

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
