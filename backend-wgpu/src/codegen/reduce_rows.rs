//! Short rows, one invocation per row: a contiguous row of at most [`MAX_WIDTH`] elements
//! (the `[200000, 8]` of per-point scores) is loaded and combined pairwise in registers by
//! one invocation, with no workgroup memory and no barrier. The tree kernel (`reduce`)
//! would give each row a column of a 256-thread workgroup, mostly idle.
//!
//! The kernel is generated for a width `w`, the row length rounded up to a power of two:
//! lanes past the row's length load an identity (sum, prod, mean) or the row's last
//! element again (min, max and the arg reductions: a duplicate changes neither the extreme
//! nor, ties going to the lower index, its position), so the combination is the same
//! pairwise tree as the other reductions and one kernel serves every length up to `w`.

use std::collections::BTreeSet;
use std::fmt::Write;

use polycompute_core::{DType, ReduceKind};

use super::reduce::{combine_fn, pairwise, Pass};
use super::semantics::library;
use super::{storage_type, wgsl_type, Builder, KernelSource};

/// The longest row reduced one per invocation.
pub(crate) const MAX_WIDTH: usize = 32;

/// Invocations (rows) per workgroup.
pub(crate) const ROWS_PER_GROUP: u32 = 64;

/// Uniform words: rows, row length, the op's reduced length (for the mean).
pub(crate) const PARAMS: usize = 3;

/// What one short-row kernel is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RowPass {
    /// The reduction.
    pub kind: ReduceKind,
    /// The dtype of the op's input.
    pub input: DType,
    /// The dtype results are computed in.
    pub acc: DType,
    /// Lanes per row: a power of two, at least the row length, at most [`MAX_WIDTH`].
    pub width: u32,
}

impl RowPass {
    /// The equivalent single tree pass, whose combine functions this kernel shares.
    fn pass(&self) -> Pass {
        Pass {
            kind: self.kind,
            input: self.input,
            acc: self.acc,
            first: true,
            last: true,
            tj: 1,
            items: 1,
            subgroup_slots: 0,
        }
    }
}

/// The kernel of `p`.
pub(crate) fn kernel(p: &RowPass) -> KernelSource {
    let pass = p.pass();
    let arg = pass.is_arg();
    let a = wgsl_type(p.acc);
    let mut b = Builder::new(PARAMS);
    b.storage("in_v", storage_type(p.input), false);
    if !arg {
        b.storage("out_v", a, true);
    }
    if arg {
        b.storage("out_i", "u32", true);
    }
    b.code(&library(&BTreeSet::from([p.input, p.acc])));
    let half_input = p.input.is_half();
    if half_input {
        b.code(&super::half::load_fn("ld_in", "in_v", p.input));
    }
    b.code(&combine_fn(&pass));
    let mut body = format!(
        "    let rows = prm(0u);\n    let r = prm(1u);\n    let row = g * {ROWS_PER_GROUP}u + lid;\n    \
         let live = row < rows;\n    let base = min(row, rows - 1u) * r;\n"
    );
    for lane in 0..p.width {
        let kc = format!("min({lane}u, r - 1u)");
        let idx = format!("base + {kc}");
        let raw = if half_input {
            format!("ld_in({idx})")
        } else if p.input != p.acc {
            format!("{a}(in_v[{idx}])")
        } else {
            format!("in_v[{idx}]")
        };
        if pass.clamps() {
            let _ = writeln!(body, "    let v{lane} = {raw};");
        } else {
            let ident = if p.kind == ReduceKind::Prod { "1" } else { "0" };
            let _ = writeln!(body, "    let v{lane} = select({a}({ident}), {raw}, {lane}u < r);");
        }
        if arg {
            let _ = writeln!(body, "    let i{lane} = {kc};");
        }
    }
    let names = (0..p.width).map(|l| l.to_string()).collect();
    let fin = pairwise(&mut body, names, arg, "c");
    let _ = writeln!(body, "    if (live) {{");
    if arg {
        let _ = writeln!(body, "        out_i[row] = i{fin};");
    } else if p.kind == ReduceKind::Mean {
        let _ = writeln!(body, "        out_v[row] = v{fin} / {a}(prm(2u));");
    } else {
        let _ = writeln!(body, "        out_v[row] = v{fin};");
    }
    body.push_str("    }\n");
    b.finish((ROWS_PER_GROUP, 1), &body)
}
