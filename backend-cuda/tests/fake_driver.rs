//! Drives the backend against a fake `libcuda.so.1` (and a fake NVRTC, see `fake/mod.rs`):
//! proves, without a GPU, that the link stub forwards every call to the driver found at run
//! time (arguments in registers and on the stack, results back), that device enumeration,
//! open (which resets a primary context poisoned by an earlier fault), upload and download go
//! through it, and that a faulting launch becomes a sticky `DeviceFault`. Also: concurrent
//! first uses of a kernel keep one loaded module (none that was launched is unloaded); a cuBLAS
//! failure over a poisoned context is sticky like the driver's own; a transposed operand reaches
//! cuBLAS as `CUBLAS_OP_T` with its stored leading dimension (a computing fake cuBLAS); an
//! entry point the driver lacks is reported as such by the stub, not as "no driver"; a half
//! matmul calls cuBLAS's `GemmStridedBatchedEx` with the half data type, f32 compute and
//! swapped operands, and a cuBLAS without it is named when forced, passed over for the own
//! kernel by default.

mod fake;

use polycompute_core::{DType, Error, Fill, HostSlice, HostVec, MatmulTranspose, Op, Scalar, Shape};

#[test]
fn calls_reach_the_driver_found_at_run_time() {
    fake::run_against_fake_driver("calls_reach_the_driver_found_at_run_time", child);
}

fn child() {
    use polycompute_core::HostVec;
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

#[test]
fn concurrent_first_launches_keep_the_first_loaded_module() {
    fake::run_against_fake_driver("concurrent_first_launches_keep_the_first_loaded_module", race_child);
}

fn race_child() {
    let Some(backend) = fake::fake_backend() else { return };
    let dev = backend.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    let threads = 16;
    let barrier = std::sync::Barrier::new(threads);
    let op = Op::Fill { fill: Fill::Constant(Scalar::F32(2.0)), dtype: DType::F32, len: 4096 };
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                barrier.wait();
                // Every launch "faults" (700): what matters is which module it used.
                match dev.execute(&op, &[]) {
                    Err(Error::DeviceFault { code: 700, .. }) => {}
                    other => panic!("expected the fake's fault, got {other:?}"),
                }
            });
        }
    });
    let loads = fake::fake_counter("fake_module_loads");
    // The fake's load takes 20 ms, so the threads' first uses overlap: else nothing was tested.
    assert!(loads > 1, "the threads did not race ({loads} load): nothing was tested");
    assert_eq!(fake::fake_counter("fake_launched_then_unloaded"), 0, "a launched module was unloaded ({loads} loads)");
    drop(dev);
}

#[test]
fn a_cublas_failure_over_a_poisoned_context_is_sticky() {
    fake::run_against_fake_driver("a_cublas_failure_over_a_poisoned_context_is_sticky", cublas_child);
}

