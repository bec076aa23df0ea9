//! The radix sort behind sort, argsort and topk on wgpu (rows of 64 slots and more, 8192
//! in all): numpy's order (NaN last, -0.0 and +0.0 in input order), stable, against a host
//! reference, at the sizes where its segments (256 to 4096 slots), its scan chunks (1024
//! words) and the switch from the bitonic network fall, with many equal keys, every dtype,
//! rows along the last and a strided axis, and a row of 2^20.

mod common;

use common::sort_ref::ref_argsort;

use polycompute_core::{Device, Element};
use polycompute_testing::inputs::{bits, uniform};

/// Checks sort (bit for bit), argsort and topk of `data` shaped `shape` along `axis`.
fn check<T: Element + Into<f64> + Copy>(dev: &Device, data: &[T], shape: &[usize], axis: usize, k: usize) {
    let outer: usize = shape[..axis].iter().product();
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let what = format!("{} {shape:?} axis {axis}", T::DTYPE);
    let a = dev.from_slice(data, shape).unwrap();
    let v: Vec<f64> = data.iter().map(|&x| x.into()).collect();
    let want = ref_argsort(&v, (outer, n, inner), false);
    assert_eq!(a.argsort(axis).unwrap().to_vec().unwrap(), want, "argsort {what}");
    let sorted: Vec<T> = want
        .iter()
        .enumerate()
        .map(|(e, &s)| {
            let (o, i) = (e / inner / n, e % inner);
            data[(o * n + s as usize) * inner + i]
        })
        .collect();
    let got = a.sort(axis).unwrap().to_vec().unwrap();
    let bits_of = |x: &[T]| x.iter().map(|&y| Into::<f64>::into(y).to_bits()).collect::<Vec<_>>();
    assert!(bits_of(&got) == bits_of(&sorted), "sort {what}: values or their order differ");
    let desc = ref_argsort(&v, (outer, n, inner), true);
    let want_top: Vec<u32> = (0..outer * k * inner)
        .map(|e| {
            let (o, t, i) = (e / inner / k, e / inner % k, e % inner);
            desc[(o * n + t) * inner + i]
        })
        .collect();
    let (vals, idx) = a.topk(k, axis).unwrap();
    assert_eq!(idx.to_vec().unwrap(), want_top, "topk {k} {what}");
    assert_eq!(vals.shape()[axis], k, "topk values {what}");
}

/// f32 with duplicates, signed zeros, infinities and NaNs of two payloads.
fn specials(seed: u64, n: usize) -> Vec<f32> {
    let u = uniform::<f32>(seed, n, -3.0, 3.0);
    let b = bits(seed + 1, n);
    u.iter()
        .zip(&b)
        .map(|(&x, &w)| match w % 12 {
            0 => f32::NAN,
            1 => -f32::NAN,
            2 => -0.0,
            3 => 0.0,
            4 => f32::INFINITY,
            5 => f32::NEG_INFINITY,
            6 | 7 => x.round(),
            _ => x,
        })
        .collect()
}

#[test]
fn rows_around_segment_chunk_and_switch_sizes_sort_in_numpy_order() {
    let Some(dev) = common::device() else { return };
    // One row: the switch at 8192 slots (8191 takes the network), segments of 256 slots
    // (4096 * 2 + 1 leaves a 1-slot segment), 4096-slot segments past 2^23 / 2048.
    for n in [8191usize, 8192, 8193, 8 * 1024 + 255, 65_537] {
        check(&dev, &specials(n as u64, n), &[n], 0, 7);
    }
    // Many rows: of 64 (the shortest radix rows), of 63 (the network) and of 257.
    for (rows, n) in [(128usize, 64usize), (130, 63), (40, 257)] {
        check(&dev, &specials(3, rows * n), &[rows, n], 1, 5);
    }
}

#[test]
fn many_equal_keys_keep_their_input_order() {
    let Some(dev) = common::device() else { return };
    let n = 50_000;
    let few: Vec<i32> = bits(5, n).iter().map(|&w| (w % 3) as i32 - 1).collect();
    check(&dev, &few, &[n], 0, 1000);
    let zeros: Vec<f32> = bits(6, n).iter().map(|&w| if w % 2 == 0 { 0.0 } else { -0.0 }).collect();
    check(&dev, &zeros, &[n], 0, n);
    check(&dev, &vec![7u32; n], &[n], 0, 3);
}

#[test]
fn every_dtype_sorts_along_last_and_strided_axes() {
    let Some(dev) = common::device() else { return };
    let n = 12_000;
    let wide: Vec<u32> = bits(7, 3 * n);
    check(&dev, &wide, &[3, n], 1, 9);
    check(&dev, &wide, &[n, 3], 0, 9);
    let signed: Vec<i32> = bits(8, 3 * n).iter().map(|&w| w as i32).collect();
    check(&dev, &signed, &[3, n], 1, 9);
    // f64 sorts by its two words on every adapter, with or without SHADER_F64.
    let f64s: Vec<f64> = specials(9, 2 * n)
        .iter()
        .zip(bits(10, 2 * n))
        .map(|(&x, w)| f64::from(x) * if w % 2 == 0 { 1e300 } else { 1e-300 })
        .collect();
    check(&dev, &f64s, &[2, n], 1, 9);
    check(&dev, &f64s, &[n, 2], 0, 9);
}

#[test]
fn a_row_of_2_pow_20_sorts() {
    let Some(dev) = common::device() else { return };
    let n = 1 << 20;
    check(&dev, &specials(11, n), &[n], 0, 100);
}
