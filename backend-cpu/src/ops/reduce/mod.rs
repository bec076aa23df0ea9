//! `Op::Reduce` over all elements or one axis. The input is seen as `[outer, len, inner]`
//! with `len` the reduced extent. With `inner == 1` each output reduces one contiguous run;
//! otherwise every output row accumulates whole input rows in memory order
//! (`out[o, j] op= in[o, i, j]`), in blocks of columns. Parallel over independent outputs,
//! or inside one long run. Results live in the device's caching allocator like every
//! other op's.

mod arg;
mod fold;
mod fused;

pub(crate) use fused::map_reduce;

use std::sync::Arc;

use polycompute_core::{HostSlice, ReduceKind, Result, Shape};
use rayon::prelude::*;

use crate::buffer::Output;
use crate::memory::Pool;
use crate::num::{Float, Num};
use crate::num_half::{narrow, widen, HalfNum};
use crate::par::PAR_MIN;
use arg::{Largest, Pick, Smallest};
use fold::{Fold, Max, Min, Prod, Sum, WideSum, Widen};

/// Columns accumulated together: a block's accumulators stay in L1/L2, and its rows are
/// long contiguous runs for the prefetchers. Parallelism comes from column blocks and from
/// halves of the rows (inside `fold::rows`).
const COLS: usize = 4096;

/// The input seen as `[outer, len, inner]`, reducing `len`.
#[derive(Copy, Clone, Debug)]
struct Geometry {
    outer: usize,
    len: usize,
    inner: usize,
}

impl Geometry {
    fn new(shape: &Shape, axis: Option<usize>) -> Geometry {
        let dims = shape.dims();
        match axis {
            Some(a) if a < dims.len() => {
                Geometry { outer: dims[..a].iter().product(), len: dims[a], inner: dims[a + 1..].iter().product() }
            }
            _ => Geometry { outer: 1, len: shape.numel(), inner: 1 },
        }
    }

    /// Number of results.
    fn outputs(self) -> usize {
        self.outer * self.inner
    }
}

/// Runs a validated reduction into a block of `pool`.
pub(crate) fn reduce(
    kind: ReduceKind,
    axis: Option<usize>,
    shape: &Shape,
    data: HostSlice<'_>,
    pool: &Arc<Pool>,
) -> Result<Output> {
    let g = Geometry::new(shape, axis);
    match data {
        HostSlice::F32(x) => float(kind, x, g, pool),
        HostSlice::F64(x) => float(kind, x, g, pool),
        HostSlice::I32(x) => int(kind, x, g, pool),
        HostSlice::U32(x) => int(kind, x, g, pool),
        HostSlice::I64(x) => int(kind, x, g, pool),
        HostSlice::U8(x) => int(kind, x, g, pool),
        // Sum and prod of bools are refused by the op's check (numpy promotes them); min
        // and max are all and any, mean the fraction that are true.
        HostSlice::Bool(x) => int(kind, x, g, pool),
        HostSlice::F16(x) => half(kind, x, g, pool),
        HostSlice::BF16(x) => half(kind, x, g, pool),
    }
}

/// A half reduction: sum, mean and prod accumulate in f32 (the values widened, exactly) and
/// round once at the end; min, max, argmin and argmax compare the halves exactly.
fn half<H: HalfNum>(kind: ReduceKind, x: &[H], g: Geometry, pool: &Arc<Pool>) -> Result<Output> {
    let wide = || widen(x);
    let n = g.outputs();
    let rounded = |acc: Vec<f32>| Output::write::<H>(pool, n, |out| narrow(&acc, out));
    match kind {
        ReduceKind::Sum => rounded(folded_vec::<Sum<f32>>(&wide(), g, |s| s)),
        ReduceKind::Mean => {
            let len = g.len as f32;
            rounded(folded_vec::<Sum<f32>>(&wide(), g, |s| s / len))
        }
        ReduceKind::Prod => rounded(folded_vec::<Prod<f32>>(&wide(), g, |s| s)),
        _ => common(kind, x, g, pool),
    }
}

/// The f32 accumulations of a half reduction, before their one rounding.
fn folded_vec<F: Fold<In = f32, Acc = f32>>(x: &[f32], g: Geometry, finish: impl Fn(f32) -> f32 + Sync) -> Vec<f32> {
    let mut acc = vec![0.0f32; g.outputs()];
    folded::<F, f32>(x, g, finish, &mut acc);
    acc
}

fn float<T: Float>(kind: ReduceKind, x: &[T], g: Geometry, pool: &Arc<Pool>) -> Result<Output> {
    match kind {
        ReduceKind::Mean => {
            let n = T::from_usize(g.len);
            Output::write::<T>(pool, g.outputs(), |out| folded::<Sum<T>, T>(x, g, |s| T::div(s, n), out))
        }
        _ => common(kind, x, g, pool),
    }
}

