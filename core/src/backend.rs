//! The backend traits: [`Backend`] enumerates and opens devices; [`DeviceBackend`] is one
//! open device that allocates, moves data and executes [`Op`]s.
//!
//! Backends implement the typed [`BackendDevice`] (submodule [`typed`]); the blanket
//! `DeviceBackend` implementation over it validates every call once for all backends. Their
//! buffer types get [`DeviceBuffer`] and [`BackendBuffer`] from one macro,
//! [`backend_buffer!`](crate::backend_buffer).

mod buffer;
mod memory;
pub mod typed;

pub use memory::MemoryStats;
pub use typed::{BackendBuffer, BackendDevice, DeviceToken};

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::device_id::DeviceId;
use crate::dtype::{DType, HostSlice, HostVec};
use crate::error::{Error, Result};
use crate::op::Op;

/// The kinds of backend.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The CPU, through rayon. Always compiled in.
    Cpu,
    /// Any GPU through wgpu (Vulkan, Metal, DX12, GL). Feature `wgpu`.
    Wgpu,
    /// NVIDIA GPUs through CUDA. Feature `cuda`.
    Cuda,
}

impl BackendKind {
    /// Every kind, in order of preference for [`crate::Device::default`] (last = fallback).
    pub const ALL: [BackendKind; 3] = [BackendKind::Cuda, BackendKind::Wgpu, BackendKind::Cpu];

    /// `cpu`, `wgpu` or `cuda`.
    pub const fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Wgpu => "wgpu",
            BackendKind::Cuda => "cuda",
        }
    }

    /// Parses `cpu`, `wgpu` or `cuda` (case-insensitive).
    pub fn parse(s: &str) -> Option<BackendKind> {
        BackendKind::ALL.into_iter().find(|k| k.name().eq_ignore_ascii_case(s.trim()))
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a backend knows about one of its devices, without opening it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// The backend.
    pub kind: BackendKind,
    /// Index among the backend's devices.
    pub ordinal: usize,
    /// Human-readable name ("NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)", ...).
    pub name: String,
    /// Whether the device is a CPU (the CPU backend, or a software GPU like lavapipe).
    pub is_cpu: bool,
    /// Memory in bytes, when known.
    pub memory_bytes: Option<u64>,
    /// Backend-specific details (compute capability, wgpu backend and limits, threads).
    pub details: Vec<(String, String)>,
}

impl DeviceInfo {
    /// The device id, `"{kind}:{ordinal}"`: the same string in the CLI, JSON and
    /// `POLYCOMPUTE_BACKEND`.
    pub fn id(&self) -> DeviceId {
        DeviceId::new(self.kind, self.ordinal)
    }
}

/// A backend: enumerates its devices and opens one. Implementations keep no device context
/// between calls; a context is made by [`Backend::open`], in the thread or process that
/// will use it.
pub trait Backend: Send + Sync + 'static {
    /// Which backend this is.
    fn kind(&self) -> BackendKind;
    /// The devices, or `BackendUnavailable` saying why there are none to be had.
    fn devices(&self) -> Result<Vec<DeviceInfo>>;
    /// Opens device `ordinal`, creating its context in the calling thread.
    fn open(&self, ordinal: usize) -> Result<Arc<dyn DeviceBackend>>;
}

/// Memory on a device, as held by a [`crate::DeviceArray`]. Buffers are immutable once an
/// op has written them: every op returns a new buffer.
pub trait DeviceBuffer: Send + Sync + fmt::Debug + 'static {
    /// Element type.
    fn dtype(&self) -> DType;
    /// Number of elements.
    fn len(&self) -> usize;
    /// True when the buffer holds no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// For the owning backend to downcast to its own buffer type.
    fn as_any(&self) -> &dyn Any;
}

/// A shared handle to a [`DeviceBuffer`].
pub type BufferRef = Arc<dyn DeviceBuffer>;

/// One open device.
pub trait DeviceBackend: Send + Sync + 'static {
    /// What the device is.
    fn info(&self) -> &DeviceInfo;
    /// Copies host data into a new device buffer.
    fn upload(&self, data: HostSlice<'_>) -> Result<BufferRef>;
    /// Copies a device buffer back to the host.
    fn download(&self, buffer: &BufferRef) -> Result<HostVec>;
    /// Runs one op on `inputs` and returns its output buffer. The op has been validated
    /// with [`Op::output`] against the inputs, so shapes and dtypes agree; an op or dtype
    /// the device cannot run is [`Error::Unsupported`].
    fn execute(&self, op: &Op, inputs: &[&BufferRef]) -> Result<BufferRef>;
    /// Runs `reduce` (an [`Op::Reduce`]) over the elements `map` (an [`Op::Map`] or
    /// [`Op::MapViews`]) computes from `inputs`: the entry of the lazy layer's map→reduce
    /// fusion ([`crate::lazy`]). A backend may evaluate the map's program as the reduction's
    /// element source, with no intermediate buffer; by default the map runs into a buffer
    /// that is then reduced. Either way the result is the same, bit for bit.
    fn map_reduce(&self, map: &Op, reduce: &Op, inputs: &[&BufferRef]) -> Result<BufferRef> {
        let mapped = self.execute(map, inputs)?;
        self.execute(reduce, &[&mapped])
    }
    /// Waits until all work queued on the device has finished.
    fn synchronize(&self) -> Result<()>;
    /// The figures of the device's caching allocator; `None` for a device without one.
    fn memory_stats(&self) -> Option<MemoryStats> {
        None
    }
    /// Hands the allocator's cached (free) blocks back to the system; live buffers are
    /// untouched. Nothing to do for a device without a cache.
    fn release_cached_memory(&self) {}
}

/// Downcasts a buffer to the backend's own type, or says whose buffer it was. For backends
/// that implement [`DeviceBackend`] directly; [`BackendDevice`] does this (and checks the
/// owning instance) by itself.
pub fn downcast_buffer<'a, B: 'static>(buffer: &'a BufferRef, device: &DeviceInfo) -> Result<&'a B> {
    buffer.as_any().downcast_ref::<B>().ok_or_else(|| Error::Backend {
        device: device.id(),
        message: format!("buffer {buffer:?} belongs to another device; move it with to_device()"),
    })
}
