//! Rank 0's one communication thread: sends each worker rank its setup, then feeds the
//! ranks jobs from the pool's queue as they finish earlier ones (a dynamic work queue: a
//! rank gets more work only when it has little left) and delivers the results they send
//! back. Every send is non-blocking (a rank busy in a long task never holds up the
//! others); results are found with a non-blocking matched probe.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpi::request::Request;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::idle::Idle;
use super::launch::{self, FINALIZED, MPI_LOCK};
use super::poll::{self, probe, probe_tag};
use super::tag;
use super::timeout::{self, InFlight};
use super::worker::frame;
use crate::error::TaskErrorKind;
use crate::job::Inputs;
use crate::schedule::{Next, Wait};
use crate::state::{PoolState, Slot};
use crate::wire::{self, FromWorker, ToWorker, WireResult};
use polycompute_core::sync::LockUnpoisoned;

/// A worker rank as rank 0 sees it.
struct Rank {
    /// Its slot in the pool (rank - 1).
    slot: Arc<Slot>,
    ready: bool,
    /// The core it sent its last results from (see [`pick`]).
    cpu: Option<u32>,
    inflight: VecDeque<InFlight>,
    /// When it last sent anything (a result, a heartbeat).
    heard: Instant,
    /// What its last heartbeat said runs: (job id's low 32 bits, input).
    running: Option<(u32, usize)>,
    /// It stopped answering within its lease: it gets nothing more.
    lost: bool,
    /// It is on rank 0's node: shared arrays in its inputs travel as handles.
    near: bool,
}

impl Rank {
    fn rank(&self) -> usize {
        self.slot.id + 1
    }
}

/// A send in progress and its buffer (leaked until the send completes).
struct Pending {
    request: Request<'static, [u8]>,
    buf: &'static [u8],
}

/// The non-blocking sends in progress.
#[derive(Default)]
struct Sends(Vec<Pending>);

// SAFETY: an MPI request is a handle that MPI lets any thread complete under
// MPI_THREAD_MULTIPLE (or, with less, one thread at a time: every MPI call here is made
// under `MPI_LOCK`); the buffers are plain bytes owned by the send until it completes.
unsafe impl Send for Sends {}

impl Sends {
    fn send(&mut self, world: &SimpleCommunicator, rank: usize, tag: i32, bytes: Vec<u8>) {
        let buf: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let request = world.process_at_rank(rank as i32).immediate_send_with_tag(mpi::request::StaticScope, buf, tag);
        self.0.push(Pending { request, buf });
    }

    /// Completes what has completed; true when nothing is left.
    fn progress(&mut self) -> bool {
        let mut i = 0;
        while i < self.0.len() {
            let p = self.0.swap_remove(i);
            match p.request.test() {
                Ok(_) => {
                    // SAFETY: `buf` came from `Box::leak` in `send`, and its send completed:
                    // MPI reads it no more and no other reference to it is left.
                    drop(unsafe { Box::from_raw(p.buf as *const [u8] as *mut [u8]) });
                }
                Err(request) => {
                    self.0.push(Pending { request, buf: p.buf });
                    let last = self.0.len() - 1;
                    self.0.swap(i, last);
                    i += 1;
                }
            }
        }
        self.0.is_empty()
    }

    /// Sends that never completed (their rank died): their requests and buffers are leaked,
    /// as MPI may still read them.
    fn abandon(self) {
        for p in self.0 {
            std::mem::forget(p.request);
        }
    }
}

/// What rank 0's communication keeps between steps. The communication thread steps it;
/// so does a caller waiting for a result (see [`drive_until`]), which saves the round trip
/// two thread hops while the thread steps aside.
#[derive(Default)]
pub(super) struct Comm {
    ranks: Vec<Rank>,
    sends: Sends,
    next_id: u64,
    /// What one input of each task costs (ns, moving average): a job is sent ahead of the
    /// rank's current work only while that work is expected to take under a millisecond.
    cost: HashMap<&'static str, u64>,
    /// Setup is over and the pool not stopped: steps may run.
    serving: bool,
    /// The queue's stop was taken (by whichever thread stepped), or MPI is finalized.
    stop: bool,
}

