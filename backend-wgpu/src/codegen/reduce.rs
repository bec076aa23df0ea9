//! Reduction kernels: a workgroup tree in shared memory, one pass per factor of `ITEMS * TK`
//! along the reduced axis. The input is viewed as `[outer, r, inner]`; a workgroup of
//! `TJ x TK` threads covers `TJ` neighbouring `inner` positions (so reads are coalesced along
//! the contiguous axis) and `ITEMS * TK` positions of `r`, and writes one partial per
//! position: the next pass reduces an `[outer, ceil(r / (ITEMS TK)), inner]` array, until
//! `r` is 1. Every
//! combination is pairwise, so float sums have the tree's log2(n) error bound. The input is
//! read through strides, so short rows (`inner` = 1, small `r`) can be laid across the
//! workgroup's `TJ` threads instead of leaving most of a 256-thread tree idle.

use std::collections::BTreeSet;
use std::fmt::Write;

use polycompute_core::{DType, ReduceKind};

use super::semantics::library;
use super::{storage_type, wgsl_type, Builder, KernelSource};

/// Threads per reduction workgroup.
pub(crate) const THREADS: u32 = 256;
/// Elements each thread loads (strided by the workgroup's r extent, so loads coalesce) and
/// combines pairwise before the workgroup tree: fewer barriers and partials per element.
pub(crate) const ITEMS: u32 = 8;

/// What one reduction pass is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Pass {
    /// The reduction.
    pub kind: ReduceKind,
    /// The dtype of the op's input.
    pub input: DType,
    /// The dtype partial results are kept in (f64 for the mean of integers).
    pub acc: DType,
    /// Whether this pass reads the op's input (else the previous pass's partials).
    pub first: bool,
    /// Whether this pass writes the op's output.
    pub last: bool,
    /// Threads along `inner` (a power of two up to 16); `THREADS / tj` along `r`.
    pub tj: u32,
}

impl Pass {
    fn is_arg(&self) -> bool {
        matches!(self.kind, ReduceKind::ArgMin | ReduceKind::ArgMax)
    }

    /// Whether out-of-range lanes read a clamped (duplicate) element instead of an identity:
    /// min, max and the arg reductions have no identity in every dtype, and a duplicate
    /// changes neither a minimum nor (ties go to the lower index) its position.
    fn clamps(&self) -> bool {
        !matches!(self.kind, ReduceKind::Sum | ReduceKind::Prod | ReduceKind::Mean)
    }
}

/// Uniform words: outer, r, inner, number of r blocks, number of inner blocks, total
/// workgroups, the op's reduced length (for the mean), and the input's element strides along
/// outer, r and inner.
pub(crate) const PARAMS: usize = 10;

