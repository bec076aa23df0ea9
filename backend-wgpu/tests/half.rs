//! Half precision (f16, bf16) on the wgpu device under test: the bit conversions against the
//! `half` crate (every one of the 65536 patterns, and f32s around each rounding boundary),
//! integer casts rounded once, and the packing of two halves per word at its edges: odd
//! lengths, views at odd offsets, one-element arrays, and every op family that reads or
//! writes packed words (maps, transpose, fills, concat, pad, take, sort, reductions, matmul).

mod common;

use ndarray::s;
use polycompute_core::{bf16, f16};
use polycompute_core::{Device, DeviceArray, Element};
use polycompute_testing::inputs::{bits, uniform};

/// Bits of a half, for exact comparison (NaN payloads included).
trait HalfBits: Element + Copy + std::fmt::Debug {
    fn bits(self) -> u16;
    fn from_bits(b: u16) -> Self;
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
}

impl HalfBits for f16 {
    fn bits(self) -> u16 {
        self.to_bits()
    }
    fn from_bits(b: u16) -> Self {
        f16::from_bits(b)
    }
    fn from_f32(x: f32) -> Self {
        f16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
}

impl HalfBits for bf16 {
    fn bits(self) -> u16 {
        self.to_bits()
    }
    fn from_bits(b: u16) -> Self {
        bf16::from_bits(b)
    }
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}

fn same_half_bits<H: HalfBits>(got: &[H], want: &[H], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.bits(), w.bits(), "{what}: element {k} is {g:?}, want {w:?}");
    }
}

fn same_f32_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{what}: element {k} is {g:e}, want {w:e}");
    }
}

/// f32s at and around every kind of rounding boundary of both halves, and random bits.
fn hard_f32s() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xffc0_1234),
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        65504.0,
        65519.996,
        65520.0,
        -65520.0,
        65536.0,
        1.0 + 2f32.powi(-11),
        1.0 + 3.0 * 2f32.powi(-11),
        2f32.powi(-24),
        2f32.powi(-25),
        -2f32.powi(-25),
        1.5 * 2f32.powi(-25),
        2f32.powi(-14),
        2f32.powi(-14) - 2f32.powi(-25),
        1.0 + 2f32.powi(-8),
        1.0 + 3.0 * 2f32.powi(-8),
        f32::from_bits(0x7f7f_8000),
        f32::from_bits(0x7f7f_7fff),
        f32::from_bits(0x0000_8000),
        f32::from_bits(0x0001_8000),
    ];
    for b in [0x3380_0000u32, 0x3880_0000, 0x477f_e000, 0x3f80_0000] {
        for d in 0..=0x2000u32 {
            v.push(f32::from_bits(b - 0x1000 + d));
        }
    }
    v.extend(bits(11, 50_000).into_iter().map(f32::from_bits));
    v
}

fn conversions_of<H: HalfBits>(dev: &Device) {
    let name = H::DTYPE;
    // Every half to f32 and back: exact, NaN made quiet (as the half crate does).
    let all: Vec<H> = (0..=u16::MAX).map(H::from_bits).collect();
    let a = dev.from_slice(&all, &[all.len()]).unwrap();
    let wide = a.cast::<f32>().unwrap();
    let want: Vec<f32> = all.iter().map(|h| h.to_f32()).collect();
    same_f32_bits(&wide.to_vec().unwrap(), &want, &format!("{name} -> f32"));
    let back: Vec<H> = want.iter().map(|&x| H::from_f32(x)).collect();
    same_half_bits(&wide.cast::<H>().unwrap().to_vec().unwrap(), &back, &format!("{name} -> f32 -> {name}"));
    // f32 -> half: round to nearest even, overflow to infinity, subnormals, NaN quiet.
    let xs = hard_f32s();
    let want: Vec<H> = xs.iter().map(|&x| H::from_f32(x)).collect();
    let got = dev.from_slice(&xs, &[xs.len()]).unwrap().cast::<H>().unwrap().to_vec().unwrap();
    same_half_bits(&got, &want, &format!("f32 -> {name}"));
    // Integers round once (through f64, where every i32 and u32 is exact).
    let mut ints: Vec<i32> =
        vec![0, 1, -1, 2049, 2051, 65519, 65520, -65521, 0x0100_8001, 0x0101_0001, i32::MAX, i32::MIN];
    ints.extend(bits(12, 20_000).into_iter().map(|w| (w as i32) >> (w % 24)));
    let want: Vec<H> = ints.iter().map(|&x| H::from_f32(exact_f32(f64::from(x)))).collect();
    let got = dev.from_slice(&ints, &[ints.len()]).unwrap().cast::<H>().unwrap().to_vec().unwrap();
    same_half_bits(&got, &want, &format!("i32 -> {name}"));
    let uints: Vec<u32> = ints.iter().map(|&x| x as u32).collect();
    let want: Vec<H> = uints.iter().map(|&x| H::from_f32(exact_f32(f64::from(x)))).collect();
    let got = dev.from_slice(&uints, &[uints.len()]).unwrap().cast::<H>().unwrap().to_vec().unwrap();
    same_half_bits(&got, &want, &format!("u32 -> {name}"));
    // Half -> integers saturate, NaN to 0 (the f32 rule on the exact value).
    let got = a.cast::<i32>().unwrap().to_vec().unwrap();
    let want: Vec<i32> = all.iter().map(|h| saturate_i32(h.to_f32())).collect();
    assert_eq!(got, want, "{name} -> i32");
}

