//! The sort kernels against the standard library's stable sort with numpy's comparator,
//! on each path: the one long lane (parallel radix), many short rows, the general walk.

use std::cmp::Ordering;
use std::sync::Arc;

use polycompute_core::{bf16, f16, BackendKind, DeviceId, DeviceToken};

use super::kernels::{argsort, argsort_output, sort, sort_output};
use super::key::SortKey;
use super::lane::lane_order;
use super::*;
use crate::buffer::CpuBuffer;
use crate::num::Num;

/// numpy's order: NaN after everything (NaNs tie), `-0.0 == +0.0`.
fn numpy_cmp<T: Num>(x: T, y: T) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// The stable order by the standard library's stable sort with numpy's comparator.
fn stable_order<T: Num>(v: &[T]) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..v.len() as u32).collect();
    idx.sort_by(|&a, &b| numpy_cmp(v[a as usize], v[b as usize]));
    idx
}

fn pool() -> Arc<crate::memory::Pool> {
    Arc::new(crate::memory::Pool::new(DeviceId::new(BackendKind::Cpu, 0), 1 << 30))
}

fn read<T: Num>(out: Output) -> Vec<T> {
    let buffer = CpuBuffer::new(out, DeviceToken::fresh());
    T::of_slice(buffer.as_slice()).expect("dtype").to_vec()
}

fn bits<T: Num>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

/// xorshift64: deterministic pseudo-random words.
fn words(n: usize, mut s: u64) -> Vec<u64> {
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        })
        .collect()
}

/// Random values with NaNs of several payloads and signs, both zeros, infinities and many
/// duplicates, from `f` of a random word.
fn specials<T: Num>(n: usize, seed: u64, nans: &[T], f: impl Fn(u64) -> T) -> Vec<T> {
    words(n, seed)
        .into_iter()
        .map(|w| match w % 13 {
            0 => nans[(w >> 8) as usize % nans.len()],
            1 => T::neg(T::ZERO),
            2 => T::ZERO,
            3 => f((w >> 20) & 7),
            _ => f(w >> 4),
        })
        .collect()
}

/// Sort and argsort of `v` as one lane, by the path `sort_output` takes, against the
/// stable reference (bit for bit: the zeros and NaNs keep their input order).
fn check_whole<T: SortKey>(v: &[T], what: &str) {
    let a = Axis { outer: 1, n: v.len(), inner: 1 };
    assert!(matches!(kernels::path(a), kernels::Path::Whole), "{what}: the radix path");
    let want = stable_order(v);
    let pool = pool();
    let got: Vec<u32> = read(argsort_output(v, a, &pool).unwrap());
    assert!(got == want, "{what}: argsort");
    let sorted: Vec<T> = read(sort_output(v, a, &pool).unwrap());
    let want_values: Vec<T> = want.iter().map(|&i| v[i as usize]).collect();
    assert!(bits(&sorted) == bits(&want_values), "{what}: sort");
}

#[test]
fn the_parallel_radix_path_matches_the_stable_reference_for_every_dtype() {
    // Past the radix sort's parallel split (2^18) and its in-cache leaves (2^15); the
    // release bench checks 2^24 (`polycompute bench`'s sort rows).
    let n = (1 << 18) + 5;
    let f32_of = |w: u64| ((w % 2001) as f32 - 1000.0) * 0.37;
    let f32_nans = [f32::NAN, -f32::NAN, f32::from_bits(0x7f80_0001), f32::from_bits(0xffc0_1234)];
    let x = specials(n, 1, &f32_nans, f32_of);
    check_whole(&x, "f32");
    // Spread over the whole bit range, with infinities.
    let wide: Vec<f32> = words(n, 2)
        .into_iter()
        .map(|w| match w % 97 {
            0 => f32::INFINITY,
            1 => f32::NEG_INFINITY,
            2 => f32::NAN,
            _ => f32::from_bits(w as u32 & 0xff7f_ffff),
        })
        .collect();
    check_whole(&wide, "f32 all bits");
    let f64_nans = [f64::NAN, -f64::NAN, f64::from_bits(0x7ff0_0000_0000_0001)];
    let x = specials(n, 3, &f64_nans, |w| ((w % 4001) as f64 - 2000.0) * 1e-3);
    check_whole(&x, "f64");
    let x: Vec<f64> = words(n, 4).into_iter().map(|w| f64::from_bits(w & 0xffef_ffff_ffff_ffff)).collect();
    check_whole(&x, "f64 all bits");
    let i: Vec<i32> = words(n, 5).into_iter().map(|w| (w as i32) >> (w >> 59)).collect();
    check_whole(&i, "i32");
    let u: Vec<u32> = words(n, 6).into_iter().map(|w| (w as u32) >> (w >> 59)).collect();
    check_whole(&u, "u32");
    let h = specials(n, 7, &[f16::NAN, -f16::NAN], |w| f16::from_f32((w % 3001) as f32 - 1500.0));
    check_whole(&h, "f16");
    let b = specials(n, 8, &[bf16::NAN, -bf16::NAN], |w| bf16::from_f32(((w % 3001) as f32 - 1500.0) * 0.1));
    check_whole(&b, "bf16");
}

