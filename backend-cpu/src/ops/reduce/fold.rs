//! The folds behind sum, prod, min, max and mean, and their evaluation in pairwise order:
//! over a contiguous run (leaves of [`LEAF`] elements summed in [`LANES`] independent lanes,
//! which LLVM vectorises, then halves combined recursively), and over rows of a matrix
//! (whole rows accumulated in memory order, halves of the rows combined recursively).
//! The split points depend on lengths only, so results do not depend on the thread count.

use std::marker::PhantomData;

use crate::num::Num;
use crate::par::PAR_MIN;

/// Independent accumulators in a leaf.
const LANES: usize = 16;
/// Elements in a leaf: each lane adds `LEAF / LANES` values in sequence, so a float sum's
/// error is about `(LEAF / LANES + log2(n / LEAF)) · eps · Σ|x|`.
pub(super) const LEAF: usize = 512;
/// Rows accumulated in sequence before halves are combined.
const ROW_LEAF: usize = 8;

/// An associative fold from elements `In` into accumulators `Acc`.
pub(crate) trait Fold: Send + Sync + 'static {
    type In: Copy + Send + Sync;
    type Acc: Copy + Send + Sync;
    fn id() -> Self::Acc;
    fn fold(acc: Self::Acc, x: Self::In) -> Self::Acc;
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

macro_rules! same_type_fold {
    ($name:ident, $id:expr, $f:path) => {
        /// A fold whose accumulator is the element type.
        pub(crate) struct $name<T>(PhantomData<T>);
        impl<T: Num> Fold for $name<T> {
            type In = T;
            type Acc = T;
            #[inline(always)]
            fn id() -> T {
                $id
            }
            #[inline(always)]
            fn fold(acc: T, x: T) -> T {
                $f(acc, x)
            }
            #[inline(always)]
            fn combine(a: T, b: T) -> T {
                $f(a, b)
            }
        }
    };
}

same_type_fold!(Sum, T::ZERO, T::add);
same_type_fold!(Prod, T::ONE, T::mul);
same_type_fold!(Min, T::HIGHEST, T::min);
same_type_fold!(Max, T::LOWEST, T::max);

/// An integer whose sums are exact in a wider accumulator (for `mean`).
pub(crate) trait Widen: Num {
    type Wide: Copy + Send + Sync + 'static;
    const WIDE_ZERO: Self::Wide;
    fn widen(self) -> Self::Wide;
    fn wide_add(a: Self::Wide, b: Self::Wide) -> Self::Wide;
    fn wide_to_f64(w: Self::Wide) -> f64;
}

