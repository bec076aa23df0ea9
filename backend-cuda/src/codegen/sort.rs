//! Sort, argsort and topk along an axis: a merge sort of `(key, index)` pairs per row. The
//! key is numpy's order as an unsigned integer (`cuda/sort_key.cuh`: NaN last, -0.0 equal to
//! +0.0; complemented for topk, so largest comes first and NaN before +inf), and ties are
//! broken by the element's index (the stable order). The passes: gather each row's keys
//! (rows of `[outer, n, inner]` along the axis, any `inner`), then `⌈log2 n⌉` merge passes
//! in which each element finds its place in the merged pair of runs by a binary search of the
//! keys of the other run (one thread per element, no barrier; the left run holds lower
//! positions, so ties need no index reads), then a scatter of values or indices back along
//! the axis.

use std::sync::Arc;

use polycompute_core::DType;

use super::{bits_of_size, cached, ctype, Kernel, KernelKey};

/// The numpy-order key functions.
pub const SORT_KEY: &str = include_str!("cuda/sort_key.cuh");

/// The unsigned key type of `dtype` (`u64` for f64, else `u32`: a half value's key is its
/// exactly widened f32's).
pub fn key_type(dtype: DType) -> &'static str {
    bits_of_size(key_bytes(dtype))
}

/// Bytes of a key of `dtype`.
pub fn key_bytes(dtype: DType) -> usize {
    dtype.size_bytes().max(4)
}

const GRID: &str =
    "for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)blockDim.x * gridDim.x)";
const ROW: &str =
    "const u32 e = (u32)i, p = e % n, r = e / n, l = r % inner, o = r / inner, at = (o * n + p) * inner + l;";

/// Each element's key (complemented when `descending`) and index along its row. Parameters:
/// `(in, keys, idx, u32 total, u32 n, u32 inner)`, `total = outer * n * inner`; keys and
/// indices are laid out row after row (`[outer * inner, n]`).
pub fn keys_kernel(dtype: DType, descending: bool) -> Arc<Kernel> {
    let key = KernelKey::SortKeys { dtype, descending };
    cached(key.clone(), || {
        let (t, k) = (ctype(dtype), key_type(dtype));
        let flip = if descending { "~" } else { "" };
        let body = format!(
            r#"{SORT_KEY}
extern "C" __global__ void pc_sort_keys(const {t}* __restrict__ in, {k}* __restrict__ keys, u32* __restrict__ idx, u32 total, u32 n, u32 inner) {{
  {GRID} {{
    {ROW}
    keys[e] = {flip}pc_sort_key(in[at]);
    idx[e] = p;
  }}
}}
"#
        );
        Kernel::new(key, "pc_sort_keys", &body)
    })
}

/// One merge pass: runs of `w` sorted pairs merge in pairs into runs of `2w`. Parameters:
/// `(keys, idx, keys_out, idx_out, u32 total, u32 n, u32 w)`.
pub fn merge_kernel(key_bytes: usize) -> Arc<Kernel> {
    let key = KernelKey::SortMerge { key_bytes };
    cached(key.clone(), || {
        let k = if key_bytes == 8 { "u64" } else { "u32" };
        let body = format!(
            r#"extern "C" __global__ void pc_sort_merge(const {k}* __restrict__ keys, const u32* __restrict__ idx, {k}* __restrict__ keys_out, u32* __restrict__ idx_out, u32 total, u32 n, u32 w) {{
  {GRID} {{
    const u32 e = (u32)i, p = e % n, base = e - p;
    const u64 q = p / w, s = q * w, pair = (q & ~1ull) * w;
    const {k} key = keys[e];
    const u32 own = idx[e];
    // The other run of the pair (empty past the row's end).
    u64 lo = (q & 1ull) ? s - w : s + w;
    u64 hi = (q & 1ull) ? s : s + 2ull * w;
    if (lo > n) lo = n;
    if (hi > n) hi = n;
    // How many of its pairs sort before this one. Every element of the left run came from
    // lower positions than every element of the right run, so an equal key in the left run
    // sorts first and one in the right run after: no index needs reading.
    const bool right = (q & 1ull) != 0ull;
    u64 a = lo, b = hi;
    while (a < b) {{
      const u64 m = (a + b) >> 1;
      const {k} km = keys[base + m];
      if (km < key || (right && km == key)) a = m + 1; else b = m;
    }}
    const u32 dst = base + (u32)(pair + (p - s) + (a - lo));
    keys_out[dst] = key;
    idx_out[dst] = own;
  }}
}}
"#
        );
        Kernel::new(key, "pc_sort_merge", &body)
    })
}

/// Sort's last pass: each place along the axis gets the input element its sorted index
/// names (moving bits, so NaN payloads and zero signs survive). Parameters: `(in, idx, out,
/// u32 total, u32 n, u32 inner)`.
pub fn gather_kernel(bytes: usize) -> Arc<Kernel> {
    let key = KernelKey::SortGather { bytes };
    cached(key.clone(), || {
        let t = bits_of_size(bytes);
        let body = format!(
            r#"extern "C" __global__ void pc_sort_gather(const {t}* __restrict__ in, const u32* __restrict__ idx, {t}* __restrict__ out, u32 total, u32 n, u32 inner) {{
  {GRID} {{
    {ROW}
    out[at] = in[(o * n + idx[e]) * inner + l];
  }}
}}
"#
        );
        Kernel::new(key, "pc_sort_gather", &body)
    })
}

/// Argsort's and topk's last pass: the first `k` sorted indices of each row along the
/// output's axis (of length `k`). Parameters: `(idx, out, u32 total, u32 n, u32 inner,
/// u32 k)`.
pub fn indices_kernel() -> Arc<Kernel> {
    let key = KernelKey::SortIndices;
    cached(key.clone(), || {
        let body = format!(
            r#"extern "C" __global__ void pc_sort_indices(const u32* __restrict__ idx, u32* __restrict__ out, u32 total, u32 n, u32 inner, u32 k) {{
  {GRID} {{
    const u32 e = (u32)i, p = e % n, r = e / n, l = r % inner, o = r / inner;
    if (p < k) out[(o * k + p) * inner + l] = idx[e];
  }}
}}
"#
        );
        Kernel::new(key, "pc_sort_indices", &body)
    })
}

/// The widths of the merge passes for rows of `n`: 1, 2, 4, … below `n`.
pub fn merge_widths(n: usize) -> impl Iterator<Item = usize> {
    std::iter::successors(Some(1usize), |w| w.checked_mul(2)).take_while(move |&w| w < n)
}

/// What a sort writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SortOutput {
    /// The sorted values (sort).
    Values,
    /// The sorting indices (argsort).
    Indices,
    /// The first `k` indices in descending order (topk).
    TopK,
}

/// Every kernel a sort writing `output` over `dtype` launches.
#[cfg(test)]
pub fn all_kernels(dtype: DType, output: SortOutput) -> Vec<Kernel> {
    let mut v =
        vec![(*keys_kernel(dtype, output == SortOutput::TopK)).clone(), (*merge_kernel(key_bytes(dtype))).clone()];
    v.push(if output == SortOutput::Values {
        (*gather_kernel(dtype.size_bytes())).clone()
    } else {
        (*indices_kernel()).clone()
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_widths_double_below_n() {
        assert_eq!(merge_widths(1).count(), 0);
        assert_eq!(merge_widths(5).collect::<Vec<_>>(), vec![1, 2, 4]);
        assert_eq!(merge_widths(8).collect::<Vec<_>>(), vec![1, 2, 4]);
    }
}
