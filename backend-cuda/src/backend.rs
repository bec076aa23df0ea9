//! The CUDA [`Backend`]: enumerates devices through cust without keeping a context, and
//! opens them. A missing driver, a stub driver, no device or a missing NVRTC is
//! `BackendUnavailable` with the reason.

use std::sync::Arc;

use cust::device::{Device, DeviceAttribute};
use cust::CudaFlags;
use polycompute_core::{Backend, BackendKind, DeviceBackend, DeviceId, DeviceInfo, Error, Result};

use crate::device::CudaDevice;
use crate::driver::driver_status;
use crate::errors::from_cust;
use crate::nvrtc::Nvrtc;

/// The CUDA backend: every NVIDIA GPU the driver reports, as `cuda:0`, `cuda:1`, ...
#[derive(Debug, Default)]
pub struct CudaBackend;

fn unavailable(reason: String) -> Error {
    Error::BackendUnavailable { kind: BackendKind::Cuda, reason }
}

/// What the backend needs before any device can be used: a real driver (initialised) and
/// NVRTC. Returns the driver version.
fn ready() -> Result<i32> {
    let version = driver_status().map_err(unavailable)?;
    Nvrtc::get().map_err(|e| unavailable(e.to_string()))?;
    cust::init(CudaFlags::empty()).map_err(|e| unavailable(format!("cuInit failed: {e}")))?;
    Ok(version)
}

/// One device's description, its `sm_XX` number and multiprocessor count.
fn describe(ordinal: usize, driver_version: i32) -> Result<(DeviceInfo, u32, u32)> {
    let id = DeviceId::new(BackendKind::Cuda, ordinal);
    let dev = Device::get_device(ordinal as u32).map_err(|e| from_cust(e, id, "getting the device"))?;
    let attr = |a: DeviceAttribute| dev.get_attribute(a).map_err(|e| from_cust(e, id, "reading an attribute"));
    let (major, minor) =
        (attr(DeviceAttribute::ComputeCapabilityMajor)?, attr(DeviceAttribute::ComputeCapabilityMinor)?);
    let sms = attr(DeviceAttribute::MultiprocessorCount)?.max(1) as u32;
    let name = dev.name().map_err(|e| from_cust(e, id, "reading the name"))?;
    let memory = dev.total_memory().map_err(|e| from_cust(e, id, "reading the memory size"))? as u64;
    let arch = (major.max(0) * 10 + minor.max(0)) as u32;
    let nvrtc =
        Nvrtc::get().map(|n| format!("{}.{} ({})", n.version().0, n.version().1, n.path())).unwrap_or_else(|e| e);
    let cublas = crate::cublas::status_if_loaded();
    let info = DeviceInfo {
        kind: BackendKind::Cuda,
        ordinal,
        name,
        is_cpu: false,
        memory_bytes: Some(memory),
        details: vec![
            ("compute_capability".into(), format!("{major}.{minor}")),
            ("arch".into(), format!("sm_{arch}")),
            ("multiprocessors".into(), sms.to_string()),
            ("driver".into(), format!("{}.{}", driver_version / 1000, (driver_version % 1000) / 10)),
            ("nvrtc".into(), nvrtc),
            ("cublas".into(), cublas),
        ],
    };
    Ok((info, arch, sms))
}

fn device_count() -> Result<usize> {
    Ok(Device::num_devices().map_err(|e| unavailable(format!("counting devices failed: {e}")))? as usize)
}

impl Backend for CudaBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        let version = ready()?;
        let count = device_count()?;
        if count == 0 {
            return Err(unavailable("no CUDA device".into()));
        }
        (0..count).map(|i| describe(i, version).map(|d| d.0)).collect()
    }

    fn open(&self, ordinal: usize) -> Result<Arc<dyn DeviceBackend>> {
        let version = ready()?;
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::NoSuchDevice { kind: BackendKind::Cuda, ordinal, count });
        }
        let (info, arch, sms) = describe(ordinal, version)?;
        Ok(Arc::new(CudaDevice::open(ordinal, info, arch, sms)?))
    }
}
