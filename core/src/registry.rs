//! The backend registry. Core names no backend: each backend crate adds a factory to
//! [`BACKEND_FACTORIES`] (a link-time list), and a kind without one answers
//! [`Error::BackendNotCompiled`], so the API is the same whatever features are enabled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::backend::{Backend, BackendKind, DeviceBackend, DeviceInfo};
use crate::device_id::DeviceId;
use crate::error::{Error, Result};
use crate::sync::LockUnpoisoned;
use serde::{Deserialize, Serialize};

/// Factories of the backends linked into this program. A backend crate registers with
/// `#[linkme::distributed_slice(polycompute_core::registry::BACKEND_FACTORIES)]` followed by
/// [`keep_registered!`](crate::keep_registered) on the same static (without it, windows-gnu
/// programs lose the registration at link time).
#[linkme::distributed_slice]
pub static BACKEND_FACTORIES: [fn() -> Arc<dyn Backend>];

/// Keeps a [`BACKEND_FACTORIES`] entry in the program on every target.
///
/// On Windows (PE files) GNU ld drops a section nothing refers to, and a `linkme` entry is
/// exactly that (linkme issue #25): the backend then reports "not compiled in" unless users
/// link with `--no-gc-sections`. This macro adds, on Windows only, a C-runtime initializer
/// (a `.CRT$XCU` pointer, which both GNU ld's and MSVC's linker always keep) whose function
/// refers to the entry, so the entry stays linked. Elsewhere it expands to nothing.
///
/// ```ignore
/// #[linkme::distributed_slice(polycompute_core::registry::BACKEND_FACTORIES)]
/// static MY_BACKEND: fn() -> Arc<dyn Backend> = || Arc::new(MyBackend);
/// polycompute_core::keep_registered!(MY_BACKEND);
/// ```
#[macro_export]
macro_rules! keep_registered {
    ($entry:ident) => {
        #[cfg(windows)]
        const _: () = {
            // Runs before main (the C runtime calls every `.CRT$XCU` pointer); it only takes
            // the entry's address, which is what keeps the entry's section alive.
            extern "C" fn keep_entry() {
                ::std::hint::black_box(&$entry);
            }
            #[used]
            #[link_section = ".CRT$XCU"]
            static KEEP_ENTRY: extern "C" fn() = keep_entry;
        };
    };
}

fn compiled() -> &'static [Arc<dyn Backend>] {
    static BACKENDS: OnceLock<Vec<Arc<dyn Backend>>> = OnceLock::new();
    BACKENDS.get_or_init(|| {
        let mut all: Vec<Arc<dyn Backend>> = BACKEND_FACTORIES.iter().map(|f| f()).collect();
        all.sort_by_key(|b| b.kind());
        all
    })
}

/// The backend of `kind`, or `BackendNotCompiled`.
pub fn backend(kind: BackendKind) -> Result<Arc<dyn Backend>> {
    compiled().iter().find(|b| b.kind() == kind).cloned().ok_or(Error::BackendNotCompiled { kind })
}

/// Every backend kind with its backend, or the error that stands for it.
pub fn backends() -> Vec<(BackendKind, Result<Arc<dyn Backend>>)> {
    BackendKind::ALL.iter().rev().map(|&k| (k, backend(k))).collect()
}

/// The devices open in this process, held weakly so that dropping the last handle closes one.
type OpenDevices = HashMap<DeviceId, Weak<dyn DeviceBackend>>;

fn open_devices() -> &'static Mutex<OpenDevices> {
    static OPEN: OnceLock<Mutex<OpenDevices>> = OnceLock::new();
    OPEN.get_or_init(Default::default)
}

/// Opens `kind:ordinal`, reusing the device if it is already open in this process (one
/// context per device per process, whoever asks).
pub fn open(kind: BackendKind, ordinal: usize) -> Result<Arc<dyn DeviceBackend>> {
    let backend = backend(kind)?;
    let mut open = open_devices().lock_unpoisoned();
    if let Some(dev) = open.get(&DeviceId::new(kind, ordinal)).and_then(Weak::upgrade) {
        return Ok(dev);
    }
    let dev = backend.open(ordinal)?;
    open.insert(DeviceId::new(kind, ordinal), Arc::downgrade(&dev));
    Ok(dev)
}

/// Stops reusing the open `kind:ordinal`: the next [`open`] makes a new context, even while
/// handles to the old one live on. The worker pool calls this when a device reports a sticky
/// fault (its context is poisoned).
pub fn forget(kind: BackendKind, ordinal: usize) {
    open_devices().lock_unpoisoned().remove(&DeviceId::new(kind, ordinal));
}

/// One backend's status: whether it has devices, and why not (the platform probe's rows).
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

/// Every backend kind's status, compiled in or not: its devices, or why it has none ("not
/// compiled in", "no adapter", ...). Enumerates devices without keeping a context open.
///
/// ```
/// let statuses = polycompute_core::registry::backend_statuses();
/// // Every kind has a row, compiled in or not.
/// assert!(statuses.iter().any(|s| s.kind == polycompute_core::BackendKind::Cuda));
/// ```
pub fn backend_statuses() -> Vec<BackendStatus> {
    backends()
        .into_iter()
        .map(|(kind, backend)| {
            let devices = backend.and_then(|b| b.devices());
            match devices {
                Ok(devices) if !devices.is_empty() => {
                    BackendStatus { kind, available: true, reason: String::new(), devices }
                }
                Ok(_) => BackendStatus { kind, available: false, reason: "no devices".into(), devices: Vec::new() },
                Err(Error::BackendNotCompiled { .. }) => {
                    BackendStatus { kind, available: false, reason: "not compiled in".into(), devices: Vec::new() }
                }
                Err(Error::BackendUnavailable { reason, .. }) => {
                    BackendStatus { kind, available: false, reason, devices: Vec::new() }
                }
                Err(e) => BackendStatus { kind, available: false, reason: e.to_string(), devices: Vec::new() },
            }
        })
        .collect()
}
