//! Runs the generated reduction and random-fill kernels on the host (compiled with the system
//! C++ compiler; the grid is one thread, so block-level code runs sequentially and the warp
//! shuffle step, a no-op for one thread, is taken out), through every reduction path (rows,
//! segmented rows, columns, segmented columns, each with its second pass), and compares them
//! with the CPU backend and with `polycompute_core::philox`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use polycompute_core::{bf16, f16, philox, BackendKind, DType, Device, Fill, HostVec, Op, ReduceKind, Shape};
use polycompute_cuda::codegen::{fill, reduce, Kernel};

#[macro_use]
mod common;
use common::{build_and_run, compiler, host_type};

const SHIM: &str = cuda_host_shim!(
    r#"
#define __shared__ static
#define __syncthreads()
static const pc_dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
template <class T> static inline T __shfl_down_sync(unsigned, T v, int) { return v; }
"#
);

/// A translation unit of kernels (each in its own namespace) and a main that runs them.
struct Harness {
    dir: PathBuf,
    src: String,
    main: String,
    count: usize,
}

impl Harness {
    fn new(name: &str) -> Harness {
        let dir = std::env::temp_dir().join(format!("polycompute-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Harness { dir, src: SHIM.to_string(), main: String::from("int main() {\n"), count: 0 }
    }

    /// Adds a kernel; returns its namespace. One thread runs the block, so the warp shuffle
    /// step (a no-op for a single lane) is removed.
    fn kernel(&mut self, k: &Kernel) -> String {
        let ns = format!("k{}", self.count);
        self.count += 1;
        let body = k.source.replace("extern \"C\" ", "").replace(
            "for (int d = 16; d > 0; d >>= 1) a = pc_combine(a, pc_shfl(a, d));",
            "/* one lane: no shuffle */",
        );
        let _ = writeln!(self.src, "namespace {ns} {{\n{body}\n}}");
        ns
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn run(mut self, cxx: &str) -> PathBuf {
        self.main.push_str("  return 0;\n}\n");
        let source = format!("{}{}", self.src, self.main);
        build_and_run(cxx, &self.dir, "kernels", &source, &["-O1"], &[]);
        self.dir
    }
}

fn write_vec(path: &Path, v: &HostVec) {
    let b: Vec<u8> = match v {
        HostVec::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::F16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::BF16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    };
    std::fs::write(path, b).unwrap();
}

fn read_vec(path: &Path, dt: DType) -> HostVec {
    let b = std::fs::read(path).unwrap();
    match dt {
        DType::F32 => HostVec::F32(b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::F64 => HostVec::F64(b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::I32 => HostVec::I32(b.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::U32 => HostVec::U32(b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::F16 => HostVec::F16(b.chunks_exact(2).map(|c| f16::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::BF16 => HostVec::BF16(b.chunks_exact(2).map(|c| bf16::from_le_bytes(c.try_into().unwrap())).collect()),
    }
}

fn as_f64(v: &HostVec) -> Vec<f64> {
    match v {
        HostVec::F32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::F64(v) => v.clone(),
        HostVec::I32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::U32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::F16(v) => v.iter().map(|x| x.to_f64()).collect(),
        HostVec::BF16(v) => v.iter().map(|x| x.to_f64()).collect(),
    }
}

/// Input data with repeats, both signs, and (floats) a NaN in one row only.
fn data(dt: DType, len: usize, nan_at: Option<usize>) -> HostVec {
    let u = |i: usize| philox::uniform_u32(9, i as u64);
    match dt {
        DType::F32 => HostVec::F32(
            (0..len).map(|i| if Some(i) == nan_at { f32::NAN } else { (u(i) % 2001) as f32 / 64.0 - 15.0 }).collect(),
        ),
        DType::F64 => HostVec::F64(
            (0..len).map(|i| if Some(i) == nan_at { f64::NAN } else { philox::normal_f64(9, i as u64) }).collect(),
        ),
        DType::I32 => HostVec::I32((0..len).map(|i| (u(i) % 41) as i32 * 52_000_000 - 1_040_000_000).collect()),
        DType::U32 => HostVec::U32((0..len).map(|i| u(i) % 7 + (u(i) & 0xF000_0000)).collect()),
        // The f32 values (multiples of 1/64 below 16 in magnitude: exact in f16, not all in bf16).
        DType::F16 | DType::BF16 => match data(DType::F32, len, nan_at) {
            HostVec::F32(v) if dt == DType::F16 => HostVec::F16(v.into_iter().map(f16::from_f32).collect()),
            HostVec::F32(v) => HostVec::BF16(v.into_iter().map(bf16::from_f32).collect()),
            other => other,
        },
    }
}

/// Emits the launches `ops/reduce.rs` makes for a reduction (same plan, same kernels, same
/// parameters), with the plan computed for a device of `sms` multiprocessors.
fn emit_reduce(
    h: &mut Harness,
    kind: ReduceKind,
    dt: DType,
    dims: &[usize],
    axis: Option<usize>,
    sms: usize,
    tag: &str,
) {
    let plan = reduce::plan(dims, axis, sms);
    let (outputs, count) = match plan {
        reduce::ReducePlan::Rows { rows, r, .. } => (rows, r),
        reduce::ReducePlan::Cols { outer, r, inner, .. } => (outer * inner, r),
    };
    let out_t = host_type(kind.output_dtype(dt));
    let in_t = host_type(dt);
    let input = h.path(&format!("in_{tag}.bin")).display().to_string();
    let output = h.path(&format!("out_{tag}.bin")).display().to_string();
    let acc = reduce::acc_bytes(kind, dt);
    let mut m = format!("  {{ const {in_t} *in = (const {in_t} *)pc_read(\"{input}\");\n    {out_t} *out = ({out_t} *)malloc({outputs} * sizeof({out_t}) + 1);\n");
    let second = |h: &mut Harness, m: &mut String, segs: usize| {
        let ns = h.kernel(&reduce::rows_kernel(kind, dt, reduce::Input::Partials, reduce::Output::Final));
        let _ = writeln!(m, "    {ns}::pc_reduce(out, ({ns}::Acc *)part, {outputs}u, {segs}u, 1u, {segs}u, {count}u);");
    };
    match plan {
        reduce::ReducePlan::Rows { rows, r, segs: 1, seg_len } => {
            let ns = h.kernel(&reduce::rows_kernel(kind, dt, reduce::Input::Elements, reduce::Output::Final));
            let _ = writeln!(m, "    {ns}::pc_reduce(out, in, {rows}u, {r}u, 1u, {seg_len}u, {count}u);");
        }
        reduce::ReducePlan::Rows { rows, r, segs, seg_len } => {
            let ns = h.kernel(&reduce::rows_kernel(kind, dt, reduce::Input::Elements, reduce::Output::Partials));
            let _ = writeln!(m, "    void *part = malloc({} + 1);", rows * segs * acc);
            let _ = writeln!(
                m,
                "    {ns}::pc_reduce(({ns}::Acc *)part, in, {rows}u, {r}u, {segs}u, {seg_len}u, {count}u);"
            );
            second(h, &mut m, segs);
        }
        reduce::ReducePlan::Cols { outer, r, inner, segs: 1, seg_len } => {
            let ns = h.kernel(&reduce::cols_kernel(kind, dt, reduce::Output::Final));
            let _ = writeln!(m, "    {ns}::pc_reduce(out, in, {outer}u, {r}u, {inner}u, 1u, {seg_len}u, {count}u);");
        }
        reduce::ReducePlan::Cols { outer, r, inner, segs, seg_len } => {
            let ns = h.kernel(&reduce::cols_kernel(kind, dt, reduce::Output::Partials));
            let _ = writeln!(m, "    void *part = malloc({} + 1);", outputs * segs * acc);
            let _ = writeln!(
                m,
                "    {ns}::pc_reduce(({ns}::Acc *)part, in, {outer}u, {r}u, {inner}u, {segs}u, {seg_len}u, {count}u);"
            );
            second(h, &mut m, segs);
        }
    }
    let _ = writeln!(m, "    pc_write(\"{output}\", out, {outputs} * sizeof({out_t}));\n  }}");
    h.main.push_str(&m);
}

#[test]
fn reductions_agree_with_the_cpu_backend_on_every_path() {
    let _ = polycompute_cpu::CpuBackend;
    let _ = polycompute_cuda::matmul_impl();
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    let cpu = Device::open(BackendKind::Cpu, 0).unwrap();
    // (dims, axis, sms): rows; segmented rows; columns; segmented columns; empty axis.
    let layouts: [(&[usize], Option<usize>, usize); 6] = [
        (&[6, 37], Some(1), 80),
        (&[20000], None, 1),
        (&[3, 9000, 1], Some(1), 1),
        (&[5, 40, 7], Some(1), 80),
        (&[2, 3000, 3], Some(1), 1),
        (&[3, 0, 2], Some(1), 1),
    ];
    let mut h = Harness::new("host-reduce");
    let mut cases = Vec::new();
    for dt in DType::ALL {
        for (li, (dims, axis, sms)) in layouts.iter().enumerate() {
            let len: usize = dims.iter().product();
            let input = data(dt, len, (len > 10).then_some(len / 3));
            for kind in ReduceKind::ALL {
                let reduced = axis.map_or(len, |a| dims[a]);
                if kind.needs_elements() && reduced == 0 {
                    continue;
                }
                let tag = format!("{dt}_{li}_{}", kind.name());
                write_vec(&h.path(&format!("in_{tag}.bin")), &input);
                emit_reduce(&mut h, kind, dt, dims, *axis, *sms, &tag);
                cases.push((tag, kind, dt, dims.to_vec(), *axis, input.clone()));
            }
        }
    }
    let dir = h.run(&cxx);
    let mut failures = Vec::new();
    for (tag, kind, dt, dims, axis, input) in &cases {
        let got = as_f64(&read_vec(&dir.join(format!("out_{tag}.bin")), kind.output_dtype(*dt)));
        let op = Op::Reduce { kind: *kind, axis: *axis, shape: Shape::new(dims).unwrap() };
        let buf = cpu.backend().upload(input.as_slice()).unwrap();
        let want = as_f64(&cpu.backend().download(&cpu.backend().execute(&op, &[&buf]).unwrap()).unwrap());
        assert_eq!(got.len(), want.len(), "{tag}");
        // Float sums, products and means are rounded differently (f64 accumulation here,
        // pairwise there): compared relative to the magnitude of what was summed.
        let approx = dt.is_float() && matches!(kind, ReduceKind::Sum | ReduceKind::Prod | ReduceKind::Mean);
        let eps = match dt {
            DType::F32 => f32::EPSILON as f64,
            DType::F16 => f16::EPSILON.to_f64(),
            DType::BF16 => bf16::EPSILON.to_f64(),
            _ => f64::EPSILON,
        };
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let ok = if g.is_nan() || w.is_nan() {
                g.is_nan() && w.is_nan()
            } else if approx {
                let reduced = axis.map_or(dims.iter().product(), |a| dims[a]) as f64;
                let tol = 64.0 * eps * w.abs().max(1.0) * if *kind == ReduceKind::Prod { reduced } else { 1.0 };
                (g - w).abs() <= tol || g == w
            } else {
                g == w
            };
            if !ok {
                failures.push(format!("{tag} [{i}]: cuda C {g:e}, cpu {w:e}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{} reductions run on the host against the CPU backend, {} mismatches", cases.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.iter().take(40).cloned().collect::<Vec<_>>().join("\n"));
}

#[test]
fn random_fills_reproduce_philox() {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    let n = 1003usize;
    let seed = 0x1234_5678_9abc_def0u64;
    let key = philox::key(seed);
    let mut h = Harness::new("host-fill");
    let fills = [
        (Fill::Uniform { seed }, DType::U32),
        (Fill::Uniform { seed }, DType::I32),
        (Fill::Uniform { seed }, DType::F32),
        (Fill::Uniform { seed }, DType::F64),
        (Fill::Normal { seed }, DType::F32),
        (Fill::Normal { seed }, DType::F64),
        (Fill::Uniform { seed }, DType::F16),
        (Fill::Uniform { seed }, DType::BF16),
        (Fill::Normal { seed }, DType::F16),
        (Fill::Normal { seed }, DType::BF16),
    ];
    for (i, (f, dt)) in fills.iter().enumerate() {
        let ns = h.kernel(&fill::kernel(*f, *dt));
        let t = host_type(*dt);
        let out = h.path(&format!("fill_{i}.bin")).display().to_string();
        let _ = writeln!(
            h.main,
            "  {{ {t} *out = ({t} *)malloc({n} * sizeof({t}));\n    {ns}::pc_fill(out, {n}u, {}u, {}u);\n    pc_write(\"{out}\", out, {n} * sizeof({t}));\n  }}",
            key[0], key[1]
        );
    }
    let dir = h.run(&cxx);
    for (i, (f, dt)) in fills.iter().enumerate() {
        let got = read_vec(&dir.join(format!("fill_{i}.bin")), *dt);
        for j in 0..n as u64 {
            let k = j as usize;
            match (&got, f) {
                (HostVec::U32(v), _) => assert_eq!(v[k], philox::uniform_u32(seed, j)),
                (HostVec::I32(v), _) => assert_eq!(v[k] as u32, philox::uniform_u32(seed, j)),
                (HostVec::F32(v), Fill::Uniform { .. }) => {
                    assert_eq!(v[k].to_bits(), philox::uniform_f32(seed, j).to_bits())
                }
                (HostVec::F64(v), Fill::Uniform { .. }) => {
                    assert_eq!(v[k].to_bits(), philox::uniform_f64(seed, j).to_bits())
                }
                (HostVec::F32(v), _) => {
                    let w = philox::normal_f32(seed, j);
                    assert!(
                        (v[k] - w).abs() <= 4.0 * f32::EPSILON * (1.0 + w.abs()),
                        "normal f32 {j}: {} vs {w}",
                        v[k]
                    );
                }
                // Halves: the f32 value rounded once (the host's libm is the CPU backend's).
                (HostVec::F16(v), Fill::Uniform { .. }) => {
                    assert_eq!(v[k].to_bits(), f16::from_f32(philox::uniform_f32(seed, j)).to_bits())
                }
                (HostVec::BF16(v), Fill::Uniform { .. }) => {
                    assert_eq!(v[k].to_bits(), bf16::from_f32(philox::uniform_f32(seed, j)).to_bits())
                }
                (HostVec::F16(v), _) => {
                    let w = f16::from_f32(philox::normal_f32(seed, j));
                    assert!(
                        v[k] == w || (v[k].to_f32() - w.to_f32()).abs() <= f16::EPSILON.to_f32() * w.to_f32().abs(),
                        "normal f16 {j}: {} vs {w}",
                        v[k]
                    );
                }
                (HostVec::BF16(v), _) => {
                    let w = bf16::from_f32(philox::normal_f32(seed, j));
                    assert!(
                        v[k] == w || (v[k].to_f32() - w.to_f32()).abs() <= bf16::EPSILON.to_f32() * w.to_f32().abs(),
                        "normal bf16 {j}: {} vs {w}",
                        v[k]
                    );
                }
                (HostVec::F64(v), _) => {
                    let w = philox::normal_f64(seed, j);
                    assert!(
                        (v[k] - w).abs() <= 4.0 * f64::EPSILON * (1.0 + w.abs()),
                        "normal f64 {j}: {} vs {w}",
                        v[k]
                    );
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
