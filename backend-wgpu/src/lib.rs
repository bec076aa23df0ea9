// On docs.rs (nightly, `--cfg docsrs`) each feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
//! polycompute-wgpu: the wgpu backend. Every adapter wgpu finds (Vulkan, Metal, DX12, GL)
//! is a device `wgpu:{ordinal}`; ops run as WGSL kernels generated from the IR, with the
//! shared semantics of `polycompute_core::expr` written out explicitly (see
//! `codegen::semantics`).
//!
//! Linking this crate registers the backend with the core registry, so
//! `Device::open(BackendKind::Wgpu, 0)` and `POLYCOMPUTE_BACKEND=wgpu` find it.
//!
//! Layout (the same as the CUDA backend's):
//! - `codegen/`: WGSL source generation, pure text (imports only core): one generator per
//!   op, the shared semantics, and the hand-written helpers as `.wgsl` files in `wgsl/`;
//! - `ops/`: the host side of each op (core's plan to kernel variant and launch sizes);
//! - `device.rs`: an open device, its launches and transfers, and [`BackendDevice`]
//!   (core's blanket `DeviceBackend` validates every call before it);
//! - `buffer.rs`: [`WgpuBuffer`] and the pool that reuses freed buffers;
//! - `errors.rs`: wgpu's errors as polycompute's, and the [`FaultCode`]s;
//! - `adapter.rs`: adapter enumeration; `pipeline_cache.rs`: compiled kernels by signature;
//!   `runtime_dir.rs`: a private `XDG_RUNTIME_DIR`, so Mesa's GL probe stays quiet.
//!
//! [`BackendDevice`]: polycompute_core::BackendDevice

#![warn(missing_docs)]

mod adapter;
mod buffer;
mod codegen;
mod device;
mod errors;
mod ops;
mod pipeline_cache;
mod runtime_dir;

use std::sync::{Arc, OnceLock};

use polycompute_core::registry::BACKEND_FACTORIES;
use polycompute_core::{Backend, BackendKind, DeviceBackend, DeviceInfo, Error, Result};

pub use buffer::WgpuBuffer;
pub use device::{WgpuDevice, SUBGROUPS_ENV};
pub use errors::FaultCode;

#[linkme::distributed_slice(BACKEND_FACTORIES)]
static WGPU_BACKEND: fn() -> Arc<dyn Backend> = || Arc::new(WgpuBackend);
polycompute_core::keep_registered!(WGPU_BACKEND);

/// The wgpu backend: one device per adapter.
#[derive(Debug, Default)]
pub struct WgpuBackend;

impl WgpuBackend {
    /// Opens device `ordinal` as its concrete type (for wgpu-specific queries such as
    /// [`WgpuDevice::has_f64`]); `Backend::open` wraps the same thing.
    pub fn open_device(&self, ordinal: usize) -> Result<WgpuDevice> {
        WgpuDevice::open(ordinal)
    }
}

impl Backend for WgpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Wgpu
    }

    /// Enumerates adapters once per process (enumeration creates an instance, never a
    /// device, and what it finds does not change while the process runs).
    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        static DEVICES: OnceLock<Vec<DeviceInfo>> = OnceLock::new();
        let devices = DEVICES.get_or_init(|| {
            let instance = adapter::instance();
            adapter::adapters(&instance).iter().enumerate().map(|(i, a)| adapter::device_info(a, i)).collect()
        });
        if devices.is_empty() {
            return Err(adapter::no_adapter());
        }
        Ok(devices.clone())
    }

    fn open(&self, ordinal: usize) -> Result<Arc<dyn DeviceBackend>> {
        Ok(Arc::new(WgpuDevice::open(ordinal)?))
    }
}

/// Whether `err` means "no wgpu device here" (the condition under which wgpu tests may
/// skip, unless `POLYCOMPUTE_REQUIRE` lists wgpu).
pub fn is_unavailable(err: &Error) -> bool {
    matches!(err, Error::BackendUnavailable { .. } | Error::NoSuchDevice { .. })
}