fn cublas_child() {
    let Some(backend) = fake::fake_backend() else { return };
    let dev = backend.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    polycompute_cuda::set_matmul_impl(polycompute_cuda::MatmulImpl::Cublas);
    let a = dev.upload(HostSlice::F32(&[1.0; 4])).unwrap();
    let shape = Shape::new(&[2, 2]).unwrap();
    match dev.execute(&Op::Matmul { lhs: shape.clone(), rhs: shape, transpose: MatmulTranspose::NONE }, &[&a, &a]) {
        Err(Error::DeviceFault { code: 700, sticky: true, message, .. }) => {
            assert!(message.contains("CUBLAS_STATUS_EXECUTION_FAILED"), "{message}");
            assert!(message.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{message}");
        }
        other => panic!("expected a sticky fault from the poisoned context, got {other:?}"),
    }
}

#[test]
fn an_entry_point_the_driver_lacks_is_named() {
    let out =
        fake::run_against_driver_without("an_entry_point_the_driver_lacks_is_named", missing_child, "cuMemAllocAsync");
    if let Some(text) = out {
        assert!(text.contains("libcuda.so.1) has no cuMemAllocAsync"), "the stub did not name it:\n{text}");
    }
}

fn missing_child() {
    let Some(backend) = fake::fake_backend() else { return };
    let dev = backend.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    match dev.upload(HostSlice::F32(&[1.0, 2.0])) {
        Err(Error::DeviceFault { code: 500, sticky: false, message, .. }) => {
            assert!(message.contains("update the NVIDIA driver"), "{message}");
            assert!(!message.contains("stub library"), "{message}");
        }
        other => panic!("expected CUDA_ERROR_NOT_FOUND from the stub, got {other:?}"),
    }
}

#[test]
fn transposed_operands_reach_cublas_as_op_t() {
    fake::run_against_fake_driver_with_cublas(
        "transposed_operands_reach_cublas_as_op_t",
        transposed_child,
        fake::FAKE_CUBLAS_COMPUTING,
    );
}

/// `x` (`[batch, rows, cols]` row-major) transposed per batch.
fn transposed(x: &[f64], batch: usize, rows: usize, cols: usize) -> Vec<f64> {
    let mut t = vec![0.0; x.len()];
    for z in 0..batch {
        for r in 0..rows {
            for c in 0..cols {
                t[(z * cols + c) * rows + r] = x[(z * rows + r) * cols + c];
            }
        }
    }
    t
}

fn transposed_child() {
    let Some(backend) = fake::fake_backend() else { return };
    let dev = backend.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    polycompute_cuda::set_matmul_impl(polycompute_cuda::MatmulImpl::Cublas);
    // Small integers: every product and sum is exact, in any order.
    let (batch, m, k, n) = (2, 3, 5, 4);
    let a: Vec<f64> = (0..batch * m * k).map(|i| (i % 7) as f64 - 3.0).collect();
    let b: Vec<f64> = (0..batch * k * n).map(|i| (i % 5) as f64 - 2.0).collect();
    let mut want = vec![0.0; batch * m * n];
    for z in 0..batch {
        for i in 0..m {
            for j in 0..n {
                want[(z * m + i) * n + j] =
                    (0..k).map(|p| a[(z * m + i) * k + p] * b[(z * k + p) * n + j]).sum::<f64>();
            }
        }
    }
    let (lhs, rhs) = (Shape::new(&[batch, m, k]).unwrap(), Shape::new(&[batch, k, n]).unwrap());
    for (lt, rt) in [(false, false), (true, false), (false, true), (true, true)] {
        let sa = if lt { transposed(&a, batch, m, k) } else { a.clone() };
        let sb = if rt { transposed(&b, batch, k, n) } else { b.clone() };
        let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        let transpose = MatmulTranspose { lhs: lt, rhs: rt };
        let op = Op::Matmul { lhs: lhs.clone(), rhs: rhs.clone(), transpose };
        // f64 through cublasDgemmStridedBatched, f32 through cublasSgemmStridedBatched.
        let (ba, bb) = (dev.upload(HostSlice::F64(&sa)).unwrap(), dev.upload(HostSlice::F64(&sb)).unwrap());
        let got = dev.execute(&op, &[&ba, &bb]).unwrap_or_else(|e| panic!("{transpose:?}: {e}"));
        assert_eq!(dev.download(&got).unwrap(), HostVec::F64(want.clone()), "{transpose:?}");
        let (fa, fb) = (f32s(&sa), f32s(&sb));
        let (ba, bb) = (dev.upload(HostSlice::F32(&fa)).unwrap(), dev.upload(HostSlice::F32(&fb)).unwrap());
        let got = dev.execute(&op, &[&ba, &bb]).unwrap_or_else(|e| panic!("{transpose:?}: {e}"));
        assert_eq!(dev.download(&got).unwrap(), HostVec::F32(f32s(&want)), "{transpose:?}");
    }
}

#[test]
fn half_matmul_calls_cublas_gemm_ex_with_f32_compute() {
    fake::run_against_fake_driver("half_matmul_calls_cublas_gemm_ex_with_f32_compute", gemm_ex_child);
}

fn gemm_ex_child() {
    use polycompute_core::{bf16, f16};
    let Some(backend) = fake::fake_backend() else { return };
    let dev = backend.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    polycompute_cuda::set_matmul_impl(polycompute_cuda::MatmulImpl::Cublas);
    // [2, 2, 3] @ [2, 3, 5] (batched), each dtype: A's first element 1.0, B's 2.0.
    let (lhs, rhs) = (Shape::new(&[2, 2, 3]).unwrap(), Shape::new(&[2, 3, 5]).unwrap());
    let (a16, b16) = (vec![f16::ONE; 12], vec![f16::from_f32(2.0); 30]);
    let (ab, bb) = (vec![bf16::ONE; 12], vec![bf16::from_f32(2.0); 30]);
    let cases = [
        (DType::F16, HostSlice::F16(&a16), HostSlice::F16(&b16), 2, 0x3c00, 0x4000),
        (DType::BF16, HostSlice::BF16(&ab), HostSlice::BF16(&bb), 14, 0x3f80, 0x4000),
    ];
    for (call, (dtype, a, b, cuda_type, one, two)) in cases.into_iter().enumerate() {
        let (a, b) = (dev.upload(a).unwrap(), dev.upload(b).unwrap());
        let c = dev
            .execute(&Op::Matmul { lhs: lhs.clone(), rhs: rhs.clone(), transpose: MatmulTranspose::NONE }, &[&a, &b])
            .unwrap();
        assert_eq!((c.dtype(), c.len()), (dtype, 20));
        let arg = fake::fake_gemm_ex_arg;
        assert_eq!(arg(20), call as i64 + 1, "one GemmEx call per matmul");
        // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: (m, n, k) = (5, 2, 3), B first.
        assert_eq!((arg(0), arg(1), arg(2), arg(3), arg(4)), (0, 0, 5, 2, 3), "{dtype}: ops and sizes");
        assert_eq!((arg(5), arg(6), arg(7)), (cuda_type, 5, 15), "{dtype}: the first operand is B");
        assert_eq!((arg(8), arg(9), arg(10)), (cuda_type, 3, 6), "{dtype}: the second operand is A");
        assert_eq!((arg(11), arg(12), arg(13), arg(14)), (cuda_type, 5, 10, 2), "{dtype}: C and the batch");
        assert_eq!((arg(15), arg(16), arg(17)), (68, -1, 1), "{dtype}: CUBLAS_COMPUTE_32F, default algo, f32 1 and 0");
        assert_eq!((arg(18), arg(19)), (two, one), "{dtype}: operands swapped");
    }
    polycompute_cuda::set_matmul_impl(polycompute_cuda::MatmulImpl::Auto);
}

#[test]
fn a_cublas_without_gemm_ex_is_named_or_passed_over() {
    let out = fake::run_against_cublas_without(
        "a_cublas_without_gemm_ex_is_named_or_passed_over",
        no_gemm_ex_child,
        "cublasGemmStridedBatchedEx",
    );
    if let Some(text) = out {
        assert!(text.contains("FAKE DRIVER OK"), "{text}");
    }
}

fn no_gemm_ex_child() {
    let Some(backend) = fake::fake_backend() else { return };
    let dev = backend.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    let a = dev.upload(HostSlice::BF16(&[polycompute_core::bf16::ONE; 6])).unwrap();
    let (lhs, rhs) = (Shape::new(&[2, 3]).unwrap(), Shape::new(&[3, 2]).unwrap());
    let op = Op::Matmul { lhs, rhs, transpose: MatmulTranspose::NONE };
    // cuBLAS forced: a typed Unsupported naming the missing entry point, never wrong values.
    polycompute_cuda::set_matmul_impl(polycompute_cuda::MatmulImpl::Cublas);
    match dev.execute(&op, &[&a, &a]) {
        Err(Error::Unsupported { op, dtype: DType::BF16, .. }) => {
            assert!(op.contains("missing capability: cublasGemmStridedBatchedEx"), "{op}")
        }
        other => panic!("expected Unsupported naming GemmEx, got {other:?}"),
    }
    // The default passes over cuBLAS to the own half kernel: its launch reaches the fake (700).
    polycompute_cuda::set_matmul_impl(polycompute_cuda::MatmulImpl::Auto);
    match dev.execute(&op, &[&a, &a]) {
        Err(Error::DeviceFault { code: 700, message, .. }) => assert!(message.contains("pc_matmul_half"), "{message}"),
        other => panic!("expected the own kernel's launch to reach the fake, got {other:?}"),
    }
}
