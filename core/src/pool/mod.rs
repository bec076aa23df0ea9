//! The worker pool: one worker per device (or several), thread or process workers, one
//! queue, exactly one result per task.
//!
//! * [`Task`] — a named unit of work with serde input and output; [`Tasks`] — the registry
//!   a program gives both to the pool and to [`worker_main`].
//! * [`Pool`] — built with [`Pool::builder`]: `submit` ([`JobHandle`]), `submit_with`
//!   (callback), `map`, `map_unordered` ([`MapResults`]), `shutdown` (also on drop).
//! * [`WorkerContext`] — a running task's worker id, device, task index, attempt, random
//!   generator ([`TaskRng`], seeded from (pool seed, task index)) and shared data.
//! * [`TaskError`] — which task, which worker and device, and why: the task's error, a
//!   panic, a crash, a timeout, cancellation, serialization, an unknown task, no worker.
//!
//! Thread workers move values; process workers are this executable re-executed (never
//! forked) talking over a socket, so a crash costs one worker and the task's own printing
//! cannot corrupt the protocol. How they start and how they die with their parent is the
//! OS-specific part, in `crate::sys`. An input or output whose encoding is over 1 MiB
//! (`PoolBuilder::shared_memory_threshold`) travels through a shared-memory segment instead
//! of the socket; a [`crate::shared::SharedArray`] is never copied at all.
//!
//! Every waiter on a task's round trip (the caller in `wait`, a process worker's driver
//! thread, the worker process) polls for up to 50 µs, yielding its core, before it blocks:
//! waking a blocked process costs more than a short task.
//!
//! Failure handling: a process worker that crashes, overruns the task timeout, runs a
//! cancelled task or hits a sticky device fault is replaced (a thread worker in that state
//! is left to finish on its own and a fresh thread takes its place); a crashed task is
//! retried `retries` times. Dropping the pool stops its workers within a second; with
//! `shutdown_on_ctrl_c`, so does Ctrl-C; process workers exit within moments of their
//! parent's death, however it dies.
//!
//! Layout: [`Pool`] (`runtime`) and [`PoolBuilder`] (`builder`) on top; `state`, what the
//! pool's threads share (queue, slots, shutdown); `job` and `handle`, a submission's jobs
//! and where their results go; `kind`, the one seam between the pool and the kind of its
//! workers, implemented by `thread` (worker threads, the timeout watchdog) and `process`
//! (`parent` and `serve` on the pool's side, `child` in the worker, `wire` between them);
//! `broadcast`, the read-only data every worker gets; `mode`, the worker plan.

mod broadcast;
mod builder;
mod context;
mod error;
mod handle;
mod interrupt;
mod job;
mod kind;
mod mode;
#[cfg(feature = "mpi")]
mod mpi;
mod process;
mod rng;
mod runtime;
mod spin;
mod state;
mod task;
mod thread;
mod wire;

pub use builder::{DeviceSelection, PoolBuilder};
pub use context::WorkerContext;
pub use error::{TaskError, TaskErrorKind};
pub use handle::{JobHandle, MapResults};
pub use mode::{worker_plan, WorkerMode, WorkerPlan, WORKERS_ENV};
#[cfg(feature = "mpi")]
pub use mpi::{mpi_world, worker_main, MpiRank, MpiWorld};
#[cfg(not(feature = "mpi"))]
pub use process::worker_main;
pub use rng::TaskRng;
pub use runtime::{Pool, WorkerInfo};
pub use task::{BoxError, Task, Tasks};
