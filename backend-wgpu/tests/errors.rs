//! Failures come back as typed errors: a shader the device rejects, an allocation past the
//! device's limits, a buffer handed to the wrong device.

mod common;

use polycompute_core::{Backend, DeviceBackend, Error, HostSlice};
use polycompute_wgpu::WgpuBackend;

#[test]
fn a_shader_compile_error_is_kernel_compile_with_source_and_log() {
    let Some(dev) = common::wgpu_device() else { return };
    // A syntax error.
    let bad = "@compute @workgroup_size(1) fn main() { let x: f32 = ; }";
    match dev.compile_wgsl(bad) {
        Err(Error::KernelCompile { device, code, log }) => {
            assert_eq!(device, dev.info().id());
            assert_eq!(code, bad, "the error carries the source");
            assert!(log.contains("expected") || log.contains("error"), "the log explains: {log}");
        }
        other => panic!("expected KernelCompile, got {other:?}"),
    }
    // A type error that parses.
    let bad = "@compute @workgroup_size(1) fn main() { let x: f32 = 1u; }";
    assert!(matches!(dev.compile_wgsl(bad), Err(Error::KernelCompile { .. })));
    // And a good shader compiles, so the failures above are the shaders' fault.
    dev.compile_wgsl("@compute @workgroup_size(1) fn main() { }").unwrap();
    let msg = dev.compile_wgsl("fn main() {").unwrap_err().to_string();
    assert!(msg.contains("generated source"), "{msg}");
}

#[test]
fn an_oversize_allocation_is_too_large_and_names_the_limit() {
    let Some(dev) = common::device() else { return };
    let limit: u64 = dev
        .info()
        .details
        .iter()
        .find(|(k, _)| k == "max_storage_buffer_binding_size")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap();
    let n = (limit / 4 + 1) as usize;
    match dev.zeros::<f32>(&[n]) {
        Err(Error::TooLarge(msg)) => {
            assert!(msg.contains("max_storage_buffer_binding_size") || msg.contains("max_buffer_size"), "{msg}");
            assert!(msg.contains(&limit.to_string()) || msg.contains("max_buffer_size"), "{msg}");
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // The device is still fine afterwards.
    assert_eq!(dev.full(3u32, &[4]).unwrap().to_vec().unwrap(), vec![3; 4]);
    // Exactly at the limit is fine (the pool's size class never outgrows a binding).
    let wdev = common::wgpu_device().unwrap();
    let at_limit = wdev.alloc(polycompute_core::DType::U32, (limit / 4) as usize).unwrap();
    assert!(at_limit.raw().size() <= limit, "{} > {limit}", at_limit.raw().size());
    drop(at_limit);
    assert!(matches!(wdev.alloc(polycompute_core::DType::F64, usize::MAX / 4), Err(Error::TooLarge(_))));
}

#[test]
fn a_buffer_of_another_device_is_an_error_not_a_crash() {
    let Some(_) = common::wgpu_device() else { return };
    let a = WgpuBackend.open(common::ordinal()).unwrap();
    let b = WgpuBackend.open(common::ordinal()).unwrap();
    let buf = a.upload(HostSlice::F32(&[1.0, 2.0])).unwrap();
    match b.download(&buf) {
        Err(Error::ForeignBuffer { device }) => assert_eq!(device, b.info().id()),
        other => panic!("expected ForeignBuffer, got {other:?}"),
    }
    assert_eq!(a.download(&buf).unwrap(), polycompute_core::HostVec::F32(vec![1.0, 2.0]));
}

#[test]
fn every_adapter_either_runs_a_map_or_says_why() {
    let Some(_) = common::wgpu_device() else { return };
    // The GL adapter on llvmpipe (when present) may lack features; it must fail typed, not crash.
    for info in WgpuBackend.devices().unwrap() {
        let dev = match WgpuBackend.open(info.ordinal) {
            Ok(d) => polycompute_core::Device::from_backend(d),
            Err(e) => {
                eprintln!("{}: cannot open: {e}", info.id());
                continue;
            }
        };
        let x = dev.from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
        match x.map(|v| v * 2.0).and_then(|y| y.to_vec()) {
            Ok(v) => assert_eq!(v, vec![2.0, 4.0, 6.0], "{}", info.id()),
            Err(e) => eprintln!("{}: map failed with a typed error: {e}", info.id()),
        }
    }
}

#[test]
fn errors_outside_any_scope_reach_the_handler_not_a_panic() {
    let Some(dev) = common::wgpu_device() else { return };
    let (device, _) = dev.wgpu();
    // Invalid outside polycompute's scopes: MAP_READ may only go with COPY_DST.
    let _bad = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("invalid on purpose"),
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    match dev.upload(HostSlice::F32(&[1.0])) {
        Err(Error::Backend { message, .. }) => assert!(message.to_lowercase().contains("usage"), "{message}"),
        other => panic!("the escaped error must surface typed, got {other:?}"),
    }
    // Reported once; the device goes on working.
    let buf = dev.upload(HostSlice::F32(&[1.0, 2.0])).unwrap();
    assert_eq!(dev.download(&buf).unwrap(), polycompute_core::HostVec::F32(vec![1.0, 2.0]));
}

#[test]
fn a_lost_device_is_a_sticky_device_fault() {
    let Some(dev) = common::wgpu_device() else { return };
    let buf = dev.upload(HostSlice::U32(&[7, 8])).unwrap();
    dev.wgpu().0.destroy();
    for _ in 0..2 {
        match dev.download(&buf) {
            Err(Error::DeviceFault { sticky: true, message, .. }) => assert!(message.contains("lost"), "{message}"),
            other => panic!("expected a sticky DeviceFault, got {other:?}"),
        }
    }
    assert!(matches!(dev.upload(HostSlice::F32(&[1.0])), Err(Error::DeviceFault { sticky: true, .. })));
}
