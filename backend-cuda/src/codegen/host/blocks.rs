//! Runs the generated kernels that need a whole thread block (the tiled matmul and the tiled
//! transpose: threads share tiles through shared memory between barriers) on the host: each
//! block is emulated by one host thread per CUDA thread, `__syncthreads` by a barrier, shared
//! memory by statics. Checks the own matmul kernel (f32, f64; batched; sizes that are not
//! multiples of the tiles; k = 0; its variants for transposed operands) against an f64 host
//! product, the half (f16, bf16) matmul kernel the same way (its f32 accumulation rounded
//! once), and transposes exactly. Each kernel runs with the grid and block the backend
//! computes for it (`crate::launch`): with CUDA's limits (several blocks), and
//! with limits that clamp the grid to a block or two, so the kernels' loops over the row
//! tiles, batch entries and tiles past the grid must cover the rest.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::codegen::{layout, matmul, matmul_half, reduce, Kernel};
use crate::launch::{self, LaunchConfig, Limits};
use polycompute_core::{bf16, f16, halves, philox, DType, MatmulTranspose, ReduceKind, Shape};

use super::shim::{build_and_run, compiler, host_type};

const SHIM: &str = cuda_host_shim!(
    r#"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <vector>
"#,
    r#"
#define __shared__ static
#define __launch_bounds__(n)
#define __align__(n) __attribute__((aligned(n)))
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) double2 { double x, y; };
static thread_local pc_dim3 threadIdx;
static pc_dim3 blockIdx, blockDim, gridDim;
static pthread_barrier_t pc_barrier;
#define __syncthreads() pthread_barrier_wait(&pc_barrier)
// Warp shuffles: each lane publishes its value, the warp meets, each lane reads lane + d.
static pthread_barrier_t pc_warp_barrier[32];
static unsigned char pc_lanes[32][32][16];
template <class T> static T __shfl_down_sync(unsigned, T v, int d) {
  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z), w = t / 32, l = t % 32;
  memcpy(pc_lanes[w][l], &v, sizeof(T));
  pthread_barrier_wait(&pc_warp_barrier[w]);
  T r = v;
  if (l + d < 32) memcpy(&r, pc_lanes[w][l + d], sizeof(T));
  pthread_barrier_wait(&pc_warp_barrier[w]);
  return r;
}
using std::fma;
struct pc_thread { pc_dim3 idx; void (*body)(void *); void *arg; };
static void *pc_thread_main(void *p) {
  pc_thread *t = (pc_thread *)p; threadIdx = t->idx; t->body(t->arg); return 0;
}
// Runs body on every thread of every block of the grid, one block at a time.
static void pc_launch(pc_dim3 grid, pc_dim3 block, void (*body)(void *), void *arg) {
  gridDim = grid; blockDim = block;
  unsigned n = block.x * block.y * block.z;
  std::vector<pthread_t> th(n); std::vector<pc_thread> ts(n);
  for (unsigned z = 0; z < grid.z; ++z) for (unsigned y = 0; y < grid.y; ++y) for (unsigned x = 0; x < grid.x; ++x) {
    blockIdx = {x, y, z};
    pthread_barrier_init(&pc_barrier, 0, n);
    for (unsigned w = 0; w < (n + 31) / 32; ++w) pthread_barrier_init(&pc_warp_barrier[w], 0, n - 32 * w < 32 ? n - 32 * w : 32);
    unsigned i = 0;
    for (unsigned tz = 0; tz < block.z; ++tz) for (unsigned ty = 0; ty < block.y; ++ty) for (unsigned tx = 0; tx < block.x; ++tx, ++i) {
      ts[i] = {{tx, ty, tz}, body, arg};
      if (pthread_create(&th[i], 0, pc_thread_main, &ts[i])) { perror("pthread_create"); exit(5); }
    }
    for (unsigned k = 0; k < n; ++k) pthread_join(th[k], 0);
    pthread_barrier_destroy(&pc_barrier);
    for (unsigned w = 0; w < (n + 31) / 32; ++w) pthread_barrier_destroy(&pc_warp_barrier[w]);
  }
}
"#
);

