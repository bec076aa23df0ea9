// On docs.rs (nightly, `--cfg docsrs`) each feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
//! polycompute-pool, the worker pool: one worker per device (or several), thread, process
//! or MPI-rank workers, one queue, exactly one result per task. It builds on
//! `polycompute-core` (devices, arrays, errors); no backend depends on it.
//!
//! * [`Task`] — a named unit of work with serde input and output; [`Tasks`] — the registry
//!   a program gives both to the pool and to [`worker_main`].
//! * [`Pool`] — built with [`Pool::builder`]: `submit` ([`JobHandle`]), `submit_with`
//!   (callback), `map`, `map_unordered` ([`MapResults`]), the same under a random-stream key
//!   of their own ([`Pool::seeded`]), `shutdown` (also on drop).
//! * [`WorkerContext`] — a running task's worker id, device, task index, attempt, random
//!   generator ([`TaskRng`]: a stream chosen by the pool seed, the submission's key and the
//!   input's position in it; see [`Streams`]) and shared data.
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
//! retried `retries` times. All of it is per task, inside a batch too: workers stream each
//! task's result back as it finishes, and the pool always knows which task of a batch runs
//! (a process worker's progress word in shared memory, a thread worker's slot), so a
//! timeout counts from that task's start and fails it alone, a crash is charged to that
//! task alone (to none when the worker died between tasks), and the batch's unstarted
//! tasks go back to the queue without an attempt counted. Expected disconnections of a
//! worker process (shutdown, a cancelled task, its parent's exit) are logged with
//! `tracing` at debug level only. Dropping the pool stops its workers within a second; with
//! `shutdown_on_ctrl_c`, so does Ctrl-C; process workers exit within moments of their
//! parent's death, however it dies.
//!
//! Threat model (process workers): the user who runs the pool, and every process of that
//! user, is trusted — it can read the workers' memory anyway. Other local users (a shared
//! login node, a lab server) and the network are not: they must not read or change a
//! task's data, join the pool or stall it. So every shared-memory segment file, payloads
//! included, is created mode 0600 by its `open`; the worker socket is a Unix socket in a
//! directory of its own created 0700 (on Linux its peer must also be our user and the
//! worker we started, `SO_PEERCRED`), never a network port; on Windows, where it is
//! loopback TCP, a connection whose first frame is not the worker's 128-bit token (from the
//! OS's cryptographic generator, compared in constant time) is closed and logged (a silent
//! one after 2 s) while the start waits on for the real worker until its deadline. Bytes
//! from the other end of a socket are read as hostile: a frame's
//! length is capped at 1 GiB (a longer one ends that worker, nothing allocated for it), and
//! the frame, message, `PayloadRef`, `SharedHandle` and segment-header decoders are fuzzed
//! (`fuzz/`). Out of scope: root and the same user, and denial of service by exhausting
//! shared resources (memory, `/dev/shm`, processes).
//!
//! Layout: [`Pool`] (`runtime`) and [`PoolBuilder`] (`builder`) on top; `state`, what the
//! pool's threads share (queue, slots, shutdown); `schedule`, the scheduling every worker
//! kind shares (the next job, timeouts, requeueing); `job` and `handle`, a submission's jobs
//! and where their results go; `kind`, the one seam between the pool and the kind of its
//! workers, implemented by `thread` (worker threads, the timeout watchdog) and `process`
//! (`parent` and `serve` on the pool's side, `child` in the worker, `wire` between them);
//! `broadcast`, the read-only data every worker gets; `mode`, the worker plan.

#![warn(missing_docs)]

mod broadcast;
mod builder;
mod context;
mod error;
mod handle;
mod interrupt;
mod job;
mod journal;
mod kind;
mod mode;
#[cfg(feature = "mpi")]
mod mpi;
mod process;
mod rng;
mod runtime;
mod schedule;
mod seeded;
mod spin;
mod state;
pub(crate) mod task;
mod thread;
pub(crate) mod wire;

#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod probe;
pub mod shared;
mod sys;

pub use builder::{DeviceSelection, PoolBuilder};
pub use context::WorkerContext;
pub use error::{TaskError, TaskErrorKind};
pub use handle::{JobHandle, MapResults};
pub use journal::JournalError;
pub use mode::{worker_plan, WorkerMode, WorkerPlan, WORKERS_ENV};
#[cfg(feature = "mpi")]
pub use mpi::{exit_status_on_lost_ranks, mpi_lost_ranks, mpi_world, worker_main, MpiRank, MpiWorld};
pub use probe::{probe, Probe};
#[cfg(not(feature = "mpi"))]
pub use process::worker_main;
pub use rng::{Streams, TaskRng};
pub use runtime::{Pool, WorkerInfo};
pub use seeded::Seeded;
pub use shared::{SharedArray, SharedHandle};
pub use task::{BoxError, Task, Tasks};
