//! Stable radix sort of unsigned words: the top digit scatters the whole slice once (each
//! thread histograms and scatters its own chunk into disjoint slices of the scratch), then
//! every bucket is sorted on its own, in parallel: a big one the same way on the next
//! digit, one that fits in cache by least-significant-digit passes there. A digit every
//! word shares costs one histogram and no pass. Stable, since each pass keeps the input
//! order within a digit.

use rayon::prelude::*;

/// Bits per digit: 2^11 counters (8 KiB of `u32`) stay in L1 beside the scattered lines.
const BITS: u32 = 11;
const BUCKETS: usize = 1 << BITS;
/// Buckets at most this long (256 KiB of `u64` words and as much scratch) finish by
/// least-significant-digit passes, in cache.
const LEAF: usize = 1 << 15;
/// Buckets at most this long are sorted by comparison (faster than a histogram).
const SMALL: usize = 64;
/// Slices at least this long are histogrammed and scattered by every thread.
const PAR_MIN: usize = 1 << 18;

/// An unsigned word the radix sort orders.
pub(super) trait Word: Copy + Ord + Send + Sync + Default {
    /// The digit of `self` at `shift`, `mask` wide.
    fn digit(self, shift: u32, mask: usize) -> usize;
}

macro_rules! word {
    ($($t:ty),*) => {$(
        impl Word for $t {
            #[inline(always)]
            fn digit(self, shift: u32, mask: usize) -> usize {
                (self >> shift) as usize & mask
            }
        }
    )*};
}

word!(u32, u64, u128);

/// A digit: its shift and mask.
type Digit = (u32, usize);

/// Sorts `v` ascending by bits `lo..hi` of each word. The bits at `hi` and above must be
/// zero and the bits below `lo` ascending in input order among words of equal upper bits
/// (an index, as argsort packs it), so the result is also the ascending order of the whole
/// words and the stable order of the upper bits.
pub(super) fn sort<W: Word>(v: &mut [W], lo: u32, hi: u32, par: bool) {
    let mut scratch = vec![W::default(); v.len()];
    sort_into(v, &mut scratch, lo, hi, true, par);
}

/// [`sort`] of the words in `a`, with `b` (as long) as scratch, into `a` when `into_a`,
/// else into `b`.
pub(super) fn sort_into<W: Word>(a: &mut [W], b: &mut [W], lo: u32, hi: u32, into_a: bool, par: bool) {
    let mut digits = Vec::new();
    let mut top = hi;
    while top > lo {
        let width = BITS.min(top - lo);
        top -= width;
        digits.push((top, (1usize << width) - 1));
    }
    sort_at(a, b, &digits, into_a, par);
}

/// Sorts the words in `a` by `digits` (most significant first) into `a` when `into_a`,
/// else into `b` (as long as `a`; both are scratch otherwise).
fn sort_at<W: Word>(a: &mut [W], b: &mut [W], digits: &[Digit], into_a: bool, par: bool) {
    let n = a.len();
    if n <= SMALL || digits.is_empty() {
        // Whole-word order is the order the caller asks for (see `sort`); with no digit
        // left the words differ only below `lo`, already in order.
        if !digits.is_empty() {
            a.sort_unstable();
        }
        if !into_a {
            b.copy_from_slice(a);
        }
        return;
    }
    if n <= LEAF {
        return lsd(a, b, digits, into_a);
    }
    let (shift, mask) = digits[0];
    let par = par && n >= PAR_MIN;
    let chunk = if par { n.div_ceil(rayon::current_num_threads().max(1)) } else { n };
    let counts: Vec<Vec<u32>> = if par {
        a.par_chunks(chunk).map(|c| histogram(c, shift, mask)).collect()
    } else {
        vec![histogram(a, shift, mask)]
    };
    let mut totals = vec![0usize; mask + 1];
    for c in &counts {
        for (t, &k) in totals.iter_mut().zip(c) {
            *t += k as usize;
        }
    }
    if totals.contains(&n) {
        // Every word has this digit: nothing to move.
        return sort_at(a, b, &digits[1..], into_a, par);
    }
    scatter(a, b, chunk, &counts, shift, mask, par);
    // The words are now in `b`, bucket by bucket; each bucket sorts on its own.
    let mut pairs = Vec::with_capacity(mask + 1);
    let (mut ra, mut rb) = (a, b);
    for &t in &totals {
        let (ha, ta) = std::mem::take(&mut ra).split_at_mut(t);
        let (hb, tb) = std::mem::take(&mut rb).split_at_mut(t);
        if t > 0 {
            pairs.push((hb, ha));
        }
        (ra, rb) = (ta, tb);
    }
    let rest = &digits[1..];
    let each = |(hb, ha): (&mut [W], &mut [W])| {
        let big = par && hb.len() >= PAR_MIN;
        sort_at(hb, ha, rest, !into_a, big);
    };
    if par {
        pairs.into_par_iter().for_each(each);
    } else {
        pairs.into_iter().for_each(each);
    }
}

