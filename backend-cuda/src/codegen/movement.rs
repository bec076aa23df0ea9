//! Data movement: concat, pad, take, take_along_axis and scatter_add. Each kernel walks its
//! output (scatter_add: its values) with a grid-stride loop, one element per trip; the op is
//! seen as `[outer, axis, inner]` around its axis, so one kernel serves every rank. Kernels
//! that only move elements are generated per element size, not per dtype.

use std::sync::Arc;

use polycompute_core::{DType, Scalar, Shape};

use super::{bits_of_size, cached, ctype, Kernel, KernelKey};

/// The data-movement helpers (index clamping, accumulating adds), after the prelude.
pub const MOVEMENT: &str = include_str!("cuda/movement.cuh");

/// `(outer, n, inner)`: the element counts before, along and after `axis` of `shape`.
pub fn split_axis(shape: &Shape, axis: usize) -> (usize, usize, usize) {
    let d = shape.dims();
    let outer = d[..axis.min(d.len())].iter().product();
    let n = d.get(axis).copied().unwrap_or(1);
    let inner = d.get(axis + 1..).map_or(1, |r| r.iter().product());
    (outer, n, inner)
}

/// The copy of one concat input, elements of `bytes` bytes: `outer` rows of `row` elements
/// into rows of `out_row` elements, starting at column `col0`. Parameters:
/// `(out, in, u32 n, u32 row, u32 out_row, u32 col0)`, `n = outer * row`.
pub fn concat_kernel(bytes: usize) -> Arc<Kernel> {
    let key = KernelKey::Concat { bytes };
    cached(key.clone(), || {
        let t = bits_type_of(bytes);
        let body = format!(
            r#"extern "C" __global__ void pc_concat({t}* __restrict__ out, const {t}* __restrict__ in, u32 n, u32 row, u32 out_row, u32 col0) {{
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)blockDim.x * gridDim.x) {{
    const u32 e = (u32)i, r = e / row, c = e % row;
    out[r * out_row + col0 + c] = in[e];
  }}
}}
"#
        );
        Kernel::new(key, "pc_concat", &body)
    })
}

/// The pad kernel over `ndim` (at least 1) axes, elements of `bytes` bytes. Parameters:
/// `(out, in, u32 n, Geo g, value)` where `n` is the output's element count, `Geo` is
/// [`pad_geometry`] and `value` the fill's bits (u32, or u64 for 8-byte elements).
pub fn pad_kernel(bytes: usize, ndim: usize) -> Arc<Kernel> {
    let ndim = ndim.max(1);
    let key = KernelKey::Pad { bytes, ndim };
    cached(key.clone(), || {
        let t = bits_type_of(bytes);
        let mut walk = String::new();
        for d in (0..ndim).rev() {
            walk.push_str(&format!(
                "    {{ const u32 c = rest % g.odim[{d}]; rest /= g.odim[{d}]; const u32 ci = c - g.before[{d}];\n      inside = inside && ci < g.idim[{d}]; off += ci * mul; mul *= g.idim[{d}]; }}\n"
            ));
        }
        let body = format!(
            r#"struct Geo {{ u32 odim[{ndim}]; u32 idim[{ndim}]; u32 before[{ndim}]; }};
extern "C" __global__ void pc_pad({t}* __restrict__ out, const {t}* __restrict__ in, u32 n, Geo g, {t} value) {{
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)blockDim.x * gridDim.x) {{
    u32 rest = (u32)i, off = 0u, mul = 1u;
    bool inside = true;
{walk}    out[i] = inside ? in[off] : value;
  }}
}}
"#
        );
        Kernel::new(key, "pc_pad", &body)
    })
}

/// The pad kernel's geometry words: output dims, input dims, elements before, per axis (a
/// rank-0 array is padded as `[1]`).
pub fn pad_geometry(shape: &Shape, widths: &[(usize, usize)]) -> Vec<u32> {
    let dims: Vec<usize> = if shape.dims().is_empty() { vec![1] } else { shape.dims().to_vec() };
    let w = |a: usize| widths.get(a).copied().unwrap_or((0, 0));
    let out = dims.iter().enumerate().map(|(a, &d)| (d + w(a).0 + w(a).1) as u32);
    let inp = dims.iter().map(|&d| d as u32);
    let before = (0..dims.len()).map(|a| w(a).0 as u32);
    out.chain(inp).chain(before).collect()
}

