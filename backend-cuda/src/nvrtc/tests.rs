//! Compiles every kernel the CUDA backend generates for a representative corpus (every op
//! and dtype; map programs covering every unary and binary op, select, cast, index and
//! literal corner cases; each access pattern) with NVRTC for sm_80 and sm_90. NVRTC needs no
//! GPU: CI points `POLYCOMPUTE_NVRTC_LIB` at the libnvrtc.so that `scripts/nvrtc-wheel.sh`
//! fetches. Unset, the test says so and passes, unless `POLYCOMPUTE_REQUIRE_NVRTC=1` (CI).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::codegen::{kernels_for, Kernel};
use crate::nvrtc::{Nvrtc, NVRTC_ENV};
use polycompute_core::{
    bf16, f16, BinaryOp, DType, Expr, Fill, Layout, MatmulTranspose, Op, Program, ReduceKind, Scalar, ScanKind, Shape,
    UnaryOp,
};

const ARCHS: [u32; 2] = [80, 90];

fn shape(d: &[usize]) -> Shape {
    Shape::new(d).unwrap()
}

fn map_op(expr: &Expr, inputs: &[DType], shapes: &[&[usize]]) -> Option<(Op, Vec<DType>)> {
    let program = Program::compile(expr, inputs).ok()?;
    let input_shapes: Vec<Shape> = shapes.iter().map(|s| shape(s)).collect();
    let mut out = Shape::scalar();
    for s in &input_shapes {
        out = out.broadcast(s, "map").ok()?;
    }
    Some((Op::Map { program: Arc::new(program), input_shapes, shape: out }, inputs.to_vec()))
}