#[test]
fn skewed_keys_skip_their_constant_digits_and_stay_stable() {
    // Every key in one top bucket (small non-negative ints), and one bucket holding
    // nearly all of them beside a few outliers.
    let n = (1 << 18) + 1;
    let small: Vec<i32> = words(n, 9).into_iter().map(|w| (w % 50) as i32).collect();
    check_whole(&small, "i32 in 0..50");
    let mut lumpy: Vec<u32> = words(n, 10).into_iter().map(|w| (w % 3) as u32).collect();
    lumpy[7] = u32::MAX;
    lumpy[n - 1] = 1 << 31;
    check_whole(&lumpy, "u32 mostly 0..3");
    let same = vec![0.5f32; RADIX_MIN];
    check_whole(&same, "one value");
}

#[test]
fn radix_results_land_where_asked() {
    for n in [0, 1, 63, 64, 65, 5000, (1 << 15) + 1, (1 << 18) + 3] {
        let v: Vec<u32> = words(n, n as u64 + 1).into_iter().map(|w| w as u32).collect();
        let mut want = v.clone();
        want.sort_unstable();
        for (into_a, par) in [(true, false), (false, false), (true, true), (false, true)] {
            let (mut a, mut b) = (v.clone(), vec![0; n]);
            radix::sort_into(&mut a, &mut b, 0, 32, into_a, par);
            assert_eq!(if into_a { &a } else { &b }, &want, "n {n} into_a {into_a} par {par}");
        }
    }
}

#[test]
fn short_rows_sort_on_the_stack_in_numpy_order() {
    let nans = [f32::NAN, -f32::NAN];
    for n in 1..=rows::SHORT + 1 {
        let rows_count = 3000;
        let x = specials(rows_count * n, n as u64, &nans, |w| (w % 7) as f32 - 3.0);
        let a = Axis { outer: rows_count, n, inner: 1 };
        let expect_short = n <= rows::SHORT;
        assert_eq!(matches!(kernels::path(a), kernels::Path::ShortRows), expect_short, "n {n}");
        let pool = pool();
        let order: Vec<u32> = read(argsort_output(&x, a, &pool).unwrap());
        let sorted: Vec<f32> = read(sort_output(&x, a, &pool).unwrap());
        for r in 0..rows_count {
            let row = &x[r * n..(r + 1) * n];
            let want = stable_order(row);
            assert_eq!(&order[r * n..(r + 1) * n], &want[..], "n {n} row {r}");
            let want_values: Vec<f32> = want.iter().map(|&i| row[i as usize]).collect();
            assert_eq!(bits(&sorted[r * n..(r + 1) * n]), bits(&want_values), "n {n} row {r}");
        }
    }
}

#[test]
fn radix_and_parallel_paths_are_stable_in_numpy_order() {
    // Long enough for the radix sort (and the parallel split), with many ties, both
    // zeros and NaNs: the general walk's lanes.
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

#[test]
fn long_lanes_along_either_axis_radix_sort_each_lane() {
    // Several lanes past RADIX_MIN, contiguous ([3, n] along 1) and strided ([n, 3] along 0).
    let n = RADIX_MIN + 17;
    let nans = [f64::NAN];
    let x = specials(3 * n, 11, &nans, |w| (w % 301) as f64 - 150.0);
    for (a, lane) in [
        (
            Axis { outer: 3, n, inner: 1 },
            (|r: usize, k: usize, n: usize| r * n + k) as fn(usize, usize, usize) -> usize,
        ),
        (Axis { outer: 1, n, inner: 3 }, |r, k, _| k * 3 + r),
    ] {
        assert!(matches!(kernels::path(a), kernels::Path::Lanes));
        let pool = pool();
        let order: Vec<u32> = read(argsort_output(&x, a, &pool).unwrap());
        let sorted: Vec<f64> = read(sort_output(&x, a, &pool).unwrap());
        for r in 0..3 {
            let row: Vec<f64> = (0..n).map(|k| x[lane(r, k, n)]).collect();
            let want = stable_order(&row);
            let got: Vec<u32> = (0..n).map(|k| order[lane(r, k, n)]).collect();
            assert_eq!(got, want, "lane {r} of {a:?}");
            let got: Vec<u64> = (0..n).map(|k| sorted[lane(r, k, n)].to_bits()).collect();
            let want: Vec<u64> = want.iter().map(|&i| row[i as usize].to_bits()).collect();
            assert_eq!(got, want, "lane {r} of {a:?}");
        }
    }
}
