//! Map→reduce: a reduction whose elements an `Op::Map` computes, with no buffer for them.
//! The map's program is evaluated a block at a time into a small scratch and folded by the
//! reduction's own fold, along the same pairwise tree as `fold::run` (its split points
//! depend on lengths only, and a block is a whole subtree), so the result equals reducing
//! the map's stored output bit for bit.
//!
//! Covered: sum, prod, min, max and mean of f32, f64, i32 and u32 over contiguous runs
//! (all elements, or an axis with nothing after it). Anything else (halves, whose sums
//! widen the whole input first; argmin/argmax; a reduced axis with trailing axes) answers
//! `None` and core runs the map, then the reduction.

use std::sync::Arc;

use polycompute_core::{DType, HostSlice, Op, ReduceKind, Result};

use super::fold::{self, Fold, Max, Min, Prod, Sum, WideSum, Widen, LEAF};
use super::{per_output_row, Geometry};
use crate::buffer::Output;
use crate::memory::Pool;
use crate::num::{Float, Num};
use crate::ops::map::{eval_into, Lane, Plan};
use crate::par::PAR_MIN;

/// Elements evaluated into scratch at a time: a whole subtree of the pairwise sum (a
/// multiple of its leaf), small enough to stay in L2 with the program's scratch.
const BLOCK: usize = 16 * LEAF;

/// The program's element source: a prepared plan over the map's inputs.
struct Source<'a> {
    plan: &'a Plan,
    inputs: &'a [HostSlice<'a>],
}

/// Runs `reduce` over the elements of `map` (validated by core), or `None` when this pair
/// is not one the CPU fuses.
pub(crate) fn map_reduce(
    plans: &crate::ops::map::PlanCache,
    map: &Op,
    reduce: &Op,
    inputs: &[HostSlice<'_>],
    pool: &Arc<Pool>,
) -> Result<Option<Output>> {
    let (Op::Map { program, input_shapes, shape }, Op::Reduce { kind, axis, .. }) = (map, reduce) else {
        return Ok(None);
    };
    let g = Geometry::new(shape, *axis);
    if g.inner != 1 || g.len == 0 {
        return Ok(None);
    }
    let plan = plans.get(map, program, input_shapes, shape)?;
    let src = Source { plan: &plan, inputs };
    match plan.out_dtype {
        DType::F32 => float::<f32>(*kind, &src, g, pool),
        DType::F64 => float::<f64>(*kind, &src, g, pool),
        DType::I32 => int::<i32>(*kind, &src, g, pool),
        DType::U32 => int::<u32>(*kind, &src, g, pool),
        _ => Ok(None),
    }
}

fn float<T: Float + Lane>(kind: ReduceKind, src: &Source<'_>, g: Geometry, pool: &Arc<Pool>) -> Result<Option<Output>> {
    if kind == ReduceKind::Mean {
        let n = T::from_usize(g.len);
        return Output::write::<T>(pool, g.outer, |o| rows::<Sum<T>, T>(src, g, |s| T::div(s, n), o)).map(Some);
    }
    same_type::<T>(kind, src, g, pool)
}

fn int<T: Widen + Lane>(kind: ReduceKind, src: &Source<'_>, g: Geometry, pool: &Arc<Pool>) -> Result<Option<Output>> {
    if kind == ReduceKind::Mean {
        let n = g.len as f64;
        return Output::write::<f64>(pool, g.outer, |o| rows::<WideSum<T>, f64>(src, g, |s| T::wide_to_f64(s) / n, o))
            .map(Some);
    }
    same_type::<T>(kind, src, g, pool)
}

fn same_type<T: Num + Lane>(
    kind: ReduceKind,
    src: &Source<'_>,
    g: Geometry,
    pool: &Arc<Pool>,
) -> Result<Option<Output>> {
    let n = g.outer;
    let out = match kind {
        ReduceKind::Sum => Output::write::<T>(pool, n, |o| rows::<Sum<T>, T>(src, g, |a| a, o)),
        ReduceKind::Prod => Output::write::<T>(pool, n, |o| rows::<Prod<T>, T>(src, g, |a| a, o)),
        ReduceKind::Min => Output::write::<T>(pool, n, |o| rows::<Min<T>, T>(src, g, |a| a, o)),
        ReduceKind::Max => Output::write::<T>(pool, n, |o| rows::<Max<T>, T>(src, g, |a| a, o)),
        ReduceKind::Mean | ReduceKind::ArgMin | ReduceKind::ArgMax => return Ok(None),
    };
    out.map(Some)
}

/// Each output folds its run of `g.len` elements, as `folded` does for `inner == 1`.
fn rows<F: Fold, O: Num>(src: &Source<'_>, g: Geometry, finish: impl Fn(F::Acc) -> O + Sync, out: &mut [O])
where
    F::In: Lane,
{
    let total = g.outer * g.len;
    per_output_row(out, 1, total, |o, y| y[0] = finish(run::<F>(src, o * g.len, g.len, true)));
}

/// `fold::run` over elements `start..start + len` of the program, split the same way.
fn run<F: Fold>(src: &Source<'_>, start: usize, len: usize, par: bool) -> F::Acc
where
    F::In: Lane,
{
    if len <= BLOCK {
        let mut block = vec![<F::In as Num>::ZERO; len];
        eval_into(src.plan, src.inputs, start, &mut block);
        return fold::run_serial::<F>(&block);
    }
    let mid = len.div_ceil(2 * LEAF) * LEAF;
    let (a, b) = if par && len >= PAR_MIN {
        rayon::join(|| run::<F>(src, start, mid, par), || run::<F>(src, start + mid, len - mid, par))
    } else {
        (run::<F>(src, start, mid, par), run::<F>(src, start + mid, len - mid, par))
    };
    F::combine(a, b)
}