/// Limits that clamp the grid to `[x, y, z]` blocks, so the kernels' loops over the blocks
/// past the grid (row tiles, batch entries, grid-stride trips) have work to do.
fn clamped(x: u32, y: u32, z: u32) -> Limits {
    Limits { grid: [x, y, z], ..Limits::CUDA }
}

/// A launch configuration as the harness takes it.
fn as_launch(c: LaunchConfig) -> ((u32, u32, u32), (u32, u32, u32)) {
    assert_eq!(c.shared, 0);
    ((c.grid[0], c.grid[1], c.grid[2]), (c.block[0], c.block[1], c.block[2]))
}

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

    /// Adds `kernel` and a launch of it. The kernel's parameters are globals (`params`: C type
    /// and name, in order) of a namespace that `setup` fills through the prefix `ARGS::`.
    fn launch(
        &mut self,
        kernel: &Kernel,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        params: &[(&str, &str)],
        setup: &str,
    ) {
        let ns = format!("k{}", self.count);
        self.count += 1;
        let body = kernel.source.replace("extern \"C\" ", "");
        let _ = writeln!(self.src, "namespace {ns} {{\n{body}\n}}");
        let decls: String = params.iter().map(|(t, n)| format!("{t} {n}; ")).collect();
        let _ = writeln!(self.src, "namespace {ns}_args {{ {decls}}}");
        let call: Vec<String> = params.iter().map(|(_, n)| format!("{ns}_args::{n}")).collect();
        let _ = writeln!(self.src, "static void body_{ns}(void *) {{ {ns}::{}({}); }}", kernel.entry, call.join(", "));
        let _ = writeln!(
            self.main,
            "  {{\n{}    pc_launch({{{}u, {}u, {}u}}, {{{}u, {}u, {}u}}, body_{ns}, 0);\n  }}",
            setup.replace("ARGS::", &format!("{ns}_args::")),
            grid.0,
            grid.1,
            grid.2,
            block.0,
            block.1,
            block.2
        );
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    fn run(mut self, cxx: &str) -> PathBuf {
        self.main.push_str("  return 0;\n}\n");
        let source = format!("{}{}", self.src, self.main);
        build_and_run(cxx, &self.dir, "kernels", &source, &["-O2", "-pthread"], &[]);
        self.dir
    }
}

fn write_f64s(path: &str, v: &[f64], dt: DType) {
    let b: Vec<u8> = match dt {
        DType::F32 => v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect(),
        _ => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    };
    std::fs::write(path, b).unwrap();
}

fn read_f64s(path: &Path, dt: DType) -> Vec<f64> {
    let b = std::fs::read(path).unwrap();
    match dt {
        DType::F32 => b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64).collect(),
        _ => b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect(),
    }
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

