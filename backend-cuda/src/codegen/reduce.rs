//! Reductions. An input of shape `[outer, r, inner]` (the reduced axis in the middle; all
//! elements is `[1, n, 1]`) is reduced either along rows (`inner == 1`: one block per row
//! segment, warp shuffles then shared memory) or along columns (one thread per output
//! element, reading coalesced across `inner`). When there are too few outputs to fill the
//! device, the reduced axis is split into segments whose partial results a second,
//! row-wise pass combines.
//!
//! Accumulators: integer sum/prod wrap in u32; float sum/prod/mean accumulate in f64 (f64
//! input additionally with Neumaier compensation per thread), so the result is at least as
//! accurate as the pairwise sum the contract asks for; integer mean sums exactly in 64-bit
//! integers; argmin/argmax carry (value, index), the first NaN and then the first index win.
//! Half inputs (f16, bf16) are widened to f32 (exactly) as they are read: min/max/arg compare
//! them as floats; sums accumulate in f64 like f32's, and the result is the f32 result
//! rounded to the half type, as the CPU backend's f32 accumulation gives it.

use std::fmt::Write;

use polycompute_core::{DType, ReduceKind};

use super::{ctype, Kernel, KernelKey};

/// Neumaier-compensated accumulation (`pc_kahan`, `pc_kahan_done`), for f64 sums.
const KAHAN: &str = include_str!("cuda/kahan.cuh");

/// `pc_block_reduce`: one accumulator per thread to the block's total.
const BLOCK_REDUCE: &str = include_str!("cuda/block_reduce.cuh");

/// Where a reduction kernel reads from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    /// The input array's elements.
    Elements,
    /// Partial accumulators of an earlier pass.
    Partials,
}

/// Where a reduction kernel writes to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    /// The final values, in the output dtype.
    Final,
    /// Partial accumulators for a later pass.
    Partials,
}

/// How the reduction is laid out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReducePlan {
    /// `inner == 1`: `rows` rows of `r` contiguous elements, each split into `segs`
    /// segments of `seg_len` (then a second row pass over `segs` partials per row).
    Rows {
        /// Rows (outputs).
        rows: usize,
        /// Reduced length.
        r: usize,
        /// Segments per row.
        segs: usize,
        /// Elements per segment.
        seg_len: usize,
    },
    /// `inner > 1`: one thread per (output, segment).
    Cols {
        /// Product of the axes before the reduced one.
        outer: usize,
        /// Reduced length.
        r: usize,
        /// Product of the axes after it.
        inner: usize,
        /// Segments of the reduced axis.
        segs: usize,
        /// Elements per segment.
        seg_len: usize,
    },
}

/// Threads per block of the row kernel for segments of `seg_len` elements.
pub fn row_block(seg_len: usize) -> u32 {
    (seg_len.clamp(1, 256).div_ceil(32) * 32) as u32
}

/// Plans a reduction of `dims` along `axis` (`None`: all elements) on a device with
/// `sms` multiprocessors.
pub fn plan(dims: &[usize], axis: Option<usize>, sms: usize) -> ReducePlan {
    let (outer, r, inner) = match axis {
        None => (1, dims.iter().product(), 1),
        Some(a) => (dims[..a].iter().product(), dims[a], dims[a + 1..].iter().product()),
    };
    let sms = sms.max(1);
    if inner == 1 {
        let wanted_blocks = sms * 8;
        let segs = if outer >= wanted_blocks || r <= 4096 {
            1
        } else {
            wanted_blocks.div_ceil(outer).min(r.div_ceil(4096)).max(1)
        };
        ReducePlan::Rows { rows: outer, r, segs, seg_len: r.div_ceil(segs).max(1) }
    } else {
        let outputs = outer * inner;
        let wanted_threads = sms * 2048;
        let segs = if outputs >= wanted_threads || r <= 64 {
            1
        } else {
            wanted_threads.div_ceil(outputs).min(r.div_ceil(64)).max(1)
        };
        ReducePlan::Cols { outer, r, inner, segs, seg_len: r.div_ceil(segs).max(1) }
    }
}

/// Bytes of one partial accumulator.
pub fn acc_bytes(kind: ReduceKind, dtype: DType) -> usize {
    match kind {
        ReduceKind::ArgMin | ReduceKind::ArgMax => 2 * dtype.size_bytes().max(4),
        ReduceKind::Min | ReduceKind::Max => dtype.size_bytes().max(4),
        ReduceKind::Sum | ReduceKind::Prod if dtype.is_int() => 4,
        _ => 8,
    }
}

