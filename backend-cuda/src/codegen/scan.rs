//! Inclusive scans (cumsum, cumprod) along an axis, seen as `[outer, n, inner]`: each lane
//! `(o, i)` is cut into chunks of [`ScanPlan::chunk`] elements. With one chunk per lane a
//! single pass scans every lane sequentially (adjacent threads read adjacent lanes, so it is
//! coalesced when `inner > 1`); with several, a pass totals each chunk, one thread per lane
//! turns the totals into carries, and the last pass rescans each chunk from its carry. No
//! kernel needs a block barrier, and a long single row still spreads over √n threads.
//! Floats add in a different order than a sequential scan (within the summation tolerance);
//! integers wrap, so their result is exact. Halves (f16, bf16) run an f32 value (chunk totals
//! in f32 too) and round each output once from it.

use std::sync::Arc;

use polycompute_core::{DType, ScanKind};

use super::{cached, ctype, Kernel, KernelKey};

/// The pass of a chunked scan.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ScanPass {
    /// Each chunk's total into `totals[(o * chunks + c) * inner + i]`. Parameters:
    /// `(in, totals, u32 work, u32 n, u32 inner, u32 chunk, u32 chunks)`, `work = outer *
    /// chunks * inner`.
    Totals,
    /// Per lane, the totals become carries (chunk `c >= 1` gets the combination of chunks
    /// `0..c`), in place. Parameters: `(totals, u32 lanes, u32 inner, u32 chunks)`.
    Carries,
    /// Each chunk scanned from its carry into `out`. Parameters: `(in, out, totals, u32 work,
    /// u32 n, u32 inner, u32 chunk, u32 chunks)`.
    Apply,
}

/// How a scan over `[outer, n, inner]` is cut.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ScanPlan {
    /// Elements per chunk (at least 1).
    pub chunk: usize,
    /// Chunks per lane.
    pub chunks: usize,
}

impl ScanPlan {
    /// One chunk per lane when there are enough lanes to fill a GPU (or the lanes are
    /// short), else chunks of about √n elements.
    pub fn new(outer: usize, n: usize, inner: usize) -> ScanPlan {
        let lanes = outer * inner;
        if n <= 64 || lanes >= 1 << 16 {
            return ScanPlan { chunk: n.max(1), chunks: 1 };
        }
        let chunk = (n as f64).sqrt().ceil().max(32.0) as usize;
        ScanPlan { chunk, chunks: n.div_ceil(chunk) }
    }
}

/// The kernel of `pass` for scans `kind` over `dtype`.
pub fn kernel(kind: ScanKind, dtype: DType, pass: ScanPass) -> Arc<Kernel> {
    let key = KernelKey::Scan { kind, dtype, pass };
    cached(key.clone(), || {
        let t = ctype(dtype);
        // The running value's type and how an element enters it / leaves it: halves run in
        // f32 (widened exactly) and each output is rounded once from it.
        let a = ctype(acc_dtype(dtype));
        let (load, store) =
            if dtype.is_half() { ("pc_to_f32", format!("pc_to_{}", dtype.name())) } else { ("", String::new()) };
        let op = match kind {
            ScanKind::Sum => "pc_add",
            ScanKind::Prod => "pc_mul",
        };
        let grid =
            "for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < work; i += (u64)blockDim.x * gridDim.x)";
        let chunk_of = "const u32 e = (u32)i, l = e % inner, t = e / inner, c = t % chunks, o = t / chunks;\n    const u32 base = o * n * inner + l, p0 = c * chunk, p1 = (n - p0 < chunk) ? n : p0 + chunk;";
        let (entry, body) = match pass {
            ScanPass::Totals => (
                "pc_scan_totals",
                format!(
                    r#"extern "C" __global__ void pc_scan_totals(const {t}* __restrict__ in, {a}* __restrict__ totals, u32 work, u32 n, u32 inner, u32 chunk, u32 chunks) {{
  {grid} {{
    {chunk_of}
    {a} acc = {load}(in[base + p0 * inner]);
    for (u32 p = p0 + 1u; p < p1; ++p) acc = {op}(acc, {load}(in[base + p * inner]));
    totals[e] = acc;
  }}
}}
"#
                ),
            ),
            ScanPass::Carries => (
                "pc_scan_carries",
                format!(
                    r#"extern "C" __global__ void pc_scan_carries({a}* __restrict__ totals, u32 lanes, u32 inner, u32 chunks) {{
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < lanes; i += (u64)blockDim.x * gridDim.x) {{
    const u32 l = (u32)i % inner, o = (u32)i / inner, base = o * chunks * inner + l;
    {a} acc = totals[base];
    for (u32 c = 1u; c < chunks; ++c) {{
      const {a} own = totals[base + c * inner];
      totals[base + c * inner] = acc;
      acc = {op}(acc, own);
    }}
  }}
}}
"#
                ),
            ),
            ScanPass::Apply => (
                "pc_scan_apply",
                format!(
                    r#"extern "C" __global__ void pc_scan_apply(const {t}* __restrict__ in, {t}* __restrict__ out, const {a}* __restrict__ totals, u32 work, u32 n, u32 inner, u32 chunk, u32 chunks) {{
  {grid} {{
    {chunk_of}
    // The first chunk starts from its first element (not from 0 + x, which would turn -0.0 into +0.0).
    {a} acc = c == 0u ? {load}(in[base + p0 * inner]) : {op}(totals[e], {load}(in[base + p0 * inner]));
    out[base + p0 * inner] = {store}(acc);
    for (u32 p = p0 + 1u; p < p1; ++p) {{
      acc = {op}(acc, {load}(in[base + p * inner]));
      out[base + p * inner] = {store}(acc);
    }}
  }}
}}
"#
                ),
            ),
        };
        Kernel::new(key, entry, &body)
    })
}

/// The dtype of a scan's running value and chunk totals: f32 for the halves (an f32 running
/// value, each output rounded once from it), else the element type.
pub fn acc_dtype(dtype: DType) -> DType {
    if dtype.is_half() {
        DType::F32
    } else {
        dtype
    }
}

/// Every kernel a scan of `kind` over `dtype` may launch.
#[cfg(test)]
pub fn all_kernels(kind: ScanKind, dtype: DType) -> Vec<Kernel> {
    [ScanPass::Totals, ScanPass::Carries, ScanPass::Apply]
        .into_iter()
        .map(|p| (*kernel(kind, dtype, p)).clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_rows_are_chunked_and_many_lanes_are_not() {
        assert_eq!(ScanPlan::new(1, 10, 1), ScanPlan { chunk: 10, chunks: 1 });
        assert_eq!(ScanPlan::new(1, 0, 1), ScanPlan { chunk: 1, chunks: 1 });
        assert_eq!(ScanPlan::new(1 << 16, 1000, 1).chunks, 1);
        let p = ScanPlan::new(1, 1 << 20, 1);
        assert_eq!((p.chunk, p.chunks), (1024, 1024));
        let p = ScanPlan::new(2, 1000, 3);
        assert!(p.chunk * p.chunks >= 1000 && p.chunk * (p.chunks - 1) < 1000);
    }
}
