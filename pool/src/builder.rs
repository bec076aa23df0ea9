//! [`PoolBuilder`]: which devices, how many workers, which mode, and the pool's policies.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::broadcast::BroadcastData;
use super::kind::{self, Carriage};
use super::mode::{worker_plan, WorkerMode, WorkerPlan};
use super::rng::Streams;
use super::runtime::Pool;
use super::state::Config;
use super::task::Tasks;
use super::wire;
use polycompute_core::backend::BackendKind;
use polycompute_core::error::{Error, Result};
use polycompute_core::registry;

/// Which devices get workers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSelection {
    /// The default: the devices `POLYCOMPUTE_BACKEND` names when it is set (`cuda`: every
    /// CUDA device; `cuda:1`: that one; an unknown, unavailable or uncompiled backend is the
    /// error `Device::default()` gives, never a silent fallback). Unset: every hardware GPU —
    /// CUDA's devices when there are any, else wgpu's non-CPU adapters (one GPU is not
    /// counted twice through both) — and the CPU when there is no GPU.
    Gpus,
    /// Every device of one backend (an error when it has none).
    Backend(BackendKind),
    /// These device ids (`cuda:0`, `wgpu:1`, `cpu`).
    Ids(Vec<String>),
    /// The CPU.
    Cpu,
}

/// Encodes the broadcast data for workers that take encoded inputs.
type EncodeBroadcast = Box<dyn Fn() -> std::result::Result<Vec<u8>, String>>;

/// Configures a [`Pool`]; from [`Pool::builder`].
pub struct PoolBuilder {
    tasks: Tasks,
    devices: DeviceSelection,
    per_device: usize,
    mode: WorkerMode,
    cfg: Config,
    broadcast: BroadcastData,
    broadcast_encode: Option<EncodeBroadcast>,
    journal: Option<PathBuf>,
}

impl PoolBuilder {
    pub(crate) fn new(tasks: &Tasks) -> PoolBuilder {
        PoolBuilder {
            tasks: tasks.clone(),
            devices: DeviceSelection::Gpus,
            per_device: 1,
            mode: WorkerMode::Auto,
            cfg: Config {
                seed: 0,
                streams: Streams::default(),
                timeout: None,
                retries: 0,
                max_tasks: None,
                chunk: None,
                spill_over: 1 << 20,
                progress: false,
                ctrl_c: false,
                depth: 8,
                worker_exe: None,
                start_timeout: Duration::from_secs(30),
                reroute: true,
                rank_lease: Duration::from_secs(3),
                journal: None,
            },
            broadcast: BroadcastData::default(),
            broadcast_encode: None,
            journal: None,
        }
    }

    /// Which devices get workers (default: [`DeviceSelection::Gpus`]: those
    /// `POLYCOMPUTE_BACKEND` names, else every GPU, else the CPU).
    pub fn devices(mut self, devices: DeviceSelection) -> Self {
        self.devices = devices;
        self
    }

    /// Workers on the CPU only.
    pub fn cpu(self) -> Self {
        self.devices(DeviceSelection::Cpu)
    }

    /// Workers on these devices (`cuda:0`, `wgpu:1`, `cpu`).
    pub fn device_ids<S: AsRef<str>>(self, ids: &[S]) -> Self {
        self.devices(DeviceSelection::Ids(ids.iter().map(|s| s.as_ref().to_string()).collect()))
    }

    /// Workers per selected device (default 1).
    pub fn workers_per_device(mut self, n: usize) -> Self {
        self.per_device = n;
        self
    }

    /// Thread or process workers; `Auto` (the default) follows `POLYCOMPUTE_WORKERS`, then
    /// the platform table (see [`super::worker_plan`]).
    pub fn mode(mut self, mode: WorkerMode) -> Self {
        self.mode = mode;
        self
    }