impl Comm {
    /// Whether a rank with work in flight last answered from core `here` (where it then
    /// runs only while the thread on `here` yields).
    fn works_beside(&self, here: Option<u32>) -> bool {
        here.is_some() && self.ranks.iter().any(|r| !r.inflight.is_empty() && r.cpu == here)
    }
}

/// A pool's [`Comm`], and how many callers are driving it.
#[derive(Default)]
pub(crate) struct Shared {
    comm: Mutex<Comm>,
    drivers: AtomicUsize,
}

/// The communication thread of `pool`.
pub(super) fn run(pool: Arc<PoolState>, shared: Arc<Shared>) {
    let world = SimpleCommunicator::world();
    {
        let mut comm = shared.comm.lock_unpoisoned();
        let now = Instant::now();
        comm.ranks = pool
            .slots
            .iter()
            .map(|s| Rank {
                slot: s.clone(),
                ready: false,
                cpu: None,
                inflight: VecDeque::new(),
                heard: now,
                running: None,
                lost: false,
                near: super::mpi_world().is_some_and(|w| w.beside_root(s.id + 1)),
            })
            .collect();
        let Comm { ranks, sends, .. } = &mut *comm;
        setup(&pool, &world, ranks, sends);
        comm.serving = true;
    }
    let mut idle = Idle::new();
    loop {
        if shared.drivers.load(Ordering::Acquire) > 0 && !pool.stopping() {
            // A waiting caller steps the pool: stay out of its way (and off its core).
            std::thread::sleep(Duration::from_micros(50));
            continue;
        }
        let mut comm = shared.comm.lock_unpoisoned();
        let busy = step(&pool, &world, &mut comm);
        let stop = comm.stop;
        drop(comm);
        if stop || pool.stopping() {
            break;
        }
        // Never a blocking wait on the queue here: it would take the job a waiting caller
        // is about to step, and hand it back a wake-up later.
        if busy {
            idle.reset();
        } else {
            idle.pause();
        }
    }
    let mut comm = shared.comm.lock_unpoisoned();
    comm.serving = false;
    let Comm { ranks, sends, .. } = &mut *comm;
    stop(&pool, &world, ranks, sends);
}

/// How long a waiting caller steps the pool before it blocks (and the communication
/// thread takes over again): a short task's result comes well within it, also on a loaded
/// machine where a rank waits a while for a core.
const DRIVE_FOR: Duration = Duration::from_millis(1);

/// A caller waits for a result: it steps the pool itself until `ready` or for up to
/// [`DRIVE_FOR`] (spinning for the spin window, then yielding between steps; yielding
/// from the start while a rank with work in flight last answered from this core).
pub(crate) fn drive_until(shared: &Shared, pool: &PoolState, ready: &dyn Fn() -> bool) {
    if ready() {
        return;
    }
    shared.drivers.fetch_add(1, Ordering::AcqRel);
    let world = SimpleCommunicator::world();
    let start = Instant::now();
    loop {
        let waited = start.elapsed();
        if ready() || waited > DRIVE_FOR || pool.stopping() {
            break;
        }
        let mut beside = false;
        if let Ok(mut comm) = shared.comm.try_lock() {
            if comm.serving && !comm.stop {
                step(pool, &world, &mut comm);
                beside = comm.works_beside(crate::sys::cpu::current());
            }
        }
        if waited < crate::spin::WINDOW && !beside {
            std::hint::spin_loop();
        } else {
            // The rank working for this caller shares its core (it runs only when this
            // thread yields), or the wait is long: let others run.
            std::thread::yield_now();
        }
    }
    shared.drivers.fetch_sub(1, Ordering::AcqRel);
}

