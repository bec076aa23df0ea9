//! Drives the backend against a fake `libcuda.so.1` (and a fake NVRTC, see `fake/mod.rs`):
//! proves, without a GPU, that the link stub forwards every call to the driver found at run
//! time (arguments in registers and on the stack, results back), that device enumeration,
//! open (which resets a primary context poisoned by an earlier fault), upload and download go
//! through it, and that a faulting launch becomes a sticky `DeviceFault`.

mod fake;

#[test]
fn calls_reach_the_driver_found_at_run_time() {
    fake::run_against_fake_driver("calls_reach_the_driver_found_at_run_time", child);
}

fn child() {
    use polycompute_core::{DType, Error, Fill, HostSlice, HostVec, Op, Scalar};
    let Some(backend) = fake::fake_backend() else { return };
    let devices = backend.devices().unwrap();
    let d = &devices[0];
    assert_eq!(d.memory_bytes, Some(1 << 30));
    assert!(d.details.contains(&("arch".into(), "sm_90".into())), "{d:?}");
    assert!(d.details.contains(&("multiprocessors".into(), "132".into())), "{d:?}");
    assert!(matches!(backend.open(3), Err(Error::NoSuchDevice { ordinal: 3, count: 1, .. })));
    let dev = backend.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    // Upload, device copy and download round-trip through the fake's memcpy.
    let data = [1.5f32, -2.0, 3.25];
    let buf = dev.upload(HostSlice::F32(&data)).unwrap();
    let copy = dev.execute(&Op::Copy, &[&buf]).unwrap();
    assert_eq!(dev.download(&copy).unwrap(), HostVec::F32(data.to_vec()));
    let empty = dev.upload(HostSlice::I32(&[])).unwrap();
    assert_eq!(dev.download(&empty).unwrap(), HostVec::I32(vec![]));
    // A launch (11 arguments, five on the stack) that the fake answers with 700.
    let op = Op::Fill { fill: Fill::Constant(Scalar::F32(1.0)), dtype: DType::F32, len: 1000 };
    match dev.execute(&op, &[]) {
        Err(Error::DeviceFault { code: 700, sticky: true, message, .. }) => {
            assert!(message.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{message}")
        }
        other => panic!("expected a sticky fault, got {other:?}"),
    }
    dev.synchronize().unwrap();
}
