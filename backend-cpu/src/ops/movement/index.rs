//! `Op::Take`, `Op::TakeAlongAxis` and `Op::ScatterAdd`. Indices were checked by the
//! array layer to lie in `-n..n`; a negative index counts from the end. The gathers run
//! in parallel over output chunks; the scatter runs in parallel over outer rows and, in
//! each, in index order (so repeated float indices add in numpy's order).

use polycompute_core::{HostSlice, Shape};
use rayon::prelude::*;

use crate::num::Num;
use crate::ops::axis::Axis;
use crate::par::{PAR_MIN, TASK};

/// An index element: its position on an axis of length `n` (negative `i32` indices count
/// from the end). Out-of-range indices — which the array layer refuses before the op is
/// queued — are clamped rather than read past the axis.
trait Index: Copy + Send + Sync {
    fn pos(self, n: usize) -> usize;
}

impl Index for u32 {
    #[inline(always)]
    fn pos(self, n: usize) -> usize {
        (self as usize).min(n.saturating_sub(1))
    }
}

impl Index for i32 {
    #[inline(always)]
    fn pos(self, n: usize) -> usize {
        let p = if self < 0 { self as isize + n as isize } else { self as isize };
        p.min(n as isize - 1).max(0) as usize
    }
}

impl Index for i64 {
    #[inline(always)]
    fn pos(self, n: usize) -> usize {
        // i128: exact for every i64 and every axis length, so a value past 2^32 (refused
        // by the array layer) cannot wrap into range here either.
        let p = if self < 0 { self as i128 + n as i128 } else { self as i128 };
        p.min(n as i128 - 1).max(0) as usize
    }
}

/// Calls `$f` with the index array as a typed slice (`u32`, `i32` or `i64`; validated).
macro_rules! with_index {
    ($idx:expr, $v:ident => $body:expr) => {
        match $idx {
            HostSlice::U32($v) => $body,
            HostSlice::I32($v) => $body,
            HostSlice::I64($v) => $body,
            _ => unreachable!("Op::output checked that indices are u32, i32 or i64"),
        }
    };
}

/// The index array as positions `0..n`.
fn positions(idx: HostSlice<'_>, n: usize) -> Vec<usize> {
    with_index!(idx, v => v.iter().map(|&i| i.pos(n)).collect())
}

/// The length of `take(x, indices, axis)` for `x` of `shape`.
pub(crate) fn take_len(shape: &Shape, indices: &Shape, axis: usize) -> usize {
    let a = Axis::new(shape, axis);
    a.outer * indices.numel() * a.inner
}

/// numpy's `take(x, idx, axis)` into `out` ([`take_len`] elements, every one written: the
/// caller passes a recycled block of the device's caching allocator, so the 2^24-element
/// gather pays no page faults for a fresh output and reads huge-page-backed memory).
pub(crate) fn take_into<T: Num>(
    x: &[T],
    idx: HostSlice<'_>,
    shape: &Shape,
    indices: &Shape,
    axis: usize,
    out: &mut [T],
) {
    with_index!(idx, v => take_typed(x, v, Axis::new(shape, axis), indices.numel(), out))
}

fn take_typed<T: Num, I: Index>(x: &[T], idx: &[I], a: Axis, m: usize, out: &mut [T]) {
    let len = out.len();
    debug_assert_eq!(len, a.outer * m * a.inner, "take output length");
    if len == 0 || a.n == 0 {
        // Nothing to read (indices into an empty axis are refused by the array layer);
        // the block may hold old data.
        out.fill(T::ZERO);
        return;
    }
    let fill = |start: usize, dst: &mut [T]| {
        if a.outer == 1 && a.inner == 1 {
            // The common 1-D gather: no index arithmetic beyond the index itself.
            let n = dst.len();
            for (o, &i) in dst.iter_mut().zip(&idx[start..start + n]) {
                *o = x[i.pos(a.n)];
            }
        } else if a.inner == 1 {
            for (j, o) in dst.iter_mut().enumerate() {
                let flat = start + j;
                let (r, k) = (flat / m, flat % m);
                *o = x[r * a.n + idx[k].pos(a.n)];
            }
        } else {
            for (j, o) in dst.iter_mut().enumerate() {
                let flat = start + j;
                let (rk, i) = (flat / a.inner, flat % a.inner);
                let (r, k) = (rk / m, rk % m);
                *o = x[(r * a.n + idx[k].pos(a.n)) * a.inner + i];
            }
        }
    };
    if len >= PAR_MIN {
        out.par_chunks_mut(TASK).enumerate().for_each(|(c, d)| fill(c * TASK, d));
    } else {
        fill(0, out);
    }
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
    if a.n == 0 {
        // Nothing to read (indices into an empty axis are refused by the array layer).
        return out;
    }
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
