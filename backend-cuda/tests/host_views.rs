//! Runs the view and data-movement kernels (maps over views, concat, pad, take, take_along_axis,
//! scatter_add, cumsum/cumprod, sort, argsort, topk) on the host: the generated CUDA C is
//! compiled with the system C++ compiler (one thread per grid, so every grid-stride loop runs
//! sequentially; `atomicAdd` becomes a plain add, `atomicCAS` a compare and store), launched with the same plans, parameters
//! and pass sequence as `src/ops/`, and compared with the CPU backend running the same `Op`:
//! bit for bit for data movement and sorting (stability, NaN last, -0.0 == +0.0 in input
//! order), within the summation tolerance for float scans and scatter-adds.

use std::fmt::Write as _;
use std::path::PathBuf;

use polycompute_core::{BackendKind, DType, Device, Op};
use polycompute_cuda::codegen::movement::{self, split_axis};
use polycompute_cuda::codegen::scan::{self, ScanPass, ScanPlan};
use polycompute_cuda::codegen::sort::{self, SortOutput};
use polycompute_cuda::codegen::{map, Kernel};

#[macro_use]
mod common;
mod views_cases;
use common::{build_and_run, compiler};
use views_cases::{bytes_of, cases, compare, read_vec, Case};

const SHIM: &str = cuda_host_shim!(
    r#"
#define __shared__ static
#define __syncthreads()
static const pc_dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
// One thread: an atomic add is an add (unsigned for integers, where wrapping is defined).
template <class T> static inline T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }
static inline unsigned atomicCAS(unsigned *p, unsigned expected, unsigned v) { unsigned old = *p; if (old == expected) *p = v; return old; }
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
        let source = format!("{}{}", self.src, self.main);
        build_and_run(cxx, &self.dir, "views", &source, &["-O1"], &[]);
        self.dir
    }
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
            let v = match bits.len() {
                8 => format!("{}ull", u64::from_le_bytes(bits.try_into().unwrap())),
                // A half's bits (the kernel's value parameter is a u16).
                2 => format!("(unsigned short){}u", u16::from_le_bytes(bits.try_into().unwrap())),
                _ => format!("{}u", u32::from_le_bytes(bits.try_into().unwrap())),
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
        failures.extend(compare(c, &got, want));
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{} view and data-movement cases run on the host against the CPU backend, {} mismatches",
        all.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
}
