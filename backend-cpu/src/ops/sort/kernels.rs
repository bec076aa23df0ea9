//! Sort, argsort and topk of every lane.

use std::sync::Arc;

use polycompute_core::Result;
use rayon::prelude::*;

use super::key::SortKey;
use super::lane::{at, lane_order, lanes, sorted_keys};
use super::{rows, whole, RADIX_MIN};
use crate::buffer::{host_vec, Output};
use crate::memory::Pool;
use crate::ops::axis::Axis;

/// The one long contiguous lane (the parallel radix sort), many short rows (on the stack),
/// or the general walk over lanes.
pub(super) enum Path {
    Whole,
    ShortRows,
    Lanes,
}

pub(super) fn path(a: Axis) -> Path {
    if a.outer * a.inner == 1 && a.n >= RADIX_MIN {
        Path::Whole
    } else if a.inner == 1 && a.outer > 1 && (1..=rows::SHORT).contains(&a.n) {
        Path::ShortRows
    } else {
        Path::Lanes
    }
}

/// [`sort`] by the fastest path for the shape, into an [`Output`].
pub(super) fn sort_output<T: SortKey>(x: &[T], a: Axis, pool: &Arc<Pool>) -> Result<Output> {
    match path(a) {
        Path::Whole => whole::sort(x, pool),
        Path::ShortRows => Ok(Output::host(host_vec(rows::sort(x, a.n)))),
        Path::Lanes => Ok(Output::host(host_vec(sort(x, a)))),
    }
}

/// [`argsort`] by the fastest path for the shape, into an [`Output`].
pub(super) fn argsort_output<T: SortKey>(x: &[T], a: Axis, pool: &Arc<Pool>) -> Result<Output> {
    match path(a) {
        Path::Whole => whole::argsort(x, pool),
        Path::ShortRows => Ok(Output::host(host_vec(rows::argsort(x, a.n)))),
        Path::Lanes => Ok(Output::host(host_vec(argsort(x, a)))),
    }
}

/// The stable sort of each lane. Equal keys are equal values except for the two zeros and
/// NaNs (whose order a stable sort must keep), so the keys alone are sorted and turned back
/// into values; then the run of zero keys and the run of NaN keys are refilled with the
/// lane's zeros and NaNs in input order.
pub(crate) fn sort<T: SortKey>(x: &[T], a: Axis) -> Vec<T> {
    lanes(a, a.n, |r, par| {
        let (o, i) = (r / a.inner, r % a.inner);
        let at = |k: usize| (o * a.n + k) * a.inner + i;
        let keys: Vec<u64> = if T::WIDE {
            sorted_keys(a.n, 64, |k| x[at(k)].key(), par)
        } else {
            // 32-bit keys sort as u32: half the memory traffic of u64.
            sorted_keys(a.n, 32, |k| x[at(k)].key() as u32, par).into_iter().map(u64::from).collect()
        };
        let mut out: Vec<T> = if par {
            keys.par_iter().map(|&k| T::from_key(k)).collect()
        } else {
            keys.iter().map(|&k| T::from_key(k)).collect()
        };
        if T::FLOAT {
            for special in [T::ZERO.key(), if T::WIDE { u64::MAX } else { u64::from(u32::MAX) }] {
                let start = keys.partition_point(|&k| k < special);
                let end = keys.partition_point(|&k| k <= special);
                if end > start {
                    let originals = (0..a.n).map(|k| x[at(k)]).filter(|v| v.key() == special);
                    for (slot, v) in out[start..end].iter_mut().zip(originals) {
                        *slot = v;
                    }
                }
            }
        }
        out
    })
}

/// The stable sorting permutation of each lane.
pub(crate) fn argsort<T: SortKey>(x: &[T], a: Axis) -> Vec<u32> {
    lanes(a, a.n, |r, par| lane_order(x, a, r, par, false))
}

/// The indices of the `k` largest of each lane, largest first, ties by lower index.
pub(crate) fn topk<T: SortKey>(x: &[T], k: usize, a: Axis) -> Vec<u32> {
    lanes(a, k, |r, _| {
        if k == 0 {
            return Vec::new();
        }
        // Descending key, ascending index: the order of (!key, index).
        let mut keyed: Vec<(u64, u32)> = (0..a.n).map(|j| (!x[at(a, r, j)].key(), j as u32)).collect();
        if k < keyed.len() {
            keyed.select_nth_unstable(k - 1);
            keyed.truncate(k);
        }
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, i)| i).collect()
    })
}
