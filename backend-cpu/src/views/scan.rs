//! `Op::Scan`: inclusive running sums and products along an axis, in order along the
//! axis (integers wrap). Rows of the `[outer, n, inner]` view run in parallel; with
//! `inner > 1` a whole slab `[i, ..]` is combined with slab `[i - 1, ..]` at once, which
//! vectorises.

use polycompute_core::op::ScanKind;
use rayon::prelude::*;

use super::Axis;
use crate::num::Num;
use crate::par::PAR_MIN;

/// The running sum or product of `x` along the axis `a` describes.
pub(crate) fn scan<T: Num>(x: &[T], kind: ScanKind, a: Axis) -> Vec<T> {
    let f: fn(T, T) -> T = match kind {
        ScanKind::Sum => T::add,
        ScanKind::Prod => T::mul,
    };
    let mut out = x.to_vec();
    let block = a.n * a.inner;
    if block == 0 {
        return out;
    }
    let run = |b: &mut [T]| {
        if a.inner == 1 {
            // One lane, contiguous: a plain running loop.
            let mut acc = b[0];
            for v in &mut b[1..] {
                acc = f(acc, *v);
                *v = acc;
            }
            return;
        }
        for i in 1..a.n {
            let (done, rest) = b.split_at_mut(i * a.inner);
            let prev = &done[(i - 1) * a.inner..];
            for (o, &p) in rest[..a.inner].iter_mut().zip(prev) {
                *o = f(p, *o);
            }
        }
    };
    if a.outer > 1 && out.len() >= PAR_MIN {
        out.par_chunks_mut(block).for_each(run);
    } else {
        out.chunks_mut(block).for_each(run);
    }
    out
}
