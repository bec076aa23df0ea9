//! The own matmul kernel: row-major `C = A·B` per batch, block tiles in shared memory,
//! a register tile of `TM×TN` outputs per thread read from shared memory as 16-byte vectors,
//! and the next global tile prefetched into registers while the current one is multiplied. `fma` is
//! called explicitly (kernels are compiled with contraction off).

use polycompute_core::{DType, MatmulTranspose};
#[cfg(test)]
use polycompute_core::{Error, Result};

use super::{ctype, Kernel, KernelKey};

/// Tile sizes of the kernel for a dtype.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tiles {
    /// Rows of C per block.
    pub bm: u32,
    /// Columns of C per block.
    pub bn: u32,
    /// Depth of one shared-memory stage.
    pub bk: u32,
    /// Rows per thread.
    pub tm: u32,
    /// Columns per thread.
    pub tn: u32,
}

impl Tiles {
    /// Threads per block.
    pub fn threads(&self) -> u32 {
        (self.bm / self.tm) * (self.bn / self.tn)
    }
}

/// The tiles used for `dtype` (f32: 128×128×8 with 8×8 per thread; f64: 64×64×8 with 4×4).
pub fn tiles(dtype: DType) -> Tiles {
    match dtype {
        DType::F64 => Tiles { bm: 64, bn: 64, bk: 8, tm: 4, tn: 4 },
        _ => Tiles { bm: 128, bn: 128, bk: 8, tm: 8, tn: 8 },
    }
}

/// The matmul kernel for `dtype`: `(const T* a, const T* b, T* c, u32 m, u32 n, u32 k, u32 batch)`,
/// the grid of [`crate::launch::matmul`] (`ceil(n / bn)` column tiles along x; row tiles along y
/// and batch entries along z, which the kernel loops over past the grid's limits), [`Tiles::threads`]
/// threads. Its u32 loop counters need sizes a tile short of 2^32 ([`crate::launch::matmul`]).
///
/// Each thread owns two `V×V` sub-blocks per direction (`V = TM / 2`), `BM / 2` rows and
/// `BN / 2` columns apart, so it reads its operands from shared memory as 16-byte vectors
/// (`float4`, `double2`) and a half-warp's vectors are contiguous (no bank conflicts). The A
/// tile is stored transposed with `V` elements of padding per row, which makes the stores
/// from the global-load mapping conflict-free too.
#[cfg(test)]
pub fn kernel(dtype: DType) -> Result<Kernel> {
    if !dtype.is_float() {
        return Err(Error::Unsupported { op: "matmul".into(), dtype, device: None });
    }
    Ok(source(dtype))
}

/// The kernel's source for a float `dtype` (see `kernel`).
pub(crate) fn source(dtype: DType) -> Kernel {
    source_for(dtype, MatmulTranspose::NONE)
}

/// The kernel for `dtype` whose A (`transpose.lhs`) or B (`transpose.rhs`) arrives
/// transposed: A as `[K, M]` row-major, B as `[N, K]` (the same parameters and launch as
/// `kernel`). Only the global loads differ: each is mapped so that neighbouring threads
/// read neighbouring addresses of the buffer as stored, and the shared tiles are the same.
#[cfg(test)]
pub fn transposed_kernel(dtype: DType, transpose: MatmulTranspose) -> Result<Kernel> {
    if !dtype.is_float() {
        return Err(Error::Unsupported { op: "matmul".into(), dtype, device: None });
    }
    Ok(source_for(dtype, transpose))
}

/// The kernel's name: `pc_matmul`, or `pc_matmul_` with BLAS's `n`/`t` per operand.
fn name(transpose: MatmulTranspose) -> String {
    if !transpose.any() {
        return "pc_matmul".into();
    }
    let op = |t: bool| if t { 't' } else { 'n' };
    format!("pc_matmul_{}{}", op(transpose.lhs), op(transpose.rhs))
}

