//! Runs the generated reduction and random-fill kernels on the host (compiled with the system
//! C++ compiler), through every reduction path (rows, segmented rows, columns, segmented
//! columns, each with its second pass), and compares them with the CPU backend and with
//! `polycompute_core::philox`.
//!
//! Every launch has the grid and block the backend computes (`crate::launch`:
//! `reduce_rows`, `reduce_cols`, `strided_1d` for a device of 132 multiprocessors), once with
//! CUDA's limits and once with limits that clamp the grid to 2 blocks (so the grid-stride
//! loops take several trips). The column and fill kernels' threads never meet, so each of
//! their threads runs in turn (`PC_LAUNCH`), blocks from the last to the first. The row
//! kernels combine a block's lanes with warp shuffles and shared memory between barriers, so
//! the threads of a block run in lock step (`PC_LAUNCH_SYNC`): each is a fiber
//! (`ucontext`) of one host thread, switched out at every `__syncthreads` and shuffle until
//! all of its block (or warp) has arrived; a barrier that never completes aborts the run.

use std::fmt::Write as _;
use std::path::Path;

use crate::codegen::{fill, reduce};
use crate::launch::{self, LaunchConfig, Limits};
use polycompute_core::{bf16, f16, philox, BackendKind, DType, Device, Fill, HostVec, Op, ReduceKind, Shape};

use super::shim::{compiler, host_type, Harness};

const SHIM: &str = cuda_host_shim!(
    r#"
#include <functional>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
"#,
    r#"
#define __shared__ static
static pc_dim3 blockIdx, threadIdx, blockDim, gridDim;
// Runs the kernel call on every thread of a grid of `gx` blocks of `bx` threads (along x),
// one thread at a time, the blocks from the last to the first: for kernels without barriers.
#define PC_LAUNCH(gx, bx, ...) do { \
  gridDim = {gx, 1, 1}; blockDim = {bx, 1, 1}; \
  for (unsigned pc_b = gx; pc_b-- > 0;) for (unsigned pc_t = 0; pc_t < bx; ++pc_t) { \
    blockIdx = {pc_b, 0, 0}; threadIdx = {pc_t, 0, 0}; __VA_ARGS__; } } while (0)
