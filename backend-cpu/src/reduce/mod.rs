//! `Op::Reduce` over all elements or one axis. The input is seen as `[outer, len, inner]`
//! with `len` the reduced extent. With `inner == 1` each output reduces one contiguous run;
//! otherwise every output row accumulates whole input rows in memory order
//! (`out[o, j] op= in[o, i, j]`), in blocks of columns. Parallel over independent outputs,
//! or inside one long run.

mod arg;
mod fold;

use polycompute_core::{HostSlice, HostVec, ReduceKind, Shape};
use rayon::prelude::*;

use crate::num::{Float, Num};
use crate::num_half::{narrow_vec, widen, HalfNum};
use crate::par::PAR_MIN;
use crate::storage::host_vec;
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
}

/// Runs a validated reduction.
pub(crate) fn reduce(kind: ReduceKind, axis: Option<usize>, shape: &Shape, data: HostSlice<'_>) -> HostVec {
    let g = Geometry::new(shape, axis);
    match data {
        HostSlice::F32(x) => float(kind, x, g),
        HostSlice::F64(x) => float(kind, x, g),
        HostSlice::I32(x) => int(kind, x, g),
        HostSlice::U32(x) => int(kind, x, g),
        HostSlice::F16(x) => half(kind, x, g),
        HostSlice::BF16(x) => half(kind, x, g),
    }
}

/// A half reduction: sum, mean and prod accumulate in f32 (the values widened, exactly) and
/// round once at the end; min, max, argmin and argmax compare the halves exactly.
fn half<H: HalfNum>(kind: ReduceKind, x: &[H], g: Geometry) -> HostVec {
    match kind {
        ReduceKind::Sum | ReduceKind::Mean | ReduceKind::Prod => {
            match float(kind, &widen(x), g) {
                HostVec::F32(r) => host_vec(narrow_vec::<H>(&r)),
                // `float` of f32 answers in f32 for these kinds.
                other => other,
            }
        }
        _ => common(kind, x, g),
    }
}

fn float<T: Float>(kind: ReduceKind, x: &[T], g: Geometry) -> HostVec {
    match kind {
        ReduceKind::Mean => {
            let n = T::from_usize(g.len);
            host_vec(folded::<Sum<T>, T>(x, g, |s| T::div(s, n)))
        }
        _ => common(kind, x, g),
    }
}

fn int<T: Widen>(kind: ReduceKind, x: &[T], g: Geometry) -> HostVec {
    match kind {
        ReduceKind::Mean => {
            let n = g.len as f64;
            host_vec(folded::<WideSum<T>, f64>(x, g, |s| T::wide_to_f64(s) / n))
        }
        _ => common(kind, x, g),
    }
}

fn common<T: Num>(kind: ReduceKind, x: &[T], g: Geometry) -> HostVec {
    match kind {
        // `float` and `int` answer Mean before coming here.
        ReduceKind::Sum | ReduceKind::Mean => host_vec(folded::<Sum<T>, T>(x, g, |a| a)),
        ReduceKind::Prod => host_vec(folded::<Prod<T>, T>(x, g, |a| a)),
        ReduceKind::Min => host_vec(folded::<Min<T>, T>(x, g, |a| a)),
        ReduceKind::Max => host_vec(folded::<Max<T>, T>(x, g, |a| a)),
        ReduceKind::ArgMin => host_vec(picked::<T, Smallest>(x, g)),
        ReduceKind::ArgMax => host_vec(picked::<T, Largest>(x, g)),
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

/// A fold along the geometry's reduced extent, each accumulator mapped by `finish`.
fn folded<F: Fold, O: Num>(x: &[F::In], g: Geometry, finish: impl Fn(F::Acc) -> O + Sync) -> Vec<O> {
    let mut out = vec![O::ZERO; g.outer * g.inner];
    let Geometry { len, inner, .. } = g;
    let slab = len * inner;
    if inner == 1 {
        // One contiguous run per output; a long run is split in parallel inside `fold::run`.
        per_output_row(&mut out, 1, x.len(), |o, y| y[0] = finish(fold::run::<F>(&x[o * len..(o + 1) * len])));
        return out;
    }
    per_output_row(&mut out, inner, x.len(), |o, row| {
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
    out
}

/// argmin/argmax along the geometry's reduced extent (which `Op::output` checked is
/// non-empty).
fn picked<T: Num, P: Pick>(x: &[T], g: Geometry) -> Vec<u32> {
    let mut out = vec![0u32; g.outer * g.inner];
    let Geometry { len, inner, .. } = g;
    if len == 0 {
        return out;
    }
    let slab = len * inner;
    if inner == 1 {
        per_output_row(&mut out, 1, x.len(), |o, y| y[0] = arg::run::<T, P>(&x[o * len..(o + 1) * len]));
        return out;
    }
    per_output_row(&mut out, inner, x.len(), |o, row| {
        let block = |b: usize, ys: &mut [u32]| arg::rows::<T, P>(&x[o * slab + b * COLS..], len, inner, ys);
        if slab >= PAR_MIN {
            row.par_chunks_mut(COLS).enumerate().for_each(|(b, ys)| block(b, ys));
        } else {
            row.chunks_mut(COLS).enumerate().for_each(|(b, ys)| block(b, ys));
        }
    });
    out
}
