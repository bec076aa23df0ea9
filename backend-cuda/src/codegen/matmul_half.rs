//! The own matmul kernel for half dtypes (f16, bf16), used when cuBLAS is not (its
//! `GemmEx` is the fast path): row-major `C = A·B` per batch through shared-memory tiles
//! that hold the operands widened to f32, each thread accumulating a `TM×TN` register tile
//! with `fmaf` in f32 and rounding each output once to the storage type.

use polycompute_core::DType;
#[cfg(test)]
use polycompute_core::{Error, Result};

use super::{ctype, Kernel, KernelKey};

/// Rows of C per block.
pub const BM: u32 = 64;
/// Columns of C per block.
pub const BN: u32 = 64;
/// Depth of one shared-memory stage.
const BK: u32 = 16;
/// Rows per thread.
const TM: u32 = 4;
/// Columns per thread.
const TN: u32 = 4;
/// Threads per block.
pub const THREADS: u32 = (BM / TM) * (BN / TN);

/// The kernel for a half `dtype`: `(const T* a, const T* b, T* c, u32 m, u32 n, u32 k, u32
/// batch)`, the grid of [`crate::launch::matmul`] (row tiles along y and batch entries along z
/// looped over past the grid's limits), [`THREADS`]
/// threads; `Unsupported` for any other dtype.
#[cfg(test)]
pub fn kernel(dtype: DType) -> Result<Kernel> {
    if !matches!(dtype, DType::F16 | DType::BF16) {
        return Err(Error::Unsupported { op: "half matmul kernel".into(), dtype, device: None });
    }
    Ok(source(dtype))
}

/// The kernel's source for a half `dtype` (see `kernel`).
pub(crate) fn source(dtype: DType) -> Kernel {
    let t = ctype(dtype);
    let round = format!("pc_to_{}", dtype.name());
    let a_loads = BM * BK / THREADS;
    let b_loads = BK * BN / THREADS;
    let body = format!(
        r#"#define BM {BM}u
#define BN {BN}u
#define BK {BK}u
#define TM {TM}u
#define TN {TN}u
#define NT {THREADS}u
extern "C" __global__ void __launch_bounds__({THREADS}) pc_matmul_half(const {t}* __restrict__ A, const {t}* __restrict__ B,
    {t}* __restrict__ C, u32 M, u32 N, u32 K, u32 batch) {{
  __shared__ float As[BK][BM];
  __shared__ float Bs[BK][BN];
  const u32 tid = threadIdx.x;
  const u32 tx = tid % (BN / TN), ty = tid / (BN / TN);
  const u32 tiles_m = (M + BM - 1u) / BM;
  for (u32 z = blockIdx.z; z < batch; z += gridDim.z) {{
    const {t}* a = A + (u64)z * M * K;
    const {t}* b = B + (u64)z * K * N;
    {t}* c = C + (u64)z * M * N;
    for (u32 tile_m = blockIdx.y; tile_m < tiles_m; tile_m += gridDim.y) {{
      const u32 row0 = tile_m * BM, col0 = blockIdx.x * BN;
      float acc[TM][TN];
      #pragma unroll
      for (u32 i = 0; i < TM; ++i) {{
        #pragma unroll
        for (u32 j = 0; j < TN; ++j) acc[i][j] = 0.0f;
      }}
      for (u32 k0 = 0; k0 < K; k0 += BK) {{
        // Global -> shared, widened to f32 (zeros outside the matrices).
        #pragma unroll
        for (u32 l = 0; l < {a_loads}u; ++l) {{
          const u32 e = tid + l * NT, r = e / BK, kk = e % BK, gr = row0 + r, gk = k0 + kk;
          As[kk][r] = (gr < M && gk < K) ? pc_to_f32(a[(u64)gr * K + gk]) : 0.0f;
        }}
        #pragma unroll
        for (u32 l = 0; l < {b_loads}u; ++l) {{
          const u32 e = tid + l * NT, kk = e / BN, cc = e % BN, gk = k0 + kk, gc = col0 + cc;
          Bs[kk][cc] = (gk < K && gc < N) ? pc_to_f32(b[(u64)gk * N + gc]) : 0.0f;
        }}
        __syncthreads();
        #pragma unroll
        for (u32 kk = 0; kk < BK; ++kk) {{
          float fa[TM], fb[TN];
          #pragma unroll
          for (u32 i = 0; i < TM; ++i) fa[i] = As[kk][ty * TM + i];
          #pragma unroll
          for (u32 j = 0; j < TN; ++j) fb[j] = Bs[kk][tx * TN + j];
          #pragma unroll
          for (u32 i = 0; i < TM; ++i) {{
            #pragma unroll
            for (u32 j = 0; j < TN; ++j) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
          }}
        }}
        __syncthreads();
      }}
      // One rounding per output.
      #pragma unroll
      for (u32 i = 0; i < TM; ++i) {{
        const u32 gr = row0 + ty * TM + i;
        if (gr >= M) continue;
        #pragma unroll
        for (u32 j = 0; j < TN; ++j) {{
          const u32 gc = col0 + tx * TN + j;
          if (gc < N) c[(u64)gr * N + gc] = {round}(acc[i][j]);
        }}
      }}
    }}
  }}
}}
"#
    );
    Kernel::new(KernelKey::MatmulHalf { dtype }, "pc_matmul_half", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_half_dtypes_have_the_kernel() {
        for d in [DType::F16, DType::BF16] {
            let k = kernel(d).unwrap();
            assert!(k.source.contains(&format!("pc_to_{}(acc[i][j])", d.name())), "{}", k.source);
            assert!(k.source.contains(&format!("const {}* __restrict__ A", ctype(d))));
        }
        assert!(matches!(kernel(DType::F32), Err(Error::Unsupported { dtype: DType::F32, .. })));
    }
}
