//! Fill: constants, and Philox4x32-10 counter-based random numbers reproducing
//! `polycompute_core::philox` bit for bit (the normal fill within the math library's ULPs).
//! One thread computes one Philox block and writes the elements that block feeds.

use polycompute_core::{DType, Fill};

use super::{ctype, Kernel};

/// Philox4x32-10 as in `polycompute_core::philox` (constants and round layout identical).
const PHILOX: &str = r#"
static __device__ __forceinline__ void pc_philox(u32 c0, u32 c1, u32 k0, u32 k1, u32 w[4]) {
  u32 c2 = 0u, c3 = 0u;
  #pragma unroll
  for (int round = 0; round < 10; ++round) {
    if (round > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    const u32 hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    const u32 hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    const u32 n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
  }
  w[0] = c0; w[1] = c1; w[2] = c2; w[3] = c3;
}
"#;

/// Elements per Philox block for a fill of `dtype` (4 words feed four 32-bit or two 64-bit values).
pub fn per_block(fill: Fill, dtype: DType) -> u32 {
    match (fill, dtype) {
        (Fill::Constant(_), _) => 1,
        (_, DType::F64) => 2,
        _ => 4,
    }
}

/// The fill kernel for `fill` of `dtype`. Parameters: `(T* out, u32 n, T value)` for a
/// constant, `(T* out, u32 n, u32 key0, u32 key1)` for the random fills.
pub fn kernel(fill: Fill, dtype: DType) -> Kernel {
    let t = ctype(dtype);
    let grid_loop = |count: &str| {
        format!("  for (u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x; b < {count}; b += (u64)blockDim.x * gridDim.x) {{\n")
    };
    let body = match fill {
        Fill::Constant(_) => format!(
            "extern \"C\" __global__ void pc_fill({t}* __restrict__ out, u32 n, {t} value) {{\n{}    out[b] = value;\n  }}\n}}\n",
            grid_loop("n")
        ),
        Fill::Uniform { .. } | Fill::Normal { .. } => {
            let per = per_block(fill, dtype);
            let value = match (fill, dtype) {
                (Fill::Uniform { .. }, DType::U32) => "w[j]".to_string(),
                (Fill::Uniform { .. }, DType::I32) => "(i32)w[j]".to_string(),
                (Fill::Uniform { .. }, DType::F32) => "__uint2float_rn(w[j] >> 8) * (1.0f / 16777216.0f)".to_string(),
                (Fill::Uniform { .. }, _) => "__ull2double_rn((((u64)w[2 * j + 1] << 32) | (u64)w[2 * j]) >> 11) \
                                              * (1.0 / 9007199254740992.0)"
                    .to_string(),
                (_, DType::F32) => "pc_normal_f32(w, j)".to_string(),
                _ => "pc_normal_f64(w, j)".to_string(),
            };
            let normal = match (fill, dtype) {
                (Fill::Normal { .. }, DType::F32) => NORMAL_F32,
                (Fill::Normal { .. }, _) => NORMAL_F64,
                _ => "",
            };
            format!(
                "{PHILOX}{normal}extern \"C\" __global__ void pc_fill({t}* __restrict__ out, u32 n, u32 key0, u32 key1) {{\n  \
                 const u64 blocks = ((u64)n + {per}u - 1u) / {per}u;\n{}    \
                 u32 w[4];\n    pc_philox((u32)b, (u32)(b >> 32), key0, key1, w);\n    \
                 #pragma unroll\n    for (u32 j = 0; j < {per}u; ++j) {{\n      const u64 i = b * {per}u + j;\n      \
                 if (i < n) out[i] = {value};\n    }}\n  }}\n}}\n",
                grid_loop("blocks")
            )
        }
    };
    Kernel::new("pc_fill", &body)
}

/// Box–Muller, f32: pair `j / 2` uses words `2p, 2p+1`; even `j` takes the cosine.
const NORMAL_F32: &str = r#"
static __device__ __forceinline__ float pc_normal_f32(const u32 w[4], u32 j) {
  const u32 p = 2u * (j / 2u);
  const float u1 = __uint2float_rn((w[p] >> 8) + 1u) * (1.0f / 16777216.0f);
  const float u2 = __uint2float_rn(w[p + 1] >> 8) * (1.0f / 16777216.0f);
  const float r = sqrtf(-2.0f * logf(u1));
  const float theta = (2.0f * 3.14159265358979323846f) * u2;
  return (j % 2u == 0u) ? r * cosf(theta) : r * sinf(theta);
}
"#;

/// Box–Muller, f64: both elements of a block use the same pair; even `j` takes the cosine.
const NORMAL_F64: &str = r#"
static __device__ __forceinline__ double pc_normal_f64(const u32 w[4], u32 j) {
  const u64 w01 = ((u64)w[1] << 32) | (u64)w[0];
  const u64 w23 = ((u64)w[3] << 32) | (u64)w[2];
  const double u1 = __ull2double_rn((w01 >> 11) + 1ull) * (1.0 / 9007199254740992.0);
  const double u2 = __ull2double_rn(w23 >> 11) * (1.0 / 9007199254740992.0);
  const double r = sqrt(-2.0 * log(u1));
  const double theta = (2.0 * 3.14159265358979323846) * u2;
  return (j % 2u == 0u) ? r * cos(theta) : r * sin(theta);
}
"#;