    /// The seed of every task's random generator (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.cfg.seed = seed;
        self
    }

    /// How each task's random stream ([`WorkerContext::rng`](crate::WorkerContext::rng)) is
    /// chosen: by default ([`Streams::PerSubmission`]) from the pool seed, the submission's
    /// key and the input's position in its submission, so that a batch submitted with
    /// [`Pool::seeded`](crate::Pool::seeded) draws the same numbers whatever was submitted
    /// before it. [`Streams::ByTaskIndex`] keeps the older rule (the task's index over all
    /// submissions).
    ///
    /// ```no_run
    /// # use polycompute_pool::{Pool, Streams, Tasks};
    /// let pool = Pool::builder(&Tasks::new()).cpu().seed(7).streams(Streams::ByTaskIndex).build()?;
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn streams(mut self, streams: Streams) -> Self {
        self.cfg.streams = streams;
        self
    }

    /// Fail a task that runs longer than this; its worker is replaced (default: none).
    ///
    /// The limit is each task's own, also inside a batch (`chunk_size`): it counts from that
    /// task's start, and only that task fails, with [`super::TaskErrorKind::Timeout`] naming
    /// the limit and how long it ran. The batch's tasks that finished keep their results; the
    /// ones that had not started go back to the queue (no attempt counted) and run on the
    /// replacement worker. The pool looks about ten times per timeout, so a task is stopped
    /// within about a tenth of the limit after it passes.
    pub fn task_timeout(mut self, timeout: Duration) -> Self {
        self.cfg.timeout = Some(timeout);
        self
    }

    /// How often a task whose process worker crashed while running it is run again on a
    /// fresh worker before it fails with `Crashed` (default 0).
    ///
    /// Only the task that was running when the worker died is charged an attempt, also
    /// inside a batch: a worker that dies between tasks (killed from outside, say) charges
    /// nobody. The batch's tasks that had not started go back to the queue without an attempt
    /// counted and run once on another worker. A task that finished is never run again, even
    /// when the crash came before its result was sent: the worker logs each result in shared
    /// memory before its next task starts, and the pool takes the unsent ones from there.
    /// (Only where shared memory is unavailable do such results run again, uncounted.)
    pub fn retries(mut self, retries: u32) -> Self {
        self.cfg.retries = retries;
        self
    }

    /// Replace a worker after it ran this many tasks (default: never).
    pub fn max_tasks_per_worker(mut self, n: u64) -> Self {
        self.cfg.max_tasks = Some(n.max(1));
        self
    }

    /// Inputs per job in `map` (default: about an eighth of a map's share per worker, at most
    /// 1024). Batching saves a queue round trip per task; it changes nothing else: each task
    /// of a batch has its own result (streamed back as it finishes, results ready together
    /// sharing a message), its own timeout (see [`PoolBuilder::task_timeout`]) and its own
    /// crash accounting (see [`PoolBuilder::retries`]); a cancellation or shutdown keeps the
    /// results of the batch's tasks that finished.
    pub fn chunk_size(mut self, n: usize) -> Self {
        self.cfg.chunk = Some(n.max(1));
        self
    }

    /// At most this many jobs at a process worker at once (default 8; 1 = none sent ahead).
    /// A job is only sent ahead while the work already at the worker is expected to take
    /// under a millisecond, so no job waits long behind another while a worker idles.
    pub fn pipeline_depth(mut self, n: usize) -> Self {
        self.cfg.depth = n.max(1);
        self
    }

    /// Process workers: a task input or output whose encoding is larger than `bytes`
    /// (default 1 MiB) does not pass through the worker's pipe but through a shared-memory
    /// segment of its own, which the worker decodes from its mapping and which goes once the
    /// result is back (see [`crate::shared`]). `usize::MAX` sends everything through the pipe.
    /// Thread workers move values and never copy them.
    pub fn shared_memory_threshold(mut self, bytes: usize) -> Self {
        self.cfg.spill_over = bytes;
        self
    }

    /// Show a progress bar (on stderr, when it is a terminal) during `map`s.
    pub fn progress(mut self, show: bool) -> Self {
        self.cfg.progress = show;
        self
    }

    /// Shut the pool down on Ctrl-C (SIGINT): queued and running tasks end as `ShutDown`,
    /// workers stop within a second, and [`Pool::interrupted`] tells the program, which
    /// decides how to exit. Installs one process-wide handler (an error at `build` when the
    /// program installed its own: call `shutdown` from that one instead).
    pub fn shutdown_on_ctrl_c(mut self, yes: bool) -> Self {
        self.cfg.ctrl_c = yes;
        self
    }

    /// Send a task that its device cannot run to the pool's other devices (default: on).
    ///
    /// A task "cannot run" on a device when it returns `Error::Unsupported` naming that
    /// device (as the device's ops do: an f64 op on a GPU without f64, say; return or `?` the
    /// error, possibly wrapped as a source). Such a task goes back to the queue for a device
    /// that has not refused it — no attempt counted, it is no crash — and the pool remembers,
    /// per task name, which devices refused: their workers leave later tasks of that name to
    /// the others from the start. Only when every device of the pool has refused it does a
    /// task end with [`super::TaskErrorKind::Unsupported`], listing the devices tried. In a
    /// batch, the refused task's later inputs go back to the queue with it. Off: the task
    /// ends with that error at once, and nothing is remembered.
    pub fn reroute_unsupported(mut self, yes: bool) -> Self {
        self.cfg.reroute = yes;
        self
    }

    /// Read-only data given once to every worker: tasks read it with
    /// [`super::WorkerContext::shared`].
    pub fn shared_data<S: Serialize + Send + Sync + 'static>(mut self, data: S) -> Self {
        let data = Arc::new(data);
        let for_encode = data.clone();
        self.broadcast = BroadcastData {
            value: Some(data),
            type_name: std::any::type_name::<S>().to_string(),
            bytes: None,
            near_bytes: None,
        };
        self.broadcast_encode = Some(Box::new(move || postcard::to_allocvec(&*for_encode).map_err(|e| e.to_string())));
        self
    }

    /// Start process workers from this executable instead of the current one; its `main`
    /// must call `worker_main` with the same tasks.
    pub fn worker_exe(mut self, path: impl Into<PathBuf>) -> Self {
        self.cfg.worker_exe = Some(path.into());
        self
    }

    /// How long a process worker may take to start and open its device (default 30 s).
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.cfg.start_timeout = timeout;
        self
    }

    /// Record every finished task's result in the journal file `path`, and take the results
    /// it already holds instead of running those tasks again (default: no journal).
    ///
    /// For jobs that may die before they end — above all on MPI ranks, where a killed rank
    /// takes the whole launch down: rerun the same program and it returns at once what the
    /// killed run finished and computes only the rest. A task is known by its index (its
    /// number in submission order) and its input; its output or its own error (an `Err`, a
    /// panic, no device able to run it) is recorded the moment it is delivered, written
    /// straight to the OS; timeouts, crashes, cancellations and shutdowns are not (the rerun
    /// runs those again). The file names its job (the program, the tasks' signatures, the
    /// seed): `build` refuses a journal of another job with [`polycompute_core::Error::Journal`]. One
    /// journal per pool; results that hold `SharedArray`s are not kept across runs (their
    /// segments are gone).
    ///
    /// ```no_run
    /// # use polycompute_pool::{Pool, Tasks};
    /// # let tasks = Tasks::new();
    /// let pool = Pool::builder(&tasks).journal("results.journal").build()?;
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn journal(mut self, path: impl Into<PathBuf>) -> Self {
        self.journal = Some(path.into());
        self
    }

    /// MPI worker ranks: how long a rank may stay silent before rank 0 counts it as lost
    /// (default 3 s, at least 0.5 s). A rank serving a pool sends a heartbeat every 100 ms,
    /// also while it runs a long task, so only a dead or frozen rank stays silent.
    ///
    /// Under `mpirun --enable-recovery` the launch outlives a dead rank: the pool then
    /// marks the rank lost (see [`super::WorkerInfo::lost`] and `mpi_lost_ranks`, and a
    /// warning), runs the task it was running again on the other ranks as a new attempt
    /// when [`PoolBuilder::retries`] allows (else it fails as `Crashed`), and sends it no
    /// more work. Only that one task is charged, also inside a batch: the batch's other
    /// inputs run again without an attempt counted. Under a default launcher a dead rank ends the whole job at once; see
    /// [`PoolBuilder::journal`].
    pub fn rank_lease(mut self, lease: Duration) -> Self {
        self.cfg.rank_lease = lease.max(Duration::from_millis(500));
        self
    }

    /// Starts the workers. Returns at once: workers open their devices in the background
    /// and tasks wait in the queue until one is ready.
    pub fn build(self) -> Result<Pool> {
        if std::env::var_os(wire::ENV_ADDR).is_some() {
            return Err(Error::Pool(
                "this process was started as a polycompute worker, but its main did not call \
                 polycompute::worker_main(&tasks) before building a pool; call it first thing in main"
                    .into(),
            ));
        }
        self.tasks.check().map_err(Error::Pool)?;
        if self.per_device == 0 {
            return Err(Error::Pool("workers_per_device must be at least 1".into()));
        }
        let plan = match self.mode {
            WorkerMode::Auto => worker_plan(),
            mode => WorkerPlan { mode, reason: "chosen by the pool builder".into() },
        };
        let (mut cfg, mut per_device) = (self.cfg, self.per_device);
        if let Some(path) = &self.journal {
            let job = super::journal::JobName {
                program: std::env::current_exe()
                    .ok()
                    .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_default(),
                tasks: self.tasks.signatures(),
                seed: cfg.seed,
            };
            cfg.journal = Some(Arc::new(super::journal::Journal::open(path, &job)?));
        }
        let workers = kind::for_mode(plan.mode).map_err(Error::Pool)?;
        let devices = match workers.own_devices() {
            // The kind places its workers itself (MPI ranks): one slot each.
            Some(devices) => {
                per_device = 1;
                devices.map_err(Error::Pool)?
            }
            None => resolve(&self.devices)?,
        };
        cfg.spill_over = workers.spill_over(cfg.spill_over);
        let mut broadcast = self.broadcast;
        if workers.carriage() != Carriage::Moved {
            if let Some(encode) = &self.broadcast_encode {
                let sent = workers.carriage() == Carriage::Sent;
                let failed = |e| Error::Pool(format!("the shared data cannot be serialized: {e}"));
                let bytes = if sent { crate::shared::carry::as_data(encode) } else { encode() };
                broadcast.bytes = Some(Arc::new(bytes.map_err(failed)?));
                if sent && workers.some_near() {
                    // Ranks on this node map the shared arrays it holds (the same bytes when
                    // it holds none).
                    let handles = encode().map_err(failed)?;
                    if Some(&handles) != broadcast.bytes.as_deref() {
                        broadcast.near_bytes = Some(Arc::new(handles));
                    }
                }
            }
        }
        Pool::start(self.tasks, plan, cfg, devices, per_device, broadcast, workers)
    }
}

