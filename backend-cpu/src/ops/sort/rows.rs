//! Many short contiguous rows: each row's keys on the stack, each element placed at its
//! stable rank, rows in parallel in blocks.
//! No allocation per row, and no refill of zeros and NaNs: the values move themselves.

use rayon::prelude::*;

use super::key::SortKey;
use crate::num::Num;

/// Rows at most this long take this path.
pub(super) const SHORT: usize = 32;
/// Rows per parallel task.
const BLOCK: usize = 1 << 12;

/// The stable order of `row` (at most [`SHORT`] long) into `idx`, branch-free: element
/// `i` goes to its rank, the count of smaller keys plus of equal keys before it. The
/// counts are whole-row comparisons the compiler vectorises, where an insertion sort
/// mispredicts a branch per move on random data.
#[inline]
fn order<T: SortKey>(row: &[T], idx: &mut [u32]) {
    let mut keys = [0u64; SHORT];
    for (k, &v) in keys.iter_mut().zip(row) {
        *k = v.key();
    }
    let keys = &keys[..row.len()];
    for (i, &ki) in keys.iter().enumerate() {
        let below: usize = keys.iter().map(|&kj| usize::from(kj < ki)).sum();
        let ties: usize = keys[..i].iter().map(|&kj| usize::from(kj == ki)).sum();
        idx[below + ties] = i as u32;
    }
}

/// Runs `emit(row, order, out_row)` for every row of `x` (rows `n` long), in parallel.
fn each_row<T: SortKey, U: Num>(x: &[T], n: usize, emit: impl Fn(&[T], &[u32], &mut [U]) + Sync) -> Vec<U> {
    let mut out = vec![U::ZERO; x.len()];
    let block = |(xs, os): (&[T], &mut [U])| {
        let mut idx = [0u32; SHORT];
        for (row, o) in xs.chunks_exact(n).zip(os.chunks_exact_mut(n)) {
            order(row, &mut idx[..n]);
            emit(row, &idx[..n], o);
        }
    };
    if x.len() >= crate::par::PAR_MIN {
        x.par_chunks(n * BLOCK).zip(out.par_chunks_mut(n * BLOCK)).for_each(block);
    } else {
        block((x, &mut out));
    }
    out
}

/// The sorted values of each row (`n` long, `1..=SHORT`).
pub(super) fn sort<T: SortKey>(x: &[T], n: usize) -> Vec<T> {
    each_row(x, n, |row, idx, out| {
        for (o, &i) in out.iter_mut().zip(idx) {
            *o = row[i as usize];
        }
    })
}

/// The stable sorting permutation of each row (`n` long, `1..=SHORT`).
pub(super) fn argsort<T: SortKey>(x: &[T], n: usize) -> Vec<u32> {
    each_row(x, n, |_, idx, out| out.copy_from_slice(idx))
}