/// Sends each rank the pool's setup and waits for every rank's answer.
fn setup(pool: &PoolState, world: &SimpleCommunicator, ranks: &mut [Rank], sends: &mut Sends) {
    let _mpi = MPI_LOCK.lock_unpoisoned();
    if FINALIZED.load(Ordering::Acquire) {
        return;
    }
    for r in ranks.iter_mut() {
        if launch::is_lost(r.rank()) {
            r.lost = true;
            pool.slot_dead(&r.slot, format!("rank {} was lost earlier in this launch", r.rank()));
            continue;
        }
        let setup = ToWorker::Setup {
            worker: r.slot.id,
            kind: r.slot.kind,
            ordinal: r.slot.ordinal,
            seed: pool.cfg.seed,
            spill_over: u64::MAX,
            broadcast_type: pool.broadcast.type_name.clone(),
            broadcast: if r.near { pool.broadcast.near_bytes.as_ref() } else { None }
                .or(pool.broadcast.bytes.as_ref())
                .map(|b| b.to_vec()),
            tasks: pool.tasks.signatures(),
            progress: None,
        };
        match frame(&setup, &[]) {
            Ok(bytes) => sends.send(world, r.slot.id + 1, tag::SETUP, bytes),
            Err(e) => pool.slot_dead(&r.slot, format!("cannot encode the setup: {e}")),
        }
    }
    let deadline = Instant::now() + pool.cfg.start_timeout;
    let mut waiting = ranks.iter().filter(|r| !r.slot.dead.load(Ordering::Acquire)).count();
    while waiting > 0 && Instant::now() < deadline && !pool.stopping() {
        sends.progress();
        let Some(probed) = probe_tag(&world.any_process(), tag::READY) else {
            std::thread::yield_now();
            continue;
        };
        let (bytes, status) = poll::receive(probed);
        let Some(r) = ranks.get_mut(status.source_rank() as usize - 1) else { continue };
        waiting -= 1;
        match wire::split_frame::<FromWorker>(&bytes).map(|(h, _)| h) {
            Ok(FromWorker::Ready { .. }) => r.ready = true,
            Ok(FromWorker::StartFailed { message }) => pool.slot_dead(&r.slot, message),
            other => pool.slot_dead(&r.slot, format!("unexpected answer to the setup: {other:?}")),
        }
    }
    for r in ranks.iter_mut() {
        r.heard = Instant::now();
        if !r.ready {
            pool.slot_dead(&r.slot, format!("rank {} did not answer the setup in time", r.rank()));
        }
    }
}

/// One step: receives what the ranks sent, fails overdue tasks, marks silent ranks lost,
/// and feeds the ranks from the queue. Returns whether anything came or went.
fn step(pool: &PoolState, world: &SimpleCommunicator, comm: &mut Comm) -> bool {
    let Comm { ranks, sends, next_id, cost, stop, .. } = comm;
    let _mpi = MPI_LOCK.lock_unpoisoned();
    if FINALIZED.load(Ordering::Acquire) {
        *stop = true;
        return false;
    }
    {
        let mut busy = false;
        while let Some(probed) = probe(&world.any_process()) {
            let (bytes, status) = poll::receive(probed);
            let source = status.source_rank() as usize;
            if let Some(r) = ranks.get_mut(source.wrapping_sub(1)) {
                r.heard = Instant::now();
            }
            match status.tag() {
                tag::RESULTS => {
                    busy = true;
                    receive(pool, ranks, cost, &bytes, source);
                }
                tag::HEARTBEAT => {
                    let beat = super::worker::read_heartbeat(&bytes);
                    if let Some(r) = ranks.get_mut(source.wrapping_sub(1)) {
                        r.running = beat.map(|(job, k, _)| (job, k));
                    }
                    if let (Some(r), Some((job, k, ran))) = (ranks.get_mut(source.wrapping_sub(1)), beat) {
                        if let Some(upto) = timeout::heartbeat(pool, &r.slot, &mut r.inflight, job, k, ran) {
                            sends.send(world, source, tag::SKIP, upto.to_le_bytes().to_vec());
                        }
                    }
                }
                other => tracing::debug!("polycompute pool: rank {source} sent tag {other} while serving; dropped"),
            }
        }
        timeouts(pool, ranks);
        leases(pool, ranks);
        let here = crate::sys::cpu::current();
        while let Some(r) = pick(pool, cost, ranks, here) {
            let gen = r.slot.gen.load(Ordering::Acquire);
            let job = match pool.next_job(&r.slot, gen, Wait::Poll) {
                Next::Job(job) => job,
                Next::Stop => {
                    *stop = true;
                    break;
                }
                Next::Empty => break,
            };
            busy = true;
            let Inputs::Encoded { body, near, .. } = &job.inputs else {
                let kind = TaskErrorKind::Serialization { message: "internal: a job with unencoded inputs".into() };
                job.ctl.fail_rest(Some((r.slot.id, r.slot.device_id)), job.attempt, kind);
                continue;
            };
            *next_id += 1;
            let header = ToWorker::Job {
                id: *next_id,
                task: job.task.name().to_string(),
                first_index: job.ctl.first_index,
                attempt: job.attempt,
                count: job.ctl.len as u32,
                stream: job.ctl.stream(0),
            };
            // A rank on this node maps the shared arrays an input names; others get their data.
            let body = if r.near { near.as_deref().unwrap_or(body) } else { body };
            match frame(&header, body) {
                Ok(bytes) => sends.send(world, r.slot.id + 1, tag::JOB, bytes),
                Err(message) => {
                    job.ctl.fail_rest(
                        Some((r.slot.id, r.slot.device_id)),
                        job.attempt,
                        TaskErrorKind::Serialization { message },
                    );
                    continue;
                }
            }
            let now = Instant::now();
            r.inflight.push_back(InFlight { job, id: *next_id, started: now, busy_from: now, timed_out: false });
        }
        sends.progress();
        busy
    }
}