/// The corpus: (description, op, input dtypes).
fn corpus() -> Vec<(String, Op, Vec<DType>)> {
    let mut ops = Vec::new();
    let (x, y, z) = (Expr::arg(0), Expr::arg(1), Expr::arg(2));
    for dt in DType::ALL.into_iter().filter(|d| !matches!(d, DType::I64 | DType::U8 | DType::Bool)) {
        for u in UnaryOp::ALL {
            if let Some((op, ins)) = map_op(&x.clone().unary(u), &[dt], &[&[5, 7]]) {
                ops.push((format!("map {}({dt})", u.name()), op, ins));
            }
        }
        for b in BinaryOp::ALL {
            let e = x.clone().binary(b, y.clone());
            // Same shapes, a broadcast row and a scalar operand.
            for shapes in [&[&[5, 7][..], &[5, 7][..]][..], &[&[5, 7], &[7]], &[&[5, 1, 7], &[1]]] {
                if let Some((op, ins)) = map_op(&e, &[dt, dt], shapes) {
                    ops.push((format!("map {}({dt}) {shapes:?}", b.name()), op, ins));
                }
            }
        }
        for to in DType::ALL.into_iter().filter(|d| !matches!(d, DType::I64 | DType::U8 | DType::Bool)) {
            ops.push((format!("cast {dt}->{to}"), Op::Cast { to }, vec![dt]));
            if let Some((op, ins)) = map_op(
                &Expr::select(x.clone(), y.clone().cast(to), z.clone().cast(to)),
                &[dt, dt, dt],
                &[&[4, 3], &[3], &[4, 1]],
            ) {
                ops.push((format!("select cond {dt} -> {to}"), op, ins));
            }
        }
        let idx = Expr::index().cast(dt);
        if let Some((op, ins)) = map_op(&(x.clone() + idx), &[dt], &[&[9]]) {
            ops.push((format!("index {dt}"), op, ins));
        }
        // Literal corner cases: NaN, infinities, -0.0, extreme integers.
        let lits: Vec<Scalar> = match dt {
            DType::F32 => {
                vec![Scalar::F32(f32::NAN), Scalar::F32(f32::NEG_INFINITY), Scalar::F32(-0.0), Scalar::F32(1e-45)]
            }
            DType::F64 => {
                vec![Scalar::F64(f64::NAN), Scalar::F64(f64::INFINITY), Scalar::F64(-0.0), Scalar::F64(5e-324)]
            }
            DType::I32 => vec![Scalar::I32(i32::MIN), Scalar::I32(i32::MAX), Scalar::I32(-1)],
            DType::U32 => vec![Scalar::U32(u32::MAX), Scalar::U32(0)],
            DType::F16 => {
                [f16::NAN, f16::NEG_INFINITY, f16::NEG_ZERO, f16::from_bits(1), f16::MAX].map(Scalar::F16).to_vec()
            }
            DType::BF16 => {
                [bf16::NAN, bf16::INFINITY, bf16::NEG_ZERO, bf16::from_bits(1), bf16::MAX].map(Scalar::BF16).to_vec()
            }
            _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
        };
        for l in lits {
            if let Some((op, ins)) = map_op(&(x.clone().max(Expr::scalar(l)) * Expr::scalar(l)), &[dt], &[&[3]]) {
                ops.push((format!("literal {l}"), op, ins));
            }
        }
        ops.push((
            format!("fill const {dt}"),
            Op::Fill { fill: Fill::Constant(Scalar::zero(dt)), dtype: dt, len: 10 },
            vec![],
        ));
        ops.push((
            format!("fill uniform {dt}"),
            Op::Fill { fill: Fill::Uniform { seed: 1 }, dtype: dt, len: 10 },
            vec![],
        ));
        if dt.is_float() {
            ops.push((
                format!("fill normal {dt}"),
                Op::Fill { fill: Fill::Normal { seed: 1 }, dtype: dt, len: 10 },
                vec![],
            ));
        }
        ops.push((format!("copy {dt}"), Op::Copy, vec![dt]));
        for (dims, perm) in [
            (&[3usize, 4][..], &[1usize, 0][..]),
            (&[2, 3, 4], &[0, 2, 1]),
            (&[2, 3, 4], &[1, 0, 2]),
            (&[2, 3, 4, 5], &[3, 1, 0, 2]),
        ] {
            ops.push((
                format!("transpose {dt} {dims:?} {perm:?}"),
                Op::Transpose { shape: shape(dims), perm: perm.to_vec() },
                vec![dt],
            ));
        }
        for kind in ReduceKind::ALL {
            ops.push((
                format!("{} {dt}", kind.name()),
                Op::Reduce { kind, axis: Some(0), shape: shape(&[4, 5]) },
                vec![dt],
            ));
        }
        if dt.is_float() {
            for (lhs, rhs) in [(false, false), (true, false), (false, true), (true, true)] {
                let transpose = MatmulTranspose { lhs, rhs };
                let op = Op::Matmul { lhs: shape(&[2, 3]), rhs: shape(&[3, 4]), transpose };
                ops.push((format!("matmul {dt} {transpose:?}"), op, vec![dt, dt]));
            }
        }
        views_corpus(&mut ops, dt);
    }
    ops
}