/// The fill value's bits as the pad kernel's last parameter.
pub fn value_bytes(value: Scalar) -> Vec<u8> {
    match value {
        Scalar::F32(v) => v.to_bits().to_le_bytes().to_vec(),
        Scalar::F64(v) => v.to_bits().to_le_bytes().to_vec(),
        Scalar::I32(v) => v.to_le_bytes().to_vec(),
        Scalar::U32(v) => v.to_le_bytes().to_vec(),
        Scalar::F16(v) => v.to_bits().to_le_bytes().to_vec(),
        Scalar::BF16(v) => v.to_bits().to_le_bytes().to_vec(),
        Scalar::I64(v) => v.to_le_bytes().to_vec(),
        Scalar::U8(v) => vec![v],
        Scalar::Bool(v) => vec![u8::from(v)],
    }
}

/// `take` (`along == false`: `out[o, j, i] = a[o, idx[j], i]`) or `take_along_axis`
/// (`along`: `out[o, j, i] = a[o, idx[o, j, i], i]`) of elements of `bytes` bytes with
/// `index` (u32 or i32) indices. Parameters: `(out, a, idx, u32 total, u32 n, u32 m,
/// u32 inner)`: `total = outer * m * inner` output elements, `n` the indexed axis's length,
/// `m` the output's (index) axis length.
pub fn take_kernel(bytes: usize, index: DType, along: bool) -> Arc<Kernel> {
    let key = KernelKey::Take { bytes, index, along };
    cached(key.clone(), || {
        let t = bits_type_of(bytes);
        let it = ctype(index);
        let which = if along { "e" } else { "j" };
        let body = format!(
            r#"{MOVEMENT}
extern "C" __global__ void pc_take({t}* __restrict__ out, const {t}* __restrict__ a, const {it}* __restrict__ idx, u32 total, u32 n, u32 m, u32 inner) {{
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)blockDim.x * gridDim.x) {{
    const u32 e = (u32)i, in = e % inner, t = e / inner, j = t % m, o = t / m;
    (void)j;
    const u32 ix = pc_axis_index(idx[{which}], n);
    out[e] = a[(o * n + ix) * inner + in];
  }}
}}
"#
        );
        Kernel::new(key, "pc_take", &body)
    })
}

/// `scatter_add`'s accumulation into `out` (already a copy of `a`): every value is added
/// atomically at the element its index names (repeated indices accumulate; integers wrap).
/// Parameters: `(out, idx, values, u32 total, u32 n, u32 m, u32 inner)` as [`take_kernel`],
/// `total` counting the values.
pub fn scatter_add_kernel(dtype: DType, index: DType) -> Arc<Kernel> {
    let key = KernelKey::ScatterAdd { dtype, index };
    cached(key.clone(), || {
        let t = ctype(dtype);
        let it = ctype(index);
        let body = format!(
            r#"{MOVEMENT}
extern "C" __global__ void pc_scatter_add({t}* __restrict__ out, const {it}* __restrict__ idx, const {t}* __restrict__ values, u32 total, u32 n, u32 m, u32 inner) {{
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)blockDim.x * gridDim.x) {{
    const u32 e = (u32)i, in = e % inner, t = e / inner, j = t % m, o = t / m;
    const u32 ix = pc_axis_index(idx[j], n);
    pc_atomic_add(&out[(o * n + ix) * inner + in], values[e]);
  }}
}}
"#
        );
        Kernel::new(key, "pc_scatter_add", &body)
    })
}

fn bits_type_of(bytes: usize) -> &'static str {
    bits_of_size(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_split_around_the_axis() {
        let s = Shape::new(&[2, 3, 4, 5]).unwrap();
        assert_eq!(split_axis(&s, 0), (1, 2, 60));
        assert_eq!(split_axis(&s, 2), (6, 4, 5));
        assert_eq!(split_axis(&s, 3), (24, 5, 1));
    }

    #[test]
    fn pad_geometry_lists_out_in_and_before() {
        let g = pad_geometry(&Shape::new(&[2, 3]).unwrap(), &[(1, 0), (2, 3)]);
        assert_eq!(g, vec![3, 8, 2, 3, 1, 2]);
        assert_eq!(pad_geometry(&Shape::scalar(), &[]), vec![1, 1, 0]);
    }
}
