//! Reduction kernels: a workgroup tree, one pass per factor of `items * TK` along the
//! reduced axis. The input is viewed as `[outer, r, inner]`; a workgroup of `TJ x TK`
//! threads covers `TJ` neighbouring `inner` positions (so reads are coalesced along the
//! contiguous axis) and `items * TK` positions of `r`, and writes one partial per position:
//! the next pass reduces an `[outer, ceil(r / (items TK)), inner]` array, until `r` is 1.
//! Every combination is pairwise, so float sums have the tree's log2(n) error bound.
//!
//! Each thread first combines its `items` elements pairwise in registers (8, or 64 on long
//! axes: fewer workgroups, so fewer barriers per element). Where the device has subgroup
//! operations and the workgroup lies along `r` alone (`TJ` = 1), the workgroup's stage is a
//! butterfly of `subgroupShuffleXor` within each subgroup (pairwise, whatever the subgroup
//! size) and one unrolled pairwise tree over the subgroups' partials: one barrier in all,
//! where the fallback, a tree in workgroup memory, takes log2(256) + 1. On software adapters
//! (lavapipe) every barrier switches between all of a workgroup's SIMD batches, which is
//! what made the fallback slow there. Short rows are not reduced here but by `reduce_rows`.

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
/// `items` of a pass over a long axis (at least [`LONG_R`] elements): a pass over 2^24
/// elements runs 1,024 workgroups, not 8,192.
pub(crate) const LONG_ITEMS: u32 = 64;
/// The reduced length from which a pass takes [`LONG_ITEMS`] per thread.
pub(crate) const LONG_R: usize = (LONG_ITEMS * THREADS) as usize * 4;

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
    /// Elements each thread combines in registers ([`ITEMS`] or [`LONG_ITEMS`]).
    pub items: u32,
    /// 0 for the barrier tree; else the subgroup stage, with at most this many subgroups
    /// per workgroup (`THREADS` / the adapter's smallest subgroup size). Only with `tj` 1.
    pub subgroup_slots: u32,
}

impl Pass {
    pub(crate) fn is_arg(&self) -> bool {
        matches!(self.kind, ReduceKind::ArgMin | ReduceKind::ArgMax)
    }

