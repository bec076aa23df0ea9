//! `Op::Sort`, `Op::Argsort` and `Op::TopK` in numpy's order. Each element maps to an
//! unsigned key whose integer order is numpy's order ([`SortKey`]): NaN above +inf, and
//! `-0.0` and `+0.0` the same key. A lane (the elements along the axis for one position of
//! the others) is sorted as `(key, index)` pairs, so equal keys keep their input order: a
//! stable sort whichever algorithm orders the pairs. Pairs of 32-bit dtypes pack into one
//! `u64` and long lanes are radix-sorted ([`radix`]); f64 pairs use the standard library's
//! sort. Lanes run in parallel; one long lane splits by its top digit and sorts the buckets
//! in parallel.

use polycompute_core::{DType, HostSlice, Result, Shape};
use rayon::prelude::*;

use super::axis::Axis;
use crate::buffer::{host_vec, typed, Output};
use crate::num::{with_dtype, Num};
use crate::par::PAR_MIN;

/// A key whose unsigned order is numpy's sort order for the element type.
pub(crate) trait SortKey: Num {
    /// True when the key needs 64 bits (f64).
    const WIDE: bool;
    /// True for floats, whose key merges the two zeros and every NaN.
    const FLOAT: bool;
    /// The key.
    fn key(self) -> u64;
    /// The value of a key (for floats: `+0.0` for the zeros' key, a NaN for NaN's).
    fn from_key(k: u64) -> Self;
}

impl SortKey for f32 {
    const WIDE: bool = false;
    const FLOAT: bool = true;
    #[inline]
    fn from_key(k: u64) -> f32 {
        let k = k as u32;
        f32::from_bits(if k >> 31 == 1 { k ^ 0x8000_0000 } else { !k })
    }
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
    const WIDE: bool = true;
    const FLOAT: bool = true;
    #[inline]
    fn from_key(k: u64) -> f64 {
        f64::from_bits(if k >> 63 == 1 { k ^ (1 << 63) } else { !k })
    }
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
    const WIDE: bool = false;
    const FLOAT: bool = false;
    #[inline]
    fn from_key(k: u64) -> i32 {
        ((k as u32) ^ 0x8000_0000) as i32
    }
    #[inline]
    fn key(self) -> u64 {
        u64::from((self as u32) ^ 0x8000_0000)
    }
}

impl SortKey for u32 {
    const WIDE: bool = false;
    const FLOAT: bool = false;
    #[inline]
    fn from_key(k: u64) -> u32 {
        k as u32
    }
    #[inline]
    fn key(self) -> u64 {
        u64::from(self)
    }
}

/// The halves sort by the key of their value widened to f32 (exact, order-preserving; the
/// key of a NaN is f32's, so every NaN sorts last as for f32).
macro_rules! half_sort_key {
    ($t:ty) => {
        impl SortKey for $t {
            const WIDE: bool = false;
            const FLOAT: bool = true;
            #[inline]
            fn from_key(k: u64) -> $t {
                <$t>::from_f32(f32::from_key(k))
            }
            #[inline]
            fn key(self) -> u64 {
                self.to_f32().key()
            }
        }
    };
}

half_sort_key!(polycompute_core::f16);
half_sort_key!(polycompute_core::bf16);

/// Lanes at least this long are radix-sorted.
const RADIX_MIN: usize = 1 << 12;

/// The elements of lane `(o, i)` are `x[(o * n + k) * inner + i]`.
#[inline]
fn at(a: Axis, lane: usize, k: usize) -> usize {
    let (o, i) = (lane / a.inner, lane % a.inner);
    (o * a.n + k) * a.inner + i
}

