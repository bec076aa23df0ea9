//! CUDA's launch limits against the fake driver (`fake/mod.rs`), which refuses a launch
//! beyond them as the real driver does and logs every launch: the fake refuses grids and
//! blocks past the limits; such a refusal reaches the caller as a typed error, never a
//! partial result; the backend sizes its grids by the limits the device reports (clamping
//! an axis its kernel loops over, refusing with `TooLarge` one it does not); and for large
//! shapes of every op family (more blocks than 65,535 along y or z, more rows, indices or
//! batch entries than 65,535, long reductions, scans and sorts) every launch stays within
//! CUDA's limits and carries the op's real sizes. Consistent launches succeed without
//! running, so no test here computes (see the host_* tests for what the kernels compute
//! with these grids) and the buffers, host memory the kernels never touch, cost little.

mod fake;

use std::ffi::{c_uint, c_void};
use std::sync::Arc;

use fake::{FakeLaunch, CUDA_LIMITS};
use polycompute_core::{
    DType, DeviceBackend, Error, Expr, Fill, MatmulTranspose, Op, Program, ReduceKind, Scalar, ScanKind, Shape,
};
use polycompute_cuda::MatmulImpl;

fn shape(d: &[usize]) -> Shape {
    Shape::new(d).unwrap()
}

#[test]
fn the_fake_refuses_launches_beyond_cudas_limits() {
    fake::run_against_fake_driver("the_fake_refuses_launches_beyond_cudas_limits", refuse_child);
}

type LaunchFn = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
    *mut *mut c_void,
) -> i32;