#[test]
fn own_matmul_kernel_matches_a_host_product() {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    let shapes = [(1usize, 1usize, 1usize, 1usize), (1, 130, 17, 260), (2, 65, 129, 3), (1, 3, 0, 4), (3, 8, 9, 10)];
    let mut h = Harness::new("host-matmul");
    let mut cases = Vec::new();
    for dt in [DType::F32, DType::F64] {
        let t = if dt == DType::F32 { "float" } else { "double" };
        let tiles = matmul::tiles(dt);
        // Every shape as stored, and the transposed-operand variants of the kernel (A stored
        // as [k, m], B as [n, k]) on all but the largest.
        let variants = shapes.iter().enumerate().flat_map(|(ci, s)| {
            let all = [(false, false), (true, false), (false, true), (true, true)];
            all.into_iter().take(if ci == 1 { 1 } else { 4 }).map(move |t| (ci, *s, t))
        });
        for (ci, (batch, m, k, n), (lt, rt)) in variants {
            let transpose = MatmulTranspose { lhs: lt, rhs: rt };
            let round = |x: f64| if dt == DType::F32 { x as f32 as f64 } else { x };
            let a: Vec<f64> = (0..batch * m * k).map(|i| round(philox::normal_f64(1, i as u64))).collect();
            let b: Vec<f64> = (0..batch * k * n).map(|i| round(philox::normal_f64(2, i as u64))).collect();
            let tag = format!("{dt}_{ci}_{}{}", lt as u8, rt as u8);
            let (pa, pb, pc) =
                (h.path(&format!("a_{tag}.bin")), h.path(&format!("b_{tag}.bin")), h.path(&format!("c_{tag}.bin")));
            write_f64s(&pa, &if lt { transposed(&a, batch, m, k) } else { a.clone() }, dt);
            write_f64s(&pb, &if rt { transposed(&b, batch, k, n) } else { b.clone() }, dt);
            // The backend's grid: f32 with CUDA's limits, f64 with one block along y and two
            // along z, so its row tiles and batch entries past them are the kernel's loops.
            let limits = if dt == DType::F32 { Limits::CUDA } else { clamped(i32::MAX as u32, 1, 2) };
            let config =
                launch::matmul("matmul", (batch, m, k, n), (tiles.bm, tiles.bn, tiles.threads()), &limits).unwrap();
            let (grid, block) = as_launch(config);
            let setup = format!(
                "    ARGS::A = (const {t} *)pc_read(\"{pa}\"); ARGS::B = (const {t} *)pc_read(\"{pb}\");\n    \
                 ARGS::C = ({t} *)calloc({} + 1, sizeof({t})); ARGS::M = {m}; ARGS::N = {n}; ARGS::K = {k}; ARGS::batch = {batch};\n",
                batch * m * n
            );
            let (ct, mt) = (format!("const {t} *"), format!("{t} *"));
            let params = [
                (ct.as_str(), "A"),
                (ct.as_str(), "B"),
                (mt.as_str(), "C"),
                ("unsigned", "M"),
                ("unsigned", "N"),
                ("unsigned", "K"),
                ("unsigned", "batch"),
            ];
            let kernel = matmul::transposed_kernel(dt, transpose).unwrap();
            h.launch(&kernel, grid, block, &params, &setup);
            let ns = format!("k{}", h.count - 1);
            let _ = writeln!(h.main, "  pc_write(\"{pc}\", {ns}_args::C, {} * sizeof({t}));", batch * m * n);
            cases.push((tag, dt, batch, m, k, n, a, b));
        }
    }
    let dir = h.run(&cxx);
    for (tag, dt, batch, m, k, n, a, b) in cases {
        let got = read_f64s(&dir.join(format!("c_{tag}.bin")), dt);
        assert_eq!(got.len(), batch * m * n, "{tag}");
        let eps = if dt == DType::F32 { f32::EPSILON as f64 } else { f64::EPSILON };
        for z in 0..batch {
            for i in 0..m {
                for j in 0..n {
                    let (mut s, mut mag) = (0.0, 0.0);
                    for p in 0..k {
                        let x = a[z * m * k + i * k + p] * b[z * k * n + p * n + j];
                        s += x;
                        mag += x.abs();
                    }
                    let g = got[z * m * n + i * n + j];
                    assert!((g - s).abs() <= 2.0 * (k as f64 + 1.0) * eps * mag, "{tag} [{z},{i},{j}]: {g} vs {s}");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tiled_transpose_moves_every_element() {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    let mut h = Harness::new("host-transpose");
    let mut cases = Vec::new();
    for (ci, (dims, perm)) in
        [(vec![33usize, 70], vec![1usize, 0]), (vec![3, 40, 31], vec![0, 2, 1]), (vec![4, 5, 6], vec![1, 2, 0])]
            .into_iter()
            .enumerate()
    {
        let layout::TransposePlan::Tiled { kernel, batch, rows, cols } =
            layout::plan_transpose(&Shape::new(&dims).unwrap(), &perm, DType::F32)
        else {
            panic!("{dims:?} {perm:?} should be a tiled transpose");
        };
        let len = batch * rows * cols;
        let data: Vec<f64> = (0..len).map(|i| i as f64).collect();
        let (pi, po) = (h.path(&format!("t_in_{ci}.bin")), h.path(&format!("t_out_{ci}.bin")));
        write_f64s(&pi, &data, DType::F32);
        let tiles = (batch * rows.div_ceil(32) * cols.div_ceil(32)) as u32;
        let setup = format!(
            "    ARGS::in = (const unsigned *)pc_read(\"{pi}\"); ARGS::out = (unsigned *)calloc({len} + 1, 4);\n    \
             ARGS::batch = {batch}; ARGS::rows = {rows}; ARGS::cols = {cols};\n"
        );
        let params = [
            ("unsigned *", "out"),
            ("const unsigned *", "in"),
            ("unsigned", "batch"),
            ("unsigned", "rows"),
            ("unsigned", "cols"),
        ];
        // The backend's grid, capped at 3 blocks so that each strides over several tiles.
        let (grid, block) = as_launch(launch::transpose_tiled(tiles as u64, 132, &clamped(3, 1, 1)).unwrap());
        assert_eq!(grid.0, tiles.min(3));
        h.launch(&kernel, grid, block, &params, &setup);
        let ns = format!("k{}", h.count - 1);
        let _ = writeln!(h.main, "  pc_write(\"{po}\", {ns}_args::out, {len} * 4);");
        cases.push((ci, dims, perm, data));
    }
    let dir = h.run(&cxx);
    for (ci, dims, perm, data) in cases {
        let got = read_f64s(&dir.join(format!("t_out_{ci}.bin")), DType::F32);
        let strides = Shape::new(&dims).unwrap().strides();
        let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
        for (i, &g) in got.iter().enumerate() {
            let (mut rest, mut off) = (i, 0);
            for d in (0..out_dims.len()).rev() {
                off += (rest % out_dims[d]) * strides[perm[d]];
                rest /= out_dims[d];
            }
            assert_eq!(g, data[off], "{dims:?} {perm:?} at {i}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The row reduction kernels with real block sizes (warp shuffles, shared memory, several
/// warps, grid-stride over blocks), both passes, against f64 host sums and first-index argmax.
#[test]
fn block_reductions_combine_every_lane() {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    let mut h = Harness::new("host-block-reduce");
    let mut cases = Vec::new();
    for (ci, (dims, sms)) in [(vec![6usize, 37], 80usize), (vec![1, 20000], 1), (vec![3, 1000], 80), (vec![2, 300], 80)]
        .into_iter()
        .enumerate()
    {
        let len: usize = dims.iter().product();
        let data: Vec<f64> = (0..len).map(|i| philox::normal_f64(4, i as u64)).collect();
        let input = h.path(&format!("r_in_{ci}.bin"));
        write_f64s(&input, &data, DType::F64);
        for kind in [ReduceKind::Sum, ReduceKind::ArgMax] {
            let reduce::ReducePlan::Rows { rows, r, segs, seg_len } = reduce::plan(&dims, Some(1), sms) else {
                panic!("{dims:?} should reduce by rows");
            };
            let out = h.path(&format!("r_out_{ci}_{}.bin", kind.name()));
            let (ot, acc) = if kind == ReduceKind::Sum { ("double", 8) } else { ("unsigned", 16) };
            let block = reduce::row_block(seg_len);
            let first_out = if segs == 1 { format!("{ot} *") } else { "void *".to_string() };
            let setup = format!(
                "    ARGS::in = (const double *)pc_read(\"{input}\"); ARGS::out = ({first_out})calloc({} + 1, {});\n    \
                 ARGS::rows = {rows}; ARGS::r = {r}; ARGS::segs = {segs}; ARGS::seg_len = {seg_len}; ARGS::count = {r};\n",
                rows * segs,
                if segs == 1 { 8 } else { acc }
            );
            let output = if segs == 1 { reduce::Output::Final } else { reduce::Output::Partials };
            let kernel = reduce::rows_kernel(kind, DType::F64, reduce::Input::Elements, output);
            let ns = format!("k{}", h.count);
            let out_param = if segs == 1 { format!("{ot} *") } else { format!("{ns}::Acc *") };
            let params = [
                (out_param.as_str(), "out"),
                ("const double *", "in"),
                ("unsigned", "rows"),
                ("unsigned", "r"),
                ("unsigned", "segs"),
                ("unsigned", "seg_len"),
                ("unsigned", "count"),
            ];
            let setup = setup.replace(&format!("({first_out})"), &format!("({out_param})"));
            // The backend's grid, capped at 3 blocks so that each strides over several rows.
            let (grid, block) =
                as_launch(launch::reduce_rows("reduce", (rows * segs) as u64, block, &clamped(3, 1, 1)).unwrap());
            h.launch(&kernel, grid, block, &params, &setup);
            let mut result = format!("{ns}_args::out");
            if segs > 1 {
                let second = reduce::rows_kernel(kind, DType::F64, reduce::Input::Partials, reduce::Output::Final);
                let ns2 = format!("k{}", h.count);
                let (pin, pout) = (format!("const {ns2}::Acc *"), format!("{ot} *"));
                let params = [
                    (pout.as_str(), "out"),
                    (pin.as_str(), "in"),
                    ("unsigned", "rows"),
                    ("unsigned", "r"),
                    ("unsigned", "segs"),
                    ("unsigned", "seg_len"),
                    ("unsigned", "count"),
                ];
                let setup = format!(
                    "    ARGS::in = (const {ns2}::Acc *){ns}_args::out; ARGS::out = ({ot} *)calloc({rows} + 1, 8);\n    \
                     ARGS::rows = {rows}; ARGS::r = {segs}; ARGS::segs = 1; ARGS::seg_len = {segs}; ARGS::count = {r};\n"
                );
                let config = launch::reduce_rows("reduce", rows as u64, reduce::row_block(segs), &clamped(2, 1, 1));
                let (grid, block) = as_launch(config.unwrap());
                h.launch(&second, grid, block, &params, &setup);
                result = format!("{ns2}_args::out");
            }
            let _ = writeln!(h.main, "  pc_write(\"{out}\", {result}, {rows} * sizeof({ot}));");
            cases.push((ci, kind, dims.clone(), data.clone(), out));
        }
    }
    let dir = h.run(&cxx);
    for (ci, kind, dims, data, out) in cases {
        let b = std::fs::read(&out).unwrap();
        for row in 0..dims[0] {
            let vals = &data[row * dims[1]..(row + 1) * dims[1]];
            if kind == ReduceKind::Sum {
                let got = f64::from_le_bytes(b[8 * row..8 * row + 8].try_into().unwrap());
                let want: f64 = vals.iter().sum();
                let mag: f64 = vals.iter().map(|v| v.abs()).sum();
                assert!((got - want).abs() <= 1e-13 * mag, "case {ci} row {row}: {got} vs {want}");
            } else {
                let got = u32::from_le_bytes(b[4 * row..4 * row + 4].try_into().unwrap()) as usize;
                let want = (0..vals.len()).fold(0, |best, k| if vals[k] > vals[best] { k } else { best });
                assert_eq!(got, want, "case {ci} row {row}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A half type's conversions: an f64 rounded to its bits, its bits widened.
type HalfBits = (fn(f64) -> u16, fn(u16) -> f64);

#[test]
fn half_matmul_kernel_rounds_an_f32_accumulation_once() {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (set CXX)");
        return;
    };
    // Odd sizes (a lone element, rows and columns past the tiles, an odd k), a batch, k = 0.
    let shapes = [(1usize, 1usize, 1usize, 1usize), (1, 70, 33, 130), (2, 65, 17, 3), (1, 3, 0, 4), (3, 5, 4, 3)];
    let mut h = Harness::new("host-matmul-half");
    let mut cases = Vec::new();
    for dt in [DType::F16, DType::BF16] {
        let t = host_type(dt);
        let (to_bits, from_bits): HalfBits = match dt {
            DType::F16 => (|x| halves::f16_from_f64(x).to_bits(), |b| f16::from_bits(b).to_f64()),
            _ => (|x| halves::bf16_from_f64(x).to_bits(), |b| bf16::from_bits(b).to_f64()),
        };
        for (ci, &(batch, m, k, n)) in shapes.iter().enumerate() {
            let a: Vec<u16> = (0..batch * m * k).map(|i| to_bits(philox::normal_f64(3, i as u64))).collect();
            let b: Vec<u16> = (0..batch * k * n).map(|i| to_bits(philox::normal_f64(4, i as u64))).collect();
            let tag = format!("{dt}_{ci}");
            let (pa, pb, pc) =
                (h.path(&format!("a_{tag}.bin")), h.path(&format!("b_{tag}.bin")), h.path(&format!("c_{tag}.bin")));
            std::fs::write(&pa, a.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
            std::fs::write(&pb, b.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
            // The backend's grid: f16 with CUDA's limits, bf16 with one block along y and two
            // along z (the kernel loops over the row tiles and batch entries past them).
            let limits = if dt == DType::F16 { Limits::CUDA } else { clamped(i32::MAX as u32, 1, 2) };
            let tiles = (matmul_half::BM, matmul_half::BN, matmul_half::THREADS);
            let (grid, block) = as_launch(launch::matmul("matmul", (batch, m, k, n), tiles, &limits).unwrap());
            let setup = format!(
                "    ARGS::A = (const {t} *)pc_read(\"{pa}\"); ARGS::B = (const {t} *)pc_read(\"{pb}\");\n    \
                 ARGS::C = ({t} *)calloc({} + 1, sizeof({t})); ARGS::M = {m}; ARGS::N = {n}; ARGS::K = {k}; ARGS::batch = {batch};\n",
                batch * m * n
            );
            let (ct, mt) = (format!("const {t} *"), format!("{t} *"));
            let params = [
                (ct.as_str(), "A"),
                (ct.as_str(), "B"),
                (mt.as_str(), "C"),
                ("unsigned", "M"),
                ("unsigned", "N"),
                ("unsigned", "K"),
                ("unsigned", "batch"),
            ];
            h.launch(&matmul_half::kernel(dt).unwrap(), grid, block, &params, &setup);
            let ns = format!("k{}", h.count - 1);
            let _ = writeln!(h.main, "  pc_write(\"{pc}\", {ns}_args::C, {} * sizeof({t}));", batch * m * n);
            let (a, b): (Vec<f64>, Vec<f64>) =
                (a.into_iter().map(from_bits).collect(), b.into_iter().map(from_bits).collect());
            cases.push((tag, dt, from_bits, batch, m, k, n, a, b));
        }
    }
    let dir = h.run(&cxx);
    for (tag, dt, from_bits, batch, m, k, n, a, b) in cases {
        let got: Vec<f64> = std::fs::read(dir.join(format!("c_{tag}.bin")))
            .unwrap()
            .chunks_exact(2)
            .map(|c| from_bits(u16::from_le_bytes([c[0], c[1]])))
            .collect();
        assert_eq!(got.len(), batch * m * n, "{tag}");
        let half_eps = if dt == DType::F16 { f16::EPSILON.to_f64() } else { bf16::EPSILON.to_f64() };
        for z in 0..batch {
            for i in 0..m {
                for j in 0..n {
                    let (mut s, mut mag) = (0.0, 0.0);
                    for p in 0..k {
                        let x = a[z * m * k + i * k + p] * b[z * k * n + p * n + j];
                        s += x;
                        mag += x.abs();
                    }
                    // The f32 accumulation's error, then one rounding to the half type.
                    let tol = 2.0 * (k as f64 + 1.0) * f32::EPSILON as f64 * mag + half_eps * s.abs() + 1e-7;
                    let g = got[z * m * n + i * n + j];
                    assert!((g - s).abs() <= tol, "{tag} [{z},{i},{j}]: {g} vs {s}");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
