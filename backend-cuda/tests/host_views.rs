//! Runs the kernels of issue 14 (maps over views, concat, pad, take, take_along_axis,
//! scatter_add, cumsum/cumprod, sort, argsort, topk) on the host: the generated CUDA C is
//! compiled with the system C++ compiler (one thread per grid, so every grid-stride loop runs
//! sequentially; `atomicAdd` becomes a plain add), launched with the same plans, parameters
//! and pass sequence as `src/ops/`, and compared with the CPU backend running the same `Op`:
//! bit for bit for data movement and sorting (stability, NaN last, -0.0 == +0.0 in input
//! order), within the summation tolerance for float scans and scatter-adds.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use polycompute_core::{
    philox, BackendKind, DType, Device, Expr, HostVec, Layout, Op, Program, Scalar, ScanKind, Shape,
};
use polycompute_cuda::codegen::movement::{self, split_axis};
use polycompute_cuda::codegen::scan::{self, ScanPass, ScanPlan};
use polycompute_cuda::codegen::sort::{self, SortOutput};
use polycompute_cuda::codegen::{map, Kernel};

#[macro_use]
mod common;
use common::compiler;

const SHIM: &str = cuda_host_shim!(
    r#"
#define __shared__ static
#define __syncthreads()
static const pc_dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
// One thread: an atomic add is an add (unsigned for integers, where wrapping is defined).
template <class T> static inline T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }
// Any buffer passes for any pointer parameter, and geometry words for any by-value struct.
struct P { void *p; template <class T> operator T *() const { return (T *)p; } };
struct G { const unsigned *w; template <class T> operator T() const { T g; memcpy(&g, w, sizeof(T)); return g; } };
"#
);

/// A translation unit of kernels (each in its own namespace) and a main that runs the cases.
struct Harness {
    dir: PathBuf,
    src: String,
    main: String,
    kernels: usize,
}

