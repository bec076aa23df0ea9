//! The tiled transpose: a 32x32 tile goes through workgroup memory, read along the input's
//! contiguous axis and written along the output's, so both sides are coalesced. Other axes
//! are batch dimensions, one tile grid each. (A permutation that keeps the last axis in place
//! needs no tile: it runs as a strided map.)

use std::fmt::Write;

use polycompute_core::DType;

use super::{wgsl_type, Builder, KernelSource};

/// The tile edge.
pub(crate) const TILE: u32 = 32;
/// Rows of the tile each thread row handles (`TILE / 8` threads along y).
const ROWS: u32 = 8;

/// Uniform words for a transpose of `ndim` (coalesced) axes: total workgroups, tiles along the
/// output's last axis, tiles along axis `q`, then the output dims, the input stride of each
/// output axis, and the output strides.
pub(crate) fn param_count(ndim: usize) -> usize {
    3 + 3 * ndim
}

/// The kernel for `ndim` axes where output axis `q` is the input's contiguous axis.
pub(crate) fn transpose(dtype: DType, ndim: usize, q: usize) -> KernelSource {
    let t = wgsl_type(dtype);
    let l = ndim - 1;
    let mut b = Builder::new(param_count(ndim));
    b.storage("src", t, false);
    b.storage("dst", t, true);
    let _ = writeln!(b.source_mut(), "var<workgroup> tile: array<{t}, {}>;", TILE * (TILE + 1));
    let dim = |i: usize| format!("prm({}u)", 3 + i);
    let istr = |i: usize| format!("prm({}u)", 3 + ndim + i);
    let ostr = |i: usize| format!("prm({}u)", 3 + 2 * ndim + i);
    let mut body = format!(
        "    let total = prm(0u);\n    let tiles_l = prm(1u);\n    let tiles_q = prm(2u);\n    \
         let live = g < total;\n    let gg = min(g, total - 1u);\n    let tl = gg % tiles_l;\n    \
         let rest = gg / tiles_l;\n    let tq = rest % tiles_q;\n    var bi = rest / tiles_q;\n    \
         var in_base = 0u;\n    var out_base = 0u;\n    let n_l = {};\n    let n_q = {};\n",
        dim(l),
        dim(q)
    );
    for i in (0..ndim).rev().filter(|&i| i != q && i != l) {
        let _ = writeln!(
            body,
            "    {{\n        let c = bi % {d};\n        bi = bi / {d};\n        \
             in_base = in_base + c * {is};\n        out_base = out_base + c * {os};\n    }}",
            d = dim(i),
            is = istr(i),
            os = ostr(i)
        );
    }
    let _ = writeln!(body, "    let in_l = {};\n    let out_q = {};", istr(l), ostr(q));
    for r in 0..TILE / ROWS {
        let _ = writeln!(
            body,
            "    {{\n        let cq = tq * {TILE}u + lx;\n        let cl = tl * {TILE}u + ly + {o}u;\n        \
             if (live && cq < n_q && cl < n_l) {{ tile[(ly + {o}u) * {s}u + lx] = src[in_base + cq + cl * in_l]; }}\n    }}",
            o = r * ROWS,
            s = TILE + 1
        );
    }
    body.push_str("    workgroupBarrier();\n");
    for r in 0..TILE / ROWS {
        let _ = writeln!(
            body,
            "    {{\n        let cl = tl * {TILE}u + lx;\n        let cq = tq * {TILE}u + ly + {o}u;\n        \
             if (live && cq < n_q && cl < n_l) {{ dst[out_base + cq * out_q + cl] = tile[lx * {s}u + ly + {o}u]; }}\n    }}",
            o = r * ROWS,
            s = TILE + 1
        );
    }
    b.finish((TILE, ROWS), &body)
}