// Lock step: each thread of a block is a fiber; a barrier (0: the block's, 1 + w: warp w's)
// switches back to the scheduler until all its threads have arrived.
#define PC_MAX_THREADS 1024
#define PC_STACK (64 * 1024)
struct pc_bar { unsigned arrived, gen, size; };
static pc_bar pc_bars[33];
static ucontext_t pc_sched, pc_ctx[PC_MAX_THREADS];
static bool pc_done[PC_MAX_THREADS];
// The barrier each thread waits at, and its generation then (the scheduler skips a thread
// until that barrier completes).
static unsigned pc_wait_bar[PC_MAX_THREADS], pc_wait_gen[PC_MAX_THREADS];
static unsigned pc_cur;
static unsigned long pc_progress;
static const std::function<void()> *pc_body;
static void pc_wait(unsigned b) {
  pc_bar &B = pc_bars[b];
  ++pc_progress;
  if (++B.arrived == B.size) { B.arrived = 0; ++B.gen; return; }
  pc_wait_bar[pc_cur] = b; pc_wait_gen[pc_cur] = B.gen;
  while (B.gen == pc_wait_gen[pc_cur]) swapcontext(&pc_ctx[pc_cur], &pc_sched);
}
#define __syncthreads() pc_wait(0)
// A shuffle: each lane publishes its value, the warp meets, each lane reads lane + d, the
// warp meets again (so no lane overwrites a value before it is read).
static unsigned char pc_lanes[32][32][32];
template <class T> static T __shfl_down_sync(unsigned, T v, int d) {
  static_assert(sizeof(T) <= 32, "a lane's slot");
  const unsigned w = threadIdx.x / 32, l = threadIdx.x % 32;
  memcpy(pc_lanes[w][l], &v, sizeof(T));
  pc_wait(1 + w);
  T r = v;
  if (l + d < 32 && 32 * w + l + d < blockDim.x) memcpy(&r, pc_lanes[w][l + d], sizeof(T));
  pc_wait(1 + w);
  return r;
}
static void pc_fiber() { (*pc_body)(); pc_done[pc_cur] = true; ++pc_progress; }
static void pc_launch_sync(unsigned gx, unsigned bx, const std::function<void()> &body) {
  static char *stacks = (char *)malloc((size_t)PC_MAX_THREADS * PC_STACK);
  if (bx > PC_MAX_THREADS) exit(6);
  gridDim = {gx, 1, 1}; blockDim = {bx, 1, 1}; pc_body = &body;
  for (unsigned b = gx; b-- > 0;) {
    blockIdx = {b, 0, 0};
    pc_bars[0] = {0, 0, bx};
    for (unsigned w = 0; w < (bx + 31) / 32; ++w) pc_bars[1 + w] = {0, 0, bx - 32 * w < 32 ? bx - 32 * w : 32};
    for (unsigned t = 0; t < bx; ++t) {
      getcontext(&pc_ctx[t]);
      pc_ctx[t].uc_stack.ss_sp = stacks + (size_t)t * PC_STACK; pc_ctx[t].uc_stack.ss_size = PC_STACK;
      pc_ctx[t].uc_link = &pc_sched;
      makecontext(&pc_ctx[t], pc_fiber, 0);
      pc_done[t] = false; pc_wait_bar[t] = 0; pc_wait_gen[t] = ~0u;
    }
    for (unsigned live = bx; live;) {
      const unsigned long before = pc_progress;
      live = 0;
      for (unsigned t = 0; t < bx; ++t) {
        if (pc_done[t] || pc_bars[pc_wait_bar[t]].gen == pc_wait_gen[t]) { live += !pc_done[t]; continue; }
        pc_cur = t; threadIdx = {t, 0, 0};
        swapcontext(&pc_sched, &pc_ctx[t]);
        live += !pc_done[t];
      }
      if (live && pc_progress == before) { fprintf(stderr, "block %u: a barrier never completes\n", b); exit(7); }
    }
  }
}
#define PC_LAUNCH_SYNC(gx, bx, ...) pc_launch_sync(gx, bx, [&] { __VA_ARGS__; })
"#
);

/// The multiprocessors of the emulated device (an H100's).
const SMS: u32 = 132;

/// The grid and block of a 1-D launch, checked to be one.
fn grid_1d(c: LaunchConfig) -> (u32, u32) {
    assert_eq!((c.grid[1], c.grid[2], c.block[1], c.block[2], c.shared), (1, 1, 1, 1, 0));
    (c.grid[0], c.block[0])
}