/// The source of `kernel` (`transpose` none) or `transposed_kernel`.
pub(crate) fn source_for(dtype: DType, transpose: MatmulTranspose) -> Kernel {
    let t = ctype(dtype);
    // Per operand: the load mapping (element `e` of a stage -> tile row/column and depth),
    // the global read, and the shared-memory store of element `e`.
    let (a_map, a_at, a_store) = if transpose.lhs {
        ("r = e % BM, kk = e / BM", "a[(u64)gk * M + gr]", "As[e / BM][e % BM]")
    } else {
        ("r = e / BK, kk = e % BK", "a[(u64)gr * K + gk]", "As[e % BK][e / BK]")
    };
    let (b_map, b_at, b_store) = if transpose.rhs {
        ("cc = e / BK, kk = e % BK", "b[(u64)gc * K + gk]", "Bs[e % BK][e / BK]")
    } else {
        ("kk = e / BN, cc = e % BN", "b[(u64)gk * N + gc]", "Bs[e / BN][e % BN]")
    };
    let kernel_name = name(transpose);
    let Tiles { bm, bn, bk, tm, tn } = tiles(dtype);
    let threads = tiles(dtype).threads();
    let a_loads = bm * bk / threads;
    let b_loads = bk * bn / threads;
    let v = tm / 2;
    let (vec, fields): (&str, &[&str]) = match dtype {
        DType::F64 => ("double2", &["x", "y"]),
        _ => ("float4", &["x", "y", "z", "w"]),
    };
    let unpack = |dst: &str, src: &str, h: &str| -> String {
        fields.iter().enumerate().map(|(i, f)| format!("{dst}[{h} * V + {i}] = {src}.{f}; ")).collect()
    };
    let unpack_a = unpack("fa", "va", "h");
    let unpack_b = unpack("fb", "vb", "h");
    let body = format!(
        r#"#define BM {bm}u
#define BN {bn}u
#define BK {bk}u
#define TM {tm}u
#define TN {tn}u
#define V {v}u
#define NT {threads}u
extern "C" __global__ void __launch_bounds__({threads}) {kernel_name}(const {t}* __restrict__ A, const {t}* __restrict__ B,
    {t}* __restrict__ C, u32 M, u32 N, u32 K, u32 batch) {{
  __shared__ __align__(16) {t} As[BK][BM + V];
  __shared__ __align__(16) {t} Bs[BK][BN];
  const u32 tid = threadIdx.x;
  const u32 tx = tid % (BN / TN), ty = tid / (BN / TN);
  const u32 tiles_m = (M + BM - 1u) / BM;
  for (u32 z = blockIdx.z; z < batch; z += gridDim.z) {{
    const {t}* a = A + (u64)z * M * K;
    const {t}* b = B + (u64)z * K * N;
    {t}* c = C + (u64)z * M * N;
    for (u32 tile_m = blockIdx.y; tile_m < tiles_m; tile_m += gridDim.y) {{
      const u32 row0 = tile_m * BM, col0 = blockIdx.x * BN;
      {t} acc[TM][TN];
      #pragma unroll
      for (u32 i = 0; i < TM; ++i) {{
        #pragma unroll
        for (u32 j = 0; j < TN; ++j) acc[i][j] = ({t})0;
      }}
      {t} ra[{a_loads}], rb[{b_loads}];
      // Global -> registers for the stage starting at k0 (zeros outside the matrices).
      #define LOAD_STAGE(k0)         _Pragma("unroll") for (u32 l = 0; l < {a_loads}u; ++l) {{           const u32 e = tid + l * NT, {a_map};           const u32 gr = row0 + r, gk = (k0) + kk;           ra[l] = (gr < M && gk < K) ? {a_at} : ({t})0;         }}         _Pragma("unroll") for (u32 l = 0; l < {b_loads}u; ++l) {{           const u32 e = tid + l * NT, {b_map};           const u32 gk = (k0) + kk, gc = col0 + cc;           rb[l] = (gk < K && gc < N) ? {b_at} : ({t})0;         }}
      LOAD_STAGE(0u)
      for (u32 k0 = 0; k0 < K; k0 += BK) {{
        #pragma unroll
        for (u32 l = 0; l < {a_loads}u; ++l) {{ const u32 e = tid + l * NT; {a_store} = ra[l]; }}
        #pragma unroll
        for (u32 l = 0; l < {b_loads}u; ++l) {{ const u32 e = tid + l * NT; {b_store} = rb[l]; }}
        __syncthreads();
        if (k0 + BK < K) {{ LOAD_STAGE(k0 + BK) }}
        #pragma unroll
        for (u32 kk = 0; kk < BK; ++kk) {{
          {t} fa[TM], fb[TN];
          #pragma unroll
          for (u32 h = 0; h < 2u; ++h) {{
            const {vec} va = *reinterpret_cast<const {vec}*>(&As[kk][ty * V + h * (BM / 2u)]);
            {unpack_a}
            const {vec} vb = *reinterpret_cast<const {vec}*>(&Bs[kk][tx * V + h * (BN / 2u)]);
            {unpack_b}
          }}
          #pragma unroll
          for (u32 i = 0; i < TM; ++i) {{
            #pragma unroll
            for (u32 j = 0; j < TN; ++j) acc[i][j] = fma(fa[i], fb[j], acc[i][j]);
          }}
        }}
        __syncthreads();
      }}
      #undef LOAD_STAGE
      #pragma unroll
      for (u32 i = 0; i < TM; ++i) {{
        const u32 gr = row0 + ty * V + (i / V) * (BM / 2u) + i % V;
        if (gr >= M) continue;
        #pragma unroll
        for (u32 j = 0; j < TN; ++j) {{
          const u32 gc = col0 + tx * V + (j / V) * (BN / 2u) + j % V;
          if (gc < N) c[(u64)gr * N + gc] = acc[i][j];
        }}
      }}
    }}
  }}
}}
"#
    );
    let key =
        if transpose.any() { KernelKey::MatmulTransposed { dtype, transpose } } else { KernelKey::Matmul { dtype } };
    Kernel::new(key, &kernel_name, &body)
}