fn int<T: Widen>(kind: ReduceKind, x: &[T], g: Geometry, pool: &Arc<Pool>) -> Result<Output> {
    match kind {
        ReduceKind::Mean => {
            let n = g.len as f64;
            Output::write::<f64>(pool, g.outputs(), |out| {
                folded::<WideSum<T>, f64>(x, g, |s| T::wide_to_f64(s) / n, out)
            })
        }
        _ => common(kind, x, g, pool),
    }
}

fn common<T: Num>(kind: ReduceKind, x: &[T], g: Geometry, pool: &Arc<Pool>) -> Result<Output> {
    let n = g.outputs();
    match kind {
        // `float` and `int` answer Mean before coming here.
        ReduceKind::Sum | ReduceKind::Mean => Output::write::<T>(pool, n, |o| folded::<Sum<T>, T>(x, g, |a| a, o)),
        ReduceKind::Prod => Output::write::<T>(pool, n, |o| folded::<Prod<T>, T>(x, g, |a| a, o)),
        ReduceKind::Min => Output::write::<T>(pool, n, |o| folded::<Min<T>, T>(x, g, |a| a, o)),
        ReduceKind::Max => Output::write::<T>(pool, n, |o| folded::<Max<T>, T>(x, g, |a| a, o)),
        ReduceKind::ArgMin => Output::write::<u32>(pool, n, |o| picked::<T, Smallest>(x, g, o)),
        ReduceKind::ArgMax => Output::write::<u32>(pool, n, |o| picked::<T, Largest>(x, g, o)),
    }
}

/// Runs `task(o, out_row)` for each output row `o` of `inner` elements, in parallel when
/// the input is big.
fn per_output_row<O: Send>(out: &mut [O], inner: usize, total: usize, task: impl Fn(usize, &mut [O]) + Sync) {
    if inner == 0 {
        return;
    }
    if total >= PAR_MIN {
        out.par_chunks_mut(inner).enumerate().for_each(|(o, row)| task(o, row));
    } else {
        out.chunks_mut(inner).enumerate().for_each(|(o, row)| task(o, row));
    }
}

/// A fold along the geometry's reduced extent into `out` (one element per result, each
/// written: a recycled block holds old data), each accumulator mapped by `finish`.
fn folded<F: Fold, O: Num>(x: &[F::In], g: Geometry, finish: impl Fn(F::Acc) -> O + Sync, out: &mut [O]) {
    let Geometry { len, inner, .. } = g;
    let slab = len * inner;
    if inner == 1 {
        // One contiguous run per output; a long run is split in parallel inside `fold::run`.
        per_output_row(out, 1, x.len(), |o, y| y[0] = finish(fold::run::<F>(&x[o * len..(o + 1) * len])));
        return;
    }
    per_output_row(out, inner, x.len(), |o, row| {
        let block = |b: usize, ys: &mut [O]| {
            let mut acc = vec![F::id(); ys.len()];
            let mut spare = Vec::new();
            fold::rows::<F>(&x[o * slab + b * COLS..], len, inner, &mut acc, &mut spare);
            for (y, &a) in ys.iter_mut().zip(&acc) {
                *y = finish(a);
            }
        };
        if slab >= PAR_MIN {
            row.par_chunks_mut(COLS).enumerate().for_each(|(b, ys)| block(b, ys));
        } else {
            row.chunks_mut(COLS).enumerate().for_each(|(b, ys)| block(b, ys));
        }
    });
}

/// argmin/argmax along the geometry's reduced extent (which `Op::output` checked is
/// non-empty) into `out`, every element written.
fn picked<T: Num, P: Pick>(x: &[T], g: Geometry, out: &mut [u32]) {
    let Geometry { len, inner, .. } = g;
    if len == 0 {
        out.fill(0);
        return;
    }
    let slab = len * inner;
    if inner == 1 && len <= arg::SHORT_ROW {
        // Many short rows: blocks of rows at a time, each block one task.
        let rows_per_task = arg::BLOCK_ROWS * 16;
        let task = |(t, ys): (usize, &mut [u32])| {
            let start = t * rows_per_task * len;
            arg::short_rows::<T, P>(&x[start..start + ys.len() * len], len, ys);
        };
        if x.len() >= PAR_MIN {
            out.par_chunks_mut(rows_per_task).enumerate().for_each(task);
        } else {
            out.chunks_mut(rows_per_task).enumerate().for_each(task);
        }
        return;
    }
    if inner == 1 {
        per_output_row(out, 1, x.len(), |o, y| y[0] = arg::run::<T, P>(&x[o * len..(o + 1) * len]));
        return;
    }
    per_output_row(out, inner, x.len(), |o, row| {
        let block = |b: usize, ys: &mut [u32]| arg::rows::<T, P>(&x[o * slab + b * COLS..], len, inner, ys);
        if slab >= PAR_MIN {
            row.par_chunks_mut(COLS).enumerate().for_each(|(b, ys)| block(b, ys));
        } else {
            row.chunks_mut(COLS).enumerate().for_each(|(b, ys)| block(b, ys));
        }
    });
}