fn refuse_child() {
    let Some(_backend) = fake::fake_backend() else { return };
    // SAFETY: the fake driver's entry points, with the driver API's signatures; the module
    // image is ignored by the fake, the name is NUL-terminated, and the one parameter slot
    // outlives every launch.
    unsafe {
        let lib = libloading::Library::new("libcuda.so.1").unwrap();
        type Load = unsafe extern "C" fn(*mut *mut c_void, *const c_void, c_uint, *mut c_void, *mut c_void) -> i32;
        type Get = unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const std::ffi::c_char) -> i32;
        type Stream = unsafe extern "C" fn(*mut *mut c_void, c_uint, i32) -> i32;
        let (mut module, mut function, mut stream) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(
            lib.get::<Load>(b"cuModuleLoadDataEx\0").unwrap()(
                &mut module,
                [0u8].as_ptr().cast(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut()
            ),
            0
        );
        assert_eq!(lib.get::<Get>(b"cuModuleGetFunction\0").unwrap()(&mut function, module, c"pc_probe".as_ptr()), 0);
        assert_eq!(lib.get::<Stream>(b"cuStreamCreateWithPriority\0").unwrap()(&mut stream, 0, 0), 0);
        let launch = lib.get::<LaunchFn>(b"cuLaunchKernel\0").unwrap();
        let mut slot = [1u64];
        let mut params = [slot.as_mut_ptr().cast::<c_void>()];
        let mut run = |g: [u32; 3], b: [u32; 3], shared: u32| {
            launch(
                function,
                g[0],
                g[1],
                g[2],
                b[0],
                b[1],
                b[2],
                shared,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        let max = i32::MAX as u32;
        // At the limits: accepted (and "faulting", the fake's default answer to a consistent launch).
        assert_eq!(run([max, 65535, 65535], [1024, 1, 1], 48 * 1024), 700);
        assert_eq!(run([1, 1, 1], [1, 1024, 1], 0), 700);
        assert_eq!(run([1, 1, 1], [16, 1, 64], 0), 700);
        // One past any limit: CUDA_ERROR_INVALID_VALUE.
        for (g, b, shared) in [
            ([1, 65536, 1], [256, 1, 1], 0),
            ([1, 1, 65536], [256, 1, 1], 0),
            ([max + 1, 1, 1], [256, 1, 1], 0),
            ([0, 1, 1], [256, 1, 1], 0),
            ([1, 1, 1], [1025, 1, 1], 0),
            ([1, 1, 1], [32, 33, 1], 0),
            ([1, 1, 1], [1, 1, 65], 0),
            ([1, 1, 1], [256, 1, 1], 48 * 1024 + 1),
        ] {
            assert_eq!(run(g, b, shared), 1, "grid {g:?}, block {b:?}, {shared} shared bytes");
        }
        fake::fake_launches_succeed(true);
        assert_eq!(run([2, 3, 4], [8, 8, 4], 0), 0, "a consistent launch succeeds in that mode");
        assert_eq!(run([1, 65536, 1], [256, 1, 1], 0), 1);
        let log = fake::fake_launches();
        assert_eq!(log.len(), 13);
        let last = &log[11];
        assert_eq!((last.name.as_str(), last.grid, last.block, last.rc), ("pc_probe", [2, 3, 4], [8, 8, 4], 0));
    }
}

#[test]
fn a_refused_launch_is_a_typed_error() {
    // The device reports CUDA's limits but refuses more than 2 blocks along y.
    let enforced = [CUDA_LIMITS[0], 2, CUDA_LIMITS[2], 1024, 1024, 64, 1024, 49152];
    let source = fake::driver_with_limits(CUDA_LIMITS, enforced);
    fake::run_against_driver_source("a_refused_launch_is_a_typed_error", refused_child, &source);
}

fn refused_child() {
    let Some(backend) = fake::fake_backend() else { return };
    let dev = backend.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    polycompute_cuda::set_matmul_impl(MatmulImpl::Own);
    fake::fake_launches_succeed(true);
    let a = fill(&dev, DType::F32, 3 * 128);
    let b = fill(&dev, DType::F32, 1);
    let op = Op::Matmul { lhs: shape(&[3 * 128, 1]), rhs: shape(&[1, 1]), transpose: MatmulTranspose::NONE };
    match dev.execute(&op, &[&a, &b]) {
        Err(Error::DeviceFault { code: 1, sticky: false, message, .. }) => {
            assert!(
                message.contains("launching pc_matmul") && message.contains("CUDA_ERROR_INVALID_VALUE"),
                "{message}"
            )
        }
        other => panic!("expected the refused launch as a typed error, got {other:?}"),
    }
    // The refusal poisons nothing: the next op runs.
    let op = Op::Matmul { lhs: shape(&[2 * 128, 1]), rhs: shape(&[1, 1]), transpose: MatmulTranspose::NONE };
    let a = fill(&dev, DType::F32, 2 * 128);
    dev.execute(&op, &[&a, &b]).unwrap();
}

#[test]
fn grids_follow_the_limits_the_device_reports() {
    let small = [4, 3, 2, 1024, 1024, 64, 1024, 49152];
    let source = fake::driver_with_limits(small, small);
    fake::run_against_driver_source("grids_follow_the_limits_the_device_reports", small_limits_child, &source);
}

fn small_limits_child() {
    let Some(backend) = fake::fake_backend() else { return };
    let dev = backend.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    polycompute_cuda::set_matmul_impl(MatmulImpl::Own);
    fake::fake_launches_succeed(true);
    // 8 row tiles along y (limit 3) and 5 batch entries along z (limit 2): clamped, the
    // kernel loops over the rest; 4 column tiles along x (limit 4): exact.
    let (batch, m, k, n) = (5, 1000, 3, 4 * 128);
    let (a, b) = (fill(&dev, DType::F32, batch * m * k), fill(&dev, DType::F32, batch * k * n));
    let op = Op::Matmul { lhs: shape(&[batch, m, k]), rhs: shape(&[batch, k, n]), transpose: MatmulTranspose::NONE };
    let log = launches_of(&dev, &op, &[&a, &b], 7);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!((log[0].grid, log[0].block), ([4, 3, 2], [256, 1, 1]));
    assert_eq!((3..7).map(|i| log[0].u32_param(i)).collect::<Vec<_>>(), [m as u32, n as u32, k as u32, batch as u32]);
    // 5 column tiles cannot be covered by 4 blocks (no loop along x): TooLarge, nothing launched.
    let b5 = fill(&dev, DType::F32, k * 5 * 128);
    let a1 = fill(&dev, DType::F32, m * k);
    let op = Op::Matmul { lhs: shape(&[m, k]), rhs: shape(&[k, 5 * 128]), transpose: MatmulTranspose::NONE };
    fake::fake_launch_reset();
    match dev.execute(&op, &[&a1, &b5]) {
        Err(Error::TooLarge(msg)) => {
            assert!(msg.contains("matmul") && msg.contains("5 blocks along x") && msg.contains("limit of 4"), "{msg}")
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(fake::fake_launches().is_empty());
    // A grid-stride kernel takes at most the limit's blocks along x.
    let x = fill(&dev, DType::F32, 100_000);
    let log = launches_of(&dev, &map_op(100_000), &[&x], 3);
    assert_eq!((log[0].name.as_str(), log[0].grid, log[0].u32_param(2)), ("pc_map", [4, 1, 1], 100_000));
}

#[test]
fn large_shapes_launch_within_cudas_limits() {
    fake::run_against_fake_driver("large_shapes_launch_within_cudas_limits", large_child);
}

type Dev = Arc<dyn DeviceBackend>;
type Buf = polycompute_core::BufferRef;

fn fill(dev: &Dev, dtype: DType, len: usize) -> Buf {
    let value = match dtype {
        DType::U32 => Scalar::U32(0),
        DType::I32 => Scalar::I32(0),
        DType::F64 => Scalar::F64(1.0),
        DType::BF16 => Scalar::BF16(polycompute_core::bf16::ONE),
        DType::F16 => Scalar::F16(polycompute_core::f16::ONE),
        DType::F32 => Scalar::F32(1.0),
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
    };
    dev.execute(&Op::Fill { fill: Fill::Constant(value), dtype, len }, &[]).unwrap_or_else(|e| panic!("fill: {e}"))
}

fn map_op(n: usize) -> Op {
    let program = Arc::new(Program::compile(&(Expr::arg(0) * 2.0), &[DType::F32]).unwrap());
    Op::Map { program, input_shapes: vec![shape(&[n])], shape: shape(&[n]) }
}

/// The launches `op` makes (each checked to be within CUDA's limits and accepted), with
/// their first `params` parameters (no more than any of the op's kernels takes).
fn launches_of(dev: &Dev, op: &Op, inputs: &[&Buf], params: i32) -> Vec<FakeLaunch> {
    fake::fake_launch_reset();
    fake::fake_record_params(params);
    let result = dev.execute(op, inputs);
    fake::fake_record_params(0);
    result.unwrap_or_else(|e| panic!("{}: {e}", op.name()));
    let log = fake::fake_launches();
    assert!(!log.is_empty(), "{}: no launch", op.name());
    for l in &log {
        let threads: u64 = l.block.iter().map(|&b| b as u64).product();
        let within = l.grid[0] <= i32::MAX as u32
            && l.grid[1] <= 65535
            && l.grid[2] <= 65535
            && l.grid.iter().all(|&g| g >= 1)
            && l.block[0] <= 1024
            && l.block[1] <= 1024
            && l.block[2] <= 64
            && threads <= 1024
            && l.shared <= 48 * 1024;
        assert!(within && l.rc == 0, "{}: launch beyond the limits: {l:?}", op.name());
    }
    log
}

/// The 1-D grid-stride launch over `items` (256 threads, at most 32 blocks per SM of the
/// fake's 132).
fn strided(items: usize) -> [u32; 3] {
    [items.div_ceil(256).clamp(1, 132 * 32) as u32, 1, 1]
}

fn large_child() {
    let Some(backend) = fake::fake_backend() else { return };
    let dev = backend.open(0).unwrap_or_else(|e| panic!("open: {e}"));
    polycompute_cuda::set_matmul_impl(MatmulImpl::Own);
    fake::fake_launches_succeed(true);
    let big = 65_535 * 256 + 1;

    // Fill and map over more than 65,535 blocks of 256 elements.
    let x = {
        fake::fake_launch_reset();
        fake::fake_record_params(2);
        let x = fill(&dev, DType::F32, big);
        fake::fake_record_params(0);
        let log = fake::fake_launches();
        assert_eq!((log[0].name.as_str(), log[0].grid, log[0].u32_param(1)), ("pc_fill", strided(big), big as u32));
        x
    };
    let log = launches_of(&dev, &map_op(big), &[&x], 3);
    assert_eq!((log[0].grid, log[0].u32_param(2)), (strided(big), big as u32));

    // Reductions: all of 2^24 + 3 elements (segments, then their combination); 70,000 rows;
    // 2^21 rows (more blocks than a pass launches: the kernel strides); 70,000 columns.
    let n = (1 << 24) + 3;
    let long = fill(&dev, DType::F32, n);
    let log = launches_of(&dev, &Op::Reduce { kind: ReduceKind::Sum, axis: None, shape: shape(&[n]) }, &[&long], 6);
    assert_eq!(log.len(), 2, "{log:?}");
    let (rows, r, segs, seg_len) = (log[0].u32_param(2), log[0].u32_param(3), log[0].u32_param(4), log[0].u32_param(5));
    assert_eq!((rows, r), (1, n as u32));
    assert!(segs > 1 && segs as u64 * seg_len as u64 >= n as u64, "{log:?}");
    assert_eq!((log[0].grid[0], log[1].u32_param(2), log[1].u32_param(3)), (segs, 1, segs));
    let m = fill(&dev, DType::F32, 70_000 * 3);
    let log =
        launches_of(&dev, &Op::Reduce { kind: ReduceKind::Max, axis: Some(1), shape: shape(&[70_000, 3]) }, &[&m], 6);
    assert_eq!((log.len(), log[0].grid, log[0].u32_param(2)), (1, [70_000, 1, 1], 70_000));
    let log =
        launches_of(&dev, &Op::Reduce { kind: ReduceKind::Sum, axis: Some(0), shape: shape(&[3, 70_000]) }, &[&m], 6);
    assert_eq!((log.len(), log[0].u32_param(2), log[0].u32_param(3), log[0].u32_param(4)), (1, 1, 3, 70_000));
    let tall = fill(&dev, DType::F32, 1 << 21);
    let op = Op::Reduce { kind: ReduceKind::ArgMax, axis: Some(1), shape: shape(&[1 << 21, 1]) };
    let log = launches_of(&dev, &op, &[&tall], 6);
    assert_eq!((log[0].grid, log[0].u32_param(2)), ([1 << 20, 1, 1], 1 << 21));

    // Matmul (f32, f64 and bf16 kernels): 65,537 row tiles along y; 70,000 batch entries
    // along z; K = 100,000.
    for dtype in [DType::F32, DType::F64, DType::BF16] {
        let bm = if dtype == DType::F32 { 128 } else { 64 };
        let rows = bm * 65_536 + 1;
        let cases = [(1, rows, 1, 3), (70_000, 1, 2, 1), (1, 1, 100_000, 1)];
        for (batch, m, k, n) in cases {
            let (a, b) = (fill(&dev, dtype, batch * m * k), fill(&dev, dtype, batch * k * n));
            let op =
                Op::Matmul { lhs: shape(&[batch, m, k]), rhs: shape(&[batch, k, n]), transpose: MatmulTranspose::NONE };
            let log = launches_of(&dev, &op, &[&a, &b], 6);
            let tiles = [1, (m as u32).div_ceil(bm as u32).min(65535), (batch as u32).min(65535)];
            assert_eq!((log.len(), log[0].grid), (1, tiles), "{dtype} {batch}x{m}x{k}x{n}");
            let sizes: Vec<u32> = (3..6).map(|i| log[0].u32_param(i)).collect();
            assert_eq!(sizes, [m as u32, n as u32, k as u32], "{dtype}");
        }
    }

    // take, take_along_axis and scatter_add with 70,000 indices over 70,000 rows.
    let rows = 70_000;
    let table = fill(&dev, DType::F32, rows * 3);
    let idx = fill(&dev, DType::U32, rows);
    let op = Op::Take { axis: 0, shape: shape(&[rows, 3]), indices: shape(&[rows]) };
    let log = launches_of(&dev, &op, &[&table, &idx], 6);
    let sizes: Vec<u32> = (3..6).map(|i| log[0].u32_param(i)).collect();
    assert_eq!((log[0].grid, sizes), (strided(rows * 3), vec![(rows * 3) as u32, rows as u32, rows as u32]));
    let idx2 = fill(&dev, DType::U32, rows * 3);
    let op = Op::TakeAlongAxis { axis: 0, shape: shape(&[rows, 3]), indices: shape(&[rows, 3]) };
    let log = launches_of(&dev, &op, &[&table, &idx2], 6);
    assert_eq!((log[0].grid, log[0].u32_param(3)), (strided(rows * 3), (rows * 3) as u32));
    let op = Op::ScatterAdd { axis: 0, shape: shape(&[rows, 3]), indices: shape(&[rows]) };
    let log = launches_of(&dev, &op, &[&table, &idx, &table], 6);
    let sizes: Vec<u32> = (3..6).map(|i| log[0].u32_param(i)).collect();
    assert_eq!((log[0].name.as_str(), sizes), ("pc_scatter_add", vec![(rows * 3) as u32, rows as u32, rows as u32]));

    // Scans: 70,000 rows of 100 (one pass) and one row of 2^20 (totals, carries, apply).
    let rows_of_100 = fill(&dev, DType::F32, 70_000 * 100);
    let op = Op::Scan { kind: ScanKind::Sum, axis: 1, shape: shape(&[70_000, 100]) };
    let log = launches_of(&dev, &op, &[&rows_of_100], 6);
    assert_eq!((log.len(), log[0].grid, log[0].u32_param(3)), (1, strided(70_000), 70_000));
    let op = Op::Scan { kind: ScanKind::Prod, axis: 0, shape: shape(&[1 << 21]) };
    let log = launches_of(&dev, &op, &[&tall], 4);
    let names: Vec<&str> = log.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["pc_scan_totals", "pc_scan_carries", "pc_scan_apply"]);
    let (work, lanes) = (log[0].u32_param(2), log[1].u32_param(1));
    assert!(lanes == 1 && work > 1 && work == log[2].u32_param(3), "{log:?}");
    assert_eq!((log[0].grid, log[1].grid), (strided(work as usize), [1, 1, 1]));

    // Sorts: rows of 100 (7 merge passes), 70,000 rows of 4, one row of 70,000 (17 passes).
    for (dims, axis, passes) in [(vec![700, 100], 1, 7), (vec![70_000, 4], 1, 2), (vec![70_000], 0, 17)] {
        let len: usize = dims.iter().product();
        let src = fill(&dev, DType::F32, len);
        for op in [Op::Sort { axis, shape: shape(&dims) }, Op::Argsort { axis, shape: shape(&dims) }] {
            let log = launches_of(&dev, &op, &[&src], 6);
            assert_eq!(log.len(), passes + 2, "{dims:?}");
            assert!(log.iter().all(|l| l.grid == strided(len)), "{log:?}");
            // Each pass's element count: keys (3), merges (4), gather (3) or indices (2).
            let last = if matches!(op, Op::Sort { .. }) { 3 } else { 2 };
            let totals: Vec<u32> = log
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    l.u32_param(match i {
                        0 => 3,
                        i if i <= passes => 4,
                        _ => last,
                    })
                })
                .collect();
            assert_eq!(totals, vec![len as u32; passes + 2], "{log:?}");
        }
    }

    // Transpose of 70,000 x 3 (tiled: 2,188 tiles, under the cap of 64 blocks per SM) and
    // concat of two 70,000-row blocks.
    let log = launches_of(&dev, &Op::Transpose { shape: shape(&[70_000, 3]), perm: vec![1, 0] }, &[&m], 0);
    assert_eq!((log[0].grid, log[0].block), ([2188, 1, 1], [32, 8, 1]));
    let op = Op::Concat { axis: 0, shapes: vec![shape(&[70_000, 3]), shape(&[70_000, 3])] };
    let log = launches_of(&dev, &op, &[&m, &m], 6);
    assert_eq!((log.len(), log[1].u32_param(2), log[1].u32_param(5)), (2, 210_000, 210_000));
}