/// Every kernel a reduction of `kind` over `dtype` may launch.
#[cfg(test)]
pub fn all_kernels(kind: ReduceKind, dtype: DType) -> Vec<Kernel> {
    vec![
        rows_kernel(kind, dtype, Input::Elements, Output::Final),
        rows_kernel(kind, dtype, Input::Elements, Output::Partials),
        rows_kernel(kind, dtype, Input::Partials, Output::Final),
        cols_kernel(kind, dtype, Output::Final),
        cols_kernel(kind, dtype, Output::Partials),
    ]
}

/// True when per-thread accumulation is compensated (f64 sums).
fn compensated(kind: ReduceKind, dtype: DType) -> bool {
    dtype == DType::F64 && matches!(kind, ReduceKind::Sum | ReduceKind::Mean)
}

/// The accumulator definitions: `Acc`, identity, element load, combine, shuffle, final value.
fn helpers(kind: ReduceKind, dtype: DType) -> String {
    // Half values are reduced as their exact f32 widening and rounded once at the end.
    let half = matches!(dtype, DType::F16 | DType::BF16);
    let t = if half { "float" } else { ctype(dtype) };
    let to_out = format!("pc_to_{}", kind.output_dtype(dtype).name());
    let o = ctype(kind.output_dtype(dtype));
    let mut s = String::new();
    let is_arg = matches!(kind, ReduceKind::ArgMin | ReduceKind::ArgMax);
    let acc = match kind {
        _ if is_arg => "struct Acc",
        ReduceKind::Min | ReduceKind::Max => t,
        ReduceKind::Sum | ReduceKind::Prod if dtype.is_int() => "u32",
        ReduceKind::Mean if dtype == DType::I32 => "i64",
        ReduceKind::Mean if dtype == DType::U32 => "u64",
        _ => "double",
    };
    if is_arg {
        let _ = writeln!(s, "struct Acc {{ {t} v; u32 i; }};");
    } else {
        let _ = writeln!(s, "typedef {acc} Acc;");
    }
    // Identity.
    let identity = match kind {
        _ if is_arg => format!("Acc a; a.v = ({t})0; a.i = 0xffffffffu; return a;"),
        ReduceKind::Sum | ReduceKind::Mean => "return (Acc)0;".to_string(),
        ReduceKind::Prod => "return (Acc)1;".to_string(),
        ReduceKind::Min => format!("return {};", extreme(dtype, true)),
        ReduceKind::Max => format!("return {};", extreme(dtype, false)),
        _ => "return (Acc)0;".to_string(),
    };
    let _ = writeln!(s, "PC_FN Acc pc_identity() {{ {identity} }}");
    // Element to accumulator.
    let x = if half { "pc_to_f32(x)" } else { "x" };
    let elem = if is_arg { format!("Acc a; a.v = {x}; a.i = k; return a;") } else { format!("return (Acc){x};") };
    let _ = writeln!(s, "PC_FN Acc pc_elem({} x, u32 k) {{ (void)k; {elem} }}", ctype(dtype));
    // Combine.
    let combine = match kind {
        ReduceKind::Sum | ReduceKind::Mean => "return a + b;".to_string(),
        ReduceKind::Prod => "return a * b;".to_string(),
        ReduceKind::Min => "return pc_min(a, b);".to_string(),
        ReduceKind::Max => "return pc_max(a, b);".to_string(),
        _ => {
            let better = if kind == ReduceKind::ArgMin { "<" } else { ">" };
            let nan = if dtype.is_float() {
                "const bool an = a.v != a.v, bn = b.v != b.v;\n  if (an || bn) return (an && bn) ? (a.i < b.i ? a : b) : (an ? a : b);\n  "
            } else {
                ""
            };
            format!(
                "if (b.i == 0xffffffffu) return a;\n  if (a.i == 0xffffffffu) return b;\n  {nan}\
                 if (a.v {better} b.v) return a;\n  if (b.v {better} a.v) return b;\n  return a.i < b.i ? a : b;"
            )
        }
    };
    let _ = writeln!(s, "PC_FN Acc pc_combine(Acc a, Acc b) {{\n  {combine}\n}}");
    // Warp shuffle.
    let shfl = if is_arg {
        "Acc r; r.v = __shfl_down_sync(0xffffffffu, a.v, d); r.i = __shfl_down_sync(0xffffffffu, a.i, d); return r;"
    } else {
        "return __shfl_down_sync(0xffffffffu, a, d);"
    };
    let _ = writeln!(s, "PC_FN Acc pc_shfl(Acc a, int d) {{ {shfl} }}");
    // Final value.
    let fin = match kind {
        _ if is_arg => "return a.i == 0xffffffffu ? 0u : a.i;".to_string(),
        ReduceKind::Min | ReduceKind::Max if half => format!("return {to_out}(a);"),
        ReduceKind::Min | ReduceKind::Max => "return a;".to_string(),
        ReduceKind::Mean => match dtype {
            DType::F16 | DType::BF16 => format!("return {to_out}(__double2float_rn(a) / __uint2float_rn(count));"),
            DType::F32 => "return __double2float_rn(a / (double)count);".to_string(),
            DType::F64 => "return a / (double)count;".to_string(),
            DType::I32 => "return __ll2double_rn(a) / (double)count;".to_string(),
            DType::U32 => "return __ull2double_rn(a) / (double)count;".to_string(),
            // Never reached (`device::not_yet`).
            DType::I64 | DType::U8 | DType::Bool => "return __ll2double_rn(a) / (double)count;".to_string(),
        },
        _ => match dtype {
            DType::F16 | DType::BF16 => format!("return {to_out}(__double2float_rn(a));"),
            DType::F32 => "return __double2float_rn(a);".to_string(),
            DType::F64 => "return a;".to_string(),
            _ => format!("return ({o})a;"),
        },
    };
    let _ = writeln!(s, "PC_FN {o} pc_final(Acc a, u32 count) {{ (void)count; {fin} }}");
    // Neumaier step for compensated sums (s, c) += x; infinities bypass the compensation.
    if compensated(kind, dtype) {
        s.push_str(KAHAN);
    }
    s
}

