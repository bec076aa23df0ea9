//! One lane's stable order, and the walk over lanes (in parallel, or one long lane split).

use rayon::prelude::*;

use super::key::SortKey;
use super::{radix, RADIX_MIN};
use crate::num::Num;
use crate::ops::axis::Axis;
use crate::par::PAR_MIN;

/// The elements of lane `(o, i)` are `x[(o * n + k) * inner + i]`.
#[inline]
pub(super) fn at(a: Axis, lane: usize, k: usize) -> usize {
    let (o, i) = (lane / a.inner, lane % a.inner);
    (o * a.n + k) * a.inner + i
}

/// Runs `per_lane(lane, par)` for each lane and writes its `m` results along the axis.
pub(super) fn lanes<U: Num>(a: Axis, m: usize, per_lane: impl Fn(usize, bool) -> Vec<U> + Sync) -> Vec<U> {
    let mut out = vec![U::ZERO; a.outer * m * a.inner];
    if out.is_empty() || a.n == 0 {
        return out;
    }
    let count = a.outer * a.inner;
    let single = count == 1 && a.n >= PAR_MIN;
    if a.inner == 1 {
        let fill = |(r, dst): (usize, &mut [U])| dst.copy_from_slice(&per_lane(r, single));
        if count > 1 && out.len() >= PAR_MIN {
            out.par_chunks_mut(m).enumerate().for_each(fill);
        } else {
            out.chunks_mut(m).enumerate().for_each(fill);
        }
    } else {
        let results: Vec<Vec<U>> = if out.len() >= PAR_MIN {
            (0..count).into_par_iter().map(|r| per_lane(r, false)).collect()
        } else {
            (0..count).map(|r| per_lane(r, false)).collect()
        };
        let am = Axis { n: m, ..a };
        for (r, res) in results.into_iter().enumerate() {
            for (k, v) in res.into_iter().enumerate() {
                out[at(am, r, k)] = v;
            }
        }
    }
    out
}

/// The stable order of lane `r` (ascending, or descending with `!key`).
pub(super) fn lane_order<T: SortKey>(x: &[T], a: Axis, r: usize, par: bool, desc: bool) -> Vec<u32> {
    let (o, i) = (r / a.inner, r % a.inner);
    let key = |k: usize| {
        let key = x[(o * a.n + k) * a.inner + i].key();
        if !desc {
            key
        } else if T::WIDE {
            !key
        } else {
            u64::from(u32::MAX) - key
        }
    };
    if T::WIDE {
        order_wide(a.n, key, par)
    } else {
        order_narrow(a.n, key, par)
    }
}

fn order_narrow(n: usize, key: impl Fn(usize) -> u64 + Sync, par: bool) -> Vec<u32> {
    let build = |i: usize| (key(i) << 32) | i as u64;
    let mut packed: Vec<u64> =
        if par { (0..n).into_par_iter().map(build).collect() } else { (0..n).map(build).collect() };
    if n >= RADIX_MIN {
        radix::sort(&mut packed, 32, 64, par);
    } else {
        packed.sort_unstable();
    }
    if par {
        packed.into_par_iter().map(|p| p as u32).collect()
    } else {
        packed.into_iter().map(|p| p as u32).collect()
    }
}

fn order_wide(n: usize, key: impl Fn(usize) -> u64 + Sync, par: bool) -> Vec<u32> {
    // (key << 64) | index: words are distinct (the index breaks ties), so their order is
    // the stable order of the keys.
    let mut keyed: Vec<u128> = (0..n).map(|i| (u128::from(key(i)) << 64) | i as u128).collect();
    if n >= RADIX_MIN {
        radix::sort(&mut keyed, 64, 128, par);
    } else {
        keyed.sort_unstable();
    }
    keyed.into_iter().map(|w| w as u32).collect()
}

/// The keys of one lane (`bits` wide), sorted.
pub(super) fn sorted_keys<K: radix::Word>(
    n: usize,
    bits: u32,
    key: impl Fn(usize) -> K + Sync + Send,
    par: bool,
) -> Vec<K> {
    let mut keys: Vec<K> = if par { (0..n).into_par_iter().map(key).collect() } else { (0..n).map(key).collect() };
    if n >= RADIX_MIN {
        radix::sort(&mut keys, 0, bits, par);
    } else {
        keys.sort_unstable();
    }
    keys
}
