//! Adapter enumeration and device opening.

mod common;

use polycompute_core::{Backend, BackendKind, Error};
use polycompute_wgpu::WgpuBackend;

#[test]
fn devices_describe_every_adapter_without_opening_one() {
    let Some(_dev) = common::wgpu_device() else { return };
    let devices = WgpuBackend.devices().expect("an adapter was opened, so enumeration finds it");
    for (i, d) in devices.iter().enumerate() {
        eprintln!("{}: {} cpu={} {:?}", d.id(), d.name, d.is_cpu, d.details);
        assert_eq!(d.kind, BackendKind::Wgpu);
        assert_eq!(d.ordinal, i);
        assert_eq!(d.id(), format!("wgpu:{i}"));
        for key in ["wgpu_backend", "device_type", "shader_f64", "max_storage_buffer_binding_size"] {
            assert!(d.details.iter().any(|(k, _)| k == key), "{key} missing from {:?}", d.details);
        }
        let software = ["llvmpipe", "lavapipe", "swiftshader"].iter().any(|s| d.name.to_lowercase().contains(s));
        if software {
            assert!(d.is_cpu, "{} is a software rasterizer and must be marked is_cpu", d.name);
        }
    }
    let count = devices.len();
    match WgpuBackend.open(count) {
        Err(Error::NoSuchDevice { kind: BackendKind::Wgpu, ordinal, count: c }) => {
            assert_eq!((ordinal, c), (count, count))
        }
        other => panic!("opening past the last adapter must be NoSuchDevice, got {:?}", other.map(|_| ())),
    }
}
