//! The skinny matmul: for a narrow B (`N` at most [`MAX_N`]), one invocation computes a
//! whole row of C, `N` accumulators in registers, walking its row of A once. The tiled
//! kernel (`matmul`) would spend a 128 x 128 block of C, and a barrier per 8 steps of K,
//! on an output 8 columns wide: `[200000, 16] @ [16, 8]` used 1/16 of its threads.
//!
//! Every invocation of a workgroup reads the same element of B at each step (a broadcast,
//! served from cache), and its own row of A in order. Like the tiled kernel, one launch
//! covers a range `[kbeg, kend)` of the inner dimension (at most `LOOP_BUDGET` steps) and a
//! later launch resumes from the C its predecessor wrote, so the sum runs in the order of
//! one loop over K.

use std::fmt::Write;

use polycompute_core::DType;

use super::{wgsl_type, Builder, KernelSource};

/// The widest B (columns of C) taken by the skinny kernel.
pub(crate) const MAX_N: usize = 16;

/// Invocations (rows of C) per workgroup.
pub(crate) const ROWS_PER_GROUP: u32 = 64;

/// Uniform words: rows of C over the whole batch, M, K, the launch's first and end depth
/// (`kbeg`, `kend`), and 1 when it continues from C's partial sums.
pub(crate) const PARAMS: usize = 6;

/// The kernel for `dtype` (f32 or f64) and exactly `n` columns (1..=[`MAX_N`]); `batched`
/// when A and B are stacks of matrices. Without a batch, B's index depends on the loop
/// alone: the driver sees one address for the whole workgroup (llvmpipe then loads it
/// once instead of gathering it per invocation).
pub(crate) fn kernel(dtype: DType, n: u32, batched: bool) -> KernelSource {
    let t = wgsl_type(dtype);
    let mut b = Builder::new(PARAMS);
    b.storage("a", t, false);
    b.storage("b", t, false);
    b.storage("c", t, true);
    let mut body = format!(
        "    let rows = prm(0u);\n    let m = prm(1u);\n    let k = prm(2u);\n    let kbeg = prm(3u);\n    \
         let kend = prm(4u);\n    let resume = prm(5u) == 1u;\n    let row = g * {ROWS_PER_GROUP}u + lid;\n    \
         let live = row < rows;\n    let rr = min(row, rows - 1u);\n    let a_base = rr * k;\n    \
         let c_base = rr * {n}u;\n"
    );
    let b_base = if batched { format!("(rr / m) * k * {n}u") } else { "0u".to_string() };
    let _ = writeln!(body, "    let b_base = {b_base};");
    for j in 0..n {
        let _ = writeln!(body, "    var acc{j} = {t}(0);\n    if (resume) {{ acc{j} = c[c_base + {j}u]; }}");
    }
    let _ = writeln!(
        body,
        "    for (var p = kbeg; p < kend; p = p + 1u) {{\n        let av = a[a_base + p];\n        let bp = b_base + p * {n}u;"
    );
    for j in 0..n {
        let _ = writeln!(body, "        acc{j} = acc{j} + av * b[bp + {j}u];");
    }
    body.push_str("    }\n    if (live) {\n");
    for j in 0..n {
        let _ = writeln!(body, "        c[c_base + {j}u] = acc{j};");
    }
    body.push_str("    }\n");
    b.finish((ROWS_PER_GROUP, 1), &body)
}