impl Widen for i32 {
    type Wide = i64;
    const WIDE_ZERO: i64 = 0;
    #[inline(always)]
    fn widen(self) -> i64 {
        self as i64
    }
    /// Exact: at most `u32::MAX` elements of at most `2^31` each.
    #[inline(always)]
    fn wide_add(a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
    fn wide_to_f64(w: i64) -> f64 {
        w as f64
    }
}

impl Widen for u32 {
    type Wide = u64;
    const WIDE_ZERO: u64 = 0;
    #[inline(always)]
    fn widen(self) -> u64 {
        self as u64
    }
    /// Exact: at most `u32::MAX` elements below `2^32` each sum below `2^64`.
    #[inline(always)]
    fn wide_add(a: u64, b: u64) -> u64 {
        a.wrapping_add(b)
    }
    fn wide_to_f64(w: u64) -> f64 {
        w as f64
    }
}

impl Widen for i64 {
    type Wide = i128;
    const WIDE_ZERO: i128 = 0;
    #[inline(always)]
    fn widen(self) -> i128 {
        self as i128
    }
    /// Exact: at most `u32::MAX` elements of at most `2^63` each.
    #[inline(always)]
    fn wide_add(a: i128, b: i128) -> i128 {
        a.wrapping_add(b)
    }
    fn wide_to_f64(w: i128) -> f64 {
        w as f64
    }
}

/// u8 and bool (`true` is 1: the mean of bools is the fraction that are true) sum exactly
/// in a u64.
macro_rules! widen_u64 {
    ($($t:ty),*) => {$(
        impl Widen for $t {
            type Wide = u64;
            const WIDE_ZERO: u64 = 0;
            #[inline(always)]
            fn widen(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn wide_add(a: u64, b: u64) -> u64 {
                a.wrapping_add(b)
            }
            fn wide_to_f64(w: u64) -> f64 {
                w as f64
            }
        }
    )*};
}

widen_u64!(u8, bool);

/// The exact sum of integers in a wider type.
pub(crate) struct WideSum<T>(PhantomData<T>);

impl<T: Widen> Fold for WideSum<T> {
    type In = T;
    type Acc = T::Wide;
    #[inline(always)]
    fn id() -> T::Wide {
        T::WIDE_ZERO
    }
    #[inline(always)]
    fn fold(acc: T::Wide, x: T) -> T::Wide {
        T::wide_add(acc, x.widen())
    }
    #[inline(always)]
    fn combine(a: T::Wide, b: T::Wide) -> T::Wide {
        T::wide_add(a, b)
    }
}

/// Folds a contiguous run in pairwise order, in parallel when it is long.
pub(crate) fn run<F: Fold>(x: &[F::In]) -> F::Acc {
    run_split::<F>(x, true)
}

/// [`run`] on the calling thread only (for work that is already one parallel task).
pub(crate) fn run_serial<F: Fold>(x: &[F::In]) -> F::Acc {
    run_split::<F>(x, false)
}

fn run_split<F: Fold>(x: &[F::In], par: bool) -> F::Acc {
    if x.len() <= LEAF {
        return leaf::<F>(x);
    }
    // Split at a multiple of LEAF so that leaves stay whole.
    let mid = x.len().div_ceil(2 * LEAF) * LEAF;
    let (a, b) = x.split_at(mid);
    let (a, b) = if par && x.len() >= PAR_MIN {
        rayon::join(|| run_split::<F>(a, par), || run_split::<F>(b, par))
    } else {
        (run_split::<F>(a, par), run_split::<F>(b, par))
    };
    F::combine(a, b)
}

#[inline]
fn leaf<F: Fold>(x: &[F::In]) -> F::Acc {
    let mut acc = [F::id(); LANES];
    let mut chunks = x.chunks_exact(LANES);
    for c in &mut chunks {
        for j in 0..LANES {
            acc[j] = F::fold(acc[j], c[j]);
        }
    }
    // Combine the lanes pairwise too.
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for j in 0..width {
            acc[j] = F::combine(acc[j], acc[j + width]);
        }
    }
    let mut r = acc[0];
    for &v in chunks.remainder() {
        r = F::fold(r, v);
    }
    r
}

/// Folds `rows` rows of `acc.len()` columns, row `r` starting at `x[r * stride]`, into `acc`
/// (overwritten), reading each row in memory order. `spare` holds reusable buffers, one per
/// recursion depth.
pub(crate) fn rows<F: Fold>(x: &[F::In], rows: usize, stride: usize, acc: &mut [F::Acc], spare: &mut Vec<Vec<F::Acc>>) {
    rows_at::<F>(x, rows, stride, acc, spare, 0);
}

fn rows_at<F: Fold>(
    x: &[F::In],
    rows: usize,
    stride: usize,
    acc: &mut [F::Acc],
    spare: &mut Vec<Vec<F::Acc>>,
    depth: usize,
) {
    let cols = acc.len();
    if rows <= ROW_LEAF {
        acc.fill(F::id());
        for r in 0..rows {
            for (a, &v) in acc.iter_mut().zip(&x[r * stride..r * stride + cols]) {
                *a = F::fold(*a, v);
            }
        }
        return;
    }
    let mid = rows / 2;
    if rows * cols >= 2 * PAR_MIN {
        // The halves run in parallel, each reading whole rows in order; the combination
        // order is the same as below, so the result does not depend on the thread count.
        let mut tmp = vec![F::id(); cols];
        let (lo, hi) = x.split_at(mid * stride);
        rayon::join(
            || rows_at::<F>(lo, mid, stride, acc, spare, depth + 1),
            || rows_at::<F>(hi, rows - mid, stride, &mut tmp, &mut Vec::new(), depth + 1),
        );
        for (a, &t) in acc.iter_mut().zip(&tmp) {
            *a = F::combine(*a, t);
        }
        return;
    }
    rows_at::<F>(x, mid, stride, acc, spare, depth + 1);
    if spare.len() <= depth {
        spare.resize_with(depth + 1, Vec::new);
    }
    let mut tmp = std::mem::take(&mut spare[depth]);
    tmp.resize(cols, F::id());
    rows_at::<F>(&x[mid * stride..], rows - mid, stride, &mut tmp, spare, depth + 1);
    for (a, &t) in acc.iter_mut().zip(&tmp) {
        *a = F::combine(*a, t);
    }
    spare[depth] = tmp;
}
