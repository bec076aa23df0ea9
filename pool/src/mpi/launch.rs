//! Launch: whether an MPI launcher started this process, `MPI_Init`, and what every rank
//! learns about the others at start (host, node-local rank, device).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::{device, tag, worker};
use crate::task::Tasks;
use polycompute_core::sync::LockUnpoisoned;
use polycompute_core::DeviceId;

/// One rank of the launch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MpiRank {
    /// Its rank in `MPI_COMM_WORLD`.
    pub rank: usize,
    /// Its host (`MPI_Get_processor_name`).
    pub host: String,
    /// Its rank among the ranks of its node (`MPI_Comm_split_type(SHARED)`).
    pub local_rank: usize,
    /// Its node, named by the world rank of the node's first rank (node-local rank 0): ranks
    /// with the same `node` share memory, so a `SharedArray` reaches them as its handle.
    pub node: usize,
    /// The device it opens as a worker (see the node-local device rule in the README);
    /// rank 0 schedules and opens none unless its program builds a local pool.
    pub device: DeviceId,
}

/// The MPI launch this process is part of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MpiWorld {
    /// Number of ranks.
    pub size: usize,
    /// This process's rank.
    pub rank: usize,
    /// Every rank, in rank order.
    pub ranks: Vec<MpiRank>,
}

impl MpiWorld {
    /// The distinct hosts, in the order of their first rank.
    pub fn hosts(&self) -> Vec<String> {
        let mut hosts: Vec<String> = Vec::new();
        for r in &self.ranks {
            if !hosts.contains(&r.host) {
                hosts.push(r.host.clone());
            }
        }
        hosts
    }

    /// This process's own entry.
    pub fn me(&self) -> &MpiRank {
        &self.ranks[self.rank]
    }

    /// Whether `rank` is on rank 0's node (it can map rank 0's shared memory).
    pub fn beside_root(&self, rank: usize) -> bool {
        self.ranks.get(rank).is_some_and(|r| r.node == self.ranks[0].node)
    }
}

static WORLD: OnceLock<MpiWorld> = OnceLock::new();
static UNIVERSE: Mutex<Option<Universe>> = Mutex::new(None);
/// Held around every MPI call after start (the library is initialized for serialized use
/// at least); `FINALIZED` says no call may follow.
pub(crate) static MPI_LOCK: Mutex<()> = Mutex::new(());
pub(crate) static FINALIZED: AtomicBool = AtomicBool::new(false);
/// Whether MPI runs with `MPI_THREAD_MULTIPLE` (a worker rank's heartbeat thread needs it).
pub(crate) static THREAD_MULTIPLE: AtomicBool = AtomicBool::new(false);
/// Worker ranks that stopped answering within their lease (rank numbers, in order lost).
static LOST: Mutex<Vec<usize>> = Mutex::new(Vec::new());
/// The exit status rank 0's program ends with when ranks were lost (0: left as it is).
static LOST_EXIT: AtomicI32 = AtomicI32::new(0);

/// The worker ranks lost so far in this launch: ranks that stopped answering within their
/// lease (see [`crate::PoolBuilder::rank_lease`]), in the order they were lost. Only
/// under `mpirun --enable-recovery` does the launch outlive a dead rank: with a default
/// launcher the whole job ends at once and nothing is reported here.
///
/// ```
/// assert!(polycompute_pool::mpi_lost_ranks().is_empty());
/// ```
pub fn mpi_lost_ranks() -> Vec<usize> {
    LOST.lock_unpoisoned().clone()
}

/// Makes rank 0's program exit with status `code` (not 0) when worker ranks were lost,
/// whatever its `main` returned; `0` turns it off (the default). For scripts and
/// schedulers that must notice the loss: `mpirun --enable-recovery` itself exits 0 when
/// rank 0 does, so rank 0's status is what `mpirun` passes on.
///
/// ```
/// polycompute_pool::exit_status_on_lost_ranks(3);
/// ```
pub fn exit_status_on_lost_ranks(code: i32) {
    LOST_EXIT.store(code, Ordering::Release);
}

/// Records that worker rank `rank` was lost.
pub(crate) fn mark_lost(rank: usize) {
    let mut lost = LOST.lock_unpoisoned();
    if !lost.contains(&rank) {
        lost.push(rank);
    }
}

/// Whether worker rank `rank` was lost earlier in this launch.
pub(crate) fn is_lost(rank: usize) -> bool {
    LOST.lock_unpoisoned().contains(&rank)
}

/// Whether the launcher keeps the job alive when a rank dies (`mpirun --enable-recovery`).
pub(crate) fn recovery() -> bool {
    std::env::var("OMPI_MCA_orte_enable_recovery").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// The MPI launch this process is part of: `None` without the `mpi` feature's
/// [`crate::worker_main`] having run under an MPI launcher (a singleton run).
///
/// ```
/// // In a plain `cargo run` or `cargo test` there is no launch.
/// assert!(polycompute_pool::mpi_world().is_none());
/// ```
pub fn mpi_world() -> Option<&'static MpiWorld> {
    WORLD.get()
}

