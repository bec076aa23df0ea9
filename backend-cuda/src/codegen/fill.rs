//! Fill: constants, and Philox4x32-10 counter-based random numbers reproducing
//! `polycompute_core::philox` bit for bit (the normal fill within the math library's ULPs).
//! One thread computes one Philox block and writes the elements that block feeds.

use polycompute_core::{DType, Fill};

use super::{ctype, Kernel, KernelKey};

/// Philox4x32-10 as in `polycompute_core::philox` (constants and round layout identical).
const PHILOX: &str = include_str!("cuda/philox.cuh");

/// Elements per Philox block for a fill of `dtype` (4 words feed four 32-bit or two 64-bit
/// values; a half value is an f32 value rounded, one word each).
pub fn per_block(fill: Fill, dtype: DType) -> u32 {
    match (fill, dtype) {
        (Fill::Constant(_), _) => 1,
        (_, DType::F64) => 2,
        _ => 4,
    }
}

/// What the fill kernel of `fill` over `dtype` depends on (not the constant or the seed,
/// which are parameters).
pub(super) fn key(fill: Fill, dtype: DType) -> KernelKey {
    let kind = match fill {
        Fill::Constant(_) => 0,
        Fill::Uniform { .. } => 1,
        Fill::Normal { .. } => 2,
    };
    KernelKey::Fill { kind, dtype }
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
            const UNIFORM_F32: &str = "__uint2float_rn(w[j] >> 8) * (1.0f / 16777216.0f)";
            let value = match (fill, dtype) {
                (Fill::Uniform { .. }, DType::U32) => "w[j]".to_string(),
                (Fill::Uniform { .. }, DType::I32) => "(i32)w[j]".to_string(),
                (Fill::Uniform { .. }, DType::F32) => UNIFORM_F32.to_string(),
                // Half dtypes: the f32 value, rounded once (so every backend gives the same bits).
                (Fill::Uniform { .. }, DType::F16 | DType::BF16) => format!("pc_to_{}({UNIFORM_F32})", dtype.name()),
                (Fill::Uniform { .. }, _) => "__ull2double_rn((((u64)w[2 * j + 1] << 32) | (u64)w[2 * j]) >> 11) \
                                              * (1.0 / 9007199254740992.0)"
                    .to_string(),
                (_, DType::F32) => "pc_normal_f32(w, j)".to_string(),
                (_, DType::F16 | DType::BF16) => format!("pc_to_{}(pc_normal_f32(w, j))", dtype.name()),
                _ => "pc_normal_f64(w, j)".to_string(),
            };
            let normal = match (fill, dtype) {
                (Fill::Normal { .. }, DType::F32 | DType::F16 | DType::BF16) => NORMAL_F32,
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
    Kernel::new(key(fill, dtype), "pc_fill", &body)
}

/// Box–Muller, f32: pair `j / 2` uses words `2p, 2p+1`; even `j` takes the cosine.
const NORMAL_F32: &str = include_str!("cuda/normal_f32.cuh");

/// Box–Muller, f64: both elements of a block use the same pair; even `j` takes the cosine.
const NORMAL_F64: &str = include_str!("cuda/normal_f64.cuh");