/// An f64 (an integer here) as the f32 rounded to odd: rounding it once more to a half is the
/// correctly rounded half of the f64 (no double rounding), which is what the device computes.
fn exact_f32(x: f64) -> f32 {
    let f = x as f32;
    if f64::from(f) == x || f.to_bits() & 1 == 1 {
        return f;
    }
    let toward = if x.abs() > f64::from(f).abs() { f.to_bits() + 1 } else { f.to_bits() - 1 };
    f32::from_bits(toward)
}

fn saturate_i32(x: f32) -> i32 {
    if x.is_nan() {
        0
    } else {
        x as i32
    }
}

#[test]
fn conversions_are_exact_or_rounded_to_nearest_even() {
    let Some(dev) = common::device() else { return };
    conversions_of::<f16>(&dev);
    conversions_of::<bf16>(&dev);
}

/// f64s at the halves' rounding boundaries with bits far below them (which only a single
/// rounding from the exact value sees), every exponent range, and random bits.
fn hard_f64s() -> Vec<f64> {
    let mut v: Vec<f64> = hard_f32s().into_iter().map(f64::from).collect();
    for x in [1.0 + 2f64.powi(-11), 1.0 + 2f64.powi(-8), 2049.0, 257.0, 65520.0, 2f64.powi(-25), 2f64.powi(-134)] {
        for tiny in [2f64.powi(-40), -2f64.powi(-40), 2f64.powi(-52)] {
            v.push(x * (1.0 + tiny));
            v.push(-x * (1.0 + tiny));
        }
    }
    v.extend([
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        1e300,
        -1e-300,
        3.4e38,
        3.5e38,
        f64::from_bits(0x7ff0_0000_0000_0001),
    ]);
    let words = bits(13, 40_000);
    v.extend(words.chunks(2).map(|w| f64::from_bits(u64::from(w[0]) | (u64::from(w[1]) << 32))));
    // Magnitudes spread over the halves' ranges (exponents -150..130).
    v.extend(words.chunks(2).map(|w| {
        let m = f64::from_bits(0x3ff0_0000_0000_0000 | (u64::from(w[0]) << 20) | u64::from(w[1] >> 12));
        m * 2f64.powi((w[1] % 280) as i32 - 150)
    }));
    v
}

fn f64_casts_of<H: HalfBits>(dev: &Device, from_f64: fn(f64) -> H) {
    let name = H::DTYPE;
    let all: Vec<H> = (0..=u16::MAX).map(H::from_bits).collect();
    let got = dev.from_slice(&all, &[all.len()]).unwrap().cast::<f64>().unwrap().to_vec().unwrap();
    for (k, (g, h)) in got.iter().zip(&all).enumerate() {
        let want = f64::from(h.to_f32());
        assert_eq!(g.to_bits(), want.to_bits(), "{name} -> f64: element {k} ({h:?}) is {g:e}, want {want:e}");
    }
    let xs = hard_f64s();
    let want: Vec<H> = xs.iter().map(|&x| from_f64(x)).collect();
    let got = dev.from_slice(&xs, &[xs.len()]).unwrap().cast::<H>().unwrap().to_vec().unwrap();
    same_half_bits(&got, &want, &format!("f64 -> {name}"));
}

/// A fused map that computes in f64 and rounds to a half (needs `SHADER_F64`): the f64
/// rounded to odd in f32 first, so rounded once.
fn f64_map_to_half<H: HalfBits>(dev: &Device, from_f64: fn(f64) -> H) {
    let xs = hard_f64s();
    let a = dev.from_slice(&xs, &[xs.len()]).unwrap();
    let got = a.map_to::<H>(|x| (x * 1.0).cast(H::DTYPE)).unwrap().to_vec().unwrap();
    let want: Vec<H> = xs.iter().map(|&x| from_f64(x)).collect();
    same_half_bits(&got, &want, &format!("f64 map -> {}", H::DTYPE));
}

