//! Views, data movement, scans and sorting on the wgpu device under test,
//! against host references written from numpy's rules (core/src/op.rs), sizes around the
//! workgroup (256) and the sort's powers of two, every dtype, and the capability gap: f64
//! arithmetic (scans, scatter_add) is a typed Unsupported on an adapter without
//! SHADER_F64, while word-moving ops (concat, pad, take, sort) run there too.

mod common;

use common::sort_ref::ref_argsort;

use ndarray::s;
use polycompute_core::{DType, Device, DeviceArray, Element, Error};
use polycompute_testing::inputs::{bits, uniform};

/// An f32 sample with duplicates, signed zeros, infinities and NaNs.
fn floats(seed: u64, n: usize) -> Vec<f32> {
    let u = uniform::<f32>(seed, n, -4.0, 4.0);
    let b = bits(seed + 1, n);
    u.iter()
        .zip(&b)
        .map(|(&x, &w)| match w % 16 {
            0 => f32::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f32::INFINITY,
            4 => f32::NEG_INFINITY,
            5 | 6 => x.round(),
            _ => x,
        })
        .collect()
}

fn same_bits<T: Element + Into<f64>>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let (g, w): (f64, f64) = ((*g).into(), (*w).into());
        let same = (g.is_nan() && w.is_nan()) || (g == w && g.is_sign_negative() == w.is_sign_negative());
        assert!(same, "{what}: element {k} is {g}, want {w}");
    }
}

#[test]
fn maps_read_negative_step_flipped_offset_and_broadcast_views() {
    let Some(dev) = common::device() else { return };
    let data: Vec<f32> = (0..6 * 7).map(|k| k as f32 * 0.5 - 3.0).collect();
    let a = dev.from_slice(&data, &[6, 7]).unwrap();
    // x[1:6:2, ::-2] (offset, step 2, negative step) * 2 + flip(x[0]) broadcast over rows.
    let v = a.slice(s![1..6;2, ..;-2]).unwrap();
    let row = a.slice(s![0, 0..4]).unwrap().flip(0).unwrap();
    let got = v.zip_map(&row.broadcast_to(&[3, 4]).unwrap(), |p, q| p * 2.0 + q).unwrap();
    assert_eq!(got.shape(), &[3, 4]);
    let got = got.to_vec().unwrap();
    for (r, i) in [1usize, 3, 5].iter().enumerate() {
        for (c, j) in [6usize, 4, 2, 0].iter().enumerate() {
            let want = data[i * 7 + j] * 2.0 + data[3 - c];
            assert_eq!(got[r * 4 + c], want, "[{r}, {c}]");
        }
    }
    // A permuted view of three axes, read by a map, and made contiguous.
    let b = dev.from_slice(&(0..2 * 3 * 5).collect::<Vec<i32>>(), &[2, 3, 5]).unwrap();
    let p = b.permute(&[2, 0, 1]).unwrap().slice(s![..;-1, .., 1..]).unwrap();
    let got = p.map(|x| x + 1).unwrap().to_vec().unwrap();
    let mut want = Vec::new();
    for k in (0..5).rev() {
        for i in 0..2 {
            for j in 1..3 {
                want.push(i * 15 + j * 5 + k + 1);
            }
        }
    }
    assert_eq!(got, want);
    assert_eq!(p.to_vec().unwrap(), want.iter().map(|x| x - 1).collect::<Vec<_>>());
    // f64 views copy as words, so they read on every adapter.
    let c = dev.from_slice(&[1.0f64, -0.0, 3.5, f64::NAN, 5.0], &[5]).unwrap();
    same_bits(&c.slice(s![..;-2]).unwrap().to_vec().unwrap(), &[5.0, 3.5, 1.0], "f64 view");
}