/// The rank the next job goes to: one that may take more work (ready, under the pool's
/// depth, its work in flight expected to take under a millisecond, none of it timed out),
/// the least loaded first, one job at a time.
///
/// Among equally loaded ranks, one that last answered from another core than `here` (the
/// stepping thread's, which waits on the result) goes first. Where ranks outnumber cores
/// and the launcher binds none (`mpirun --oversubscribe`), the kernel may put rank 0 and
/// a worker rank on one core: both poll, and each hop of a round trip then waits for the
/// other to yield (a no-op round trip takes 6.5 µs on the 2-core development VM, against
/// 3.4 µs on two cores; 20 µs and 5.5 µs before `poll` and `launch`'s yielding changes).
/// The kernel seldom moves a busy poller, so without this a run kept whichever placement
/// it started with, and about one run in three was the slow one.
fn pick<'a>(
    pool: &PoolState,
    cost: &HashMap<&'static str, u64>,
    ranks: &'a mut [Rank],
    here: Option<u32>,
) -> Option<&'a mut Rank> {
    ranks
        .iter_mut()
        .filter(|r| r.ready && r.inflight.len() < pool.cfg.depth && ahead_ok(cost, &r.inflight))
        // A rank still running a task that timed out is stuck: its work went elsewhere.
        .filter(|r| !r.inflight.iter().any(|f| f.timed_out))
        .min_by_key(|r| preference(r.inflight.len(), r.cpu, here))
}

/// A rank's place in [`pick`]'s order (lower first): its jobs in flight, then whether it
/// last answered from the core `here`.
fn preference(inflight: usize, cpu: Option<u32>, here: Option<u32>) -> (usize, bool) {
    (inflight, here.is_some() && cpu == here)
}

/// Whether a rank's work in flight is expected to take under a millisecond.
fn ahead_ok(cost: &HashMap<&'static str, u64>, inflight: &VecDeque<InFlight>) -> bool {
    let expected = inflight.iter().try_fold(0u64, |sum, f| {
        cost.get(f.job.task.name()).map(|ns| sum.saturating_add(ns.saturating_mul(f.job.ctl.len as u64)))
    });
    inflight.is_empty() || expected.is_some_and(|ns| ns < 1_000_000)
}

/// Marks lost every rank silent for longer than the lease (ranks send heartbeats only
/// with `MPI_THREAD_MULTIPLE`; without it a long task would look like silence).
fn leases(pool: &PoolState, ranks: &mut [Rank]) {
    if !launch::THREAD_MULTIPLE.load(Ordering::Acquire) {
        return;
    }
    let lease = pool.cfg.rank_lease;
    for r in ranks.iter_mut().filter(|r| r.ready && !r.lost) {
        let silent = r.heard.elapsed();
        if silent > lease {
            lose(pool, r, silent);
        }
    }
}

