//! `DeviceBackend::execute` of a CUDA device, reached directly (as `Device::backend()`
//! allows), refuses what no kernel may see: a buffer of another device (a CPU buffer, or one
//! of a second instance of the same CUDA device), a wrong dtype, a buffer shorter than the
//! shape the op declares. Each is a typed error. Runs on the fake driver (`fake/mod.rs`),
//! whose every launch faults: so a typed error here, and not a `DeviceFault`, also shows
//! that nothing was launched; and, on the GPU run, on the real device (skipped without one
//! unless `POLYCOMPUTE_REQUIRE` lists `cuda`).

use std::sync::Arc;

use polycompute_core::{Backend, DType, Error, HostSlice, HostVec, MatmulTranspose, Op, Program, ReduceKind, Shape};

mod fake;

#[test]
fn execute_refuses_foreign_mistyped_and_short_buffers() {
    fake::run_against_fake_driver("execute_refuses_foreign_mistyped_and_short_buffers", child);
}

fn shape(dims: &[usize]) -> Shape {
    Shape::new(dims).expect("a small shape")
}

fn child() {
    let Some(cuda) = fake::fake_backend() else { return };
    checks(cuda);
}

#[test]
fn a_real_device_refuses_them_too() {
    // Referencing the crate links it, and linking registers the backend.
    polycompute_cuda::set_matmul_impl(polycompute_cuda::matmul_impl());
    let cuda = polycompute_core::registry::backend(polycompute_core::BackendKind::Cuda).unwrap();
    if let Err(e) = cuda.devices() {
        let required = polycompute_testing::devices::is_required(polycompute_core::BackendKind::Cuda);
        assert!(!required, "POLYCOMPUTE_REQUIRE lists cuda but CUDA is unavailable: {e}");
        println!("SKIPPED: no CUDA device ({e})");
        return;
    }
    checks(cuda);
}

/// The refusals, on `cuda`'s device 0.
fn checks(cuda: Arc<dyn Backend>) {
    let dev = cuda.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    let x = dev.upload(HostSlice::F32(&[1.0, 2.0, 3.0])).unwrap();
    let sum = |dims: &[usize]| Op::Reduce { kind: ReduceKind::Sum, axis: None, shape: shape(dims) };

    // A CPU buffer.
    let cpu = polycompute_cpu::CpuBackend.open(0).unwrap();
    let on_cpu = cpu.upload(HostSlice::F32(&[1.0, 2.0, 3.0])).unwrap();
    let err = dev.execute(&sum(&[3]), &[&on_cpu]).unwrap_err();
    assert!(matches!(err, Error::ForeignBuffer { ref device } if device == "cuda:0"), "{err}");
    assert!(matches!(dev.download(&on_cpu), Err(Error::ForeignBuffer { .. })));
    // A buffer of a second instance of the same device: same type, other owner.
    let other = cuda.open(0).unwrap();
    let theirs = other.upload(HostSlice::F32(&[1.0, 2.0, 3.0])).unwrap();
    let err = dev.execute(&Op::Copy, &[&theirs]).unwrap_err();
    assert!(matches!(err, Error::ForeignBuffer { .. }), "{err}");
    assert!(matches!(dev.download(&theirs), Err(Error::ForeignBuffer { .. })));
    assert_eq!(other.download(&theirs).unwrap(), HostVec::F32(vec![1.0, 2.0, 3.0]), "the owner still reads it");

    // A wrong dtype: an f32 program given an i32 buffer; a matmul of f32 and f64.
    let ints = dev.upload(HostSlice::I32(&[1, 2, 3])).unwrap();
    let program = Arc::new(Program::identity(DType::F32));
    let op = Op::Map { program, input_shapes: vec![shape(&[3])], shape: shape(&[3]) };
    let err = dev.execute(&op, &[&ints]).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { expected: DType::F32, found: DType::I32, .. }), "{err}");
    let (f32s, f64s) = (dev.upload(HostSlice::F32(&[1.0; 4])).unwrap(), dev.upload(HostSlice::F64(&[1.0; 4])).unwrap());
    let matmul = Op::Matmul { lhs: shape(&[2, 2]), rhs: shape(&[2, 2]), transpose: MatmulTranspose::NONE };
    let err = dev.execute(&matmul, &[&f32s, &f64s]).unwrap_err();
    assert!(matches!(err, Error::DTypeMismatch { expected: DType::F32, found: DType::F64, .. }), "{err}");

    // A buffer shorter than the declared shape: a reduction, a transpose, a broadcast map.
    let err = dev.execute(&sum(&[2, 3, 1, 2]), &[&x]).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { len: 3, expected: 12, .. }), "{err}");
    let err = dev.execute(&Op::Transpose { shape: shape(&[2, 2]), perm: vec![1, 0] }, &[&x]).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { len: 3, expected: 4, .. }), "{err}");
    let program = Arc::new(Program::cast(DType::F32, DType::I32));
    let op = Op::Map { program, input_shapes: vec![shape(&[4, 1])], shape: shape(&[4, 5]) };
    let err = dev.execute(&op, &[&x]).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { len: 3, expected: 4, .. }), "{err}");
    // And a wrong number of inputs.
    let err = dev.execute(&Op::Copy, &[&x, &x]).unwrap_err();
    assert!(matches!(err, Error::InvalidShape(_)), "{err}");

    // The same device still runs a valid op: a copy launches no kernel (so the fake does
    // not fault it).
    let copy = dev.execute(&Op::Copy, &[&x]).unwrap();
    assert_eq!(dev.download(&copy).unwrap(), HostVec::F32(vec![1.0, 2.0, 3.0]));
}