#[test]
fn f64_maps_round_once_to_a_half_where_the_adapter_has_f64() {
    let Some(dev) = common::device() else { return };
    if !common::has_f64(&dev) {
        return;
    }
    f64_map_to_half::<f16>(&dev, polycompute_core::halves::f16_from_f64);
    f64_map_to_half::<bf16>(&dev, polycompute_core::halves::bf16_from_f64);
}

#[test]
fn f64_casts_work_on_bits_without_shader_f64() {
    let Some(dev) = common::device() else { return };
    f64_casts_of::<f16>(&dev, polycompute_core::halves::f16_from_f64);
    f64_casts_of::<bf16>(&dev, polycompute_core::halves::bf16_from_f64);
}

#[test]
fn integers_round_once_to_a_half() {
    let Some(dev) = common::device() else { return };
    // 2^24 + 2^16 + 1: rounding to f32 first gives the bf16 tie 2^24 + 2^16, then 2^24;
    // once, it is above the tie: 2^24 + 2^17.
    let x = dev.from_slice(&[0x0101_0001i32, -0x0101_0001], &[2]).unwrap();
    let got = x.cast::<bf16>().unwrap().to_vec().unwrap();
    assert_eq!(got, vec![bf16::from_f64(16_908_288.0), bf16::from_f64(-16_908_288.0)]);
}

/// One thread writes both halves of a word: lengths around the word and the workgroup,
/// views starting at odd elements, one-element arrays and broadcast scalars.
fn packing_of<H: HalfBits>(dev: &Device) {
    let name = H::DTYPE;
    for n in [1usize, 2, 3, 255, 256, 257, 513] {
        let xs: Vec<H> = uniform::<f32>(n as u64, n, -8.0, 8.0).into_iter().map(H::from_f32).collect();
        let a = dev.from_slice(&xs, &[n]).unwrap();
        // a * a + a: each operation rounded to the half.
        let got = a.map(|x| x.clone() * x.clone() + x).unwrap().to_vec().unwrap();
        let want: Vec<H> =
            xs.iter().map(|&x| H::from_f32(H::from_f32(x.to_f32() * x.to_f32()).to_f32() + x.to_f32())).collect();
        same_half_bits(&got, &want, &format!("{name} map of {n}"));
        same_half_bits(&a.copy().unwrap().to_vec().unwrap(), &xs, &format!("{name} copy of {n}"));
        if n >= 3 {
            // Views at odd offsets, odd lengths, negative steps.
            for (view, want) in [
                (a.slice(s![1..]).unwrap(), xs[1..].to_vec()),
                (a.slice(s![1..n - 1;2]).unwrap(), xs[1..n - 1].iter().step_by(2).copied().collect()),
                (a.slice(s![..;-1]).unwrap(), xs.iter().rev().copied().collect()),
                (a.slice(s![n - 1..]).unwrap(), vec![xs[n - 1]]),
            ] {
                same_half_bits(&view.contiguous().unwrap().to_vec().unwrap(), &want, &format!("{name} view of {n}"));
                let neg: Vec<H> = want.iter().map(|&x| H::from_f32(-x.to_f32())).collect();
                same_half_bits(&view.map(|x| -x).unwrap().to_vec().unwrap(), &neg, &format!("{name} -view of {n}"));
            }
        }
    }
    // A one-element array broadcast against an odd-length one.
    let one = dev.from_slice(&[H::from_f32(0.5)], &[1]).unwrap();
    let three = dev.from_slice(&[H::from_f32(1.0), H::from_f32(2.0), H::from_f32(3.0)], &[3]).unwrap();
    let got = three.zip_map(&one.broadcast_to(&[3]).unwrap(), |a, b| a * b).unwrap().to_vec().unwrap();
    same_half_bits(&got, &[H::from_f32(0.5), H::from_f32(1.0), H::from_f32(1.5)], &format!("{name} broadcast"));
    // Copies of views keep every bit, signalling NaN payloads included.
    let nans: Vec<H> = [0x7c01u16, 0xfd55, 0x7f81, 0x0001, 0x8000, 0x7fff].iter().map(|&b| H::from_bits(b)).collect();
    let a = dev.from_slice(&nans, &[6]).unwrap();
    let got = a.slice(s![1..;-1]).unwrap().contiguous().unwrap().to_vec().unwrap();
    let want: Vec<H> = nans.iter().rev().take(5).copied().collect();
    same_half_bits(&got, &want, &format!("{name} copy of a view"));
    // Fills of odd lengths.
    for n in [1usize, 5, 257] {
        let got = dev.full(H::from_f32(-2.5), &[n]).unwrap().to_vec().unwrap();
        same_half_bits(&got, &vec![H::from_f32(-2.5); n], &format!("{name} full {n}"));
    }
    // Transposes of odd shapes.
    let (r, c) = (3usize, 5usize);
    let xs: Vec<H> = (0..r * c).map(|k| H::from_f32(k as f32 - 7.0)).collect();
    let m = dev.from_slice(&xs, &[r, c]).unwrap();
    let got = m.transpose().unwrap().contiguous().unwrap().to_vec().unwrap();
    let want: Vec<H> = (0..c).flat_map(|j| (0..r).map(move |i| (i, j))).map(|(i, j)| xs[i * c + j]).collect();
    same_half_bits(&got, &want, &format!("{name} transpose"));
}

