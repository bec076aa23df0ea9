//! One fusion of the block-wise evaluator: `(x ∘ s) • y`, with `∘` and `•` among `+ - *`,
//! `s` one value (a literal or a one-element input) and `x`, `y` full arrays, runs as one
//! loop instead of two passes through a scratch buffer. Affine updates (`a*x + y`,
//! `x*s - y`, `(x + s) * y`) are the most common fused maps, and the saved pass measured
//! about 10% on `a*x + y` over 2^24 f32.

use polycompute_core::expr::InstOp;
use polycompute_core::{BinaryOp, DType, Program};

use super::kernels::{self, op, BinOp, Src};
use super::lane::DestMut;
use super::step::{dest, Ctx, Step};
use crate::num::with_dtype;

/// A fusable pair found in a program.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) struct Pair {
    /// The inner instruction `x ∘ s`, used only by the outer one.
    pub(crate) inner: usize,
    pub(super) inner_op: BinaryOp,
    pub(super) x: usize,
    pub(super) s: usize,
    /// `s ∘ x` rather than `x ∘ s`.
    pub(super) inner_swapped: bool,
    pub(super) outer_op: BinaryOp,
    pub(super) y: usize,
    /// `y • inner` rather than `inner • y`.
    pub(super) outer_swapped: bool,
}

fn arithmetic(op: BinaryOp) -> bool {
    matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul)
}

/// The fusable pair whose outer instruction is `j`, if any. `is_array(k)` says whether
/// instruction `k` is a full array over the chunk (read in place or from scratch),
/// `is_value(k)` whether it is one value; `uses[k]` counts the instructions that read `k`.
pub(crate) fn find(
    program: &Program,
    j: usize,
    uses: &[usize],
    is_array: impl Fn(usize) -> bool,
    is_value: impl Fn(usize) -> bool,
) -> Option<Pair> {
    let InstOp::Binary(outer_op, p, q) = program.insts[j].op else { return None };
    if !arithmetic(outer_op) {
        return None;
    }
    for (inner, y, outer_swapped) in [(p, q, false), (q, p, true)] {
        let InstOp::Binary(inner_op, a, b) = program.insts[inner].op else { continue };
        if !arithmetic(inner_op) || uses[inner] != 1 || inner == y || !is_array(y) {
            continue;
        }
        let (x, s, inner_swapped) = match (is_array(a) && is_value(b), is_value(a) && is_array(b)) {
            (true, _) => (a, b, false),
            (_, true) => (b, a, true),
            _ => continue,
        };
        return Some(Pair { inner, inner_op, x, s, inner_swapped, outer_op, y, outer_swapped });
    }
    None
}

/// The step computing the pair's outer instruction, of dtype `dtype`, in one pass.
pub(crate) fn step(pair: Pair, dtype: DType) -> Step {
    with_dtype!(dtype, T => match (pair.inner_op, pair.outer_op) {
        (BinaryOp::Mul, BinaryOp::Add) => typed::<T, op::Mul, op::Add>(pair),
        (BinaryOp::Mul, BinaryOp::Sub) => typed::<T, op::Mul, op::Sub>(pair),
        (BinaryOp::Mul, _) => typed::<T, op::Mul, op::Mul>(pair),
        (BinaryOp::Add, BinaryOp::Add) => typed::<T, op::Add, op::Add>(pair),
        (BinaryOp::Add, BinaryOp::Sub) => typed::<T, op::Add, op::Sub>(pair),
        (BinaryOp::Add, _) => typed::<T, op::Add, op::Mul>(pair),
        (_, BinaryOp::Add) => typed::<T, op::Sub, op::Add>(pair),
        (_, BinaryOp::Sub) => typed::<T, op::Sub, op::Sub>(pair),
        _ => typed::<T, op::Sub, op::Mul>(pair),
    })
}

fn typed<T: super::lane::Lane, O1: BinOp<T>, O2: BinOp<T>>(pair: Pair) -> Step {
    Box::new(move |ctx: &Ctx<'_>, d: DestMut<'_>| {
        let (Src::Slice(x), Src::Splat(s), Src::Slice(y)) =
            (ctx.src::<T>(pair.x), ctx.src::<T>(pair.s), ctx.src::<T>(pair.y))
        else {
            unreachable!("fusion checked the operands' locations")
        };
        kernels::fused::<T, O1, O2>(x, s, y, dest::<T>(d), pair.inner_swapped, pair.outer_swapped);
    })
}
