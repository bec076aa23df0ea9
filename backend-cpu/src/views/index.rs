//! `Op::Take`, `Op::TakeAlongAxis` and `Op::ScatterAdd`. Indices were checked by the
//! array layer to lie in `-n..n`; a negative index counts from the end. The gathers run
//! in parallel over output chunks; the scatter runs in parallel over outer rows and, in
//! each, in index order (so repeated float indices add in numpy's order).

use polycompute_core::{HostSlice, Shape};
use rayon::prelude::*;

use super::Axis;
use crate::num::Num;
use crate::par::{PAR_MIN, TASK};

/// The index array as positions `0..n` (negative `i32` indices count from the end; out
/// of range ones — which the array layer refuses — are clamped rather than read past the
/// axis).
fn positions(idx: HostSlice<'_>, n: usize) -> Vec<usize> {
    let last = n.saturating_sub(1);
    match idx {
        HostSlice::U32(v) => v.iter().map(|&i| (i as usize).min(last)).collect(),
        HostSlice::I32(v) => v
            .iter()
            .map(|&i| if i < 0 { (i as i64 + n as i64).max(0) as usize } else { (i as usize).min(last) })
            .collect(),
        _ => Vec::new(),
    }
}

/// numpy's `take(x, idx, axis)`.
pub(crate) fn take<T: Num>(x: &[T], idx: HostSlice<'_>, shape: &Shape, indices: &Shape, axis: usize) -> Vec<T> {
    let a = Axis::new(shape, axis);
    let pos = positions(idx, a.n);
    let m = indices.numel();
    let len = a.outer * m * a.inner;
    let mut out = vec![T::ZERO; len];
    if len == 0 {
        return out;
    }
    let fill = |start: usize, dst: &mut [T]| {
        if a.inner == 1 {
            for (j, o) in dst.iter_mut().enumerate() {
                let flat = start + j;
                let (r, k) = (flat / m, flat % m);
                *o = x[r * a.n + pos[k]];
            }
        } else {
            for (j, o) in dst.iter_mut().enumerate() {
                let flat = start + j;
                let (rk, i) = (flat / a.inner, flat % a.inner);
                let (r, k) = (rk / m, rk % m);
                *o = x[(r * a.n + pos[k]) * a.inner + i];
            }
        }
    };
    if len >= PAR_MIN {
        out.par_chunks_mut(TASK).enumerate().for_each(|(c, d)| fill(c * TASK, d));
    } else {
        fill(0, &mut out);
    }
    out
}

/// numpy's `take_along_axis(x, idx, axis)`: `idx` is `[outer, m, inner]`.
pub(crate) fn take_along_axis<T: Num>(
    x: &[T],
    idx: HostSlice<'_>,
    shape: &Shape,
    indices: &Shape,
    axis: usize,
) -> Vec<T> {
    let a = Axis::new(shape, axis);
    let m = indices.dims()[axis];
    let pos = positions(idx, a.n);
    let mut out = vec![T::ZERO; pos.len()];
    let fill = |start: usize, dst: &mut [T]| {
        for (j, o) in dst.iter_mut().enumerate() {
            let flat = start + j;
            let (rk, i) = (flat / a.inner, flat % a.inner);
            let r = rk / m;
            *o = x[(r * a.n + pos[flat]) * a.inner + i];
        }
    };
    if out.len() >= PAR_MIN {
        out.par_chunks_mut(TASK).enumerate().for_each(|(c, d)| fill(c * TASK, d));
    } else {
        fill(0, &mut out);
    }
    out
}

/// `np.add.at` on a copy of `x`: `values` is `[outer, m, inner]` for `m` indices.
pub(crate) fn scatter_add<T: Num>(
    x: &[T],
    idx: HostSlice<'_>,
    values: &[T],
    shape: &Shape,
    indices: &Shape,
    axis: usize,
) -> Vec<T> {
    let a = Axis::new(shape, axis);
    let pos = positions(idx, a.n);
    let m = indices.numel();
    let mut out = x.to_vec();
    let block = a.n * a.inner;
    if block == 0 || m == 0 {
        return out;
    }
    let run = |(r, dst): (usize, &mut [T])| {
        for (k, &p) in pos.iter().enumerate() {
            let src = &values[(r * m + k) * a.inner..(r * m + k + 1) * a.inner];
            for (o, &v) in dst[p * a.inner..(p + 1) * a.inner].iter_mut().zip(src) {
                *o = T::add(*o, v);
            }
        }
    };
    if a.outer > 1 && values.len() >= PAR_MIN {
        out.par_chunks_mut(block).enumerate().for_each(run);
    } else {
        out.chunks_mut(block).enumerate().for_each(run);
    }
    out
}