/// Environment variables that MPI launchers set in the processes they start (Open MPI,
/// MPICH/Hydra and PMI-1/2, PMIx as under `srun --mpi=pmix`).
const LAUNCHER_VARS: [&str; 4] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"];

/// Whether an MPI launcher started this process.
pub(crate) fn launched() -> bool {
    LAUNCHER_VARS.iter().any(|v| std::env::var_os(v).is_some())
}

/// Open MPI's `mpi_yield_when_idle`, unless the user set it: off.
///
/// `mpirun --oversubscribe` (more ranks than cores) turns it on, and then every probe that
/// finds nothing yields the core inside MPI. The pool's polling loops already choose when
/// to yield (`idle`, `comm::drive_until`); with MPI yielding too, a worker rank's every
/// empty poll cost three yields, and a no-op round trip took 6 µs on two cores and 25 µs
/// with rank 0 and the worker rank on one core, against 3.4 and 6.5 µs with it off (the
/// 2-core development VM, Open MPI 4.1). Open MPI reads its parameters from the
/// environment at `MPI_Init`; this runs just before, from `worker_main`, which a program
/// calls first in `main` (before it starts threads that might read the environment).
fn leave_yielding_to_the_pool() {
    const VAR: &str = "OMPI_MCA_mpi_yield_when_idle";
    if std::env::var_os(VAR).is_none() {
        std::env::set_var(VAR, "0");
    }
}

/// Under a launcher: initializes MPI, learns the world, and turns ranks ≥ 1 into worker
/// ranks (they never return). Rank 0 returns and finalizes MPI at exit. Idempotent.
pub(crate) fn start(tasks: &Tasks) {
    if !launched() || WORLD.get().is_some() || std::env::var_os(crate::wire::ENV_ADDR).is_some() {
        return;
    }
    leave_yielding_to_the_pool();
    let Some((universe, threading)) = mpi::initialize_with_threading(mpi::Threading::Multiple) else {
        return; // initialized by someone else: leave it to them
    };
    THREAD_MULTIPLE.store(threading == mpi::Threading::Multiple, Ordering::Release);
    let world = universe.world();
    let info = learn(&world);
    let rank = info.rank;
    let _ = WORLD.set(info);
    *UNIVERSE.lock_unpoisoned() = Some(universe);
    if rank == 0 {
        if !exit_hook::register() {
            eprintln!("polycompute: cannot register MPI_Finalize at exit; worker ranks may linger");
        }
        return;
    }
    let (code, lost) = match worker::serve(tasks, &world) {
        Ok(lost) => (0, lost),
        Err(e) => {
            eprintln!("polycompute worker rank {rank}: {e}");
            (70, false)
        }
    };
    finalize_within(finalize_bound(lost), code);
    std::process::exit(code);
}

/// Every rank's host, node-local rank and device, gathered on every rank.
fn learn(world: &SimpleCommunicator) -> MpiWorld {
    let rank = world.rank() as usize;
    let size = world.size() as usize;
    let local = world.split_shared(world.rank());
    let local_rank = local.rank() as usize;
    // The node's name: its first rank's world rank, told to the node's ranks by that rank.
    let mut node = rank as u64;
    local.process_at_rank(0).broadcast_into(&mut node);
    let node = node as usize;
    let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
    let device = if rank == 0 {
        DeviceId::new(polycompute_core::BackendKind::Cpu, 0)
    } else {
        device::for_local_rank(local_rank)
    };
    let me = MpiRank { rank, host, local_rank, node, device };
    // Fixed-size records: postcard's encoding, zero-padded.
    const RECORD: usize = 512;
    let mut mine = postcard::to_allocvec(&me).unwrap_or_default();
    mine.resize(RECORD, 0);
    let mut all = vec![0u8; RECORD * size];
    world.all_gather_into(&mine[..], &mut all[..]);
    let ranks = all
        .chunks(RECORD)
        .enumerate()
        .map(|(r, rec)| {
            postcard::from_bytes(rec).unwrap_or(MpiRank {
                rank: r,
                host: "?".into(),
                local_rank: 0,
                node: r,
                device: DeviceId::new(polycompute_core::BackendKind::Cpu, 0),
            })
        })
        .collect();
    MpiWorld { size, rank, ranks }
}

/// How long `MPI_Finalize` may take before the process exits without it: 2 s when worker
/// ranks were lost in this launch, 20 s otherwise.
///
/// `MPI_Finalize` is collective: Open MPI (4.1) ends it with a fence over every process of
/// the job, the dead ones included. Under `mpirun --enable-recovery`, after a rank was
/// killed, that fence sometimes never completes (about 1 launch in 7 on the 2-core
/// development VM while it was loaded; every rank left waits in `ompi_mpi_finalize`), so
/// the launch never ended. A fence among live ranks takes milliseconds; the bound without
/// losses only guards against a launcher that misbehaves.
pub(crate) fn finalize_bound(lost: bool) -> Duration {
    if lost {
        Duration::from_secs(2)
    } else {
        Duration::from_secs(20)
    }
}