impl Harness {
    /// Appends to `m` a launch of `call` with `config`, whose kernel strides over `units`
    /// (blocks when `sync`, the row kernels' units, else threads); `sync`: in lock step.
    fn launch_with(&mut self, m: &mut String, config: LaunchConfig, units: u64, sync: bool, call: &str) {
        let (g, b) = grid_1d(config);
        self.count_launch(g, units > if sync { g as u64 } else { g as u64 * b as u64 });
        let how = if sync { "PC_LAUNCH_SYNC" } else { "PC_LAUNCH" };
        let _ = writeln!(m, "    {how}({g}u, {b}u, {call});");
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
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
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
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
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
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
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
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
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
    let name = kind.name();
    // The launches of `ops/reduce.rs`: the row kernels with `reduce_rows` over their (row,
    // segment) blocks, the column kernels with `reduce_cols` over their (output, segment) threads.
    let rows_launch = |h: &mut Harness, m: &mut String, blocks: usize, seg_len: usize, call: &str| {
        let config = launch::reduce_rows(name, blocks as u64, reduce::row_block(seg_len), &h.limits).unwrap();
        h.launch_with(m, config, blocks as u64, true, call);
    };
    let second = |h: &mut Harness, m: &mut String, segs: usize| {
        let ns = h.kernel(&reduce::rows_kernel(kind, dt, reduce::Input::Partials, reduce::Output::Final));
        let call = format!("{ns}::pc_reduce(out, ({ns}::Acc *)part, {outputs}u, {segs}u, 1u, {segs}u, {count}u)");
        rows_launch(h, m, outputs, segs, &call);
    };
    match plan {
        reduce::ReducePlan::Rows { rows, r, segs: 1, seg_len } => {
            let ns = h.kernel(&reduce::rows_kernel(kind, dt, reduce::Input::Elements, reduce::Output::Final));
            let call = format!("{ns}::pc_reduce(out, in, {rows}u, {r}u, 1u, {seg_len}u, {count}u)");
            rows_launch(h, &mut m, rows, seg_len, &call);
        }
        reduce::ReducePlan::Rows { rows, r, segs, seg_len } => {
            let ns = h.kernel(&reduce::rows_kernel(kind, dt, reduce::Input::Elements, reduce::Output::Partials));
            let _ = writeln!(m, "    void *part = malloc({} + 1);", rows * segs * acc);
            let call = format!("{ns}::pc_reduce(({ns}::Acc *)part, in, {rows}u, {r}u, {segs}u, {seg_len}u, {count}u)");
            rows_launch(h, &mut m, rows * segs, seg_len, &call);
            second(h, &mut m, segs);
        }
        reduce::ReducePlan::Cols { outer, r, inner, segs, seg_len } => {
            let output = if segs == 1 { reduce::Output::Final } else { reduce::Output::Partials };
            let ns = h.kernel(&reduce::cols_kernel(kind, dt, output));
            let target = if segs == 1 { "out".to_string() } else { format!("({ns}::Acc *)part") };
            if segs > 1 {
                let _ = writeln!(m, "    void *part = malloc({} + 1);", outputs * segs * acc);
            }
            let call =
                format!("{ns}::pc_reduce({target}, in, {outer}u, {r}u, {inner}u, {segs}u, {seg_len}u, {count}u)");
            let config = launch::reduce_cols(name, (outputs * segs) as u64, &h.limits).unwrap();
            h.launch_with(&mut m, config, (outputs * segs) as u64, false, &call);
            if segs > 1 {
                second(h, &mut m, segs);
            }
        }
    }
    let _ = writeln!(m, "    pc_write(\"{output}\", out, {outputs} * sizeof({out_t}));\n  }}");
    h.main.push_str(&m);
}

#[test]
fn reductions_agree_with_the_cpu_backend_on_every_path() {
    let _ = polycompute_cpu::CpuBackend;
    let _ = crate::matmul_impl();
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    let cpu = Device::open(BackendKind::Cpu, 0).unwrap();
    // (dims, axis, sms): rows; segmented rows; columns; segmented columns; empty axis; many
    // short rows (a block each); many columns (several blocks of threads).
    let layouts: [(&[usize], Option<usize>, usize); 8] = [
        (&[6, 37], Some(1), 80),
        (&[20000], None, 1),
        (&[3, 9000, 1], Some(1), 1),
        (&[5, 40, 7], Some(1), 80),
        (&[2, 3000, 3], Some(1), 1),
        (&[3, 0, 2], Some(1), 1),
        (&[70, 5], Some(1), 80),
        (&[4, 3, 700], Some(1), 80),
    ];
    let mut h = Harness::new("host-reduce", SHIM);
    let mut cases = Vec::new();
    let mut stats = Vec::new();
    // The backend's grids (CUDA's limits), then grids clamped to 2 blocks.
    for (run, limits) in [("real", Limits::CUDA), ("clamp2", Limits { grid: [2, 65535, 65535], ..Limits::CUDA })] {
        h.limits = limits;
        let before = (h.launches, h.wrapped);
        h.max_grid = 0;
        for dt in DType::ALL.into_iter().filter(|d| !matches!(d, DType::I64 | DType::U8 | DType::Bool)) {
            for (li, (dims, axis, sms)) in layouts.iter().enumerate() {
                // The many short rows are there for the backend's grid of many blocks.
                if run == "clamp2" && li == 6 {
                    continue;
                }
                let len: usize = dims.iter().product();
                let input = data(dt, len, (len > 10).then_some(len / 3));
                for kind in ReduceKind::ALL {
                    let reduced = axis.map_or(len, |a| dims[a]);
                    if kind.needs_elements() && reduced == 0 {
                        continue;
                    }
                    let tag = format!("{run}_{dt}_{li}_{}", kind.name());
                    write_vec(&h.path(&format!("in_{tag}.bin")), &input);
                    emit_reduce(&mut h, kind, dt, dims, *axis, *sms, &tag);
                    cases.push((tag, kind, dt, dims.to_vec(), *axis, input.clone()));
                }
            }
        }
        stats.push((run, h.launches - before.0, h.max_grid, h.wrapped - before.1));
    }
    // The backend's grids have several blocks; the clamped ones wrap.
    assert!(stats[0].2 >= 70 && stats[1].3 > 100, "{stats:?}");
    println!("(run, launches, most blocks, launches whose grid-stride loop wraps): {stats:?}");
    let dir = h.run(&cxx, "kernels");
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
    let seed = 0x1234_5678_9abc_def0u64;
    let key = philox::key(seed);
    let mut h = Harness::new("host-fill", SHIM);
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
    // (elements, limits, fills): every fill with the backend's grid (one block) and with a
    // grid clamped to 2 blocks (several trips each); u32 and f64 (4 and 2 values a thread)
    // past the 132 · 32 · 256 threads of the backend's largest grid, so that it wraps too.
    let clamp2 = Limits { grid: [2, 65535, 65535], ..Limits::CUDA };
    let large = [(Fill::Uniform { seed }, DType::U32), (Fill::Normal { seed }, DType::F64)];
    type Fills<'a> = &'a [(Fill, DType)];
    let runs: [(usize, Limits, Fills); 4] = [
        (1003, Limits::CUDA, &fills),
        (5003, clamp2, &fills),
        (4_400_000, Limits::CUDA, &large[..1]),
        (2_200_000, Limits::CUDA, &large[1..]),
    ];
    let jobs: Vec<(usize, Limits, Fill, DType)> =
        runs.iter().flat_map(|&(n, l, fs)| fs.iter().map(move |&(f, dt)| (n, l, f, dt))).collect();
    for (i, &(n, limits, f, dt)) in jobs.iter().enumerate() {
        let ns = h.kernel(&fill::kernel(f, dt));
        let t = host_type(dt);
        let out = h.path(&format!("fill_{i}.bin")).display().to_string();
        // `ops/fill.rs`: one thread per Philox block.
        let items = n.div_ceil(fill::per_block(f, dt) as usize) as u64;
        h.limits = limits;
        let config = launch::strided_1d("fill", items, 256, SMS, &h.limits).unwrap();
        let mut m = format!("  {{ {t} *out = ({t} *)malloc({n} * sizeof({t}));\n");
        h.launch_with(&mut m, config, items, false, &format!("{ns}::pc_fill(out, {n}u, {}u, {}u)", key[0], key[1]));
        let _ = writeln!(m, "    pc_write(\"{out}\", out, {n} * sizeof({t}));\n  }}");
        h.main.push_str(&m);
    }
    assert!(h.max_grid == SMS * 32 && h.wrapped == fills.len() + large.len(), "{} {}", h.max_grid, h.wrapped);
    let dir = h.run(&cxx, "kernels");
    for (i, &(n, _, ref f, ref dt)) in jobs.iter().enumerate() {
        let got = read_vec(&dir.join(format!("fill_{i}.bin")), *dt);
        assert_eq!(got.len(), n);
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
                _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
