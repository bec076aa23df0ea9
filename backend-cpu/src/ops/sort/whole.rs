//! One long contiguous lane (a 1-D sort, or one row): the radix sort on every thread, with
//! the keys, the scratch and the result in blocks of the device's caching allocator, so a
//! repeated sort reuses warm (huge-page) memory instead of faulting fresh pages in.

use std::sync::Arc;

use rayon::prelude::*;

use super::key::SortKey;
use super::radix::{self, Word};
use crate::buffer::Output;
use crate::memory::Pool;
use polycompute_core::Result;

/// Elements per parallel chunk of the key and value passes.
const CHUNK: usize = 1 << 14;

/// A key word: `u32` for the 32-bit keys, `u64` for f64's.
trait KeyWord: Word + bytemuck::Pod {
    const BITS: u32;
    fn of(k: u64) -> Self;
    fn wide(self) -> u64;
}

impl KeyWord for u32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn of(k: u64) -> u32 {
        k as u32
    }
    #[inline(always)]
    fn wide(self) -> u64 {
        u64::from(self)
    }
}

impl KeyWord for u64 {
    const BITS: u32 = 64;
    #[inline(always)]
    fn of(k: u64) -> u64 {
        k
    }
    #[inline(always)]
    fn wide(self) -> u64 {
        self
    }
}

/// The sorted values of `x`, stably (see [`super::kernels::sort`] for the zeros and NaNs).
pub(super) fn sort<T: SortKey>(x: &[T], pool: &Arc<Pool>) -> Result<Output> {
    if T::WIDE {
        sort_as::<T, u64>(x, pool)
    } else {
        sort_as::<T, u32>(x, pool)
    }
}

fn sort_as<T: SortKey, K: KeyWord>(x: &[T], pool: &Arc<Pool>) -> Result<Output> {
    let n = x.len();
    let mut keys = pool.alloc::<K>(n)?;
    let mut sorted = pool.alloc::<K>(n)?;
    let (keys, sorted) = (keys.typed_mut::<K>(n), sorted.typed_mut::<K>(n));
    let (zero, nan) = (T::ZERO.key(), T::from_key(u64::MAX).key());
    // Whether a value differs from the value of its key (-0.0, a NaN other than the key's):
    // only then must the runs of zeros and NaNs be refilled from the input.
    let special = keys
        .par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .map(|(ks, xs)| {
            let mut special = false;
            for (k, &v) in ks.iter_mut().zip(xs) {
                let key = v.key();
                *k = K::of(key);
                if T::FLOAT && (key == zero || key == nan) {
                    special |= bytemuck::bytes_of(&T::from_key(key)) != bytemuck::bytes_of(&v);
                }
            }
            special
        })
        .reduce(|| false, |a, b| a || b);
    radix::sort_into(keys, sorted, 0, K::BITS, false, true);
    let sorted: &[K] = sorted;
    Output::write::<T>(pool, n, |out| {
        out.par_chunks_mut(CHUNK).zip(sorted.par_chunks(CHUNK)).for_each(|(o, ks)| {
            for (o, &k) in o.iter_mut().zip(ks) {
                *o = T::from_key(k.wide());
            }
        });
        if special {
            for key in [zero, nan] {
                let run = sorted.partition_point(|k| k.wide() < key)..sorted.partition_point(|k| k.wide() <= key);
                let originals = x.iter().filter(|v| v.key() == key);
                for (slot, &v) in out[run].iter_mut().zip(originals) {
                    *slot = v;
                }
            }
        }
    })
}

/// The stable sorting permutation of `x`.
pub(super) fn argsort<T: SortKey>(x: &[T], pool: &Arc<Pool>) -> Result<Output> {
    let n = x.len();
    if T::WIDE {
        // (key << 64) | index: u128 words, in vectors (the allocator's blocks are only
        // 8-byte aligned).
        let mut words: Vec<u128> =
            x.par_iter().enumerate().map(|(i, v)| (u128::from(v.key()) << 64) | i as u128).collect();
        radix::sort(&mut words, 64, 128, true);
        return Output::write::<u32>(pool, n, |out| {
            out.par_chunks_mut(CHUNK).zip(words.par_chunks(CHUNK)).for_each(|(o, ws)| {
                for (o, &w) in o.iter_mut().zip(ws) {
                    *o = w as u32;
                }
            });
        });
    }
    let mut words = pool.alloc::<u64>(n)?;
    let mut sorted = pool.alloc::<u64>(n)?;
    let (words, sorted) = (words.typed_mut::<u64>(n), sorted.typed_mut::<u64>(n));
    words.par_chunks_mut(CHUNK).zip(x.par_chunks(CHUNK)).enumerate().for_each(|(c, (ws, xs))| {
        for (j, (w, v)) in ws.iter_mut().zip(xs).enumerate() {
            *w = (v.key() << 32) | (c * CHUNK + j) as u64;
        }
    });
    radix::sort_into(words, sorted, 32, 64, false, true);
    let sorted: &[u64] = sorted;
    Output::write::<u32>(pool, n, |out| {
        out.par_chunks_mut(CHUNK).zip(sorted.par_chunks(CHUNK)).for_each(|(o, ws)| {
            for (o, &w) in o.iter_mut().zip(ws) {
                *o = w as u32;
            }
        });
    })
}
