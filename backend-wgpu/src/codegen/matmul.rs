//! The tiled matmul: each workgroup of 16x16 threads computes a `BM x BN` block of C,
//! staging `BK`-deep slices of A and B in workgroup memory (loads coalesced along the
//! contiguous axis of each), and each thread accumulates a `TM x TN` register tile whose
//! rows and columns are 16 apart, so C is written coalesced too.
//!
//! One launch covers a range `[kbeg, kend)` of the inner dimension (`ops::matmul` splits
//! long ones into launches of at most [`crate::device::LOOP_BUDGET`] steps); a launch
//! after the first starts each accumulator from the C its predecessor wrote, so the sum
//! runs in the same order, and gives the same bits, as one loop over the whole of K. The
//! `BK` steps inside a slice are unrolled: the one loop left is the one over slices.

use std::fmt::Write;

use polycompute_core::{DType, MatmulTranspose};

use super::{wgsl_type, Builder, KernelSource};

/// Block shape for a dtype: (BM = BN, BK, TM = TN). f32 computes 8x8 per thread (four
/// multiply-adds per workgroup-memory load); f64 a smaller block, so workgroup memory and
/// registers stay within what every f64-capable adapter offers.
pub(crate) fn blocking(dtype: DType) -> (u32, u32, u32) {
    if dtype == DType::F64 {
        (32, 16, 2)
    } else {
        (128, 8, 8)
    }
}

/// Uniform words: M, N, K, tiles along N, tiles along M, total workgroups, the launch's
/// first and end depth (`kbeg`, `kend`), and 1 when it continues from C's partial sums.
pub(crate) const PARAMS: usize = 9;

/// The kernel for `dtype` (f32 or f64).
pub(crate) fn kernel(dtype: DType) -> KernelSource {
    kernel_for(dtype, MatmulTranspose::NONE)
}

/// The kernel for `dtype` whose A (`transpose.lhs`) arrives as `[k, m]` row-major, or whose
/// B (`transpose.rhs`) as `[n, k]`: the same parameters, bindings and dispatch as [`kernel`].
/// Only the global loads differ: each is mapped so that neighbouring invocations read
/// neighbouring addresses of the buffer as stored; the workgroup tiles are the same.
pub(crate) fn kernel_for(dtype: DType, transpose: MatmulTranspose) -> KernelSource {
    let t = wgsl_type(dtype);
    // Per operand: the mapping of invocation slot `idx` to (depth, row or column), and the read.
    let (a_map, a_at) = if transpose.lhs {
        (format!("let mm = idx % {bm}u;\n            let kk = idx / {bm}u;", bm = blocking(dtype).0), "gk * m + gr")
    } else {
        (format!("let kk = idx % {bk}u;\n            let mm = idx / {bk}u;", bk = blocking(dtype).1), "gr * k + gk")
    };
    let (b_map, b_at) = if transpose.rhs {
        (format!("let kk = idx % {bk}u;\n            let nn = idx / {bk}u;", bk = blocking(dtype).1), "gc * k + gk")
    } else {
        (format!("let nn = idx % {bn}u;\n            let kk = idx / {bn}u;", bn = blocking(dtype).0), "gk * n + gc")
    };
    let (bm, bk, tm) = blocking(dtype);
    let bn = bm;
    let tn = tm;
    let mut b = Builder::new(PARAMS);
    b.storage("a", t, false);
    b.storage("b", t, false);
    b.storage("c", t, true);
    let _ = writeln!(
        b.source_mut(),
        "var<workgroup> sa: array<{t}, {}>;\nvar<workgroup> sb: array<{t}, {}>;",
        bk * bm,
        bk * bn
    );
    let mut body = format!(
        "    let m = prm(0u);\n    let n = prm(1u);\n    let k = prm(2u);\n    let tiles_n = prm(3u);\n    \
         let tiles_m = prm(4u);\n    let total = prm(5u);\n    let live = g < total;\n    \
         let gg = min(g, total - 1u);\n    let tn = gg % tiles_n;\n    let rest = gg / tiles_n;\n    \
         let tm = rest % tiles_m;\n    let batch = rest / tiles_m;\n    let row0 = tm * {bm}u;\n    \
         let col0 = tn * {bn}u;\n    let a_base = batch * m * k;\n    let b_base = batch * k * n;\n    \
         let c_base = batch * m * n;\n    let zero = {t}(0);\n    let kbeg = prm(6u);\n    \
         let kend = prm(7u);\n    let resume = prm(8u) == 1u;\n"
    );
    for i in 0..tm {
        for j in 0..tn {
            let _ = writeln!(
                body,
                "    var acc{i}_{j} = zero;\n    {{\n        let r = row0 + ly + {ri}u;\n        \
                 let cc = col0 + lx + {cj}u;\n        \
                 if (resume && live && r < m && cc < n) {{ acc{i}_{j} = c[c_base + r * n + cc]; }}\n    }}",
                ri = i * 16,
                cj = j * 16
            );
        }
    }
    let _ = writeln!(body, "    for (var k0 = kbeg; k0 < kend; k0 = k0 + {bk}u) {{");
    for e in 0..(bm * bk / 256) {
        let _ = writeln!(
            body,
            "        {{\n            let idx = lid + {o}u;\n            {a_map}\n            \
             let gr = row0 + mm;\n            let gk = k0 + kk;\n            \
             var v = zero;\n            if (live && gr < m && gk < k) {{ v = a[a_base + {a_at}]; }}\n            \
             sa[kk * {bm}u + mm] = v;\n        }}",
            o = e * 256
        );
    }
    for e in 0..(bn * bk / 256) {
        let _ = writeln!(
            body,
            "        {{\n            let idx = lid + {o}u;\n            {b_map}\n            \
             let gc = col0 + nn;\n            let gk = k0 + kk;\n            \
             var v = zero;\n            if (live && gc < n && gk < k) {{ v = b[b_base + {b_at}]; }}\n            \
             sb[kk * {bn}u + nn] = v;\n        }}",
            o = e * 256
        );
    }
    body.push_str("        workgroupBarrier();\n");
    // The steps of a slice, unrolled: on llvmpipe every loop iteration counts against one
    // budget per invocation (see `LOOP_BUDGET`), so only the slice loop may iterate.
    for kk in 0..bk {
        body.push_str("        {\n");
        for i in 0..tm {
            let _ = writeln!(body, "            let a{i} = sa[ly + {}u];", kk * bm + i * 16);
        }
        for j in 0..tn {
            let _ = writeln!(body, "            let b{j} = sb[lx + {}u];", kk * bn + j * 16);
        }
        for i in 0..tm {
            for j in 0..tn {
                let _ = writeln!(body, "            acc{i}_{j} = acc{i}_{j} + a{i} * b{j};");
            }
        }
        body.push_str("        }\n");
    }
    body.push_str("        workgroupBarrier();\n    }\n");
    for i in 0..tm {
        for j in 0..tn {
            let _ = writeln!(
                body,
                "    {{\n        let r = row0 + ly + {ri}u;\n        let cc = col0 + lx + {cj}u;\n        \
                 if (live && r < m && cc < n) {{ c[c_base + r * n + cc] = acc{i}_{j}; }}\n    }}",
                ri = i * 16,
                cj = j * 16
            );
        }
    }
    b.finish((16, 16), &body)
}
