//! Runs the generated map kernels on the host: the CUDA C++ of each kernel is compiled with the
//! system C++ compiler (a small header maps the CUDA intrinsics it uses to their exact host
//! equivalents, and the grid to one thread), run over corner-case inputs (NaN, infinities, ±0,
//! halves, integer extremes, zero divisors), and compared with the CPU backend on the same op.
//! So the semantics written in `codegen/cuda/semantics.cuh` are checked here, without a GPU; on a
//! GPU, the conformance suite checks the device's math library on top.

use std::sync::Arc;

use crate::codegen::map;
use polycompute_core::{bf16, f16, BackendKind, BinaryOp, DType, Device, Expr, HostVec, Op, Program, Shape, UnaryOp};
use polycompute_testing::specials::{extended_of, host_pairs};
use polycompute_testing::Ulps;

use super::shim::{build_and_run, compiler, host_type};

const SHIM: &str = cuda_host_shim!(
    r#"
static const pc_dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
"#
);

fn bytes(v: &HostVec) -> Vec<u8> {
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

/// Element `i` as bits widened to u64, and whether it is a NaN.
fn element(v: &HostVec, i: usize) -> (u64, bool, f64) {
    match v {
        HostVec::F32(v) => (v[i].to_bits() as u64, v[i].is_nan(), v[i] as f64),
        HostVec::F64(v) => (v[i].to_bits(), v[i].is_nan(), v[i]),
        HostVec::I32(v) => (v[i] as u32 as u64, false, v[i] as f64),
        HostVec::U32(v) => (v[i] as u64, false, v[i] as f64),
        HostVec::F16(v) => (v[i].to_bits() as u64, v[i].is_nan(), v[i].to_f64()),
        HostVec::BF16(v) => (v[i].to_bits() as u64, v[i].is_nan(), v[i].to_f64()),
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
    }
}

fn from_bytes(dt: DType, b: &[u8]) -> HostVec {
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

struct Case {
    name: String,
    program: Program,
    inputs: Vec<HostVec>,
    /// Compared within a few ULPs (see [`from_libm`]), else bit for bit.
    approximate: bool,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let (x, y) = (Expr::arg(0), Expr::arg(1));
    for dt in DType::ALL.into_iter().filter(|d| !matches!(d, DType::I64 | DType::U8 | DType::Bool)) {
        // The corner cases (NaN, infinities, ±0, halves, integer extremes, zero divisors).
        let v = extended_of(dt);
        let (a, b) = host_pairs(&v);
        for u in UnaryOp::ALL {
            if let Ok(p) = Program::compile(&x.clone().unary(u), &[dt]) {
                let approximate = from_libm(u);
                out.push(Case {
                    name: format!("{}({dt})", u.name()),
                    program: p,
                    inputs: vec![v.clone()],
                    approximate,
                });
            }
        }
        for op in BinaryOp::ALL {
            if let Ok(p) = Program::compile(&x.clone().binary(op, y.clone()), &[dt, dt]) {
                let approximate = op == BinaryOp::Pow;
                let inputs = vec![a.clone(), b.clone()];
                out.push(Case { name: format!("{}({dt})", op.name()), program: p, inputs, approximate });
            }
        }
        for to in DType::ALL.into_iter().filter(|d| !matches!(d, DType::I64 | DType::U8 | DType::Bool)) {
            let p = Program::compile(&x.clone().cast(to), &[dt]).unwrap();
            let name = format!("cast({dt} -> {to})");
            out.push(Case { name, program: p, inputs: vec![v.clone()], approximate: false });
        }
        let sel = Expr::select(x.clone(), y.clone(), Expr::index().cast(dt));
        let p = Program::compile(&sel, &[dt, dt]).unwrap();
        let inputs = vec![a.clone(), b.clone()];
        out.push(Case { name: format!("select({dt})"), program: p, inputs, approximate: false });
    }
    out
}

/// Whether a unary op's result comes from a math library (host libm on both sides here, but
/// not required to be correctly rounded): compared within a few ULPs, the rest bit for bit.
/// Every op is named, so a new one must be placed here.
fn from_libm(op: UnaryOp) -> bool {
    match op {
        UnaryOp::Exp
        | UnaryOp::Expm1
        | UnaryOp::Ln
        | UnaryOp::Log1p
        | UnaryOp::Log2
        | UnaryOp::Log10
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Tan
        | UnaryOp::Tanh => true,
        UnaryOp::Neg
        | UnaryOp::Abs
        | UnaryOp::Sqrt
        | UnaryOp::Recip
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Round => false,
    }
}

/// Within 4 ULPs of the output dtype (NaN matching only NaN, infinities only themselves).
fn close(got: f64, want: f64, dt: DType) -> bool {
    let within = Ulps::within(4);
    match dt {
        DType::F32 => within.check(got as f32, want as f32).is_ok(),
        // Half values: ULPs counted on the ordered bit patterns of the half type.
        DType::F16 => half_ulps(f16::from_f64(got).to_bits(), f16::from_f64(want).to_bits()) <= 4,
        DType::BF16 => half_ulps(bf16::from_f64(got).to_bits(), bf16::from_f64(want).to_bits()) <= 4,
        _ => within.check(got, want).is_ok(),
    }
}

/// The distance in representable values between two (non-NaN) half bit patterns.
fn half_ulps(a: u16, b: u16) -> u32 {
    let ordered = |x: u16| if x & 0x8000 != 0 { 0x8000 - (x & 0x7fff) as i32 } else { 0x8000 + x as i32 };
    ordered(a).abs_diff(ordered(b))
}

#[test]
fn generated_map_kernels_agree_with_the_cpu_backend() {
    // Referencing the crates links them (and registers both backends).
    let _ = polycompute_cpu::CpuBackend;
    let _ = crate::matmul_impl();
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    let cpu = Device::open(BackendKind::Cpu, 0).unwrap();
    let dir = std::env::temp_dir().join(format!("polycompute-host-semantics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = cases();
    let mut src = String::from(SHIM);
    let mut main = String::from("int main() {\n");
    for (i, c) in cases.iter().enumerate() {
        let n = c.inputs[0].len();
        let shape = Shape::new(&[n]).unwrap();
        let plan = map::plan(&Arc::new(c.program.clone()), &vec![shape.clone(); c.inputs.len()], &shape);
        let kernel = plan.kernel.source.replace("extern \"C\" ", "");
        src.push_str(&format!("namespace k{i} {{\n{kernel}\n}}\n"));
        let out_t = host_type(c.program.output_dtype());
        main.push_str(&format!("  {{ {out_t} *out = ({out_t} *)malloc({n} * sizeof({out_t}) + 1);\n"));
        let mut args = String::new();
        for (k, input) in c.inputs.iter().enumerate() {
            std::fs::write(dir.join(format!("in_{i}_{k}.bin")), bytes(input)).unwrap();
            let t = host_type(input.dtype());
            main.push_str(&format!(
                "    const {t} *in{k} = (const {t} *)pc_read(\"{}\");\n",
                dir.join(format!("in_{i}_{k}.bin")).display()
            ));
            args.push_str(&format!("in{k}, "));
        }
        main.push_str(&format!(
            "    k{i}::pc_map(out, {args}{n}u);\n    pc_write(\"{}\", out, {n} * sizeof({out_t}));\n  }}\n",
            dir.join(format!("out_{i}.bin")).display()
        ));
    }
    main.push_str("  return 0;\n}\n");
    src.push_str(&main);
    build_and_run(&cxx, &dir, "kernels", &src, &["-O0"], &[]);

    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let out_dt = c.program.output_dtype();
        let got = from_bytes(out_dt, &std::fs::read(dir.join(format!("out_{i}.bin"))).unwrap());
        let n = c.inputs[0].len();
        let shape = Shape::new(&[n]).unwrap();
        let bufs: Vec<_> = c.inputs.iter().map(|v| cpu.backend().upload(v.as_slice()).unwrap()).collect();
        let op =
            Op::Map { program: Arc::new(c.program.clone()), input_shapes: vec![shape.clone(); c.inputs.len()], shape };
        let want =
            cpu.backend().download(&cpu.backend().execute(&op, &bufs.iter().collect::<Vec<_>>()).unwrap()).unwrap();
        for j in 0..n {
            let ((gb, gnan, gv), (wb, wnan, wv)) = (element(&got, j), element(&want, j));
            let ok = if gnan || wnan {
                gnan == wnan
            } else if c.approximate {
                close(gv, wv, out_dt)
            } else {
                gb == wb
            };
            if !ok {
                let ins: Vec<f64> = c.inputs.iter().map(|v| element(v, j).2).collect();
                failures.push(format!("{}: inputs {ins:?}: cuda C {gv:e} ({gb:#x}), cpu {wv:e} ({wb:#x})", c.name));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{} map kernels run on the host against the CPU backend, {} mismatches", cases.len(), failures.len());
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}
