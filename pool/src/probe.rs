//! [`probe`]: what this machine offers — the platform, each backend's status and devices,
//! and the pool's worker plan.

use serde::{Deserialize, Serialize};

use crate::{worker_plan, WorkerPlan};
use polycompute_core::registry;
pub use polycompute_core::registry::BackendStatus;

/// What [`probe`] found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// `linux`, `macos`, `windows`, ...
    pub os: String,
    /// `x86_64`, `aarch64`, ...
    pub arch: String,
    /// Logical CPU cores.
    pub cores: usize,
    /// Every backend kind, compiled in or not.
    pub backends: Vec<BackendStatus>,
    /// The worker plan.
    pub plan: WorkerPlan,
}

/// Reports the platform, each backend's devices (or why it has none) and the worker plan.
/// Enumerates devices without keeping any context open.
///
/// ```
/// let found = polycompute_pool::probe();
/// assert_eq!(found.os, std::env::consts::OS);
/// ```
pub fn probe() -> Probe {
    let backends = registry::backend_statuses();
    Probe {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        backends,
        plan: worker_plan(),
    }
}
