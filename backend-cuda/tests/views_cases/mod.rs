//! The view and data-movement cases that the host emulation (`src/codegen/host/views.rs`) and the device
//! check (`gpu_views.rs`) both run and compare with the CPU backend.

// Each test binary uses part of it.
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use polycompute_core::{bf16, f16, philox, DType, Expr, HostVec, Layout, Op, Program, Scalar, ScanKind, Shape};

pub fn bytes_of(v: &HostVec) -> Vec<u8> {
    match v {
        HostVec::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::F16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::BF16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
    }
}

pub fn read_vec(path: &Path, dt: DType) -> HostVec {
    let b = std::fs::read(path).unwrap();
    match dt {
        DType::F32 => HostVec::F32(b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::F64 => HostVec::F64(b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::I32 => HostVec::I32(b.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::U32 => HostVec::U32(b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::F16 => HostVec::F16(b.chunks_exact(2).map(|c| f16::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::BF16 => HostVec::BF16(b.chunks_exact(2).map(|c| bf16::from_le_bytes(c.try_into().unwrap())).collect()),
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
    }
}

/// Values for sorting and moving: repeats, both signs, and for floats NaN, ±inf and both
/// zeros scattered through (so stability and numpy's order are exercised).
pub fn data(dt: DType, len: usize, seed: u64) -> HostVec {
    let u = |i: usize| philox::uniform_u32(seed, i as u64);
    let special = |i: usize| u(i) % 11 == 0;
    match dt {
        DType::F32 => HostVec::F32(
            (0..len)
                .map(|i| {
                    if special(i) {
                        [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY][(u(i) / 11 % 5) as usize]
                    } else {
                        (u(i) % 41) as f32 / 4.0 - 5.0
                    }
                })
                .collect(),
        ),
        DType::F64 => HostVec::F64(
            (0..len)
                .map(|i| {
                    if special(i) {
                        [f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY][(u(i) / 11 % 5) as usize]
                    } else {
                        (u(i) % 41) as f64 / 8.0 - 2.5
                    }
                })
                .collect(),
        ),
        DType::I32 => {
            HostVec::I32((0..len).map(|i| ((u(i) % 31) as i64 * 140_000_000 - 2_100_000_000) as i32).collect())
        }
        DType::U32 => HostVec::U32((0..len).map(|i| u(i) % 13 + (u(i) & 0xC000_0000)).collect()),
        // The f32 values, which both halves hold exactly.
        DType::F16 | DType::BF16 => match data(DType::F32, len, seed) {
            HostVec::F32(v) if dt == DType::F16 => HostVec::F16(v.into_iter().map(f16::from_f32).collect()),
            HostVec::F32(v) => HostVec::BF16(v.into_iter().map(bf16::from_f32).collect()),
            other => other,
        },
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
    }
}

/// Finite values for scans: small magnitudes (products near 1 so cumprod stays finite),
/// while integers are large enough to wrap.
pub fn scan_data(dt: DType, len: usize, seed: u64) -> HostVec {
    let u = |i: usize| philox::uniform_u32(seed, i as u64);
    match dt {
        DType::F32 => HostVec::F32((0..len).map(|i| 0.9 + (u(i) % 1000) as f32 / 5000.0).collect()),
        DType::F64 => HostVec::F64((0..len).map(|i| 0.9 + (u(i) % 1000) as f64 / 5000.0).collect()),
        DType::I32 => HostVec::I32((0..len).map(|i| u(i) as i32 | 1).collect()),
        DType::U32 => HostVec::U32((0..len).map(|i| u(i) | 1).collect()),
        DType::F16 => HostVec::F16((0..len).map(|i| f16::from_f32(0.9 + (u(i) % 1000) as f32 / 5000.0)).collect()),
        DType::BF16 => HostVec::BF16((0..len).map(|i| bf16::from_f32(0.9 + (u(i) % 1000) as f32 / 5000.0)).collect()),
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
    }
}

pub fn shape(d: &[usize]) -> Shape {
    Shape::new(d).unwrap()
}

/// One case: an op, its inputs, and how its result compares.
pub struct Case {
    /// dtype and name.
    pub tag: String,
    /// The op.
    pub op: Op,
    /// Its inputs.
    pub inputs: Vec<HostVec>,
    /// Its output dtype.
    pub out: DType,
    /// Floats within a summation bound (scans, scatter-add) instead of bit-equal.
    pub approx: bool,
}

/// The cases of one dtype.
pub fn cases(dt: DType) -> Vec<Case> {
    let mut v = Vec::new();
    let mut add = |tag: String, op: Op, inputs: Vec<HostVec>, out: DType, approx: bool| {
        v.push(Case { tag: format!("{dt}_{tag}"), op, inputs, out, approx });
    };
    // Maps over views: a negative-step slice of a 2-D buffer with an offset (x[5:0:-2, ::-1]
    // of a 7x9 buffer), a broadcast view with a negative stride, and a plain input.
    let buf = data(dt, 63, 1);
    let slice = Layout { shape: shape(&[3, 9]), strides: vec![-18, -1], offset: 5 * 9 + 8 };
    let row = Layout { shape: shape(&[3, 9]), strides: vec![0, -1], offset: 8 };
    let plain = Layout::contiguous(shape(&[3, 9]));
    let identity = Arc::new(Program::identity(dt));
    add(
        "view_identity".into(),
        Op::MapViews { program: identity, inputs: vec![slice.clone()], shape: shape(&[3, 9]) },
        vec![buf.clone()],
        dt,
        false,
    );
    if let Ok(p) = Program::compile(&(Expr::arg(0) + Expr::arg(1) * Expr::arg(2)), &[dt; 3]) {
        let plain_buf = data(dt, 27, 2);
        add(
            "view_fma".into(),
            Op::MapViews { program: Arc::new(p), inputs: vec![slice, row, plain], shape: shape(&[3, 9]) },
            vec![buf.clone(), buf.clone(), plain_buf],
            dt,
            false,
        );
    }
    // A transposed and flipped view with a scalar broadcast over it (one coalescable axis each).
    let t = Layout { shape: shape(&[9, 7]), strides: vec![1, -9], offset: 54 };
    let s = Layout { shape: shape(&[]), strides: vec![], offset: 17 };
    if let Ok(p) = Program::compile(&(Expr::arg(0) - Expr::arg(1)), &[dt; 2]) {
        add(
            "view_transpose_scalar".into(),
            Op::MapViews { program: Arc::new(p), inputs: vec![t, s], shape: shape(&[9, 7]) },
            vec![buf.clone(), buf.clone()],
            dt,
            false,
        );
    }
    // Concat along the middle axis, one input empty along it.
    let shapes = vec![shape(&[2, 3, 2]), shape(&[2, 0, 2]), shape(&[2, 5, 2])];
    add(
        "concat".into(),
        Op::Concat { axis: 1, shapes: shapes.clone() },
        shapes.iter().enumerate().map(|(k, s)| data(dt, s.numel(), 10 + k as u64)).collect(),
        dt,
        false,
    );
    add(
        "concat_axis0".into(),
        Op::Concat { axis: 0, shapes: vec![shape(&[1, 4]), shape(&[3, 4])] },
        vec![data(dt, 4, 3), data(dt, 12, 4)],
        dt,
        false,
    );
    // Pad of a 3-D array, and of a scalar.
    let value = match dt {
        DType::F32 => Scalar::F32(-0.0),
        DType::F64 => Scalar::F64(f64::NAN),
        DType::I32 => Scalar::I32(-7),
        DType::U32 => Scalar::U32(u32::MAX),
        DType::F16 => Scalar::F16(f16::NEG_ZERO),
        DType::BF16 => Scalar::BF16(bf16::NAN),
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
    };
    add(
        "pad".into(),
        Op::Pad { shape: shape(&[2, 3, 4]), widths: vec![(1, 0), (0, 2), (3, 1)], value },
        vec![data(dt, 24, 5)],
        dt,
        false,
    );
    add("pad_scalar".into(), Op::Pad { shape: shape(&[]), widths: vec![], value }, vec![data(dt, 1, 6)], dt, false);
    // Take with u32 and i32 (negative) indices at both ends, take_along_axis, scatter_add with
    // repeated indices.
    let a_shape = shape(&[3, 5, 2]);
    let a = data(dt, 30, 7);
    let iu = HostVec::U32(vec![4, 0, 4, 2, 0, 1]);
    let ii = HostVec::I32(vec![-1, 0, -5, 4, 2, -2]);
    for (name, idx) in [("u32", &iu), ("i32", &ii)] {
        add(
            format!("take_{name}"),
            Op::Take { axis: 1, shape: a_shape.clone(), indices: shape(&[2, 3]) },
            vec![a.clone(), idx.clone()],
            dt,
            false,
        );
        add(
            format!("take_axis0_{name}"),
            Op::Take { axis: 0, shape: shape(&[6, 5]), indices: shape(&[6]) },
            vec![data(dt, 30, 8), idx.clone()],
            dt,
            false,
        );
        let along: HostVec = match idx {
            HostVec::U32(_) => HostVec::U32((0..24).map(|i| philox::uniform_u32(3, i) % 5).collect()),
            _ => HostVec::I32((0..24).map(|i| (philox::uniform_u32(3, i) % 10) as i32 - 5).collect()),
        };
        add(
            format!("take_along_{name}"),
            Op::TakeAlongAxis { axis: 1, shape: a_shape.clone(), indices: shape(&[3, 4, 2]) },
            vec![a.clone(), along],
            dt,
            false,
        );
        add(
            format!("scatter_add_{name}"),
            Op::ScatterAdd { axis: 1, shape: a_shape.clone(), indices: shape(&[6]) },
            vec![scan_data(dt, 30, 9), idx.clone(), scan_data(dt, 36, 10)],
            dt,
            dt.is_float(),
        );
    }
    // Scans: one chunk per lane (inner > 1), chunked long rows (with a carry pass), and empty.
    for kind in ScanKind::ALL {
        for (dims, axis) in
            [(&[4usize, 7, 3][..], 1usize), (&[3, 1000], 1), (&[2, 700, 2], 1), (&[2000], 0), (&[0, 5], 1)]
        {
            let sh = shape(dims);
            add(
                format!("{}_{dims:?}_{axis}", kind.name()),
                Op::Scan { kind, axis, shape: sh.clone() },
                vec![scan_data(dt, sh.numel(), 11)],
                dt,
                dt.is_float(),
            );
        }
    }
    // Sorts: rows along the last axis, along a middle axis (inner > 1), one long odd row,
    // rows of one element.
    for (dims, axis) in [(&[3usize, 37][..], 1usize), (&[4, 13, 3], 1), (&[1025], 0), (&[5, 1], 1), (&[6, 4], 0)] {
        let sh = shape(dims);
        let x = data(dt, sh.numel(), 12);
        add(format!("sort_{dims:?}_{axis}"), Op::Sort { axis, shape: sh.clone() }, vec![x.clone()], dt, false);
        add(
            format!("argsort_{dims:?}_{axis}"),
            Op::Argsort { axis, shape: sh.clone() },
            vec![x.clone()],
            DType::U32,
            false,
        );
        for k in [0, 1, dims[axis].min(5), dims[axis]] {
            add(
                format!("topk{k}_{dims:?}_{axis}"),
                Op::TopK { k, axis, shape: sh.clone() },
                vec![x.clone()],
                DType::U32,
                false,
            );
        }
    }
    v
}

/// The summation tolerance: `n · eps · Σ|x|` over everything that fed an output, generously
/// bounded by the whole input (cumprod: relative, `n · eps · |x|`).
pub fn close(g: f64, w: f64, eps: f64, n: f64, sum_abs: f64, prod: bool) -> bool {
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    let tol = if prod { 4.0 * n * eps * w.abs() } else { 4.0 * n * eps * sum_abs };
    g == w || (g - w).abs() <= tol
}

pub fn as_f64(v: &HostVec) -> Vec<f64> {
    match v {
        HostVec::F32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::F64(v) => v.clone(),
        HostVec::I32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::U32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::F16(v) => v.iter().map(|x| x.to_f64()).collect(),
        HostVec::BF16(v) => v.iter().map(|x| x.to_f64()).collect(),
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
    }
}

/// The mismatches of `got` against the CPU backend's `want` for case `c`: bit-equal (NaN
/// payloads and zero signs included) unless the case is approximate, then within [`close`].
pub fn compare(c: &Case, got: &HostVec, want: &HostVec) -> Vec<String> {
    if got.len() != want.len() {
        return vec![format!("{}: {} elements, cpu {}", c.tag, got.len(), want.len())];
    }
    if !c.approx {
        return if bytes_of(got) == bytes_of(want) {
            Vec::new()
        } else {
            vec![format!("{}: got {got:?}\n want {want:?}", c.tag)]
        };
    }
    let eps = match c.out {
        DType::F32 => f32::EPSILON as f64,
        DType::F16 => f16::EPSILON.to_f64(),
        DType::BF16 => bf16::EPSILON.to_f64(),
        _ => f64::EPSILON,
    };
    let inputs: Vec<f64> = c.inputs.iter().filter(|v| v.dtype().is_float()).flat_map(as_f64).collect();
    let sum_abs: f64 = inputs.iter().map(|x| x.abs()).sum();
    let prod = matches!(c.op, Op::Scan { kind: ScanKind::Prod, .. });
    let n = inputs.len() as f64;
    as_f64(got)
        .iter()
        .zip(as_f64(want))
        .enumerate()
        .filter(|(_, (g, w))| !close(**g, *w, eps, n, sum_abs, prod))
        .map(|(i, (g, w))| format!("{} [{i}]: got {g:e}, cpu {w:e}", c.tag))
        .collect()
}

/// Sizes that only a real device runs quickly: many merge passes, chunked scans with many
/// chunks, heavily contended scatter-add atomics, large gathers and a long strided map.
pub fn large_cases(dt: DType) -> Vec<Case> {
    let mut v = Vec::new();
    let mut add = |tag: String, op: Op, inputs: Vec<HostVec>, out: DType, approx: bool| {
        v.push(Case { tag: format!("{dt}_large_{tag}"), op, inputs, out, approx });
    };
    for (dims, axis) in [(&[4usize, 70_001][..], 1usize), (&[300_000], 0), (&[1000, 33], 0)] {
        let sh = shape(dims);
        let x = data(dt, sh.numel(), 21);
        add(format!("sort_{dims:?}"), Op::Sort { axis, shape: sh.clone() }, vec![x.clone()], dt, false);
        add(format!("argsort_{dims:?}"), Op::Argsort { axis, shape: sh.clone() }, vec![x.clone()], DType::U32, false);
        add(format!("topk_{dims:?}"), Op::TopK { k: 17, axis, shape: sh.clone() }, vec![x], DType::U32, false);
    }
    for kind in ScanKind::ALL {
        for (dims, axis) in [(&[1usize << 20][..], 0usize), (&[3, 5000, 7], 1), (&[100_000, 3], 1)] {
            // A product of a million factors near 1 drifts out of range: cumprod's long rows
            // stop at 5000.
            if kind == ScanKind::Prod && dims[axis] > 5000 {
                continue;
            }
            let sh = shape(dims);
            add(
                format!("{}_{dims:?}", kind.name()),
                Op::Scan { kind, axis, shape: sh.clone() },
                vec![scan_data(dt, sh.numel(), 22)],
                dt,
                dt.is_float(),
            );
        }
    }
    let idx = HostVec::U32((0..1u64 << 16).map(|i| philox::uniform_u32(23, i) % 64).collect());
    add(
        "scatter_add".into(),
        Op::ScatterAdd { axis: 0, shape: shape(&[64, 3]), indices: shape(&[1 << 16]) },
        vec![scan_data(dt, 192, 24), idx.clone(), scan_data(dt, 3 << 16, 25)],
        dt,
        dt.is_float(),
    );
    let big = HostVec::I32((0..1u64 << 20).map(|i| (philox::uniform_u32(26, i) % 200_000) as i32 - 100_000).collect());
    add(
        "take".into(),
        Op::Take { axis: 0, shape: shape(&[100_000]), indices: shape(&[1 << 20]) },
        vec![data(dt, 100_000, 27), big],
        dt,
        false,
    );
    let n = 1usize << 21;
    let step2 = Layout { shape: shape(&[n / 2]), strides: vec![-2], offset: n - 1 };
    add(
        "view_step2".into(),
        Op::MapViews { program: Arc::new(Program::identity(dt)), inputs: vec![step2], shape: shape(&[n / 2]) },
        vec![data(dt, n, 28)],
        dt,
        false,
    );
    v
}