/// Rank `r` stopped answering: it is marked lost (for this pool and the launch's later
/// ones) and gets nothing more. Of the job it was running, only the input that ran is
/// charged an attempt and queued again while `retries` allows (else it fails as `Crashed`):
/// the first input whose result had not come (results stream back as they finish, see
/// `worker::BUNCH_TIME`), or a later one its last heartbeat named. The job's other inputs
/// and the jobs sent ahead to it go back to the queue uncharged.
fn lose(pool: &PoolState, r: &mut Rank, silent: Duration) {
    r.lost = true;
    r.ready = false;
    let rank = r.rank();
    launch::mark_lost(rank);
    let host = super::mpi_world().and_then(|w| w.ranks.get(rank)).map_or("?", |m| m.host.as_str());
    let message = format!(
        "worker rank {rank} on {host} stopped answering: silent for {silent:.1?}, over its lease of {:?}; \
         marked lost, the task it was running charged an attempt (PoolBuilder::retries allows {}) and its \
         other work queued again, no more work sent to it{}",
        pool.cfg.rank_lease,
        pool.cfg.retries,
        if launch::recovery() { "" } else { " (without mpirun --enable-recovery the launcher may end the job)" }
    );
    tracing::warn!("polycompute pool: {message}");
    eprintln!("polycompute pool: warning: {message}");
    pool.slot_dead(&r.slot, message);
    for (i, f) in r.inflight.drain(..).enumerate() {
        if f.timed_out || f.job.ctl.is_done() {
            continue;
        }
        if i == 0 {
            // The job the rank was running: charge the one input that ran.
            let named = r.running.filter(|&(id, _)| id == f.id as u32).map(|(_, k)| k);
            let running = |rest: std::ops::Range<usize>| named.filter(|k| rest.contains(k)).or(Some(rest.start));
            pool.charge_lost(&r.slot, &f.job, running, TaskErrorKind::Crashed { code: None, signal: None });
            continue;
        }
        pool.requeue(f.job);
    }
}

/// The fallback for ranks without heartbeats (see [`timeout`]); with them, a running
/// input's heartbeat times it out.
fn timeouts(pool: &PoolState, ranks: &mut [Rank]) {
    if launch::THREAD_MULTIPLE.load(Ordering::Acquire) {
        return;
    }
    for r in ranks.iter_mut() {
        timeout::whole_jobs(pool, &r.slot, &mut r.inflight);
    }
}

/// The rank's head job is answered: the next one starts now (its clock for the timeout).
fn pop_head(r: &mut Rank) {
    r.inflight.pop_front();
    if let Some(next) = r.inflight.front_mut() {
        (next.started, next.busy_from) = (Instant::now(), Instant::now());
    }
}

/// Receives a results message from `source` (some of the inputs of the rank's head job,
/// in order) and delivers it; the job's last message pops it.
fn receive(pool: &PoolState, ranks: &mut [Rank], cost: &mut HashMap<&'static str, u64>, bytes: &[u8], source: usize) {
    let Some(r) = ranks.get_mut(source.wrapping_sub(1)) else { return };
    let slot = r.slot.clone();
    let who = (slot.id, slot.device_id);
    let parsed = wire::split_frame::<FromWorker>(bytes);
    let Ok((FromWorker::Results { id, first, count, retire, stopped, cpu }, body)) = parsed else {
        tracing::error!("polycompute pool: rank {source} sent a malformed results message");
        return;
    };
    r.cpu = cpu;
    let Some(head) = r.inflight.front_mut() else { return };
    if head.id != id {
        tracing::error!("polycompute pool: rank {source} answered job {id}, not the one sent");
    }
    if let Some(why) = &retire {
        tracing::warn!("polycompute pool: rank {source}: {why}");
    }
    let (first, count) = (first as usize, count as usize);
    // A job's results come in bunches; its last message ends it (a skipped job's, a
    // retiring rank's or a malformed one's may end it early).
    let last = stopped || retire.is_some() || first + count >= head.job.ctl.len;
    let took = head.busy_from.elapsed().as_nanos() as u64;
    head.busy_from = Instant::now();
    if head.timed_out {
        if last {
            pop_head(r);
        }
        return;
    }
    let (job, ctl) = (&head.job, &head.job.ctl);
    let mut out = Vec::with_capacity(count);
    let mut failed = 0;
    for (i, item) in wire::results(body).enumerate().take(count.min(ctl.len.saturating_sub(first))) {
        let k = first + i;
        let result = match item {
            Ok(WireResult::Output(encoded)) => encoded
                .with(true, |bytes| job.task.decode_output(bytes))
                .and_then(|decoded| decoded)
                .map_err(|message| ctl.error(k, Some(who), job.attempt, TaskErrorKind::Serialization { message })),
            Ok(WireResult::Failure(f)) => Err(ctl.error(k, Some(who), job.attempt, f.into())),
            Err(e) => {
                Err(ctl.error(k, Some(who), job.attempt, TaskErrorKind::Serialization { message: e.to_string() }))
            }
        };
        failed += result.is_err() as u64;
        out.push(result);
    }
    let got = out.len();
    slot.stats.tasks.fetch_add(got as u64, Ordering::Relaxed);
    slot.stats.failed.fetch_add(failed, Ordering::Relaxed);
    slot.stats.busy_ns.fetch_add(took, Ordering::Relaxed);
    if got > 0 {
        let per_input = took / got as u64;
        let avg = cost.entry(job.task.name()).or_insert(per_input);
        *avg = (3 * *avg + per_input) / 4;
    }
    // A rank answers a job's inputs in order.
    ctl.deliver_from(first, out.into_iter().map(Some).collect());
    if got < count {
        let message = format!("rank {source} sent {got} results where it announced {count}");
        ctl.fail_rest(Some(who), job.attempt, TaskErrorKind::Serialization { message });
    } else if last && first + got < ctl.len {
        // Ended early (a sticky fault retired the rank's device, or a skip rank 0 did not
        // ask for): the inputs that did not run go back to the queue, uncharged.
        pool.requeue_rest(job);
    }
    if last {
        pop_head(r);
    }
}