/// The identity of min (`+inf`, the type's max) or max (`-inf`, the type's min), in the
/// accumulator's type.
fn extreme(dtype: DType, high: bool) -> &'static str {
    match (dtype, high) {
        // Half values are reduced as floats.
        (DType::F32 | DType::F16 | DType::BF16, true) => "__int_as_float(0x7f800000)",
        (DType::F32 | DType::F16 | DType::BF16, false) => "__int_as_float((i32)0xff800000u)",
        (DType::F64, true) => "__longlong_as_double(0x7ff0000000000000ll)",
        (DType::F64, false) => "__longlong_as_double((i64)0xfff0000000000000ull)",
        (DType::I32, true) => "2147483647",
        (DType::I32, false) => "((i32)0x80000000u)",
        (DType::U32, true) => "0xffffffffu",
        (DType::U32, false) => "0u",
        // Never reached (`device::not_yet`).
        (DType::I64, true) => "0x7fffffffffffffffll",
        (DType::I64, false) => "((i64)0x8000000000000000ull)",
        (DType::U8 | DType::Bool, true) => "255u",
        (DType::U8 | DType::Bool, false) => "0u",
    }
}

/// The per-thread accumulation over `k` in `[from, to)` with `step`, reading `load` (an
/// expression in which `@k` stands for the position). Four independent accumulators, so four loads are in flight per thread;
/// they are combined in a fixed order, so results are deterministic.
fn accumulate(kind: ReduceKind, dtype: DType, input: Input, from: &str, to: &str, step: &str, load: &str) -> String {
    let value = |k: &str| {
        let l = load.replace("@k", k);
        match input {
            Input::Elements => format!("pc_elem({l}, (u32)({k}))"),
            Input::Partials => l,
        }
    };
    let mut s = format!("    u64 k = {from};\n    const u64 st = {step};\n");
    if compensated(kind, dtype) && input == Input::Elements {
        s.push_str("    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;\n");
        let _ = write!(
            s,
            "    for (; k + 3 * st < {to}; k += 4 * st) {{\n      \
             const double x0 = {}, x1 = {}, x2 = {}, x3 = {};\n      \
             pc_kahan(s0, c0, x0); pc_kahan(s1, c1, x1); pc_kahan(s2, c2, x2); pc_kahan(s3, c3, x3);\n    }}\n    \
             for (; k < {to}; k += st) pc_kahan(s0, c0, {});\n    \
             pc_kahan(s0, c0, pc_kahan_done(s1, c1)); pc_kahan(s2, c2, pc_kahan_done(s3, c3));\n    \
             pc_kahan(s0, c0, pc_kahan_done(s2, c2));\n    \
             Acc acc = pc_kahan_done(s0, c0);\n",
            value("k"),
            value("k + st"),
            value("k + 2 * st"),
            value("k + 3 * st"),
            value("k"),
        );
    } else {
        let _ = write!(
            s,
            "    Acc a0 = pc_identity(), a1 = pc_identity(), a2 = pc_identity(), a3 = pc_identity();\n    \
             for (; k + 3 * st < {to}; k += 4 * st) {{\n      \
             const Acc x0 = {}, x1 = {}, x2 = {}, x3 = {};\n      \
             a0 = pc_combine(a0, x0); a1 = pc_combine(a1, x1); a2 = pc_combine(a2, x2); a3 = pc_combine(a3, x3);\n    }}\n    \
             for (; k < {to}; k += st) a0 = pc_combine(a0, {});\n    \
             Acc acc = pc_combine(pc_combine(a0, a1), pc_combine(a2, a3));\n",
            value("k"),
            value("k + st"),
            value("k + 2 * st"),
            value("k + 3 * st"),
            value("k"),
        );
    }
    s
}

