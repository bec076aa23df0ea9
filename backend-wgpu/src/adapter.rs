//! Adapter enumeration: one wgpu instance per call, every adapter of every native backend,
//! described as a [`DeviceInfo`] without opening a device.

use polycompute_core::{BackendKind, DeviceInfo, Error, Result};

/// A fresh wgpu instance over every backend compiled in. `WGPU_BACKEND` (wgpu's own
/// variable, e.g. `vulkan` or `gl`) narrows the set, as in every wgpu program. Every
/// instance is made here, after the GL driver has a runtime directory (`runtime_dir`).
pub(crate) fn instance() -> wgpu::Instance {
    crate::runtime_dir::ensure();
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::all();
    wgpu::Instance::new(desc.with_env())
}

/// Every adapter, in a fixed order (wgpu's enumeration order: Vulkan, Metal, DX12, then GL).
/// The position in this list is the device ordinal.
pub(crate) fn adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
}

/// The adapter for `ordinal`, or `NoSuchDevice` / `BackendUnavailable`.
pub(crate) fn adapter(instance: &wgpu::Instance, ordinal: usize) -> Result<wgpu::Adapter> {
    let mut all = adapters(instance);
    if all.is_empty() {
        return Err(no_adapter());
    }
    let count = all.len();
    if ordinal >= count {
        return Err(Error::NoSuchDevice { kind: BackendKind::Wgpu, ordinal, count });
    }
    Ok(all.swap_remove(ordinal))
}

/// The error for a machine without any adapter.
pub(crate) fn no_adapter() -> Error {
    Error::BackendUnavailable {
        kind: BackendKind::Wgpu,
        reason: "no adapter (install a GPU driver, or Mesa's lavapipe: scripts/setup-lavapipe.sh)".into(),
    }
}

/// True for adapters that run on the CPU (lavapipe, llvmpipe, SwiftShader, WARP): they are
/// correct but slow, so `Device::default()` prefers a real GPU (or the CPU backend) to them.
pub(crate) fn is_software(info: &wgpu::AdapterInfo) -> bool {
    if info.device_type == wgpu::DeviceType::Cpu {
        return true;
    }
    let name = info.name.to_ascii_lowercase();
    ["llvmpipe", "lavapipe", "softpipe", "swiftshader", "microsoft basic render"].iter().any(|s| name.contains(s))
}

/// The adapter's smallest subgroup size when it offers subgroup operations in compute
/// shaders (`Features::SUBGROUP`: Vulkan, Metal, DX12; never GL), else `None`.
pub(crate) fn subgroup_min_size(adapter: &wgpu::Adapter) -> Option<u32> {
    if !adapter.features().contains(wgpu::Features::SUBGROUP) {
        return None;
    }
    // wgpu promises sizes of at least 4 (`MINIMUM_SUBGROUP_MIN_SIZE`); the kernels rely on it.
    Some(adapter.get_info().subgroup_min_size.max(4))
}

/// Describes `adapter` as device `ordinal`.
pub(crate) fn device_info(adapter: &wgpu::Adapter, ordinal: usize) -> DeviceInfo {
    let info = adapter.get_info();
    let limits = adapter.limits();
    let f64_ok = adapter.features().contains(wgpu::Features::SHADER_F64);
    let details = vec![
        ("wgpu_backend".to_string(), info.backend.to_str().to_string()),
        ("device_type".to_string(), format!("{:?}", info.device_type)),
        ("driver".to_string(), format!("{} {}", info.driver, info.driver_info).trim().to_string()),
        ("vendor_id".to_string(), format!("{:#06x}", info.vendor)),
        ("device_id".to_string(), format!("{:#06x}", info.device)),
        ("shader_f64".to_string(), f64_ok.to_string()),
        ("subgroups".to_string(), subgroup_min_size(adapter).is_some().to_string()),
        ("max_storage_buffer_binding_size".to_string(), limits.max_storage_buffer_binding_size.to_string()),
        ("max_buffer_size".to_string(), limits.max_buffer_size.to_string()),
        ("max_compute_workgroup_storage_size".to_string(), limits.max_compute_workgroup_storage_size.to_string()),
        ("max_compute_invocations_per_workgroup".to_string(), limits.max_compute_invocations_per_workgroup.to_string()),
        ("max_compute_workgroups_per_dimension".to_string(), limits.max_compute_workgroups_per_dimension.to_string()),
        ("max_storage_buffers_per_shader_stage".to_string(), limits.max_storage_buffers_per_shader_stage.to_string()),
    ];
    DeviceInfo {
        kind: BackendKind::Wgpu,
        ordinal,
        name: format!("{} ({})", info.name, info.backend.to_str()),
        is_cpu: is_software(&info),
        memory_bytes: None,
        details,
    }
}
