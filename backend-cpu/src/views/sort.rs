//! `Op::Sort`, `Op::Argsort` and `Op::TopK` in numpy's order. Each element maps to an
//! unsigned key whose integer order is numpy's order ([`SortKey`]): NaN above +inf, and
//! `-0.0` and `+0.0` the same key, so ties (equal keys) keep their input order when the
//! key is paired with the element's index. Rows of the `[outer, n, inner]` view sort in
//! parallel; a single long row uses rayon's parallel sort.

use rayon::prelude::*;

use super::Axis;
use crate::num::Num;
use crate::par::PAR_MIN;

/// A key whose unsigned order is numpy's sort order for the element type.
pub(crate) trait SortKey: Num {
    /// The key.
    fn key(self) -> u64;
}

impl SortKey for f32 {
    #[inline]
    fn key(self) -> u64 {
        if self.is_nan() {
            return u64::from(u32::MAX);
        }
        // +0.0 for both zeros, so they tie.
        let bits = (self + 0.0).to_bits();
        u64::from(if bits >> 31 == 1 { !bits } else { bits | 0x8000_0000 })
    }
}

impl SortKey for f64 {
    #[inline]
    fn key(self) -> u64 {
        if self.is_nan() {
            return u64::MAX;
        }
        let bits = (self + 0.0).to_bits();
        if bits >> 63 == 1 {
            !bits
        } else {
            bits | (1 << 63)
        }
    }
}

impl SortKey for i32 {
    #[inline]
    fn key(self) -> u64 {
        u64::from((self as u32) ^ 0x8000_0000)
    }
}

impl SortKey for u32 {
    #[inline]
    fn key(self) -> u64 {
        u64::from(self)
    }
}

/// The stable ascending order of one row: the row's indices.
fn order<T: SortKey>(row: impl Iterator<Item = T>, par: bool) -> Vec<u32> {
    let mut keyed: Vec<(u64, u32)> = row.enumerate().map(|(i, v)| (v.key(), i as u32)).collect();
    // Pairs are distinct (the index breaks ties), so an unstable sort is stable here.
    if par {
        keyed.par_sort_unstable();
    } else {
        keyed.sort_unstable();
    }
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// Runs `per_row(o, i, row_out)` for each `[outer, inner]` row of the axis, writing the
/// `m` results of the row into the strided output (`m` per row).
fn rows<U: Num>(a: Axis, m: usize, per_row: impl Fn(&mut dyn Iterator<Item = usize>, bool) -> Vec<U> + Sync) -> Vec<U> {
    let mut out = vec![U::ZERO; a.outer * m * a.inner];
    if out.is_empty() || a.n == 0 {
        return out;
    }
    let count = a.outer * a.inner;
    let single = count == 1 && a.n >= PAR_MIN;
    let block = m * a.inner;
    let row_of = |r: usize| {
        let (o, i) = (r / a.inner, r % a.inner);
        let mut it = (0..a.n).map(move |k| (o * a.n + k) * a.inner + i);
        per_row(&mut it, single)
    };
    if a.inner == 1 {
        if count > 1 && out.len() >= PAR_MIN {
            out.par_chunks_mut(block).enumerate().for_each(|(r, dst)| dst.copy_from_slice(&row_of(r)));
        } else {
            out.chunks_mut(block).enumerate().for_each(|(r, dst)| dst.copy_from_slice(&row_of(r)));
        }
    } else {
        let results: Vec<Vec<U>> = if out.len() >= PAR_MIN {
            (0..count).into_par_iter().map(row_of).collect()
        } else {
            (0..count).map(row_of).collect()
        };
        for (r, res) in results.into_iter().enumerate() {
            let (o, i) = (r / a.inner, r % a.inner);
            for (k, v) in res.into_iter().enumerate() {
                out[(o * m + k) * a.inner + i] = v;
            }
        }
    }
    out
}

/// The stable sort of each row.
pub(crate) fn sort<T: SortKey>(x: &[T], a: Axis) -> Vec<T> {
    rows(a, a.n, |it, par| {
        let flat: Vec<usize> = it.collect();
        order(flat.iter().map(|&f| x[f]), par).into_iter().map(|i| x[flat[i as usize]]).collect()
    })
}

/// The stable sorting permutation of each row.
pub(crate) fn argsort<T: SortKey>(x: &[T], a: Axis) -> Vec<u32> {
    rows(a, a.n, |it, par| order(it.map(|f| x[f]), par))
}

/// The indices of the `k` largest of each row, largest first, ties by lower index.
pub(crate) fn topk<T: SortKey>(x: &[T], k: usize, a: Axis) -> Vec<u32> {
    rows(a, k, |it, _| {
        // Descending key, ascending index: the order of (!key, index).
        let mut keyed: Vec<(u64, u32)> = it.enumerate().map(|(i, f)| (!x[f].key(), i as u32)).collect();
        if k == 0 {
            return Vec::new();
        }
        if k < keyed.len() {
            keyed.select_nth_unstable(k - 1);
            keyed.truncate(k);
        }
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, i)| i).collect()
    })
}
