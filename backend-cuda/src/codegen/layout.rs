//! Transpose (axis permutation). Core's [`simplify_permutation`] first merges the axes that
//! stay adjacent and in order; what is left is either a batched 2-D transpose (the last two coalesced axes swapped), done
//! through 32×32 shared-memory tiles so reads and writes are both coalesced, or a general
//! gather with one input offset computed per output element.

use std::fmt::Write;
use std::sync::Arc;

use polycompute_core::plan::simplify_permutation;
use polycompute_core::{DType, Shape};

use super::{bits_type, cached, Kernel, KernelKey};

/// A planned transpose.
#[derive(Clone, Debug, PartialEq)]
pub enum TransposePlan {
    /// Nothing moves (after coalescing the permutation is the identity): a plain copy.
    Copy,
    /// `[batch, rows, cols] -> [batch, cols, rows]`.
    Tiled {
        /// The kernel (memoized).
        kernel: Arc<Kernel>,
        /// Batch count.
        batch: usize,
        /// Rows of each input matrix.
        rows: usize,
        /// Columns of each input matrix.
        cols: usize,
    },
    /// Any other permutation.
    Gather {
        /// The kernel (memoized).
        kernel: Arc<Kernel>,
        /// By-value geometry: output dims, then the input stride of each output axis.
        geometry: Vec<u32>,
    },
}

impl TransposePlan {
    /// The kernels the plan launches.
    #[cfg(test)]
    pub fn kernels(&self) -> Vec<Kernel> {
        match self {
            TransposePlan::Copy => Vec::new(),
            TransposePlan::Tiled { kernel, .. } | TransposePlan::Gather { kernel, .. } => vec![(**kernel).clone()],
        }
    }
}

/// Plans `transpose(shape, perm)` for elements of `dtype`, on core's simplified
/// permutation ([`simplify_permutation`]).
pub fn plan_transpose(shape: &Shape, perm: &[usize], dtype: DType) -> TransposePlan {
    let p = simplify_permutation(shape.dims(), perm);
    if p.is_identity() {
        return TransposePlan::Copy;
    }
    let (dims, perm, n) = (&p.dims, &p.perm, p.perm.len());
    // [.., a, b] -> [.., b, a] with the leading axes in order: a batched 2-D transpose.
    if n >= 2 && perm[n - 2] == n - 1 && perm[n - 1] == n - 2 && perm[..n - 2].iter().enumerate().all(|(i, &q)| i == q)
    {
        let batch = dims[..n - 2].iter().product();
        let kernel = cached(tiled_key(dtype), || tiled_kernel(dtype));
        return TransposePlan::Tiled { kernel, batch, rows: dims[n - 2], cols: dims[n - 1] };
    }
    let geometry: Vec<u32> = p.out_dims().into_iter().chain(p.in_strides()).map(|x| x as u32).collect();
    let kernel = cached(gather_key(dtype, n), || gather_kernel(dtype, n));
    TransposePlan::Gather { kernel, geometry }
}

fn tiled_key(dtype: DType) -> KernelKey {
    KernelKey::TransposeTiled { bytes: dtype.size_bytes() }
}

fn gather_key(dtype: DType, ndim: usize) -> KernelKey {
    KernelKey::TransposeGather { bytes: dtype.size_bytes(), ndim }
}

fn tiled_kernel(dtype: DType) -> Kernel {
    let t = bits_type(dtype);
    let body = format!(
        r#"// 32x32 tiles, 32x8 threads; +1 column of padding avoids shared-memory bank conflicts.
extern "C" __global__ void pc_transpose({t}* __restrict__ out, const {t}* __restrict__ in, u32 batch, u32 rows, u32 cols) {{
  __shared__ {t} tile[32][33];
  const u32 tiles_c = (cols + 31u) / 32u, tiles_r = (rows + 31u) / 32u;
  const u64 per = (u64)tiles_c * tiles_r, total = per * batch;
  for (u64 t = blockIdx.x; t < total; t += gridDim.x) {{
    const u64 z = t / per; const u32 rem = (u32)(t % per);
    const u32 r0 = (rem / tiles_c) * 32u, c0 = (rem % tiles_c) * 32u;
    const {t}* src = in + z * rows * (u64)cols;
    {t}* dst = out + z * rows * (u64)cols;
    for (u32 k = threadIdx.y; k < 32u; k += 8u) {{
      const u32 r = r0 + k, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[k][threadIdx.x] = src[(u64)r * cols + c];
    }}
    __syncthreads();
    for (u32 k = threadIdx.y; k < 32u; k += 8u) {{
      const u32 c = c0 + k, r = r0 + threadIdx.x;
      if (r < rows && c < cols) dst[(u64)c * rows + r] = tile[threadIdx.x][k];
    }}
    __syncthreads();
  }}
}}
"#
    );
    Kernel::new(tiled_key(dtype), "pc_transpose", &body)
}

fn gather_kernel(dtype: DType, ndim: usize) -> Kernel {
    let t = bits_type(dtype);
    let mut s = String::new();
    let _ = writeln!(s, "struct Geo {{ u32 dim[{ndim}]; u32 st[{ndim}]; }};");
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void pc_transpose({t}* __restrict__ out, const {t}* __restrict__ in, u32 n, Geo g) {{"
    );
    s.push_str(
        "  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)blockDim.x * gridDim.x) {\n",
    );
    s.push_str("    u32 rest = (u32)i, off = 0u;\n");
    for d in (0..ndim).rev() {
        let _ = writeln!(s, "    {{ const u32 c = rest % g.dim[{d}]; rest /= g.dim[{d}]; off += c * g.st[{d}]; }}");
    }
    s.push_str("    out[i] = in[off];\n  }\n}\n");
    Kernel::new(gather_key(dtype, ndim), "pc_transpose", &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_follow_the_simplified_permutation() {
        let s = |d: &[usize]| Shape::new(d).unwrap();
        // [2, 3, 4] with perm [0, 2, 1]: a batched transpose of 3x4 matrices.
        let plan = plan_transpose(&s(&[2, 3, 4]), &[0, 2, 1], DType::F32);
        assert!(matches!(plan, TransposePlan::Tiled { batch: 2, rows: 3, cols: 4, .. }), "{plan:?}");
        // size-1 axes vanish: [1, 5] -> [5, 1] is a copy.
        assert_eq!(plan_transpose(&s(&[1, 5]), &[1, 0], DType::F32), TransposePlan::Copy);
        assert_eq!(plan_transpose(&s(&[0, 5]), &[1, 0], DType::F32), TransposePlan::Copy);
    }

    #[test]
    fn general_permutations_gather() {
        let plan = plan_transpose(&Shape::new(&[2, 3, 4]).unwrap(), &[2, 0, 1], DType::F64);
        // [2, 3, 4] perm [2, 0, 1]: input axes 0,1 stay together -> [6, 4] transposed (tiled).
        assert!(matches!(plan, TransposePlan::Tiled { batch: 1, rows: 6, cols: 4, .. }));
        let plan = plan_transpose(&Shape::new(&[2, 3, 4]).unwrap(), &[1, 0, 2], DType::F32);
        let TransposePlan::Gather { geometry, .. } = plan else { panic!("expected a gather") };
        // output dims [3, 2, 4], input strides of those axes [4, 12, 1]
        assert_eq!(geometry, vec![3, 2, 4, 4, 12, 1]);
    }
}