fn concat_pad_take_of<T: Element + Into<f64> + Copy>(dev: &Device, data: &[T]) {
    let a = dev.from_slice(&data[..3 * 257], &[3, 257]).unwrap();
    let b = dev.from_slice(&data[..3 * 2], &[3, 2]).unwrap();
    let e = dev.from_slice(&data[..0], &[3, 0]).unwrap();
    let got = DeviceArray::concat(&[&b, &e, &a, &b], 1).unwrap();
    assert_eq!(got.shape(), &[3, 261]);
    let mut want = Vec::new();
    for r in 0..3 {
        want.extend_from_slice(&data[r * 2..r * 2 + 2]);
        want.extend_from_slice(&data[r * 257..r * 257 + 257]);
        want.extend_from_slice(&data[r * 2..r * 2 + 2]);
    }
    same_bits(&got.to_vec().unwrap(), &want, &format!("concat {}", T::DTYPE));
    let st = DeviceArray::stack(&[&b, &b], 0).unwrap();
    assert_eq!(st.shape(), &[2, 3, 2]);

    // pad [3, 2] by ((1, 0), (2, 3)) with the first element.
    let fill = data[0];
    let got = b.pad(&[(1, 0), (2, 3)], fill).unwrap();
    assert_eq!(got.shape(), &[4, 7]);
    let got = got.to_vec().unwrap();
    for r in 0..4 {
        for c in 0..7 {
            let w = if r >= 1 && (2..4).contains(&c) { data[(r - 1) * 2 + c - 2] } else { fill };
            same_bits(&[got[r * 7 + c]], &[w], &format!("pad {} [{r}, {c}]", T::DTYPE));
        }
    }

    // take along axis 1 with negative i32 indices, both ends, repeated.
    let idx = dev.from_slice(&[0i32, -1, 256, -257, 5, 5], &[2, 3]).unwrap();
    let got = a.take(&idx, 1).unwrap();
    assert_eq!(got.shape(), &[3, 2, 3]);
    let cols = [0usize, 256, 256, 0, 5, 5];
    let want: Vec<T> = (0..3).flat_map(|r| cols.iter().map(move |&c| data[r * 257 + c])).collect();
    same_bits(&got.to_vec().unwrap(), &want, &format!("take {}", T::DTYPE));
    let got = a.index_select(0, &dev.from_slice(&[2u32, 0], &[2]).unwrap()).unwrap();
    let want: Vec<T> = data[2 * 257..3 * 257].iter().chain(&data[..257]).copied().collect();
    same_bits(&got.to_vec().unwrap(), &want, &format!("index_select {}", T::DTYPE));

    // take_along_axis: per row, its own indices.
    let along: Vec<i32> = (0..3 * 4).map(|k: i32| k * 37 % 257 - 128).collect();
    let ia = dev.from_slice(&along, &[3, 4]).unwrap();
    let got = a.take_along_axis(&ia, 1).unwrap().to_vec().unwrap();
    for r in 0..3 {
        for c in 0..4 {
            let t = along[r * 4 + c];
            let col = if t < 0 { (t + 257) as usize } else { t as usize };
            same_bits(&[got[r * 4 + c]], &[data[r * 257 + col]], &format!("take_along_axis {}", T::DTYPE));
        }
    }
}

#[test]
fn concat_pad_and_take_move_every_dtype_on_every_adapter() {
    let Some(dev) = common::device() else { return };
    let n = 3 * 257;
    concat_pad_take_of(&dev, &floats(1, n));
    concat_pad_take_of(&dev, &floats(2, n).iter().map(|&x| f64::from(x) / 3.0).collect::<Vec<f64>>());
    concat_pad_take_of(&dev, &bits(3, n).iter().map(|&w| w as i32).collect::<Vec<i32>>());
    concat_pad_take_of(&dev, &bits(4, n));
}

#[test]
fn scatter_add_accumulates_repeated_indices_in_order() {
    let Some(dev) = common::device() else { return };
    let base: Vec<f32> = (0..4 * 5).map(|k| k as f32).collect();
    let a = dev.from_slice(&base, &[4, 5]).unwrap();
    let idx = dev.from_slice(&[1i32, -1, 1, 0, 1], &[5]).unwrap();
    let vals: Vec<f32> = uniform(7, 4 * 5, -1.0, 1.0);
    let v = dev.from_slice(&vals, &[4, 5]).unwrap();
    let got = a.scatter_add(&idx, &v, 1).unwrap().to_vec().unwrap();
    let mut want = base.clone();
    for r in 0..4 {
        for (j, &t) in [1usize, 4, 1, 0, 1].iter().enumerate() {
            want[r * 5 + t] += vals[r * 5 + j];
        }
    }
    assert_eq!(got, want, "f32 scatter_add, index order");
    // Integers wrap; along axis 0.
    let ai = dev.from_slice(&[i32::MAX, 0, 1, 2], &[2, 2]).unwrap();
    let vi = dev.from_slice(&[1i32, 5, 7, 9, 11, 13], &[3, 2]).unwrap();
    let got = ai.scatter_add(&dev.from_slice(&[0u32, 0, 1], &[3]).unwrap(), &vi, 0).unwrap().to_vec().unwrap();
    assert_eq!(got, vec![i32::MAX.wrapping_add(1 + 7), 5 + 9, 1 + 11, 2 + 13]);
    // f64 arithmetic needs SHADER_F64.
    let af = dev.from_slice(&[1.0f64, 2.0], &[2]).unwrap();
    let r = af.scatter_add(&dev.from_slice(&[1u32], &[1]).unwrap(), &dev.from_slice(&[0.5f64], &[1]).unwrap(), 0);
    if common::has_f64(&dev) {
        assert_eq!(r.unwrap().to_vec().unwrap(), vec![1.0, 2.5]);
    } else {
        assert!(
            matches!(r, Err(Error::Unsupported { dtype: DType::F64, ref op, .. }) if op.contains("SHADER_F64")),
            "{r:?}"
        );
    }
}