/// The kernel of one pass.
pub(crate) fn kernel(p: &Pass) -> KernelSource {
    let tk = THREADS / p.tj;
    let a = wgsl_type(p.acc);
    let src_t = if p.first { storage_type(p.input) } else { a };
    let mut b = Builder::new(PARAMS);
    b.storage("in_v", src_t, false);
    if p.is_arg() && !p.first {
        b.storage("in_i", "u32", false);
    }
    if !(p.is_arg() && p.last) {
        b.storage("out_v", a, true);
    }
    if p.is_arg() {
        b.storage("out_i", "u32", true);
    }
    b.code(&library(&BTreeSet::from([p.input, p.acc])));
    let half_input = p.first && p.input.is_half();
    if half_input {
        b.code(&super::half::load_fn("ld_in", "in_v", p.input));
    }
    let _ = writeln!(
        b.source_mut(),
        "var<workgroup> sv: array<{a}, {THREADS}>;{}",
        if p.is_arg() { format!("\nvar<workgroup> si: array<u32, {THREADS}>;") } else { String::new() }
    );
    b.code(&combine_fn(p));

    let mut body = String::new();
    let _ = write!(
        body,
        "    let r = prm(1u);\n    let inner = prm(2u);\n    let nkb = prm(3u);\n    let njb = prm(4u);\n    \
         let total = prm(5u);\n    let live = g < total;\n    let gg = min(g, total - 1u);\n    \
         let jb = gg % njb;\n    let t = gg / njb;\n    let kb = t % nkb;\n    let o = t / nkb;\n    \
         let j = jb * {tj}u + lx;\n    let jj = min(j, inner - 1u);\n",
        tj = p.tj
    );
    let load = |lane: u32| -> String {
        let k = format!("(kb * {}u + ly + {}u)", ITEMS * tk, lane * tk);
        let kc = format!("min({k}, r - 1u)");
        let idx = format!("(o * prm(7u) + {kc} * prm(8u) + jj * prm(9u))");
        let raw = if half_input {
            format!("ld_in({idx})")
        } else if p.first && p.input != p.acc {
            format!("{a}(in_v[{idx}])")
        } else {
            format!("in_v[{idx}]")
        };
        let mut s = String::new();
        if p.clamps() {
            let _ = writeln!(s, "    let v{lane} = {raw};");
        } else {
            let ident = if p.kind == ReduceKind::Prod { "1" } else { "0" };
            let _ = writeln!(s, "    let v{lane} = select({a}({ident}), {raw}, {k} < r);");
        }
        if p.is_arg() {
            let i = if p.first { kc } else { format!("in_i[{idx}]") };
            let _ = writeln!(s, "    let i{lane} = {i};");
        }
        s
    };
    for lane in 0..ITEMS {
        body.push_str(&load(lane));
    }
    // The thread's items combine pairwise in registers, then the workgroup's tree follows.
    let mut names: Vec<String> = (0..ITEMS).map(|l| l.to_string()).collect();
    let mut fresh = 0;
    while names.len() > 1 {
        let mut next = Vec::new();
        for pair in names.chunks(2) {
            let (x, y) = (&pair[0], &pair[1]);
            let c = format!("c{fresh}");
            fresh += 1;
            if p.is_arg() {
                let _ = writeln!(
                    body,
                    "    let t{c} = take_b(v{x}, i{x}, v{y}, i{y});\n    let v{c} = select(v{x}, v{y}, t{c});\n    \
                     let i{c} = select(i{x}, i{y}, t{c});"
                );
            } else {
                let _ = writeln!(body, "    let v{c} = comb(v{x}, v{y});");
            }
            next.push(c);
        }
        names = next;
    }
    let _ = writeln!(body, "    sv[lid] = v{};", names[0]);
    if p.is_arg() {
        let _ = writeln!(body, "    si[lid] = i{};", names[0]);
    }
    body.push_str("    workgroupBarrier();\n");
    // The tree, unrolled: barriers stay in uniform control flow.
    let mut st = tk / 2;
    while st >= 1 {
        let other = format!("lid + {}u", st * p.tj);
        if p.is_arg() {
            let _ = writeln!(
                body,
                "    if (ly < {st}u) {{\n        let tb = take_b(sv[lid], si[lid], sv[{other}], si[{other}]);\n        \
                 if (tb) {{ sv[lid] = sv[{other}]; si[lid] = si[{other}]; }}\n    }}\n    workgroupBarrier();"
            );
        } else {
            let _ = writeln!(
                body,
                "    if (ly < {st}u) {{ sv[lid] = comb(sv[lid], sv[{other}]); }}\n    workgroupBarrier();"
            );
        }
        st /= 2;
    }
    let dst = "(o * nkb + kb) * inner + j";
    let value = if p.last && p.kind == ReduceKind::Mean { format!("sv[lx] / {a}(prm(6u))") } else { "sv[lx]".into() };
    let _ = writeln!(body, "    if (live && ly == 0u && j < inner) {{");
    if !(p.is_arg() && p.last) {
        let _ = writeln!(body, "        out_v[{dst}] = {value};");
    }
    if p.is_arg() {
        let _ = writeln!(body, "        out_i[{dst}] = si[lx];");
    }
    body.push_str("    }\n");
    b.finish((p.tj, tk), &body)
}

/// `comb(a, b)` for the value reductions, `take_b(va, ia, vb, ib)` for the arg ones: whether
/// (vb, ib) wins: the first NaN, else the extreme value, ties to the lower index.
fn combine_fn(p: &Pass) -> String {
    let a = wgsl_type(p.acc);
    let float = p.acc.is_float();
    match p.kind {
        ReduceKind::Sum | ReduceKind::Mean => format!("fn comb(x: {a}, y: {a}) -> {a} {{ return x + y; }}\n"),
        ReduceKind::Prod => format!("fn comb(x: {a}, y: {a}) -> {a} {{ return x * y; }}\n"),
        ReduceKind::Min | ReduceKind::Max => {
            let f = if p.kind == ReduceKind::Min { "min" } else { "max" };
            let call = if float { format!("{f}_{a}(x, y)") } else { format!("{f}(x, y)") };
            format!("fn comb(x: {a}, y: {a}) -> {a} {{ return {call}; }}\n")
        }
        ReduceKind::ArgMin | ReduceKind::ArgMax => {
            let better = if p.kind == ReduceKind::ArgMin { "vb < va" } else { "vb > va" };
            let worse = if p.kind == ReduceKind::ArgMin { "va < vb" } else { "va > vb" };
            let nan = if float {
                format!(
                    "    let na = isnan_{a}(va);\n    let nb = isnan_{a}(vb);\n    \
                     if (na || nb) {{ return select(nb, ib < ia, na && nb); }}\n"
                )
            } else {
                String::new()
            };
            format!(
                "fn take_b(va: {a}, ia: u32, vb: {a}, ib: u32) -> bool {{\n{nan}    \
                 if ({better}) {{ return true; }}\n    if ({worse}) {{ return false; }}\n    return ib < ia;\n}}\n"
            )
        }
    }
}
