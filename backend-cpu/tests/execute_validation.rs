//! `DeviceBackend::execute` reached directly (as `Device::backend()` allows) refuses what no
//! kernel may see: a buffer of another device, a wrong dtype, a buffer shorter than the
//! shape the op declares. Each is a typed error, raised before any CPU code runs.

use std::any::Any;
use std::sync::Arc;

use polycompute_core::{
    Backend, BufferRef, DType, DeviceBackend, DeviceBuffer, Error, HostSlice, HostVec, MatmulTranspose, Op, Program,
    ReduceKind, Shape,
};
use polycompute_cpu::CpuBackend;

fn open() -> Arc<dyn DeviceBackend> {
    CpuBackend.open(0).expect("cpu:0 opens")
}

fn shape(dims: &[usize]) -> Shape {
    Shape::new(dims).expect("a small shape")
}

fn sum_of(dims: &[usize]) -> Op {
    Op::Reduce { kind: ReduceKind::Sum, axis: None, shape: shape(dims) }
}

/// A buffer type of no backend at all.
#[derive(Debug)]
struct Alien;

impl DeviceBuffer for Alien {
    fn dtype(&self) -> DType {
        DType::F32
    }
    fn len(&self) -> usize {
        4
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[test]
fn valid_call_runs() {
    let dev = open();
    let x = dev.upload(HostSlice::F32(&[1.0, 2.0, 3.0, 4.0])).unwrap();
    let s = dev.execute(&sum_of(&[2, 2]), &[&x]).unwrap();
    assert_eq!(dev.download(&s).unwrap(), HostVec::F32(vec![10.0]));
}

#[test]
fn buffer_of_another_cpu_device_is_foreign() {
    let (mine, theirs) = (open(), open());
    let x = theirs.upload(HostSlice::F32(&[1.0, 2.0, 3.0, 4.0])).unwrap();
    let err = mine.execute(&sum_of(&[4]), &[&x]).unwrap_err();
    assert!(matches!(err, Error::ForeignBuffer { ref device } if device == "cpu:0"), "{err}");
    assert!(matches!(mine.download(&x), Err(Error::ForeignBuffer { .. })));
    // The owner still accepts it.
    assert!(theirs.execute(&sum_of(&[4]), &[&x]).is_ok());
}

#[test]
fn buffer_of_another_backend_is_foreign() {
    let dev = open();
    let alien: BufferRef = Arc::new(Alien);
    let err = dev.execute(&Op::Copy, &[&alien]).unwrap_err();
    assert!(matches!(err, Error::ForeignBuffer { .. }), "{err}");
}

#[test]
fn wrong_dtype_is_a_dtype_mismatch() {
    let dev = open();
    let x = dev.upload(HostSlice::I32(&[1, 2, 3])).unwrap();
    let program = Arc::new(Program::identity(DType::F32));
    let op = Op::Map { program, input_shapes: vec![shape(&[3])], shape: shape(&[3]) };
    let err = dev.execute(&op, &[&x]).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { expected: DType::F32, found: DType::I32, .. }), "{err}");
    let f = dev.upload(HostSlice::F64(&[1.0; 4])).unwrap();
    let op = Op::Matmul { lhs: shape(&[2, 2]), rhs: shape(&[2, 2]), transpose: MatmulTranspose::NONE };
    let err = dev.execute(&op, &[&x, &f]).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { len: 3, expected: 4, .. }), "{err}");
    let g = dev.upload(HostSlice::F32(&[1.0; 4])).unwrap();
    let err = dev.execute(&op, &[&g, &f]).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { expected: DType::F32, found: DType::F64, .. }), "{err}");
}

#[test]
fn short_buffer_is_a_length_mismatch() {
    let dev = open();
    let x = dev.upload(HostSlice::F32(&[1.0, 2.0, 3.0])).unwrap();
    let err = dev.execute(&sum_of(&[2, 3]), &[&x]).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { len: 3, expected: 6, .. }), "{err}");
    let op = Op::Transpose { shape: shape(&[2, 2]), perm: vec![1, 0] };
    let err = dev.execute(&op, &[&x]).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { len: 3, expected: 4, .. }), "{err}");
    let program = Arc::new(Program::cast(DType::F32, DType::I32));
    let op = Op::Map { program, input_shapes: vec![shape(&[4, 1])], shape: shape(&[4, 1]) };
    let err = dev.execute(&op, &[&x]).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { len: 3, expected: 4, .. }), "{err}");
}

#[test]
fn wrong_input_count_is_refused() {
    let dev = open();
    let x = dev.upload(HostSlice::F32(&[1.0])).unwrap();
    let err = dev.execute(&Op::Copy, &[&x, &x]).unwrap_err();
    assert!(matches!(err, Error::InvalidShape(_)), "{err}");
}