/// `MPI_Finalize`, given `bound`: past it a watchdog thread ends the process with `status`
/// (a warning on stderr), so a fence that cannot complete never keeps a rank alive.
pub(crate) fn finalize_within(bound: Duration, status: i32) {
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let seen = done.clone();
    let watchdog = std::thread::Builder::new().name("polycompute-finalize".into()).spawn(move || {
        let deadline = Instant::now() + bound;
        while !seen.load(Ordering::Acquire) {
            let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
                eprintln!(
                    "polycompute: MPI_Finalize did not complete within {bound:?} (a lost rank's fence); \
                     exiting with status {status} without it"
                );
                // SAFETY: `_exit` ends the process at once, without running exit handlers
                // (this may run inside one) or touching the MPI state the main thread holds.
                unsafe { libc::_exit(status) };
            };
            std::thread::park_timeout(left);
        }
    });
    finalize();
    done.store(true, Ordering::Release);
    if let Ok(t) = watchdog {
        t.thread().unpark();
    }
}

/// Rank 0 at exit (`status`: what the program exits with): tells every worker rank that
/// is not lost to exit (non-blocking sends, given a second: a rank may have died since,
/// saying whether ranks were lost), finalizes MPI within [`finalize_bound`], and turns the
/// exit status into the one [`exit_status_on_lost_ranks`] asked for when ranks were lost.
fn finalize_at_exit(status: i32) {
    let lost = mpi_lost_ranks();
    let code = LOST_EXIT.load(Ordering::Acquire);
    let status = if !lost.is_empty() && code != 0 { code } else { status };
    let _ = std::panic::catch_unwind(|| {
        if let Some(universe) = UNIVERSE.lock_unpoisoned().as_ref() {
            let _guard = MPI_LOCK.lock_unpoisoned();
            let world = universe.world();
            let message = if lost.is_empty() { &EXIT_CLEAN } else { &EXIT_AFTER_LOSS };
            let mut sends = Vec::new();
            for r in 1..world.size() {
                if !is_lost(r as usize) {
                    let request = world.process_at_rank(r).immediate_send_with_tag(
                        mpi::request::StaticScope,
                        &message[..],
                        tag::EXIT,
                    );
                    sends.push(request);
                }
            }
            let deadline = Instant::now() + Duration::from_secs(1);
            while !sends.is_empty() && Instant::now() < deadline {
                sends = sends.into_iter().filter_map(|s| s.test().err()).collect();
                std::thread::yield_now();
            }
            // Unfinished sends (to a rank that died): left to MPI, which may still read
            // the static byte.
            sends.into_iter().for_each(std::mem::forget);
        }
        finalize_within(finalize_bound(!lost.is_empty()), status);
    });
    if !lost.is_empty() && code != 0 {
        eprintln!("polycompute: worker rank(s) {lost:?} were lost; exiting with status {code}");
        // SAFETY: `_exit` ends the process at once; called from an exit handler, where
        // `exit` must not be called again.
        unsafe { libc::_exit(code) };
    }
}

/// What an exit message carries (static buffers: MPI may read them after the handler):
/// whether ranks were lost, which tells the worker ranks how long to give `MPI_Finalize`.
static EXIT_CLEAN: [u8; 1] = [0];
static EXIT_AFTER_LOSS: [u8; 1] = [1];

/// Whether an exit message says ranks were lost (see [`finalize_bound`]).
pub(crate) fn exit_after_loss(message: &[u8]) -> bool {
    message.first() == Some(&1)
}

/// Registers [`finalize_at_exit`] to run when rank 0's program exits. With glibc,
/// `on_exit` passes the handler the exit status, which a finalize cut short exits with;
/// elsewhere `atexit` has no status, and a finalize cut short exits with 1.
mod exit_hook {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    pub(super) fn register() -> bool {
        extern "C" {
            fn on_exit(handler: extern "C" fn(libc::c_int, *mut libc::c_void), arg: *mut libc::c_void) -> libc::c_int;
        }
        extern "C" fn handler(status: libc::c_int, _arg: *mut libc::c_void) {
            super::finalize_at_exit(status);
        }
        // SAFETY: glibc's `on_exit` stores the handler and runs it at `exit`; `handler`
        // never unwinds (`finalize_at_exit` catches panics) and ignores its argument.
        unsafe { on_exit(handler, std::ptr::null_mut()) == 0 }
    }

    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    pub(super) fn register() -> bool {
        extern "C" fn handler() {
            super::finalize_at_exit(1);
        }
        // SAFETY: `handler` is an `extern "C" fn()` that never unwinds.
        unsafe { libc::atexit(handler) == 0 }
    }
}

/// `MPI_Finalize`, once.
fn finalize() {
    let _guard = MPI_LOCK.lock_unpoisoned();
    FINALIZED.store(true, Ordering::Release);
    drop(UNIVERSE.lock_unpoisoned().take());
}
