//! Everything that differs between operating systems lives here (the rest of the code is
//! the same on Linux, macOS and Windows), plus [`probe`], which reports the platform, each
//! backend's status and the worker plan.

use serde::{Deserialize, Serialize};

use crate::backend::{BackendKind, DeviceInfo};
use crate::registry;

/// How the pool runs its workers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkerMode {
    /// Chosen by the platform table (see [`WorkerPlan`]).
    Auto,
    /// Worker threads in this process.
    Thread,
    /// Worker processes: this executable re-executed (never fork without exec).
    Process,
}

/// The environment variable that overrides the worker mode: `thread` or `process`.
pub const WORKERS_ENV: &str = "POLYCOMPUTE_WORKERS";

/// The worker mode the pool will use here, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerPlan {
    /// `thread` or `process`.
    pub mode: WorkerMode,
    /// Why this mode.
    pub reason: String,
}

/// The per-OS worker table: the default mode under [`WorkerMode::Auto`].
pub fn worker_plan() -> WorkerPlan {
    if let Ok(v) = std::env::var(WORKERS_ENV) {
        match v.trim().to_ascii_lowercase().as_str() {
            "thread" => return WorkerPlan { mode: WorkerMode::Thread, reason: format!("{WORKERS_ENV}=thread") },
            "process" => return WorkerPlan { mode: WorkerMode::Process, reason: format!("{WORKERS_ENV}=process") },
            _ => {}
        }
    }
    cfg_if::cfg_if! {
        if #[cfg(any(target_os = "linux", target_os = "macos", windows))] {
            WorkerPlan {
                mode: WorkerMode::Thread,
                reason: format!(
                    "{}: one thread per device shares one process's contexts safely and moves values without \
                     serialization; process workers (re-executed, never forked) are opt-in",
                    std::env::consts::OS
                ),
            }
        } else {
            WorkerPlan { mode: WorkerMode::Thread, reason: format!("{}: process workers are not supported here", std::env::consts::OS) }
        }
    }
}

/// One backend's status in a [`Probe`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackendStatus {
    /// The backend.
    pub kind: BackendKind,
    /// Whether it has at least one device.
    pub available: bool,
    /// Why not, when it is not ("not compiled in", "no adapter", ...); empty otherwise.
    pub reason: String,
    /// Its devices.
    pub devices: Vec<DeviceInfo>,
}

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
pub fn probe() -> Probe {
    let backends = registry::backends()
        .into_iter()
        .map(|(kind, backend)| {
            let devices = backend.and_then(|b| b.devices());
            match devices {
                Ok(devices) if !devices.is_empty() => {
                    BackendStatus { kind, available: true, reason: String::new(), devices }
                }
                Ok(_) => BackendStatus { kind, available: false, reason: "no devices".into(), devices: Vec::new() },
                Err(crate::Error::BackendNotCompiled { .. }) => {
                    BackendStatus { kind, available: false, reason: "not compiled in".into(), devices: Vec::new() }
                }
                Err(crate::Error::BackendUnavailable { reason, .. }) => {
                    BackendStatus { kind, available: false, reason, devices: Vec::new() }
                }
                Err(e) => BackendStatus { kind, available: false, reason: e.to_string(), devices: Vec::new() },
            }
        })
        .collect();
    Probe {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        backends,
        plan: worker_plan(),
    }
}
