//! Radix sort of packed `(key << 32) | index` words by their upper 32 bits.

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
