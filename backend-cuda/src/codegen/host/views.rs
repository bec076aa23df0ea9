//! Runs the view and data-movement kernels (maps over views, concat, pad, take, take_along_axis,
//! scatter_add, cumsum/cumprod, sort, argsort, topk) on the host: the generated CUDA C is
//! compiled with the system C++ compiler, launched with the same plans, parameters, pass
//! sequence and grids as `src/ops/` (`crate::launch::strided_1d` for a device of
//! 132 multiprocessors), and compared with the CPU backend running the same `Op`: bit for bit
//! for data movement and sorting (stability, NaN last, -0.0 == +0.0 in input order), within
//! the summation tolerance for float scans and scatter-adds.
//!
//! These kernels are 1-D grid-stride loops whose threads never meet (no shared memory, no
//! barrier), so a launch runs every thread of every block one after another: blocks from the
//! last to the first (so a kernel that relied on launch order would show it), `blockIdx`,
//! `threadIdx`, `blockDim` and `gridDim` set for each; `atomicAdd` becomes a plain add and
//! `atomicCAS` a compare and store. Every case runs twice: with CUDA's limits (the backend's
//! grid: as many blocks as the work needs, up to 32 per multiprocessor), and with limits that
//! clamp the grid to 3 blocks, so the grid-stride loops take several trips; a few large cases
//! (past 132 · 32 · 256 items) make the backend's own grid wrap too.

use std::fmt::Write as _;

use std::sync::Arc;

use crate::codegen::map;
use crate::codegen::movement::{self, split_axis};
use crate::codegen::scan::{self, ScanPass, ScanPlan};
use crate::codegen::sort::{self, SortOutput};
use crate::launch::{self, Limits};
use polycompute_core::{philox, BackendKind, DType, Device, HostVec, Layout, Op, Program, Scalar, ScanKind};

use super::shim::{compiler, Harness};
use super::views_cases::{bytes_of, cases, compare, data, read_vec, scan_data, shape, Case};

const SHIM: &str = cuda_host_shim!(
    r#"
#define __shared__ static
#define __syncthreads()
static pc_dim3 blockIdx, threadIdx, blockDim, gridDim;
// Runs the kernel call on every thread of a grid of `gx` blocks of `bx` threads (along x),
// one thread at a time, the blocks from the last to the first.
#define PC_LAUNCH(gx, bx, ...) do { \
  gridDim = {gx, 1, 1}; blockDim = {bx, 1, 1}; \
  for (unsigned pc_b = gx; pc_b-- > 0;) for (unsigned pc_t = 0; pc_t < bx; ++pc_t) { \
    blockIdx = {pc_b, 0, 0}; threadIdx = {pc_t, 0, 0}; __VA_ARGS__; } } while (0)
// One thread at a time: an atomic add is an add (unsigned for integers, where wrapping is defined).
template <class T> static inline T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }
static inline unsigned atomicCAS(unsigned *p, unsigned expected, unsigned v) { unsigned old = *p; if (old == expected) *p = v; return old; }
// Any buffer passes for any pointer parameter, and geometry words for any by-value struct.
struct P { void *p; template <class T> operator T *() const { return (T *)p; } };
struct G { const unsigned *w; template <class T> operator T() const { T g; memcpy(&g, w, sizeof(T)); return g; } };
"#
);

/// The multiprocessors of the emulated device (an H100's).
const SMS: u32 = 132;
/// The threads of a block of every kernel here (`BLOCK` of `src/ops/`).
const BLOCK: u32 = 256;

impl Harness {
    /// Appends to `m` a launch of `call` (a kernel call) over `items` with the grid the
    /// backend computes (`launch::strided_1d` with `op`, [`BLOCK`], [`SMS`] and the limits).
    fn launch_strided(&mut self, m: &mut String, op: &str, items: usize, call: &str) {
        let c = launch::strided_1d(op, items as u64, BLOCK, SMS, &self.limits).unwrap();
        assert_eq!((c.grid[1], c.grid[2], c.block, c.shared), (1, 1, [BLOCK, 1, 1], 0), "{op}");
        let g = c.grid[0];
        self.count_launch(g, items as u64 > g as u64 * BLOCK as u64);
        let _ = writeln!(m, "    PC_LAUNCH({g}u, {BLOCK}u, {call});");
    }
}