/// The devices a selection stands for.
fn resolve(selection: &DeviceSelection) -> Result<Vec<(BackendKind, usize)>> {
    let gpus_of = |kind: BackendKind| -> Vec<(BackendKind, usize)> {
        registry::backend(kind)
            .and_then(|b| b.devices())
            .map(|ds| ds.into_iter().filter(|d| !d.is_cpu).map(|d| (kind, d.ordinal)).collect())
            .unwrap_or_default()
    };
    match selection {
        DeviceSelection::Cpu => Ok(vec![(BackendKind::Cpu, 0)]),
        DeviceSelection::Gpus => {
            if let Some(named) = from_env()? {
                return Ok(named);
            }
            for kind in [BackendKind::Cuda, BackendKind::Wgpu] {
                let found = gpus_of(kind);
                if !found.is_empty() {
                    return Ok(found);
                }
            }
            Ok(vec![(BackendKind::Cpu, 0)])
        }
        DeviceSelection::Backend(kind) => {
            let devices = registry::backend(*kind)?.devices()?;
            if devices.is_empty() {
                return Err(Error::BackendUnavailable { kind: *kind, reason: "no devices".into() });
            }
            Ok(devices.into_iter().map(|d| (*kind, d.ordinal)).collect())
        }
        DeviceSelection::Ids(ids) => {
            if ids.is_empty() {
                return Err(Error::Pool("the device list is empty; name at least one device (e.g. cpu)".into()));
            }
            ids.iter()
                .map(|id| {
                    let (kind, ordinal) = polycompute_core::device::parse_id(id)?;
                    let count = registry::backend(kind)?.devices()?.len();
                    if ordinal >= count {
                        return Err(Error::NoSuchDevice { kind, ordinal, count });
                    }
                    Ok((kind, ordinal))
                })
                .collect()
        }
    }
}

/// The devices `POLYCOMPUTE_BACKEND` names, if it is set: every device of a backend
/// (`cuda`), or one (`cuda:1`). Errors as `Device::default()` does.
fn from_env() -> Result<Option<Vec<(BackendKind, usize)>>> {
    let Ok(value) = std::env::var(polycompute_core::device::BACKEND_ENV) else { return Ok(None) };
    if value.trim().is_empty() {
        return Ok(None);
    }
    let id: polycompute_core::DeviceId = value.parse()?;
    let devices = registry::backend(id.kind)?.devices()?;
    if value.contains(':') {
        if id.ordinal >= devices.len() {
            return Err(Error::NoSuchDevice { kind: id.kind, ordinal: id.ordinal, count: devices.len() });
        }
        return Ok(Some(vec![(id.kind, id.ordinal)]));
    }
    if devices.is_empty() {
        return Err(Error::BackendUnavailable { kind: id.kind, reason: "no devices".into() });
    }
    Ok(Some(devices.into_iter().map(|d| (id.kind, d.ordinal)).collect()))
}