    /// Whether out-of-range lanes read a clamped (duplicate) element instead of an identity:
    /// min, max and the arg reductions have no identity in every dtype, and a duplicate
    /// changes neither a minimum nor (ties go to the lower index) its position.
    pub(crate) fn clamps(&self) -> bool {
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
    let items = p.items;
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
        let k = format!("(kb * {}u + ly + {}u)", items * tk, lane * tk);
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
    for lane in 0..items {
        body.push_str(&load(lane));
    }
    // The thread's items combine pairwise in registers, then the workgroup's stage follows.
    let names: Vec<String> = (0..items).map(|l| l.to_string()).collect();
    let fin = pairwise(&mut body, names, p.is_arg(), "c");
    let dst = "(o * nkb + kb) * inner + j";
    let mean = |v: &str| {
        if p.last && p.kind == ReduceKind::Mean {
            format!("{v} / {a}(prm(6u))")
        } else {
            v.to_string()
        }
    };
    if p.subgroup_slots > 0 {
        debug_assert_eq!(p.tj, 1, "the subgroup stage assumes a workgroup along r alone");
        subgroup_stage(&mut body, p, &fin);
        let _ = writeln!(body, "    if (live) {{");
        if !(p.is_arg() && p.last) {
            let _ = writeln!(body, "        out_v[{dst}] = {};", mean("wv"));
        }
        if p.is_arg() {
            let _ = writeln!(body, "        out_i[{dst}] = wi;");
        }
        body.push_str("    }\n    }\n");
        // naga takes subgroup ids only in one-dimensional workgroups: (256, 1), with the
        // coordinates of (1, 256) shadowed in a block.
        let body = format!("    {{\n    let lx = 0u;\n    let ly = lid;\n{body}    }}\n");
        return b.finish_with((tk, 1), SUBGROUP_ARGS, &body);
    }
    let _ = writeln!(body, "    sv[lid] = v{fin};");
    if p.is_arg() {
        let _ = writeln!(body, "    si[lid] = i{fin};");
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
    let value = mean("sv[lx]");
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

/// The entry point's extra arguments of the subgroup stage.
const SUBGROUP_ARGS: &str = "@builtin(subgroup_size) sgsz: u32, @builtin(subgroup_invocation_id) sgi: u32, \
                             @builtin(subgroup_id) sgid: u32, @builtin(num_subgroups) nsg: u32";

/// Appends the pairwise combination of the register values `v{name}` (and `i{name}` for the
/// arg reductions) to `body`, naming the new values `{prefix}0`, `{prefix}1`, ...; returns
/// the final name. An odd name out is carried to the next level unchanged.
pub(crate) fn pairwise(body: &mut String, mut names: Vec<String>, arg: bool, prefix: &str) -> String {
    let mut fresh = 0;
    while names.len() > 1 {
        let mut next = Vec::new();
        for pair in names.chunks(2) {
            let [x, y] = pair else {
                next.push(pair[0].clone());
                continue;
            };
            let c = format!("{prefix}{fresh}");
            fresh += 1;
            if arg {
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
    names.swap_remove(0)
}

/// The subgroup stage: a butterfly over each subgroup (lane 0 ends with the pairwise
/// combination of its subgroup, whatever the size: levels past the size keep their value),
/// one barrier, then invocation 0 combines the `nsg` partials pairwise into `wv` (`wi`),
/// inside an `if (lid == 0u) {` block that the caller closes after writing the result.
/// Subgroups may hold any invocations: the partials are combined by value (and index, for
/// the arg reductions), never by position.
fn subgroup_stage(body: &mut String, p: &Pass, fin: &str) {
    let arg = p.is_arg();
    let _ = writeln!(body, "    var xv = v{fin};");
    if arg {
        let _ = writeln!(body, "    var xi = i{fin};");
    }
    let mut m = 1;
    while m < THREADS {
        let _ = writeln!(
            body,
            "    {{\n        let lane = {m}u & (sgsz - 1u);\n        let ov = subgroupShuffleXor(xv, lane);"
        );
        if arg {
            let _ = writeln!(
                body,
                "        let oi = subgroupShuffleXor(xi, lane);\n        let tw = {m}u < sgsz && take_b(xv, xi, ov, oi);\n        \
                 xv = select(xv, ov, tw);\n        xi = select(xi, oi, tw);"
            );
        } else {
            let _ = writeln!(body, "        xv = select(xv, comb(xv, ov), {m}u < sgsz);");
        }
        body.push_str("    }\n");
        m *= 2;
    }
    let _ = writeln!(body, "    if (sgi == 0u) {{\n        sv[sgid] = xv;");
    if arg {
        body.push_str("        si[sgid] = xi;\n");
    }
    body.push_str("    }\n    workgroupBarrier();\n    if (lid == 0u) {\n");
    let a = wgsl_type(p.acc);
    let ident = if p.kind == ReduceKind::Prod { "1" } else { "0" };
    for s in 0..p.subgroup_slots {
        if p.clamps() {
            let _ = writeln!(body, "    let vw{s} = sv[min({s}u, nsg - 1u)];");
        } else {
            let _ = writeln!(body, "    let vw{s} = select({a}({ident}), sv[min({s}u, nsg - 1u)], {s}u < nsg);");
        }
        if arg {
            let _ = writeln!(body, "    let iw{s} = si[min({s}u, nsg - 1u)];");
        }
    }
    let names = (0..p.subgroup_slots).map(|s| format!("w{s}")).collect();
    let w = pairwise(body, names, arg, "d");
    let _ = writeln!(body, "    let wv = v{w};");
    if arg {
        let _ = writeln!(body, "    let wi = i{w};");
    }
}

/// `comb(a, b)` for the value reductions, `take_b(va, ia, vb, ib)` for the arg ones: whether
/// (vb, ib) wins: the first NaN, else the extreme value, ties to the lower index.
pub(crate) fn combine_fn(p: &Pass) -> String {
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