/// The view and data-movement ops over `dt`: maps over views (negative, zero and offset strides), and
/// every data-movement, scan and sort kernel.
fn views_corpus(ops: &mut Vec<(String, Op, Vec<DType>)>, dt: DType) {
    let (x, y) = (Expr::arg(0), Expr::arg(1));
    let flipped = Layout { shape: shape(&[4, 6]), strides: vec![-6, 2], offset: 18 };
    let broadcast = Layout { shape: shape(&[4, 6]), strides: vec![0, -1], offset: 5 };
    let plain = Layout::contiguous(shape(&[4, 6]));
    for (what, layouts) in
        [("flip+broadcast", vec![flipped.clone(), broadcast]), ("plain+flip", vec![plain.clone(), flipped.clone()])]
    {
        if let Ok(program) = Program::compile(&(x.clone() + y.clone()), &[dt, dt]) {
            let op = Op::MapViews { program: Arc::new(program), inputs: layouts, shape: shape(&[4, 6]) };
            ops.push((format!("map views {what} {dt}"), op, vec![dt, dt]));
        }
    }
    let identity = Arc::new(Program::identity(dt));
    ops.push((
        format!("contiguous of a flipped view {dt}"),
        Op::MapViews { program: identity, inputs: vec![flipped], shape: shape(&[4, 6]) },
        vec![dt],
    ));
    ops.push((
        format!("concat {dt}"),
        Op::Concat { axis: 1, shapes: vec![shape(&[2, 3]), shape(&[2, 5])] },
        vec![dt, dt],
    ));
    ops.push((
        format!("pad {dt}"),
        Op::Pad { shape: shape(&[2, 3, 4]), widths: vec![(1, 0), (0, 2), (3, 1)], value: Scalar::zero(dt) },
        vec![dt],
    ));
    for index in [DType::U32, DType::I32] {
        let (a, idx) = (shape(&[3, 5, 2]), shape(&[4]));
        ops.push((
            format!("take {dt}[{index}]"),
            Op::Take { axis: 1, shape: a.clone(), indices: idx.clone() },
            vec![dt, index],
        ));
        ops.push((
            format!("take_along_axis {dt}[{index}]"),
            Op::TakeAlongAxis { axis: 1, shape: a.clone(), indices: shape(&[3, 4, 2]) },
            vec![dt, index],
        ));
        ops.push((
            format!("scatter_add {dt}[{index}]"),
            Op::ScatterAdd { axis: 1, shape: a, indices: idx },
            vec![dt, index, dt],
        ));
    }
    for kind in ScanKind::ALL {
        ops.push((format!("{} {dt}", kind.name()), Op::Scan { kind, axis: 0, shape: shape(&[5, 3]) }, vec![dt]));
    }
    ops.push((format!("sort {dt}"), Op::Sort { axis: 1, shape: shape(&[3, 7]) }, vec![dt]));
    ops.push((format!("argsort {dt}"), Op::Argsort { axis: 0, shape: shape(&[3, 7]) }, vec![dt]));
    ops.push((format!("topk {dt}"), Op::TopK { k: 2, axis: 1, shape: shape(&[3, 7]) }, vec![dt]));
}

/// The input shapes `op` declares (what `Op::output` validates the corpus against).
fn input_shapes(op: &Op, inputs: &[DType]) -> Vec<Shape> {
    match op {
        Op::Map { input_shapes, .. } => input_shapes.clone(),
        Op::MapViews { inputs: layouts, .. } => layouts.iter().map(|l| l.shape.clone()).collect(),
        Op::Reduce { shape, .. }
        | Op::Transpose { shape, .. }
        | Op::Pad { shape, .. }
        | Op::Scan { shape, .. }
        | Op::Sort { shape, .. }
        | Op::Argsort { shape, .. }
        | Op::TopK { shape, .. } => vec![shape.clone()],
        Op::Matmul { lhs, rhs, .. } => vec![lhs.clone(), rhs.clone()],
        Op::Concat { shapes, .. } => shapes.clone(),
        Op::Take { shape, indices, .. } | Op::TakeAlongAxis { shape, indices, .. } => {
            vec![shape.clone(), indices.clone()]
        }
        Op::ScatterAdd { axis, shape, indices } => {
            let mut v = shape.dims().to_vec();
            v.splice(*axis..*axis + 1, indices.dims().iter().copied());
            vec![shape.clone(), indices.clone(), Shape::new(&v).unwrap()]
        }
        _ => inputs.iter().map(|_| shape(&[10])).collect(),
    }
}

fn nvrtc_path() -> Option<PathBuf> {
    std::env::var_os(NVRTC_ENV).filter(|p| !p.is_empty()).map(PathBuf::from)
}

fn required() -> bool {
    std::env::var("POLYCOMPUTE_REQUIRE_NVRTC").is_ok_and(|v| !v.is_empty() && v != "0")
}