/// Emits the C that reads a case's inputs, launches what `src/ops/` launches for its op, and
/// writes the output.
fn emit(h: &mut Harness, c: &Case, out_len: usize, run: &str) {
    let mut m = String::from("  {\n");
    for (k, v) in c.inputs.iter().enumerate() {
        let path = h.path(&format!("{run}{}_in{k}.bin", c.tag)).display().to_string();
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
            let n = shape.numel();
            if n > 0 && plan.geometry.is_empty() {
                h.launch_strided(&mut m, "map", n, &format!("{ns}::pc_map(P{{out}}, {args}{n}u)"));
            } else if n > 0 {
                let _ = writeln!(m, "    static const unsigned w[] = {{{}}};", words(&plan.geometry));
                h.launch_strided(&mut m, "map", n, &format!("{ns}::pc_map(P{{out}}, {args}{n}u, G{{w}})"));
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
                let n = outer * row;
                if n > 0 {
                    let call = format!(
                        "{ns}::pc_concat(P{{out}}, P{{in{k}}}, {n}u, {row}u, {}u, {col0}u)",
                        total_axis * inner
                    );
                    h.launch_strided(&mut m, "concat", n, &call);
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
            h.launch_strided(
                &mut m,
                "pad",
                out_len,
                &format!("{ns}::pc_pad(P{{out}}, P{{in0}}, {out_len}u, G{{w}}, {v})"),
            );
        }
        Op::Take { axis, shape, indices } | Op::TakeAlongAxis { axis, shape, indices } => {
            let along = matches!(c.op, Op::TakeAlongAxis { .. });
            let ns = h.kernel(&movement::take_kernel(c.out.size_bytes(), c.inputs[1].dtype(), along));
            let (_, n, inner) = split_axis(shape, *axis);
            let mm = if along { indices.dims()[*axis] } else { indices.numel() };
            let call = format!("{ns}::pc_take(P{{out}}, P{{in0}}, P{{in1}}, {out_len}u, {n}u, {mm}u, {inner}u)");
            h.launch_strided(&mut m, "take", out_len, &call);
        }
        Op::ScatterAdd { axis, shape, indices } => {
            let ns = h.kernel(&movement::scatter_add_kernel(c.out, c.inputs[1].dtype()));
            let (outer, n, inner) = split_axis(shape, *axis);
            let mm = indices.numel();
            let _ = writeln!(m, "    memcpy(out, in0, {out_bytes});");
            let total = outer * mm * inner;
            let call = format!("{ns}::pc_scatter_add(P{{out}}, P{{in1}}, P{{in2}}, {total}u, {n}u, {mm}u, {inner}u)");
            h.launch_strided(&mut m, "scatter_add", total, &call);
        }
        Op::Scan { kind, axis, shape } => {
            let (outer, n, inner) = split_axis(shape, *axis);
            let plan = ScanPlan::new(outer, n, inner);
            let work = outer * plan.chunks * inner;
            let (chunk, chunks) = (plan.chunk, plan.chunks);
            let name = kind.name();
            let _ = writeln!(m, "    void *totals = calloc({work} * 8 + 8, 1);");
            if chunks > 1 {
                let t = h.kernel(&scan::kernel(*kind, c.out, ScanPass::Totals));
                let r = h.kernel(&scan::kernel(*kind, c.out, ScanPass::Carries));
                let call =
                    format!("{t}::pc_scan_totals(P{{in0}}, P{{totals}}, {work}u, {n}u, {inner}u, {chunk}u, {chunks}u)");
                h.launch_strided(&mut m, name, work, &call);
                let lanes = outer * inner;
                let call = format!("{r}::pc_scan_carries(P{{totals}}, {lanes}u, {inner}u, {chunks}u)");
                h.launch_strided(&mut m, name, lanes, &call);
            }
            let a = h.kernel(&scan::kernel(*kind, c.out, ScanPass::Apply));
            let call = format!(
                "{a}::pc_scan_apply(P{{in0}}, P{{out}}, P{{totals}}, {work}u, {n}u, {inner}u, {chunk}u, {chunks}u)"
            );
            h.launch_strided(&mut m, name, work, &call);
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
            let name = c.op.name();
            let ks = h.kernel(&sort::keys_kernel(dt, output == SortOutput::TopK));
            let call = format!("{ks}::pc_sort_keys(P{{in0}}, P{{keys0}}, P{{idx0}}, {total}u, {n}u, {inner}u)");
            h.launch_strided(&mut m, name, total, &call);
            let mg = h.kernel(&sort::merge_kernel(kb));
            let mut bufs = [("keys0", "idx0"), ("keys1", "idx1")];
            for w in sort::merge_widths(n) {
                let call = format!(
                    "{mg}::pc_sort_merge(P{{{}}}, P{{{}}}, P{{{}}}, P{{{}}}, {total}u, {n}u, {w}u)",
                    bufs[0].0, bufs[0].1, bufs[1].0, bufs[1].1
                );
                h.launch_strided(&mut m, name, total, &call);
                bufs.swap(0, 1);
            }
            if output == SortOutput::Values {
                let g = h.kernel(&sort::gather_kernel(dt.size_bytes()));
                let call =
                    format!("{g}::pc_sort_gather(P{{in0}}, P{{{}}}, P{{out}}, {total}u, {n}u, {inner}u)", bufs[0].1);
                h.launch_strided(&mut m, name, total, &call);
            } else {
                let k = if output == SortOutput::TopK { k } else { n };
                let g = h.kernel(&sort::indices_kernel());
                let call =
                    format!("{g}::pc_sort_indices(P{{{}}}, P{{out}}, {total}u, {n}u, {inner}u, {k}u)", bufs[0].1);
                h.launch_strided(&mut m, name, total, &call);
            }
        }
        other => panic!("no host launch for {}", other.name()),
    }
    let path = h.path(&format!("{run}{}_out.bin", c.tag)).display().to_string();
    let _ = writeln!(m, "    pc_write(\"{path}\", out, {out_bytes});\n  }}");
    h.main.push_str(&m);
}

fn words(w: &[u32]) -> String {
    w.iter().map(|x| format!("{x}u")).collect::<Vec<_>>().join(", ")
}

/// Cases past the 132 · 32 · 256 items of the backend's largest 1-D grid here, so that its
/// grid-stride loops wrap: a strided map, concat, pad, take, scatter_add, a sort and a scan
/// of short rows (one chunk per lane), and a chunked scan of several blocks.
fn wrapping_cases(dt: DType) -> Vec<Case> {
    let n = 1_200_000usize;
    let mut v = Vec::new();
    let mut add = |tag: &str, op: Op, inputs: Vec<HostVec>, out: DType, approx: bool| {
        v.push(Case { tag: format!("{dt}_wrap_{tag}"), op, inputs, out, approx });
    };
    let idx = HostVec::U32((0..n as u64 / 3).map(|i| philox::uniform_u32(37, i) % 64).collect());
    add(
        "scatter_add",
        Op::ScatterAdd { axis: 0, shape: shape(&[64, 3]), indices: shape(&[n / 3]) },
        vec![scan_data(dt, 192, 38), idx, scan_data(dt, n, 39)],
        dt,
        dt.is_float(),
    );
    // f16: only scatter_add, whose half atomics are a compare-and-swap loop.
    if dt == DType::F16 {
        return v;
    }
    let step = Layout { shape: shape(&[n]), strides: vec![-2], offset: 2 * n - 1 };
    let identity = Arc::new(Program::identity(dt));
    add(
        "map",
        Op::MapViews { program: identity, inputs: vec![step], shape: shape(&[n]) },
        vec![data(dt, 2 * n, 31)],
        dt,
        false,
    );
    let shapes = vec![shape(&[1200, 1000]), shape(&[1200, 1])];
    add("concat", Op::Concat { axis: 1, shapes }, vec![data(dt, n, 32), data(dt, 1200, 33)], dt, false);
    let value = if dt == DType::F32 { Scalar::F32(3.5) } else { Scalar::zero(dt) };
    add(
        "pad",
        Op::Pad { shape: shape(&[1000, 1100]), widths: vec![(1, 0), (0, 2)], value },
        vec![data(dt, n - 100_000, 34)],
        dt,
        false,
    );
    let idx = HostVec::I32((0..n as u64).map(|i| (philox::uniform_u32(35, i) % 200_000) as i32 - 100_000).collect());
    add(
        "take",
        Op::Take { axis: 0, shape: shape(&[100_000]), indices: shape(&[n]) },
        vec![data(dt, 100_000, 36), idx],
        dt,
        false,
    );
    add("sort", Op::Sort { axis: 1, shape: shape(&[n / 4, 4]) }, vec![data(dt, n, 40)], dt, false);
    for dims in [[n / 3, 3], [2000, 700]] {
        add(
            &format!("cumsum_{dims:?}"),
            Op::Scan { kind: ScanKind::Sum, axis: 1, shape: shape(&dims) },
            vec![scan_data(dt, dims[0] * dims[1], 41)],
            dt,
            dt.is_float(),
        );
    }
    v
}

#[test]
fn view_movement_scan_and_sort_kernels_agree_with_the_cpu_backend() {
    let _ = polycompute_cpu::CpuBackend;
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    let cpu = Device::open(BackendKind::Cpu, 0).unwrap();
    let mut h = Harness::new("host-views", SHIM);
    let mut all = Vec::new();
    // (file prefix, limits, cases, dtypes): the backend's grids on every case, and on the
    // wrapping ones for f32 (and f16's scatter_add); then grids clamped to 3 blocks on every
    // case.
    type Cases = fn(DType) -> Vec<Case>;
    let clamp3 = Limits { grid: [3, 65535, 65535], ..Limits::CUDA };
    // i64, u8 and bool have no CUDA kernels yet (`device::not_yet`).
    const KERNEL_DTYPES: [DType; 6] = [DType::F32, DType::F64, DType::I32, DType::U32, DType::F16, DType::BF16];
    let runs: [(&str, Limits, Cases, &[DType]); 3] = [
        ("real_", Limits::CUDA, cases, &KERNEL_DTYPES),
        ("real_", Limits::CUDA, wrapping_cases, &[DType::F32, DType::F16]),
        ("clamp3_", clamp3, cases, &KERNEL_DTYPES),
    ];
    let mut stats = Vec::new();
    for (run, limits, cases, dtypes) in runs {
        h.limits = limits;
        let before = (h.launches, h.wrapped);
        h.max_grid = 0;
        for &dt in dtypes {
            for c in cases(dt) {
                let bufs: Vec<_> = c.inputs.iter().map(|v| cpu.backend().upload(v.as_slice()).unwrap()).collect();
                let refs: Vec<_> = bufs.iter().collect();
                let want = cpu.backend().download(&cpu.backend().execute(&c.op, &refs).unwrap()).unwrap();
                assert_eq!(want.dtype(), c.out, "{}", c.tag);
                emit(&mut h, &c, want.len(), run);
                all.push((run, c, want));
            }
        }
        stats.push((run, h.launches - before.0, h.max_grid, h.wrapped - before.1));
    }
    // The backend's own grids had many blocks and wrapped; the clamped ones wrapped often.
    assert!(stats[0].2 > 1 && stats[1].2 == SMS * 32 && stats[1].3 >= 8 && stats[2].3 > 100, "{stats:?}");
    let dir = h.run(&cxx, "views");
    let mut failures = Vec::new();
    for (run, c, want) in &all {
        let got = read_vec(&dir.join(format!("{run}{}_out.bin", c.tag)), c.out);
        // A mismatch of a large case names its first few elements, not all of them.
        failures.extend(compare(c, &got, want).into_iter().map(|f| format!("{run}{}", &f[..f.len().min(600)])));
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{} view and data-movement cases run on the host against the CPU backend, {} mismatches; \
         (run, launches, most blocks, launches whose grid-stride loop wraps): {stats:?}",
        all.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
}
