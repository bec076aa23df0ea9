//! What reaches `DeviceBackend::execute` through the public `Device::backend()` is checked
//! before any wgpu code runs (core's blanket implementation over `BackendDevice`): a buffer
//! of another device, a wrong dtype and a buffer shorter than the op's shape each come back
//! as a typed error, and the device keeps working.

mod common;

use std::sync::Arc;

use polycompute_core::{
    Backend, BufferRef, DType, Device, Error, HostSlice, HostVec, MatmulTranspose, Op, Program, ReduceKind, Shape,
};
use polycompute_cpu::CpuBackend;
use polycompute_wgpu::WgpuBackend;

fn shape(dims: &[usize]) -> Shape {
    Shape::new(dims).unwrap()
}

fn sum_all(dims: &[usize]) -> Op {
    Op::Reduce { kind: ReduceKind::Sum, axis: None, shape: shape(dims) }
}

/// The map `x` (identity) of one input of `dtype` over `dims`.
fn identity_map(dtype: DType, dims: &[usize]) -> Op {
    Op::Map { program: Arc::new(Program::identity(dtype)), input_shapes: vec![shape(dims)], shape: shape(dims) }
}

/// Asserts that `dev` refuses `foreign` in `execute` and `download` as a foreign buffer.
fn assert_foreign(dev: &Device, foreign: &BufferRef) {
    let backend = dev.backend();
    for result in [backend.execute(&Op::Copy, &[foreign]).map(|_| ()), backend.download(foreign).map(|_| ())] {
        match result {
            Err(Error::ForeignBuffer { device }) => assert_eq!(device, dev.id()),
            other => panic!("{}: expected ForeignBuffer, got {other:?}", dev.id()),
        }
    }
}

/// Asserts that `dev` still runs an op (a refused call leaves nothing behind).
fn assert_still_works(dev: &Device) {
    let backend = dev.backend();
    let x = backend.upload(HostSlice::F32(&[1.0, 2.0, 3.0])).unwrap();
    let y = backend.execute(&sum_all(&[3]), &[&x]).unwrap();
    assert_eq!(backend.download(&y).unwrap(), HostVec::F32(vec![6.0]));
}

#[test]
fn a_buffer_of_the_other_adapter_is_foreign() {
    let Some(dev) = common::device() else { return };
    let others: Vec<usize> =
        WgpuBackend.devices().unwrap().iter().map(|d| d.ordinal).filter(|&o| o != common::ordinal()).collect();
    if others.is_empty() {
        eprintln!("only one wgpu adapter: the other-adapter case needs two (lavapipe and llvmpipe)");
    }
    for ordinal in others {
        let other = match WgpuBackend.open(ordinal) {
            Ok(d) => Device::from_backend(d),
            Err(e) => {
                eprintln!("wgpu:{ordinal} does not open ({e}); skipped");
                continue;
            }
        };
        let theirs = other.backend().upload(HostSlice::F32(&[1.0, 2.0])).unwrap();
        assert_foreign(&dev, &theirs);
        // And the other way round.
        let ours = dev.backend().upload(HostSlice::F32(&[1.0, 2.0])).unwrap();
        assert_foreign(&other, &ours);
    }
    assert_still_works(&dev);
}

#[test]
fn a_buffer_of_another_instance_of_the_same_adapter_is_foreign() {
    let Some(dev) = common::device() else { return };
    let twin = Device::from_backend(WgpuBackend.open(common::ordinal()).unwrap());
    let theirs = twin.backend().upload(HostSlice::I32(&[1, 2])).unwrap();
    assert_foreign(&dev, &theirs);
    assert_still_works(&dev);
}

#[test]
fn a_cpu_buffer_is_foreign() {
    let Some(dev) = common::device() else { return };
    let cpu = Device::from_backend(CpuBackend.open(0).unwrap());
    let theirs = cpu.backend().upload(HostSlice::F32(&[1.0, 2.0])).unwrap();
    assert_foreign(&dev, &theirs);
    // Mixed with a buffer of its own, the foreign one is still refused.
    let ours = dev.backend().upload(HostSlice::F32(&[1.0, 2.0])).unwrap();
    let op = Op::Matmul { lhs: shape(&[1, 2]), rhs: shape(&[2, 1]), transpose: MatmulTranspose::NONE };
    assert!(matches!(dev.backend().execute(&op, &[&ours, &theirs]), Err(Error::ForeignBuffer { .. })));
    assert_still_works(&dev);
}

#[test]
fn a_wrong_dtype_is_a_dtype_mismatch() {
    let Some(dev) = common::device() else { return };
    let backend = dev.backend();
    let ints = backend.upload(HostSlice::I32(&[1, 2, 3])).unwrap();
    match backend.execute(&identity_map(DType::F32, &[3]), &[&ints]) {
        Err(Error::DTypeMismatch { expected: DType::F32, found: DType::I32, .. }) => {}
        other => panic!("expected DTypeMismatch, got {other:?}"),
    }
    // Two matmul operands of different dtypes.
    let a = backend.upload(HostSlice::F32(&[1.0, 2.0])).unwrap();
    let b = backend.upload(HostSlice::U32(&[1, 2])).unwrap();
    let op = Op::Matmul { lhs: shape(&[1, 2]), rhs: shape(&[2, 1]), transpose: MatmulTranspose::NONE };
    assert!(matches!(backend.execute(&op, &[&a, &b]), Err(Error::DTypeMismatch { .. })));
    assert_still_works(&dev);
}

#[test]
fn a_short_buffer_is_a_length_mismatch() {
    let Some(dev) = common::device() else { return };
    let backend = dev.backend();
    let three = backend.upload(HostSlice::F32(&[1.0, 2.0, 3.0])).unwrap();
    for op in
        [sum_all(&[2, 2]), identity_map(DType::F32, &[4]), Op::Transpose { shape: shape(&[2, 2]), perm: vec![1, 0] }]
    {
        match backend.execute(&op, &[&three]) {
            Err(Error::LengthMismatch { len: 3, expected: 4, .. }) => {}
            other => panic!("{}: expected LengthMismatch, got {other:?}", op.name()),
        }
    }
    // A longer buffer than the shape says is refused too: the kernel would read past it.
    let five = backend.upload(HostSlice::F32(&[1.0; 5])).unwrap();
    assert!(matches!(backend.execute(&sum_all(&[4]), &[&five]), Err(Error::LengthMismatch { len: 5, .. })));
    assert_still_works(&dev);
}