/// The pool stops: jobs in flight fail as `ShutDown`; every rank is told to stop and
/// answers once it has sent everything it had (which is dropped). The stop waits (up to
/// 5 s) for the answers of the ranks that were idle, so the next pool, or the program's end,
/// finds them idle; a rank still busy in a task (one that timed out, or that the stop
/// answered as `ShutDown`) is not waited for: it answers the stop once its task returns, and
/// at the program's end it is ended after `EXIT_GRACE` (`worker::end_busy_rank`). Its late
/// messages are dropped by the next pool (they name no job of it).
fn stop(pool: &PoolState, world: &SimpleCommunicator, ranks: &mut [Rank], sends: &mut Sends) {
    let busy: Vec<bool> = ranks.iter().map(|r| !r.inflight.is_empty()).collect();
    for r in ranks.iter_mut() {
        for f in r.inflight.drain(..) {
            f.job.ctl.fail_rest(Some((r.slot.id, r.slot.device_id)), f.job.attempt, TaskErrorKind::ShutDown);
        }
    }
    pool.fail_queued(TaskErrorKind::ShutDown);
    let _mpi = MPI_LOCK.lock_unpoisoned();
    if FINALIZED.load(Ordering::Acquire) {
        return;
    }
    for r in ranks.iter().filter(|r| !r.lost) {
        sends.send(world, r.rank(), tag::STOP, vec![0]);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut waiting: Vec<bool> = ranks.iter().zip(&busy).map(|(r, &busy)| !r.lost && !busy).collect();
    let mut left = waiting.iter().filter(|&&w| w).count();
    while left > 0 && Instant::now() < deadline {
        sends.progress();
        match probe(&world.any_process()) {
            Some(probed) => {
                let (_, status) = poll::receive(probed);
                let source = (status.source_rank() as usize).wrapping_sub(1);
                if status.tag() == tag::STOPPED && waiting.get(source).copied().unwrap_or(false) {
                    waiting[source] = false;
                    left -= 1;
                }
            }
            None => std::thread::yield_now(),
        }
    }
    if left > 0 {
        tracing::warn!("polycompute pool: {left} worker rank(s) did not confirm the stop within 5 s");
    }
    if !sends.progress() {
        std::mem::take(sends).abandon();
    }
}

#[cfg(test)]
mod tests {
    use super::preference;

    #[test]
    fn the_least_loaded_rank_first_then_one_off_the_waiting_core() {
        let mut ranks = [(1, Some(0)), (0, Some(0)), (0, Some(1)), (0, None)];
        ranks.sort_by_key(|&(load, cpu)| preference(load, cpu, Some(0)));
        assert_eq!(ranks, [(0, Some(1)), (0, None), (0, Some(0)), (1, Some(0))]);
        // Where the OS does not say, the load alone decides (and ties keep rank order).
        assert_eq!(preference(0, Some(0), None), preference(0, None, None));
        assert!(preference(0, Some(3), None) < preference(1, Some(2), None));
    }
}