/// How many words of `v` have each digit at `shift`.
fn histogram<W: Word>(v: &[W], shift: u32, mask: usize) -> Vec<u32> {
    let mut c = vec![0u32; mask + 1];
    for &w in v {
        c[w.digit(shift, mask)] += 1;
    }
    c
}

/// Moves `src` into `dst` ordered by the digit at `shift`, stably: chunk `i` of `src`
/// (`chunk` long, digit counts `counts[i]`) writes its words of digit `d` after those of
/// the smaller digits and after the earlier chunks' words of digit `d`, each chunk into
/// its own disjoint slices of `dst`, so the chunks scatter in parallel.
fn scatter<W: Word>(src: &[W], dst: &mut [W], chunk: usize, counts: &[Vec<u32>], shift: u32, mask: usize, par: bool) {
    let mut slots: Vec<Vec<std::slice::IterMut<'_, W>>> = counts.iter().map(|_| Vec::with_capacity(mask + 1)).collect();
    let mut rest = dst;
    for d in 0..=mask {
        for (s, c) in slots.iter_mut().zip(counts) {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(c[d] as usize);
            s.push(head.iter_mut());
            rest = tail;
        }
    }
    let run = |(part, mut slot): (&[W], Vec<std::slice::IterMut<'_, W>>)| {
        for &w in part {
            // Each slot holds exactly as many places as the chunk has words of its digit.
            if let Some(place) = slot[w.digit(shift, mask)].next() {
                *place = w;
            }
        }
    };
    if par {
        src.par_chunks(chunk).zip(slots).for_each(run);
    } else {
        src.chunks(chunk).zip(slots).for_each(run);
    }
}

/// Least-significant-digit passes over `digits` (most significant first), for a slice that
/// fits in cache; the result lands in `a` when `into_a`, else in `b`.
fn lsd<W: Word>(a: &mut [W], b: &mut [W], digits: &[Digit], into_a: bool) {
    let mut counts = vec![0u32; digits.len() * BUCKETS];
    for &w in a.iter() {
        for (c, &(shift, mask)) in counts.chunks_exact_mut(BUCKETS).zip(digits) {
            c[w.digit(shift, mask)] += 1;
        }
    }
    let n = a.len() as u32;
    let (mut src, mut dst) = (a, b);
    let mut in_a = true;
    for (c, &(shift, mask)) in counts.chunks_exact(BUCKETS).zip(digits).rev() {
        if c.contains(&n) {
            continue;
        }
        let mut next = [0u32; BUCKETS];
        let mut acc = 0;
        for (x, &k) in next.iter_mut().zip(c) {
            *x = acc;
            acc += k;
        }
        for &w in src.iter() {
            let d = w.digit(shift, mask);
            dst[next[d] as usize] = w;
            next[d] += 1;
        }
        (src, dst) = (dst, src);
        in_a = !in_a;
    }
    if in_a != into_a {
        dst.copy_from_slice(src);
    }
}