#[test]
fn every_generated_kernel_compiles_for_sm80_and_sm90() {
    // Generating the corpus must work everywhere (no NVRTC needed).
    let mut kernels: BTreeMap<String, (String, Kernel)> = BTreeMap::new();
    for (what, op, inputs) in corpus() {
        let out_ok = {
            let shapes = input_shapes(&op, &inputs);
            let pairs: Vec<(DType, &Shape)> = inputs.iter().copied().zip(shapes.iter()).collect();
            op.output(&pairs)
        };
        out_ok.unwrap_or_else(|e| panic!("corpus op {what} is invalid: {e}"));
        for k in kernels_for(&op, &inputs).unwrap_or_else(|e| panic!("{what}: codegen failed: {e}")) {
            kernels.entry(k.source.clone()).or_insert((what.clone(), k));
        }
    }
    assert!(kernels.len() > 200, "corpus too small: {} kernels", kernels.len());
    let Some(path) = nvrtc_path() else {
        assert!(!required(), "POLYCOMPUTE_REQUIRE_NVRTC is set but {NVRTC_ENV} is not");
        println!(
            "SKIPPED NVRTC compile check: {NVRTC_ENV} is not set ({} kernels generated, none compiled); \
             run `export {NVRTC_ENV}=$(scripts/nvrtc-wheel.sh)`",
            kernels.len()
        );
        return;
    };
    let nvrtc = Nvrtc::load(Some(path)).unwrap_or_else(|e| panic!("{e}"));
    for arch in ARCHS {
        assert!(
            nvrtc.supported_archs().is_empty() || nvrtc.supported_archs().contains(&arch),
            "NVRTC {:?} does not support sm_{arch}: {:?}",
            nvrtc.version(),
            nvrtc.supported_archs()
        );
    }
    let jobs: Vec<(&String, &Kernel, u32)> =
        kernels.values().flat_map(|(what, k)| ARCHS.iter().map(move |&a| (what, k, a))).collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(threads))
            .map(|chunk| {
                let nvrtc = &nvrtc;
                s.spawn(move || {
                    let mut failed = Vec::new();
                    for (what, k, arch) in chunk {
                        if let Err(e) = nvrtc.compile(&k.source, *arch) {
                            failed.push(format!(
                                "=== {what}: sm_{arch} ===\n--- log ---\n{}\n--- source ---\n{}",
                                e.log, k.source
                            ));
                        }
                    }
                    failed
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    println!(
        "NVRTC {}.{} ({}): compiled {} kernels for {:?}, {} failed",
        nvrtc.version().0,
        nvrtc.version().1,
        nvrtc.path(),
        kernels.len(),
        ARCHS,
        failures.len()
    );
    assert!(failures.is_empty(), "{} kernel compile(s) failed:\n{}", failures.len(), failures.join("\n"));
}

/// The matmul kernels must not spill registers on sm_80 or sm_90 (a spill turns the inner
/// loop's register tile into local-memory traffic), and the row reduction neither.
#[test]
fn hot_kernels_do_not_spill() {
    let Some(path) = nvrtc_path() else {
        assert!(!required(), "POLYCOMPUTE_REQUIRE_NVRTC is set but {NVRTC_ENV} is not");
        println!("SKIPPED: {NVRTC_ENV} is not set");
        return;
    };
    let nvrtc = Nvrtc::load(Some(path)).unwrap_or_else(|e| panic!("{e}"));
    let mut kernels = vec![
        crate::codegen::matmul::kernel(DType::F32).unwrap(),
        crate::codegen::matmul::kernel(DType::F64).unwrap(),
        crate::codegen::matmul_half::kernel(DType::F16).unwrap(),
        crate::codegen::matmul_half::kernel(DType::BF16).unwrap(),
    ];
    for dt in [DType::F32, DType::F64] {
        kernels.push(crate::codegen::reduce::rows_kernel(
            ReduceKind::Sum,
            dt,
            crate::codegen::reduce::Input::Elements,
            crate::codegen::reduce::Output::Partials,
        ));
    }
    for k in &kernels {
        for arch in ARCHS {
            let log = nvrtc.resource_report(&k.source, arch).unwrap_or_else(|e| panic!("{}", e.log));
            println!("{} sm_{arch}:\n{log}", k.entry);
            assert!(log.contains("Used"), "no ptxas report: {log}");
            assert!(
                !log.lines().any(|l| l.contains("spill") && !l.contains("0 bytes spill stores, 0 bytes spill loads")),
                "{} spills on sm_{arch}:\n{log}",
                k.entry
            );
        }
    }
}