/// The row kernel: `(out, in, u32 rows, u32 r, u32 segs, u32 seg_len, u32 count)`; one block per
/// (row, segment), launched with [`row_block`] threads.
pub fn rows_kernel(kind: ReduceKind, dtype: DType, input: Input, output: Output) -> Kernel {
    let in_t = match input {
        Input::Elements => ctype(dtype),
        Input::Partials => "Acc",
    };
    let out_t = match output {
        Output::Final => ctype(kind.output_dtype(dtype)),
        Output::Partials => "Acc",
    };
    let write = match output {
        Output::Final => "out[b] = pc_final(acc, count);",
        Output::Partials => "out[b] = acc;",
    };
    let mut s = helpers(kind, dtype);
    s.push_str(BLOCK_REDUCE);
    let _ = write!(
        s,
        "extern \"C\" __global__ void pc_reduce({out_t}* __restrict__ out, const {in_t}* __restrict__ in, u32 rows, u32 r, \
         u32 segs, u32 seg_len, u32 count) {{\n  \
         for (u64 b = blockIdx.x; b < (u64)rows * segs; b += gridDim.x) {{\n    \
         const u64 row = b / segs;\n    const u64 start = (u64)(u32)(b % segs) * seg_len;\n    \
         const u64 end = start + seg_len < (u64)r ? start + seg_len : (u64)r;\n    \
         const {in_t}* src = in + row * r;\n{}    acc = pc_block_reduce(acc);\n    \
         if (threadIdx.x == 0u) {write}\n  }}\n}}\n",
        accumulate(kind, dtype, input, "start + threadIdx.x", "end", "(u64)blockDim.x", "src[@k]")
    );
    Kernel::new(KernelKey::Reduce { kind, dtype, cols: false, input, output }, "pc_reduce", &s)
}

/// The column kernel: `(out, in, u32 outer, u32 r, u32 inner, u32 segs, u32 seg_len, u32 count)`;
/// one thread per (output, segment). Partials are laid out `[outer * inner, segs]`.
pub fn cols_kernel(kind: ReduceKind, dtype: DType, output: Output) -> Kernel {
    let (out_t, write) = match output {
        Output::Final => (ctype(kind.output_dtype(dtype)), "out[o * inner + j] = pc_final(acc, count);"),
        Output::Partials => ("Acc", "out[(o * inner + j) * segs + sg] = acc;"),
    };
    let t = ctype(dtype);
    let mut s = helpers(kind, dtype);
    let _ = write!(
        s,
        "extern \"C\" __global__ void pc_reduce({out_t}* __restrict__ out, const {t}* __restrict__ in, u32 outer, u32 r, \
         u32 inner, u32 segs, u32 seg_len, u32 count) {{\n  \
         const u64 total = (u64)outer * inner * segs;\n  \
         for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (u64)blockDim.x * gridDim.x) {{\n    \
         const u64 j = t % inner, t2 = t / inner, sg = t2 % segs, o = t2 / segs;\n    \
         const u64 start = sg * seg_len;\n    \
         const u64 end = start + seg_len < (u64)r ? start + seg_len : (u64)r;\n\
         {}    {write}\n  }}\n}}\n",
        accumulate(kind, dtype, Input::Elements, "start", "end", "1", "in[(o * r + @k) * inner + j]")
    );
    Kernel::new(KernelKey::Reduce { kind, dtype, cols: true, input: Input::Elements, output }, "pc_reduce", &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_reductions_split_into_segments() {
        let p = plan(&[1 << 24], None, 100);
        let ReducePlan::Rows { rows: 1, r, segs, seg_len } = p else { panic!("{p:?}") };
        assert_eq!(r, 1 << 24);
        assert!(segs > 1 && segs * seg_len >= r && (segs - 1) * seg_len < r);
        assert_eq!(plan(&[100], None, 100), ReducePlan::Rows { rows: 1, r: 100, segs: 1, seg_len: 100 });
    }

    #[test]
    fn inner_axes_reduce_by_columns() {
        let p = plan(&[4, 1000, 3], Some(1), 1);
        assert!(matches!(p, ReducePlan::Cols { outer: 4, r: 1000, inner: 3, .. }), "{p:?}");
        assert_eq!(plan(&[4, 5], Some(1), 1), ReducePlan::Rows { rows: 4, r: 5, segs: 1, seg_len: 5 });
        // An empty reduced axis still yields one (identity) output per row.
        assert_eq!(plan(&[3, 0], Some(1), 1), ReducePlan::Rows { rows: 3, r: 0, segs: 1, seg_len: 1 });
    }
}
