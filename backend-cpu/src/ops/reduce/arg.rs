//! argmin and argmax: the index of the first extreme; the first NaN wins over everything.

use rayon::prelude::*;

use super::fold::{self, Max, Min};
use crate::num::Num;
use crate::par::{PAR_MIN, TASK};

/// Which extreme: `better(a, b)` is true when `a` strictly beats `b`.
pub(crate) trait Pick: Send + Sync + 'static {
    fn better<T: Num>(a: T, b: T) -> bool;
    /// The extreme value of a run (NaN if it holds one), by a vectorised fold.
    fn extreme<T: Num>(x: &[T]) -> T;
}

/// argmin.
pub(crate) struct Smallest;
/// argmax.
pub(crate) struct Largest;

impl Pick for Smallest {
    #[inline(always)]
    fn better<T: Num>(a: T, b: T) -> bool {
        a < b
    }
    fn extreme<T: Num>(x: &[T]) -> T {
        fold::run_serial::<Min<T>>(x)
    }
}

impl Pick for Largest {
    #[inline(always)]
    fn better<T: Num>(a: T, b: T) -> bool {
        a > b
    }
    fn extreme<T: Num>(x: &[T]) -> T {
        fold::run_serial::<Max<T>>(x)
    }
}

/// The winner of a run: its index and value.
#[derive(Copy, Clone)]
struct Best<T> {
    index: usize,
    value: T,
}

impl<T: Num> Best<T> {
    /// The earlier-starting winner `self` against the later `other`, by the rules: a NaN
    /// first, then the strictly better value, then the earlier index.
    fn then<P: Pick>(self, other: Best<T>) -> Best<T> {
        let (first, second) = if self.index <= other.index { (self, other) } else { (other, self) };
        if first.value.is_nan() || (!second.value.is_nan() && !P::better(second.value, first.value)) {
            first
        } else {
            second
        }
    }
}

/// The first extreme of a non-empty run, its index relative to the run: the extreme value
/// by a vectorised fold, then the first element equal to it (or the first NaN). Equal
/// values (`-0.0 == 0.0` included) count as ties, so the first of them wins.
fn scan<T: Num, P: Pick>(x: &[T]) -> Best<T> {
    let value = P::extreme(x);
    let index = if value.is_nan() { first_index(x, |v| v.is_nan()) } else { first_index(x, |v| v == value) };
    Best { index, value: x[index] }
}

/// The first index where `hit` holds (0 if none): blocks are tested without early exit,
/// which vectorises, and only the block with the hit is searched element by element.
#[inline]
fn first_index<T: Num>(x: &[T], hit: impl Fn(T) -> bool) -> usize {
    const BLOCK: usize = 64;
    for (b, block) in x.chunks(BLOCK).enumerate() {
        if block.iter().fold(false, |found, &v| found | hit(v)) {
            return b * BLOCK + block.iter().position(|&v| hit(v)).unwrap_or(0);
        }
    }
    0
}

/// The index of the first extreme of a non-empty run, in parallel when it is long.
pub(crate) fn run<T: Num, P: Pick>(x: &[T]) -> u32 {
    let best = if x.len() >= PAR_MIN {
        x.par_chunks(TASK)
            .enumerate()
            .map(|(t, c)| {
                let b = scan::<T, P>(c);
                Best { index: b.index + t * TASK, value: b.value }
            })
            .reduce_with(|a, b| a.then::<P>(b))
    } else {
        Some(scan::<T, P>(x))
    };
    // Arrays hold at most u32::MAX elements (checked by `Op::output`).
    best.map_or(0, |b| b.index as u32)
}

/// Per column, the row of the first extreme among `rows` rows of `out.len()` columns, row
/// `r` starting at `x[r * stride]`; rows are read in memory order.
pub(crate) fn rows<T: Num, P: Pick>(x: &[T], rows: usize, stride: usize, out: &mut [u32]) {
    let cols = out.len();
    let mut best: Vec<T> = x[..cols].to_vec();
    out.fill(0);
    for r in 1..rows {
        let row = &x[r * stride..r * stride + cols];
        for ((b, o), &v) in best.iter_mut().zip(out.iter_mut()).zip(row) {
            // A NaN already found stays; the first NaN replaces any number.
            if !b.is_nan() && (v.is_nan() || P::better(v, *b)) {
                *b = v;
                *o = r as u32;
            }
        }
    }
}

/// Rows this short (`len` elements, contiguous) are not scanned one by one: a call per row
/// of a fold and a search costs more than the row itself (measured 12× a sum along rows of 8).
pub(crate) const SHORT_ROW: usize = 32;

/// Rows transposed together by [`short_rows`]: a block of `SHORT_ROW × BLOCK_ROWS` values
/// stays in L1.
pub(crate) const BLOCK_ROWS: usize = 128;

/// The first extreme of each of `out.len()` contiguous rows of `len` (at most [`SHORT_ROW`])
/// elements. A block of rows is transposed into scratch, so that the comparison runs across
/// rows, one lane per row, with a branchless update; the rules are those of [`rows`] (the
/// first NaN wins, then the strictly better value, then the earlier index).
pub(crate) fn short_rows<T: Num, P: Pick>(x: &[T], len: usize, out: &mut [u32]) {
    debug_assert!((1..=SHORT_ROW).contains(&len) && x.len() == len * out.len());
    // Compiled for AVX2 where the CPU has it: the baseline x86-64 build (SSE2, no blend)
    // turned the update into one conditional store per lane, 4.6× slower.
    pulp::Arch::new().dispatch(ShortRows::<T, P> { x, len, out, pick: std::marker::PhantomData });
}

/// [`short_rows`] as a `pulp` kernel.
struct ShortRows<'a, T, P> {
    x: &'a [T],
    len: usize,
    out: &'a mut [u32],
    pick: std::marker::PhantomData<P>,
}

impl<T: Num, P: Pick> pulp::WithSimd for ShortRows<'_, T, P> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let ShortRows { x, len, out, .. } = self;
        let mut scratch = vec![x[0]; len * BLOCK_ROWS];
        let mut best = [x[0]; BLOCK_ROWS];
        for (xs, os) in x.chunks(len * BLOCK_ROWS).zip(out.chunks_mut(BLOCK_ROWS)) {
            let n = os.len();
            for (r, row) in xs.chunks_exact(len).enumerate() {
                for (column, &v) in scratch.chunks_exact_mut(BLOCK_ROWS).zip(row) {
                    column[r] = v;
                }
            }
            let best = &mut best[..n];
            best.copy_from_slice(&scratch[..n]);
            os.fill(0);
            for (j, column) in scratch.chunks_exact(BLOCK_ROWS).enumerate().skip(1) {
                for ((b, o), &v) in best.iter_mut().zip(os.iter_mut()).zip(&column[..n]) {
                    let take = !b.is_nan() & (v.is_nan() | P::better(v, *b));
                    *b = if take { v } else { *b };
                    *o = if take { j as u32 } else { *o };
                }
            }
        }
    }
}
