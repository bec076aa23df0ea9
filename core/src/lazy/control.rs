//! Whether a device records elementwise ops (`POLYCOMPUTE_FUSION`, read once, and a
//! per-device switch), the smallest result it records, and its counters.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use crate::backend::BackendKind;
use crate::device::Device;
use crate::sync::LockUnpoisoned;

use super::Pending;

/// The environment variable that controls fusion for every device, read once: `0` (or
/// `off`, `false`) runs each elementwise op at its call, as before the lazy layer;
/// `always` records results of every size (no small-size fast path); unset or anything
/// else is the default, on.
pub const FUSION_ENV: &str = "POLYCOMPUTE_FUSION";

/// Results smaller than this run at their call on the CPU backend: there a 1,024-element
/// map costs well under a microsecond, less than recording and composing would save. GPU
/// backends record every size (a launch costs microseconds).
const CPU_MIN_ELEMENTS: usize = 1 << 14;

/// Pending arrays kept for `synchronize` before the dead ones are swept out.
const SWEEP_AT: usize = 256;

/// What the lazy layer has done on one device (see [`Device::fusion_stats`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FusionStats {
    /// Elementwise ops recorded instead of run at their call.
    pub recorded: u64,
    /// Kernels the lazy layer launched to materialize pending arrays (each one fused
    /// program over the chain's inputs).
    pub launched: u64,
}

/// One device's fusion state.
pub(crate) struct State {
    enabled: AtomicBool,
    min_elements: AtomicUsize,
    pub(crate) recorded: AtomicU64,
    pub(crate) launched: AtomicU64,
    /// The pending arrays recorded since the last `synchronize`, which materializes them.
    pending: Mutex<Vec<Weak<Pending>>>,
}

/// What `POLYCOMPUTE_FUSION` asks for (read once): `None` for off, `Some(true)` for
/// `always` (every size is recorded, on every device: what the tests run both ways use),
/// `Some(false)` for the default (on, with the device's minimum size).
fn env_mode() -> Option<bool> {
    static MODE: OnceLock<Option<bool>> = OnceLock::new();
    *MODE.get_or_init(|| match std::env::var(FUSION_ENV) {
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "0" | "off" | "false" | "no" => None,
            "always" | "all" => Some(true),
            _ => Some(false),
        },
        Err(_) => Some(false),
    })
}

/// The state of `device`'s context (one per open context: clones and re-opens share it).
/// States live as long as the process, as open contexts do (the registry keeps them), so
/// a map's check is a thread-local hit, with no lock or reference count.
pub(crate) fn state(device: &Device) -> &'static State {
    thread_local! {
        static LAST: Cell<(usize, Option<&'static State>)> = const { Cell::new((0, None)) };
    }
    // The context's address names it: `Device::open` of an open device returns the same one.
    let key = Arc::as_ptr(device.backend()) as *const () as usize;
    if let Ok((k, Some(s))) = LAST.try_with(Cell::get) {
        if k == key {
            return s;
        }
    }
    let s = lookup(device, key);
    let _ = LAST.try_with(|last| last.set((key, Some(s))));
    s
}

fn lookup(device: &Device, key: usize) -> &'static State {
    static STATES: OnceLock<RwLock<HashMap<usize, &'static State>>> = OnceLock::new();
    let states = STATES.get_or_init(Default::default);
    if let Some(s) = states.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return s;
    }
    let mut w = states.write().unwrap_or_else(|e| e.into_inner());
    w.entry(key).or_insert_with(|| {
        let mode = env_mode();
        let min = if device.kind() == BackendKind::Cpu && mode != Some(true) { CPU_MIN_ELEMENTS } else { 0 };
        Box::leak(Box::new(State {
            enabled: AtomicBool::new(mode.is_some()),
            min_elements: AtomicUsize::new(min),
            recorded: AtomicU64::new(0),
            launched: AtomicU64::new(0),
            pending: Mutex::new(Vec::new()),
        }))
    })
}

impl State {
    /// Whether a result of `numel` elements is recorded.
    pub(crate) fn records(&self, numel: usize) -> bool {
        numel > 0 && numel >= self.min_elements.load(Ordering::Relaxed) && self.enabled.load(Ordering::Relaxed)
    }

    pub(crate) fn note_pending(&self, p: &Arc<Pending>) {
        let mut list = self.pending.lock_unpoisoned();
        if list.len() >= SWEEP_AT {
            list.retain(|w| w.upgrade().is_some_and(|p| !p.is_done()));
        }
        list.push(Arc::downgrade(p));
    }

    pub(crate) fn take_pending(&self) -> Vec<Weak<Pending>> {
        std::mem::take(&mut *self.pending.lock_unpoisoned())
    }
}

impl Device {
    /// Turns the lazy elementwise layer on or off for this device (every handle of its
    /// context); `POLYCOMPUTE_FUSION=0` starts every device with it off. Off, each
    /// elementwise op runs at its call, as without the layer. Arrays already pending stay
    /// pending until read.
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let dev = Device::cpu();
    /// let was = dev.fusion_enabled();
    /// dev.set_fusion(false);
    /// assert!(!dev.fusion_enabled());
    /// dev.set_fusion(was);
    /// ```
    pub fn set_fusion(&self, on: bool) {
        state(self).enabled.store(on, Ordering::Relaxed);
    }

    /// Whether elementwise ops on this device are recorded and fused ([`Device::set_fusion`]).
    pub fn fusion_enabled(&self) -> bool {
        state(self).enabled.load(Ordering::Relaxed)
    }

    /// Sets the smallest result (in elements) that is recorded; smaller ones run at their
    /// call (the fast path for tiny work). The CPU starts at 16,384, GPU backends at 0.
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// Device::cpu().set_fusion_min_elements(1 << 14);
    /// ```
    pub fn set_fusion_min_elements(&self, n: usize) {
        state(self).min_elements.store(n, Ordering::Relaxed);
    }

    /// How many elementwise ops the lazy layer recorded on this device and how many
    /// kernels it launched for them; `recorded - launched` ops were fused away.
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let dev = Device::cpu();
    /// let s = dev.fusion_stats();
    /// assert!(s.launched <= s.recorded);
    /// ```
    pub fn fusion_stats(&self) -> FusionStats {
        let s = state(self);
        FusionStats { recorded: s.recorded.load(Ordering::Relaxed), launched: s.launched.load(Ordering::Relaxed) }
    }
}