#[test]
fn halves_pack_two_to_a_word_at_every_edge() {
    let Some(dev) = common::device() else { return };
    packing_of::<f16>(&dev);
    packing_of::<bf16>(&dev);
}

fn movement_of<H: HalfBits>(dev: &Device) {
    let name = H::DTYPE;
    let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, 1.0, -1.0, 3.0];
    let xs: Vec<H> = (0..3 * 7).map(|k| H::from_f32(specials[k * 5 % 8] + (k / 8) as f32)).collect();
    let a = dev.from_slice(&xs, &[3, 7]).unwrap();
    let b = dev.from_slice(&xs[..3], &[3, 1]).unwrap();
    // concat of odd widths: rows start mid-word.
    let got = DeviceArray::concat(&[&b, &a, &b], 1).unwrap().to_vec().unwrap();
    let want: Vec<H> = (0..3).flat_map(|r| [&xs[r..=r], &xs[r * 7..r * 7 + 7], &xs[r..=r]].concat()).collect();
    same_half_bits(&got, &want, &format!("{name} concat"));
    // pad by one on each side with a NaN.
    let got = b.pad(&[(1, 1), (0, 1)], H::from_f32(f32::NAN)).unwrap().to_vec().unwrap();
    let nan = H::from_f32(f32::NAN);
    same_half_bits(&got, &[nan, nan, xs[0], nan, xs[1], nan, xs[2], nan, nan, nan], &format!("{name} pad"));
    // take with negative indices.
    let idx = dev.from_slice(&[6i32, -7, 3], &[3]).unwrap();
    let got = a.take(&idx, 1).unwrap().to_vec().unwrap();
    let want: Vec<H> = (0..3).flat_map(|r| [xs[r * 7 + 6], xs[r * 7], xs[r * 7 + 3]]).collect();
    same_half_bits(&got, &want, &format!("{name} take"));
    // sort: numpy's order (NaN last, -0.0 == 0.0 kept in place), the original bits back.
    let got = a.sort(1).unwrap().to_vec().unwrap();
    let order = a.argsort(1).unwrap().to_vec().unwrap();
    for r in 0..3 {
        let row = &xs[r * 7..r * 7 + 7];
        let mut idx: Vec<usize> = (0..7).collect();
        idx.sort_by(|&i, &j| {
            let (x, y) = (row[i].to_f32(), row[j].to_f32());
            x.is_nan().cmp(&y.is_nan()).then(x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal))
        });
        let want: Vec<H> = idx.iter().map(|&i| row[i]).collect();
        same_half_bits(&got[r * 7..r * 7 + 7], &want, &format!("{name} sort row {r}"));
        assert_eq!(order[r * 7..r * 7 + 7], idx.iter().map(|&i| i as u32).collect::<Vec<_>>(), "{name} argsort {r}");
    }
}

#[test]
fn halves_move_sort_and_pad_as_bits() {
    let Some(dev) = common::device() else { return };
    movement_of::<f16>(&dev);
    movement_of::<bf16>(&dev);
}