impl Harness {
    fn new() -> Harness {
        let dir = std::env::temp_dir().join(format!("polycompute-host-views-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Harness { dir, src: SHIM.to_string(), main: String::from("int main() {\n"), kernels: 0 }
    }

    fn kernel(&mut self, k: &Kernel) -> String {
        let ns = format!("k{}", self.kernels);
        self.kernels += 1;
        let _ = writeln!(self.src, "namespace {ns} {{\n{}\n}}", k.source.replace("extern \"C\" ", ""));
        ns
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    fn run(mut self, cxx: &str) -> PathBuf {
        self.main.push_str("  return 0;\n}\n");
        let cpp = self.dir.join("views.cpp");
        std::fs::write(&cpp, format!("{}{}", self.src, self.main)).unwrap();
        let exe = self.dir.join("views");
        let out = Command::new(cxx)
            .args(["-O1", "-ffp-contract=off", "-w", "-o"])
            .arg(&exe)
            .arg(&cpp)
            .arg("-lm")
            .output()
            .unwrap();
        assert!(out.status.success(), "host compile failed:\n{}", String::from_utf8_lossy(&out.stderr));
        let ran = Command::new(&exe).output().unwrap();
        assert!(ran.status.success(), "host run failed: {}", String::from_utf8_lossy(&ran.stderr));
        self.dir
    }
}

fn bytes_of(v: &HostVec) -> Vec<u8> {
    match v {
        HostVec::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostVec::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

fn read_vec(path: &Path, dt: DType) -> HostVec {
    let b = std::fs::read(path).unwrap();
    match dt {
        DType::F32 => HostVec::F32(b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::F64 => HostVec::F64(b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::I32 => HostVec::I32(b.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()),
        DType::U32 => HostVec::U32(b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()),
    }
}

/// Values for sorting and moving: repeats, both signs, and for floats NaN, ±inf and both
/// zeros scattered through (so stability and numpy's order are exercised).
fn data(dt: DType, len: usize, seed: u64) -> HostVec {
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
        DType::I32 => HostVec::I32((0..len).map(|i| ((u(i) % 31) as i64 * 140_000_000 - 2_100_000_000) as i32).collect()),
        DType::U32 => HostVec::U32((0..len).map(|i| u(i) % 13 + (u(i) & 0xC000_0000)).collect()),
    }
}

/// Finite values for scans: small magnitudes (products near 1 so cumprod stays finite),
/// while integers are large enough to wrap.
fn scan_data(dt: DType, len: usize, seed: u64) -> HostVec {
    let u = |i: usize| philox::uniform_u32(seed, i as u64);
    match dt {
        DType::F32 => HostVec::F32((0..len).map(|i| 0.9 + (u(i) % 1000) as f32 / 5000.0).collect()),
        DType::F64 => HostVec::F64((0..len).map(|i| 0.9 + (u(i) % 1000) as f64 / 5000.0).collect()),
        DType::I32 => HostVec::I32((0..len).map(|i| u(i) as i32 | 1).collect()),
        DType::U32 => HostVec::U32((0..len).map(|i| u(i) | 1).collect()),
    }
}

fn shape(d: &[usize]) -> Shape {
    Shape::new(d).unwrap()
}

/// One case: an op, its inputs, and how its result compares.
struct Case {
    tag: String,
    op: Op,
    inputs: Vec<HostVec>,
    out: DType,
    /// Floats within a summation bound (scans, scatter-add) instead of bit-equal.
    approx: bool,
}

/// Emits the C that reads a case's inputs, launches what `src/ops/` launches for its op, and
/// writes the output.
fn emit(h: &mut Harness, c: &Case, out_len: usize) {
    let mut m = String::from("  {\n");
    for (k, v) in c.inputs.iter().enumerate() {
        let path = h.path(&format!("{}_in{k}.bin", c.tag));
        std::fs::write(&path, bytes_of(v)).unwrap();
        let _ = writeln!(m, "    void *in{k} = pc_read(\"{path}\");");
    }
    let out_bytes = out_len * c.out.size_bytes();
    let _ = writeln!(m, "    void *out = calloc({out_bytes} + 8, 1);");
    match &c.op {
        Op::MapViews { program, inputs, shape } => {
            let plan = map::plan_views(program, inputs, shape);
            let ns = h.kernel(&plan.kernel);
            let args: String = (0..inputs.len()).map(|k| format!("P{{in{k}}}, ")).collect();
            if plan.geometry.is_empty() {
                let _ = writeln!(m, "    {ns}::pc_map(P{{out}}, {args}{}u);", shape.numel());
            } else {
                let _ = writeln!(m, "    static const unsigned w[] = {{{}}};", words(&plan.geometry));
                let _ = writeln!(m, "    {ns}::pc_map(P{{out}}, {args}{}u, G{{w}});", shape.numel());
            }
        }
        Op::Concat { axis, shapes } => {
            let bytes = c.inputs[0].dtype().size_bytes();
            let ns = h.kernel(&movement::concat_kernel(bytes));
            let total_axis: usize = shapes.iter().map(|s| s.dims()[*axis]).sum();
            let (outer, _, inner) = split_axis(&shapes[0], *axis);
            let mut col0 = 0;
            for (k, s) in shapes.iter().enumerate() {
                let row = s.dims()[*axis] * inner;
                if outer * row > 0 {
                    let _ = writeln!(
                        m,
                        "    {ns}::pc_concat(P{{out}}, P{{in{k}}}, {}u, {row}u, {}u, {col0}u);",
                        outer * row,
                        total_axis * inner
                    );
                }
                col0 += row;
            }
        }
        Op::Pad { shape, widths, value } => {
            let g = movement::pad_geometry(shape, widths);
            let ns = h.kernel(&movement::pad_kernel(c.out.size_bytes(), g.len() / 3));
            let bits = movement::value_bytes(*value);
            let v = if bits.len() == 8 {
                format!("{}ull", u64::from_le_bytes(bits.try_into().unwrap()))
            } else {
                format!("{}u", u32::from_le_bytes(bits.try_into().unwrap()))
            };
            let _ = writeln!(m, "    static const unsigned w[] = {{{}}};", words(&g));
            let _ = writeln!(m, "    {ns}::pc_pad(P{{out}}, P{{in0}}, {out_len}u, G{{w}}, {v});");
        }
        Op::Take { axis, shape, indices } | Op::TakeAlongAxis { axis, shape, indices } => {
            let along = matches!(c.op, Op::TakeAlongAxis { .. });
            let ns = h.kernel(&movement::take_kernel(c.out.size_bytes(), c.inputs[1].dtype(), along));
            let (_, n, inner) = split_axis(shape, *axis);
            let mm = if along { indices.dims()[*axis] } else { indices.numel() };
            let _ = writeln!(m, "    {ns}::pc_take(P{{out}}, P{{in0}}, P{{in1}}, {out_len}u, {n}u, {mm}u, {inner}u);");
        }
        Op::ScatterAdd { axis, shape, indices } => {
            let ns = h.kernel(&movement::scatter_add_kernel(c.out, c.inputs[1].dtype()));
            let (outer, n, inner) = split_axis(shape, *axis);
            let mm = indices.numel();
            let _ = writeln!(m, "    memcpy(out, in0, {out_bytes});");
            let _ = writeln!(
                m,
                "    {ns}::pc_scatter_add(P{{out}}, P{{in1}}, P{{in2}}, {}u, {n}u, {mm}u, {inner}u);",
                outer * mm * inner
            );
        }
        Op::Scan { kind, axis, shape } => {
            let (outer, n, inner) = split_axis(shape, *axis);
            let plan = ScanPlan::new(outer, n, inner);
            let work = outer * plan.chunks * inner;
            let (chunk, chunks) = (plan.chunk, plan.chunks);
            let _ = writeln!(m, "    void *totals = calloc({work} * 8 + 8, 1);");
            if chunks > 1 {
                let t = h.kernel(&scan::kernel(*kind, c.out, ScanPass::Totals));
                let r = h.kernel(&scan::kernel(*kind, c.out, ScanPass::Carries));
                let _ = writeln!(
                    m,
                    "    {t}::pc_scan_totals(P{{in0}}, P{{totals}}, {work}u, {n}u, {inner}u, {chunk}u, {chunks}u);"
                );
                let _ = writeln!(m, "    {r}::pc_scan_carries(P{{totals}}, {}u, {inner}u, {chunks}u);", outer * inner);
            }
            let a = h.kernel(&scan::kernel(*kind, c.out, ScanPass::Apply));
            let _ = writeln!(
                m,
                "    {a}::pc_scan_apply(P{{in0}}, P{{out}}, P{{totals}}, {work}u, {n}u, {inner}u, {chunk}u, {chunks}u);"
            );
        }
        Op::Sort { axis, shape } | Op::Argsort { axis, shape } | Op::TopK { axis, shape, .. } => {
            let (output, k) = match c.op {
                Op::Sort { .. } => (SortOutput::Values, 0),
                Op::Argsort { .. } => (SortOutput::Indices, 0),
                Op::TopK { k, .. } => (SortOutput::TopK, k),
                _ => unreachable!(),
            };
            let dt = c.inputs[0].dtype();
            let (_, n, inner) = split_axis(shape, *axis);
            let total = shape.numel();
            let kb = sort::key_bytes(dt);
            let _ =
                writeln!(m, "    void *keys0 = calloc({total} * {kb} + 8, 1), *keys1 = calloc({total} * {kb} + 8, 1);");
            let _ = writeln!(m, "    void *idx0 = calloc({total} * 4 + 8, 1), *idx1 = calloc({total} * 4 + 8, 1);");
            let ks = h.kernel(&sort::keys_kernel(dt, output == SortOutput::TopK));
            let _ = writeln!(m, "    {ks}::pc_sort_keys(P{{in0}}, P{{keys0}}, P{{idx0}}, {total}u, {n}u, {inner}u);");
            let mg = h.kernel(&sort::merge_kernel(kb));
            let mut bufs = [("keys0", "idx0"), ("keys1", "idx1")];
            for w in sort::merge_widths(n) {
                let _ = writeln!(
                    m,
                    "    {mg}::pc_sort_merge(P{{{}}}, P{{{}}}, P{{{}}}, P{{{}}}, {total}u, {n}u, {w}u);",
                    bufs[0].0, bufs[0].1, bufs[1].0, bufs[1].1
                );
                bufs.swap(0, 1);
            }
            if output == SortOutput::Values {
                let g = h.kernel(&sort::gather_kernel(dt.size_bytes()));
                let _ = writeln!(
                    m,
                    "    {g}::pc_sort_gather(P{{in0}}, P{{{}}}, P{{out}}, {total}u, {n}u, {inner}u);",
                    bufs[0].1
                );
            } else {
                let k = if output == SortOutput::TopK { k } else { n };
                let g = h.kernel(&sort::indices_kernel());
                let _ = writeln!(
                    m,
                    "    {g}::pc_sort_indices(P{{{}}}, P{{out}}, {total}u, {n}u, {inner}u, {k}u);",
                    bufs[0].1
                );
            }
        }
        other => panic!("no host launch for {}", other.name()),
    }
    let path = h.path(&format!("{}_out.bin", c.tag));
    let _ = writeln!(m, "    pc_write(\"{path}\", out, {out_bytes});\n  }}");
    h.main.push_str(&m);
}

fn words(w: &[u32]) -> String {
    w.iter().map(|x| format!("{x}u")).collect::<Vec<_>>().join(", ")
}

/// The cases of one dtype.
fn cases(dt: DType) -> Vec<Case> {
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
fn close(g: f64, w: f64, eps: f64, n: f64, sum_abs: f64, prod: bool) -> bool {
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    let tol = if prod { 4.0 * n * eps * w.abs() } else { 4.0 * n * eps * sum_abs };
    g == w || (g - w).abs() <= tol
}

fn as_f64(v: &HostVec) -> Vec<f64> {
    match v {
        HostVec::F32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::F64(v) => v.clone(),
        HostVec::I32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::U32(v) => v.iter().map(|&x| x as f64).collect(),
    }
}

#[test]
fn view_movement_scan_and_sort_kernels_agree_with_the_cpu_backend() {
    let _ = polycompute_cpu::CpuBackend;
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    let cpu = Device::open(BackendKind::Cpu, 0).unwrap();
    let mut h = Harness::new();
    let mut all = Vec::new();
    for dt in DType::ALL {
        for c in cases(dt) {
            let bufs: Vec<_> = c.inputs.iter().map(|v| cpu.backend().upload(v.as_slice()).unwrap()).collect();
            let refs: Vec<_> = bufs.iter().collect();
            let want = cpu.backend().download(&cpu.backend().execute(&c.op, &refs).unwrap()).unwrap();
            assert_eq!(want.dtype(), c.out, "{}", c.tag);
            emit(&mut h, &c, want.len());
            all.push((c, want));
        }
    }
    let dir = h.run(&cxx);
    let mut failures = Vec::new();
    for (c, want) in &all {
        let got = read_vec(&dir.join(format!("{}_out.bin", c.tag)), c.out);
        assert_eq!(got.len(), want.len(), "{}", c.tag);
        if !c.approx {
            // Bit-equal (NaN payloads, zero signs and all).
            if bytes_of(&got) != bytes_of(want) {
                failures.push(format!("{}: got {got:?}\n want {want:?}", c.tag));
            }
            continue;
        }
        let eps = if c.out == DType::F32 { f32::EPSILON as f64 } else { f64::EPSILON };
        let inputs: Vec<f64> = c.inputs.iter().filter(|v| v.dtype().is_float()).flat_map(as_f64).collect();
        let sum_abs: f64 = inputs.iter().map(|x| x.abs()).sum();
        let prod = matches!(c.op, Op::Scan { kind: ScanKind::Prod, .. });
        let n = inputs.len() as f64;
        for (i, (g, w)) in as_f64(&got).iter().zip(as_f64(want)).enumerate() {
            if !close(*g, w, eps, n, sum_abs, prod) {
                failures.push(format!("{} [{i}]: cuda C {g:e}, cpu {w:e}", c.tag));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{} issue-14 cases run on the host against the CPU backend, {} mismatches", all.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
}
