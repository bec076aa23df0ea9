//! [`probe`]: what this machine offers — the platform, each backend's status and devices,
//! and the pool's worker plan.

use serde::{Deserialize, Serialize};

use crate::backend::{BackendKind, DeviceInfo};
use crate::pool::{worker_plan, WorkerPlan};
use crate::registry;

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
///
/// ```
/// let found = polycompute_core::probe();
/// assert_eq!(found.os, std::env::consts::OS);
/// ```
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