#[test]
fn scans_match_running_sums_and_products() {
    let Some(dev) = common::device() else { return };
    for n in [0usize, 1, 7, 64, 65, 256, 257, 1000, 5000, 4096 * 4097 / 64] {
        for (outer, inner, axis) in [(1usize, 1usize, 0usize), (3, 1, 1), (1, 3, 0)] {
            let shape: Vec<usize> = if axis == 1 { vec![outer, n] } else { vec![n, inner] };
            let len = outer * n * inner;
            let x: Vec<f32> = uniform(n as u64, len, -1.0, 1.0);
            let a = dev.from_slice(&x, &shape).unwrap();
            let got = a.cumsum(axis).unwrap().to_vec().unwrap();
            let rows = outer * inner;
            for r in 0..rows {
                let (o, i) = (r / inner, r % inner);
                let (mut acc, mut abs) = (0.0f64, 0.0f64);
                for t in 0..n {
                    let k = (o * n + t) * inner + i;
                    acc += f64::from(x[k]);
                    abs += f64::from(x[k]).abs();
                    let bound = (t as f64 + 1.0).log2().ceil().max(1.0) * f64::from(f32::EPSILON) * abs * 4.0
                        + f64::from(f32::EPSILON) * acc.abs();
                    assert!(
                        (f64::from(got[k]) - acc).abs() <= bound,
                        "cumsum n={n} {shape:?} at {t}: {} want {acc}",
                        got[k]
                    );
                }
            }
            let xi: Vec<u32> = bits(n as u64 + 9, len);
            let ai = dev.from_slice(&xi, &shape).unwrap();
            let (gs, gp) = (ai.cumsum(axis).unwrap().to_vec().unwrap(), ai.cumprod(axis).unwrap().to_vec().unwrap());
            for r in 0..rows {
                let (o, i) = (r / inner, r % inner);
                let (mut s, mut p) = (0u32, 1u32);
                for t in 0..n {
                    let k = (o * n + t) * inner + i;
                    s = s.wrapping_add(xi[k]);
                    p = p.wrapping_mul(xi[k] | 1);
                    assert_eq!(gs[k], s, "u32 cumsum n={n} at {t}");
                    let _ = p;
                }
            }
            // cumprod on odd values only (so the product stays non-zero and checks carry).
            let xo: Vec<u32> = xi.iter().map(|w| w | 1).collect();
            let got = dev.from_slice(&xo, &shape).unwrap().cumprod(axis).unwrap().to_vec().unwrap();
            for r in 0..rows {
                let (o, i) = (r / inner, r % inner);
                let mut p = 1u32;
                for t in 0..n {
                    let k = (o * n + t) * inner + i;
                    p = p.wrapping_mul(xo[k]);
                    assert_eq!(got[k], p, "u32 cumprod n={n} at {t}");
                }
            }
            let _ = gp;
        }
    }
    // A leading -0.0 stays -0.0 (numpy), and the f64 gap is typed.
    let z = dev.from_slice(&[-0.0f32, -0.0, 1.0], &[3]).unwrap();
    let got = z.cumsum(0).unwrap().to_vec().unwrap();
    assert!(got[0] == 0.0 && got[0].is_sign_negative() && got[1].is_sign_negative() && got[2] == 1.0, "{got:?}");
    let i = dev.from_slice(&[i32::MAX, 1, -5], &[3]).unwrap();
    assert_eq!(i.cumsum(0).unwrap().to_vec().unwrap(), vec![i32::MAX, i32::MIN, i32::MIN.wrapping_sub(5)]);
    let d = dev.from_slice(&[0.5f64, 0.25], &[2]).unwrap().cumprod(0);
    if common::has_f64(&dev) {
        assert_eq!(d.unwrap().to_vec().unwrap(), vec![0.5, 0.125]);
    } else {
        assert!(matches!(d, Err(Error::Unsupported { dtype: DType::F64, .. })), "{d:?}");
    }
}