/// Runs `per_lane(lane, par)` for each lane and writes its `m` results along the axis.
fn lanes<U: Num>(a: Axis, m: usize, per_lane: impl Fn(usize, bool) -> Vec<U> + Sync) -> Vec<U> {
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
fn lane_order<T: SortKey>(x: &[T], a: Axis, r: usize, par: bool, desc: bool) -> Vec<u32> {
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
        radix::sort_upper_u32(&mut packed, par);
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
    let mut keyed: Vec<(u64, u32)> = (0..n).map(|i| (key(i), i as u32)).collect();
    // Pairs are distinct (the index breaks ties), so an unstable sort is stable here.
    if par {
        keyed.par_sort_unstable();
    } else {
        keyed.sort_unstable();
    }
    keyed.into_iter().map(|(_, i)| i).collect()
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
            sorted_keys(a.n, |k| x[at(k)].key(), par)
        } else {
            // 32-bit keys sort as u32: half the memory traffic of u64.
            sorted_keys(a.n, |k| x[at(k)].key() as u32, par).into_iter().map(u64::from).collect()
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

/// The keys of one lane, sorted.
fn sorted_keys<K: Ord + Send + Copy>(n: usize, key: impl Fn(usize) -> K + Sync + Send, par: bool) -> Vec<K> {
    let mut keys: Vec<K> = if par { (0..n).into_par_iter().map(key).collect() } else { (0..n).map(key).collect() };
    if par {
        keys.par_sort_unstable();
    } else {
        keys.sort_unstable();
    }
    keys
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

/// `Op::Sort`: the values of each lane in order ([`sort`]).
pub(crate) fn values(axis: usize, shape: &Shape, data: &[HostSlice<'_>]) -> Result<Output> {
    let dtype = data.first().map_or(DType::F32, |d| d.dtype());
    Ok(Output::host(with_dtype!(dtype, T => host_vec(sort::<T>(typed(data[0]), Axis::new(shape, axis))))))
}

/// `Op::Argsort`: the sorting permutation of each lane ([`argsort`]).
pub(crate) fn indices(axis: usize, shape: &Shape, data: &[HostSlice<'_>]) -> Result<Output> {
    let dtype = data.first().map_or(DType::F32, |d| d.dtype());
    Ok(Output::host(with_dtype!(dtype, T => host_vec(argsort::<T>(typed(data[0]), Axis::new(shape, axis))))))
}

/// `Op::TopK`: the indices of the `k` largest of each lane ([`topk`]).
pub(crate) fn top_k(k: usize, axis: usize, shape: &Shape, data: &[HostSlice<'_>]) -> Result<Output> {
    let dtype = data.first().map_or(DType::F32, |d| d.dtype());
    Ok(Output::host(with_dtype!(dtype, T => host_vec(topk::<T>(typed(data[0]), k, Axis::new(shape, axis))))))
}

/// Radix sort of packed `(key << 32) | index` words by their upper 32 bits.
mod radix {
    use rayon::prelude::*;

    /// Bits per digit: 2^11 counters stay in L1.
    const BITS: u32 = 11;
    const BUCKETS: usize = 1 << BITS;

    /// Sorts `v` by bits 32..64, stably (the lower bits keep their relative order, so the
    /// whole words end up in ascending order when the lower bits were ascending).
    pub(super) fn sort_upper_u32(v: &mut Vec<u64>, par: bool) {
        // Digits over bits 32..64: 32..43, 43..54, 54..64.
        let shifts = [32, 32 + BITS, 32 + 2 * BITS];
        if !par {
            lsd(v, &shifts);
            return;
        }
        // Split by the top digit (one scatter), then sort the buckets in parallel on the
        // lower digits.
        let top = shifts[2];
        let mut counts = vec![0usize; BUCKETS];
        for &w in v.iter() {
            counts[digit(w, top)] += 1;
        }
        let mut starts = vec![0usize; BUCKETS];
        let mut acc = 0;
        for (s, &c) in starts.iter_mut().zip(&counts) {
            *s = acc;
            acc += c;
        }
        let mut out = vec![0u64; v.len()];
        let mut next = starts.clone();
        for &w in v.iter() {
            let d = digit(w, top);
            out[next[d]] = w;
            next[d] += 1;
        }
        let mut buckets: Vec<&mut [u64]> = Vec::with_capacity(BUCKETS);
        let mut rest: &mut [u64] = &mut out;
        for &c in &counts {
            let (b, r) = rest.split_at_mut(c);
            buckets.push(b);
            rest = r;
        }
        buckets.into_par_iter().for_each(|b| {
            if b.len() >= super::RADIX_MIN {
                let mut owned = b.to_vec();
                lsd(&mut owned, &shifts[..2]);
                b.copy_from_slice(&owned);
            } else {
                b.sort_unstable();
            }
        });
        *v = out;
    }

    #[inline]
    fn digit(w: u64, shift: u32) -> usize {
        ((w >> shift) as usize) & (BUCKETS - 1)
    }

    /// Least-significant-digit radix sort on the digits at `shifts`, skipping a digit that
    /// every word shares.
    fn lsd(v: &mut Vec<u64>, shifts: &[u32]) {
        let mut counts = vec![[0usize; BUCKETS]; shifts.len()];
        for &w in v.iter() {
            for (c, &s) in counts.iter_mut().zip(shifts) {
                c[digit(w, s)] += 1;
            }
        }
        let mut tmp = vec![0u64; v.len()];
        for (c, &s) in counts.iter().zip(shifts) {
            if c.contains(&v.len()) {
                continue;
            }
            let mut next = [0usize; BUCKETS];
            let mut acc = 0;
            for (n, &k) in next.iter_mut().zip(c) {
                *n = acc;
                acc += k;
            }
            for &w in v.iter() {
                let d = digit(w, s);
                tmp[next[d]] = w;
                next[d] += 1;
            }
            std::mem::swap(v, &mut tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stable order by the standard library's stable sort with numpy's comparator.
    fn stable_order(v: &[f32]) -> Vec<u32> {
        let mut idx: Vec<u32> = (0..v.len() as u32).collect();
        idx.sort_by(|&a, &b| {
            let (x, y) = (v[a as usize], v[b as usize]);
            match (x.is_nan(), y.is_nan()) {
                (true, true) => std::cmp::Ordering::Equal,
                (true, false) => std::cmp::Ordering::Greater,
                (false, true) => std::cmp::Ordering::Less,
                _ => x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal),
            }
        });
        idx
    }

    #[test]
    fn radix_and_parallel_paths_are_stable_in_numpy_order() {
        // Long enough for the radix sort (and the parallel split), with many ties, both
        // zeros and NaNs.
        let n = (1 << 17) + 3;
        let v: Vec<f32> = (0..n)
            .map(|i: usize| match i % 11 {
                0 => f32::NAN,
                1 => -0.0,
                2 => 0.0,
                _ => ((i.wrapping_mul(2_654_435_761) >> 7) % 997) as f32 - 498.5,
            })
            .collect();
        let a = Axis { outer: 1, n, inner: 1 };
        let want = stable_order(&v);
        assert_eq!(argsort(&v, a), want);
        for par in [false, true] {
            assert_eq!(lane_order(&v, a, 0, par, false), want, "par {par}");
        }
        let sorted = sort(&v, a);
        assert!(sorted.iter().zip(&want).all(|(s, &i)| s.to_bits() == v[i as usize].to_bits()));
        let ints: Vec<i32> = (0..n as i32).map(|i| (i.wrapping_mul(-1_640_531_527)) >> 9).collect();
        let mut want: Vec<u32> = (0..n as u32).collect();
        want.sort_by_key(|&i| ints[i as usize]);
        assert_eq!(argsort(&ints, a), want);
    }
}
