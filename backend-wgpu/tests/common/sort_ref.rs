//! The reference the sort tests compare with: numpy's order and a stable argsort.

use std::cmp::Ordering;

/// numpy's sort order over f64 (every tested dtype converts exactly): NaN last, -0.0 == +0.0.
pub fn np_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Stable argsort of every row of a row-major `[outer, n, inner]` array along its middle axis
/// (descending for topk).
pub fn ref_argsort(v: &[f64], (outer, n, inner): (usize, usize, usize), descending: bool) -> Vec<u32> {
    let mut out = vec![0u32; v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |t: usize| (o * n + t) * inner + i;
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&x, &y| {
                let c = np_cmp(v[at(x)], v[at(y)]);
                if descending {
                    c.reverse()
                } else {
                    c
                }
            });
            for (t, &s) in order.iter().enumerate() {
                out[at(t)] = s as u32;
            }
        }
    }
    out
}