fn sorts_of<T: Element + Into<f64> + Copy>(dev: &Device, data: &[T]) {
    for n in [1usize, 2, 7, 255, 256, 257, 1000] {
        for (outer, inner, axis) in [(1usize, 1usize, 0usize), (3, 1, 1), (1, 3, 0)] {
            let shape: Vec<usize> = if axis == 1 { vec![outer, n] } else { vec![n, inner] };
            let len = outer * n * inner;
            let x = &data[..len];
            let a = dev.from_slice(x, &shape).unwrap();
            let v: Vec<f64> = x.iter().map(|&e| e.into()).collect();
            let want = ref_argsort(&v, (outer, n, inner), false);
            let what = format!("{} n={n} {shape:?}", T::DTYPE);
            assert_eq!(a.argsort(axis).unwrap().to_vec().unwrap(), want, "argsort {what}");
            let sorted: Vec<T> = (0..len)
                .map(|k| {
                    let (o, rest) = (k / (n * inner), k % (n * inner));
                    let i = rest % inner;
                    x[(o * n + want[k] as usize) * inner + i]
                })
                .collect();
            same_bits(&a.sort(axis).unwrap().to_vec().unwrap(), &sorted, &format!("sort {what}"));
            let k = (n / 3).max(1);
            let (vals, idx) = a.topk(k, axis).unwrap();
            let desc = ref_argsort(&v, (outer, n, inner), true);
            let mut want_idx = Vec::new();
            for o in 0..outer {
                for t in 0..k {
                    for i in 0..inner {
                        want_idx.push(desc[(o * n + t) * inner + i]);
                    }
                }
            }
            assert_eq!(idx.to_vec().unwrap(), want_idx, "topk {what}");
            assert_eq!(vals.shape(), idx.shape());
        }
    }
}

#[test]
fn sort_argsort_and_topk_follow_numpy_order_for_every_dtype() {
    let Some(dev) = common::device() else { return };
    let n = 3 * 1000;
    sorts_of(&dev, &floats(11, n));
    sorts_of(&dev, &floats(12, n).iter().map(|&x| f64::from(x) * 1e300).collect::<Vec<f64>>());
    sorts_of(&dev, &bits(13, n).iter().map(|&w| (w % 64) as i32 - 32).collect::<Vec<i32>>());
    sorts_of(&dev, &bits(14, n).iter().map(|&w| if w % 3 == 0 { w } else { w % 50 }).collect::<Vec<u32>>());
    // Empty axis and k = 0.
    let e = dev.from_slice::<f32>(&[], &[2, 0]).unwrap();
    assert_eq!(e.argsort(1).unwrap().shape(), &[2, 0]);
    let a = dev.from_slice(&[3.0f32, 1.0], &[2]).unwrap();
    assert_eq!(a.topk(0, 0).unwrap().1.shape(), &[0]);
}

#[test]
fn long_rows_sort_through_global_and_workgroup_merges() {
    let Some(dev) = common::device() else { return };
    // 20,000 (P = 32,768: six merge levels past the 512-slot blocks) and rows of 5,000 along
    // axis 0 of [5000, 2] (strided rows).
    for (shape, axis, outer, n, inner) in
        [(vec![20_000usize], 0usize, 1usize, 20_000usize, 1usize), (vec![5_000, 2], 0, 1, 5_000, 2)]
    {
        let x = floats(21, n * inner);
        let a = dev.from_slice(&x, &shape).unwrap();
        let v: Vec<f64> = x.iter().map(|&e| f64::from(e)).collect();
        assert_eq!(
            a.argsort(axis).unwrap().to_vec().unwrap(),
            ref_argsort(&v, (outer, n, inner), false),
            "argsort {shape:?}"
        );
        let (_, idx) = a.topk(100, axis).unwrap();
        let desc = ref_argsort(&v, (outer, n, inner), true);
        assert_eq!(idx.to_vec().unwrap(), desc[..100 * inner].to_vec(), "topk {shape:?}");
    }
}
