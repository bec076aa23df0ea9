//! The sort kernels against the standard library's stable sort.

use super::lane::lane_order;
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