fn arithmetic_of<H: HalfBits>(dev: &Device) {
    let name = H::DTYPE;
    // Sums accumulate in f32 and round once: 4097 ones are 4097 in f32, 4096 in f16 (even).
    let n = 4097;
    let ones = dev.full(H::from_f32(1.0), &[n]).unwrap();
    let got = ones.sum(None).unwrap().to_vec().unwrap();
    same_half_bits(&got, &[H::from_f32(n as f32)], &format!("{name} sum"));
    // max of a half array with a NaN is NaN; argmax finds the first NaN.
    let xs: Vec<H> = [1.0, 5.0, f32::NAN, 7.0, f32::NAN].iter().map(|&x| H::from_f32(x)).collect();
    let a = dev.from_slice(&xs, &[5]).unwrap();
    assert!(a.max(None).unwrap().to_vec().unwrap()[0].to_f32().is_nan(), "{name} max with NaN");
    assert_eq!(a.argmax(None).unwrap().to_vec().unwrap(), vec![2], "{name} argmax");
    // matmul: f32 accumulation, one rounding per output.
    let (m, k, nn) = (3usize, 33usize, 5usize);
    let lx: Vec<H> = uniform::<f32>(21, m * k, -2.0, 2.0).into_iter().map(H::from_f32).collect();
    let rx: Vec<H> = uniform::<f32>(22, k * nn, -2.0, 2.0).into_iter().map(H::from_f32).collect();
    let l = dev.from_slice(&lx, &[m, k]).unwrap();
    let r = dev.from_slice(&rx, &[k, nn]).unwrap();
    let got = l.matmul(&r).unwrap().to_vec().unwrap();
    for i in 0..m {
        for j in 0..nn {
            let exact: f64 =
                (0..k).map(|t| f64::from(lx[i * k + t].to_f32()) * f64::from(rx[t * nn + j].to_f32())).sum();
            let g = f64::from(got[i * nn + j].to_f32());
            // One rounding of a sum good to f32: within one half ulp (2^-10 or 2^-7 relative).
            let ulp = if name == polycompute_core::DType::BF16 { 2f64.powi(-7) } else { 2f64.powi(-10) };
            assert!((g - exact).abs() <= ulp * exact.abs().max(1e-3), "{name} matmul [{i}, {j}]: {g} vs {exact}");
        }
    }
}

fn scans_of<H: HalfBits>(dev: &Device) {
    let name = H::DTYPE;
    // An f32 running value, each output rounded once: the k-th of 5000 ones is k rounded to
    // the half (numpy's step-by-step float16 cumsum would stop at 2048).
    let n = 5000;
    let got = dev.full(H::from_f32(1.0), &[n]).unwrap().cumsum(0).unwrap().to_vec().unwrap();
    let want: Vec<H> = (1..=n).map(|k| H::from_f32(k as f32)).collect();
    same_half_bits(&got, &want, &format!("{name} cumsum"));
    // Rows along axis 0 of an odd-width matrix (rows interleave in words), and cumprod.
    let xs: Vec<H> = uniform::<f32>(31, 9 * 5, 0.5, 1.5).into_iter().map(H::from_f32).collect();
    let a = dev.from_slice(&xs, &[9, 5]).unwrap();
    let got = a.cumprod(0).unwrap().to_vec().unwrap();
    let mut run = [1f32; 5];
    let mut want = Vec::new();
    for i in 0..9 {
        for j in 0..5 {
            run[j] *= xs[i * 5 + j].to_f32();
            want.push(H::from_f32(run[j]));
        }
    }
    same_half_bits(&got, &want, &format!("{name} cumprod"));
    // scatter_add: repeated indices add in index order, each sum rounded.
    let base = dev.from_slice(&[H::from_f32(2048.0), H::from_f32(0.0), H::from_f32(1.0)], &[3]).unwrap();
    let idx = dev.from_slice(&[0u32, 0, 2, 0], &[4]).unwrap();
    let vals = dev.from_slice(&[H::from_f32(1.0); 4], &[4]).unwrap();
    let got = base.scatter_add(&idx, &vals, 0).unwrap().to_vec().unwrap();
    let mut want = [H::from_f32(2048.0), H::from_f32(0.0), H::from_f32(1.0)];
    for t in [0usize, 0, 2, 0] {
        want[t] = H::from_f32(want[t].to_f32() + 1.0);
    }
    same_half_bits(&got, &want, &format!("{name} scatter_add"));
}

#[test]
fn scans_accumulate_in_f32_and_scatter_add_rounds_every_step() {
    let Some(dev) = common::device() else { return };
    scans_of::<f16>(&dev);
    scans_of::<bf16>(&dev);
}

#[test]
fn reductions_and_matmul_accumulate_in_f32() {
    let Some(dev) = common::device() else { return };
    arithmetic_of::<f16>(&dev);
    arithmetic_of::<bf16>(&dev);
}
