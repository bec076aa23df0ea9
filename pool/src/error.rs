//! [`TaskError`]: why a task produced no output.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::task::Failure;

/// Why a task produced no output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TaskErrorKind {
    /// The task returned an error.
    Failed {
        /// The error and its sources, joined by ": ".
        message: String,
        /// The error was `Error::DeviceFault { sticky: true, .. }`: the worker was replaced.
        sticky_device_fault: bool,
    },
    /// The task's device could not run it (the task returned `Error::Unsupported` naming
    /// the device), and no other device of the pool could either: every device listed in
    /// `tried` refused it. (With rerouting on, the default, a refused task first goes to the
    /// pool's other devices; see `PoolBuilder::reroute_unsupported`.)
    Unsupported {
        /// The last refusal's error and its sources, joined by ": ".
        message: String,
        /// The devices that refused the task, in order.
        tried: Vec<polycompute_core::DeviceId>,
    },
    /// The task panicked.
    Panicked {
        /// The panic message.
        message: String,
    },
    /// The worker process died while running the task.
    Crashed {
        /// The exit code, when it exited.
        code: Option<i32>,
        /// The signal that killed it (Unix).
        signal: Option<i32>,
    },
    /// The task ran longer than the pool's per-task timeout (counted from the task's own
    /// start, also inside a batch); its worker was replaced.
    Timeout {
        /// The timeout (the pool's `task_timeout`).
        after: Duration,
        /// How long the task had run when it was stopped (at least `after`; the pool looks
        /// a few times per timeout, so up to about a tenth more).
        elapsed: Duration,
    },
    /// The task was cancelled (its handle's `cancel()`, or a dropped map iterator).
    Cancelled,
    /// The input or output could not be serialized for a process worker.
    Serialization {
        /// The serializer's message.
        message: String,
    },
    /// No task of that name is registered (in the pool's `Tasks`, or in the worker's).
    UnknownTask {
        /// The names that are registered.
        known: Vec<String>,
    },
    /// No worker could be started to run the task.
    WorkerStart {
        /// Why.
        message: String,
    },
    /// The pool shut down before the task finished.
    ShutDown,
}

impl From<Failure> for TaskErrorKind {
    /// The error kind of a failure inside a worker, of either kind.
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Failed { message, sticky } => TaskErrorKind::Failed { message, sticky_device_fault: sticky },
            Failure::Unsupported { message, device } => TaskErrorKind::Unsupported { message, tried: vec![device] },
            Failure::Panicked(message) => TaskErrorKind::Panicked { message },
            Failure::Serialization(message) => TaskErrorKind::Serialization { message },
            Failure::UnknownTask(known) => TaskErrorKind::UnknownTask { known },
        }
    }
}

impl fmt::Display for TaskErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskErrorKind::Failed { message, sticky_device_fault } => {
                write!(f, "failed: {message}")?;
                if *sticky_device_fault {
                    f.write_str(" (sticky device fault: the worker was replaced)")?;
                }
                Ok(())
            }
            TaskErrorKind::Unsupported { message, tried } => {
                let tried: Vec<String> = tried.iter().map(ToString::to_string).collect();
                write!(f, "no device of the pool can run it (tried {}): {message}", tried.join(", "))
            }
            TaskErrorKind::Panicked { message } => write!(f, "panicked: {message}"),
            TaskErrorKind::Crashed { code, signal } => match (code, signal) {
                (_, Some(sig)) => write!(f, "the worker process was killed by signal {sig}"),
                (Some(code), None) => write!(f, "the worker process exited with code {code}"),
                (None, None) => f.write_str("the worker process died"),
            },
            TaskErrorKind::Timeout { after, elapsed } => write!(
                f,
                "timed out: ran {elapsed:.0?}, over the task timeout of {after:?}; the worker was replaced \
                 (raise the pool's task_timeout?)"
            ),
            TaskErrorKind::Cancelled => f.write_str("cancelled"),
            TaskErrorKind::Serialization { message } => write!(f, "serialization failed: {message}"),
            TaskErrorKind::UnknownTask { known } => write!(
                f,
                "no such task is registered (known: {}); add it to the Tasks given to the pool and to worker_main",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ),
            TaskErrorKind::WorkerStart { message } => write!(f, "no worker could be started: {message}"),
            TaskErrorKind::ShutDown => f.write_str("the pool shut down before the task finished"),
        }
    }
}

/// Why a task produced no output, and where: the task's name and index, the worker and its
/// device (when one had taken the task) and how many attempts were made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub struct TaskError {
    /// The task's `Task::NAME`.
    pub task: String,
    /// The task's index (its number in submission order).
    pub index: u64,
    /// The worker that ran it, if one did.
    pub worker: Option<usize>,
    /// That worker's device id (`cpu:0`, `cuda:1`, ...).
    pub device: Option<polycompute_core::DeviceId>,
    /// Attempts made (more than one when a crashed worker's task was retried).
    pub attempts: u32,
    /// What went wrong.
    pub kind: TaskErrorKind,
}

impl fmt::Display for TaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task {} #{}", self.task, self.index)?;
        if let Some(w) = self.worker {
            write!(f, " on worker {w}")?;
        }
        if let Some(d) = &self.device {
            write!(f, " ({d})")?;
        }
        if self.attempts > 1 {
            write!(f, " after {} attempts", self.attempts)?;
        }
        write!(f, ": {}", self.kind)
    }
}
