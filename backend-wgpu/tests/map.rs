//! Map (and Cast, Copy) against host references written from the semantics in
//! core/src/expr/mod.rs, independently of the WGSL helpers.

mod common;

use polycompute_core::{map, DType, Error, Expr, Scalar};
use polycompute_testing::inputs::{bits, uniform};
use polycompute_testing::specials::{pairs, Specials};
use polycompute_testing::Ulps;

/// The corner cases: signed zeros, infinities, NaN, subnormals, huge values, values around
/// the integer ranges.
fn specials() -> Vec<f32> {
    f32::extended()
}

/// `got` within `ulps` of `want` (NaN matching only NaN, infinities only themselves).
fn close_f32(got: f32, want: f32, ulps: u64) -> bool {
    Ulps::within(ulps).check(got, want).is_ok()
}

fn ref_min(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a == b {
        if a.is_sign_negative() {
            a
        } else {
            b
        }
    } else {
        a.min(b)
    }
}

fn ref_max(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a == b {
        if a.is_sign_negative() {
            b
        } else {
            a
        }
    } else {
        a.max(b)
    }
}

/// numpy.remainder: fmod (Rust's `%` is exact), shifted into the divisor's sign.
fn ref_rem(a: f32, b: f32) -> f32 {
    let m = a % b;
    if m.is_nan() {
        return f32::NAN;
    }
    if m == 0.0 {
        return 0.0f32.copysign(b);
    }
    if (m < 0.0) != (b < 0.0) {
        m + b
    } else {
        m
    }
}

#[test]
fn fused_arithmetic_broadcasts_like_numpy() {
    let Some(dev) = common::device() else { return };
    let a = uniform::<f32>(1, 4 * 3, -10.0, 10.0);
    let b = uniform::<f32>(2, 5, -10.0, 10.0);
    let c = uniform::<f32>(3, 3, -10.0, 10.0);
    let x = dev.from_slice(&a, &[4, 1, 3]).unwrap();
    let y = dev.from_slice(&b, &[5, 1]).unwrap();
    let z = dev.from_slice(&c, &[3]).unwrap();
    let out = map::<_, f32>(&[&x, &y, &z], |v| &v[0] * 2.0 + &v[1] - &v[2] * &v[0]).unwrap();
    assert_eq!(out.shape(), &[4, 5, 3]);
    let got = out.to_vec().unwrap();
    for i in 0..4 {
        for j in 0..5 {
            for k in 0..3 {
                let (p, q, r) = (a[i * 3 + k], b[j], c[k]);
                let want = p * 2.0 + q - r * p;
                let g = got[(i * 5 + j) * 3 + k];
                assert!(close_f32(g, want, 2), "[{i},{j},{k}]: {g} vs {want}");
            }
        }
    }
    // A scalar operand and a same-shape operand in one kernel.
    let s = dev.from_slice(&[3.0f32], &[]).unwrap();
    let w = dev.from_slice(&a, &[4, 1, 3]).unwrap();
    let out = map::<_, f32>(&[&x, &s, &w], |v| &v[0] * &v[1] + &v[2]).unwrap().to_vec().unwrap();
    for (i, g) in out.iter().enumerate() {
        assert_eq!(*g, a[i] * 3.0 + a[i]);
    }
}

#[test]
fn min_max_propagate_nan_and_order_signed_zeros() {
    let Some(dev) = common::device() else { return };
    let (a, b) = pairs(&specials());
    let x = dev.from_slice(&a, &[a.len()]).unwrap();
    let y = dev.from_slice(&b, &[b.len()]).unwrap();
    let mn = x.zip_map(&y, |p, q| p.min(q)).unwrap().to_vec().unwrap();
    let mx = x.zip_map(&y, |p, q| p.max(q)).unwrap().to_vec().unwrap();
    for i in 0..a.len() {
        let (wmin, wmax) = (ref_min(a[i], b[i]), ref_max(a[i], b[i]));
        if let Err(m) = Ulps::EXACT.check(mn[i], wmin) {
            panic!("min({}, {}): {m}", a[i], b[i]);
        }
        if let Err(m) = Ulps::EXACT.check(mx[i], wmax) {
            panic!("max({}, {}): {m}", a[i], b[i]);
        }
    }
}

#[test]
fn comparisons_with_nan_are_false_and_ne_true() {
    let Some(dev) = common::device() else { return };
    let (a, b) = pairs(&specials());
    let x = dev.from_slice(&a, &[a.len()]).unwrap();
    let y = dev.from_slice(&b, &[b.len()]).unwrap();
    type Cmp = (&'static str, fn(Expr, Expr) -> Expr, fn(f32, f32) -> bool);
    let cases: [Cmp; 6] = [
        ("eq", |p, q| p.eq(q), |p, q| p == q),
        ("ne", |p, q| p.ne(q), |p, q| p != q),
        ("lt", |p, q| p.lt(q), |p, q| p < q),
        ("le", |p, q| p.le(q), |p, q| p <= q),
        ("gt", |p, q| p.gt(q), |p, q| p > q),
        ("ge", |p, q| p.ge(q), |p, q| p >= q),
    ];
    for (name, f, host) in cases {
        let got = x.zip_map(&y, f).unwrap().to_vec().unwrap();
        for i in 0..a.len() {
            let want = if host(a[i], b[i]) { 1.0 } else { 0.0 };
            assert_eq!(got[i], want, "{name}({}, {})", a[i], b[i]);
        }
    }
    // select: NaN and -0.0 as conditions (NaN is true, -0.0 false).
    let c = dev.from_slice(&[f32::NAN, -0.0, 0.0, 2.0], &[4]).unwrap();
    let (one, five) = (Expr::scalar(Scalar::F32(1.0)), Expr::scalar(Scalar::F32(5.0)));
    let got = c.map(|v| Expr::select(v, one, five)).unwrap().to_vec().unwrap();
    assert_eq!(got, vec![1.0, 5.0, 5.0, 1.0]);
}

#[test]
fn float_remainder_is_numpys_and_exact() {
    let Some(dev) = common::device() else { return };
    let (mut a, mut b) = pairs(&specials());
    // Large quotients, where a - b * trunc(a / b) would round.
    for (p, q) in [(1e30f32, 3.0f32), (-1e30, 7.0), (16777217.0, 0.1), (1.0, 3e-38), (5.5, -2.0), (-5.5, 2.0)] {
        a.push(p);
        b.push(q);
    }
    let x = dev.from_slice(&a, &[a.len()]).unwrap();
    let y = dev.from_slice(&b, &[b.len()]).unwrap();
    let got = x.zip_map(&y, |p, q| p % q).unwrap().to_vec().unwrap();
    for i in 0..a.len() {
        let want = ref_rem(a[i], b[i]);
        if let Err(m) = Ulps::EXACT.check(got[i], want) {
            panic!("rem({}, {}): {m}", a[i], b[i]);
        }
    }
}

#[test]
fn integer_division_floors_and_zero_divisors_give_zero() {
    let Some(dev) = common::device() else { return };
    let vals = [0i32, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, i32::MAX, i32::MIN, i32::MIN + 1];
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &p in &vals {
        for &q in &vals {
            a.push(p);
            b.push(q);
        }
    }
    let x = dev.from_slice(&a, &[a.len()]).unwrap();
    let y = dev.from_slice(&b, &[b.len()]).unwrap();
    let div = x.zip_map(&y, |p, q| p / q).unwrap().to_vec().unwrap();
    let rem = x.zip_map(&y, |p, q| p % q).unwrap().to_vec().unwrap();
    for i in 0..a.len() {
        let (p, q) = (a[i] as i64, b[i] as i64);
        let (wd, wr) = if q == 0 {
            (0, 0)
        } else {
            let d = (p as f64 / q as f64).floor() as i64;
            (d as i32, (p - d * q) as i32)
        };
        assert_eq!((div[i], rem[i]), (wd, wr), "{p} // {q} and {p} % {q}");
    }
    // u32: plain division, zero divisor gives 0.
    let ua = [0u32, 1, 7, u32::MAX, 100];
    let ub = [0u32, 3, 0, 2, 7];
    let x = dev.from_slice(&ua, &[5]).unwrap();
    let y = dev.from_slice(&ub, &[5]).unwrap();
    assert_eq!(x.zip_map(&y, |p, q| p / q).unwrap().to_vec().unwrap(), vec![0, 0, 0, u32::MAX / 2, 14]);
    assert_eq!(x.zip_map(&y, |p, q| p % q).unwrap().to_vec().unwrap(), vec![0, 1, 0, 1, 2]);
}

#[test]
fn integer_arithmetic_wraps() {
    let Some(dev) = common::device() else { return };
    let a: Vec<i32> = bits(5, 64).into_iter().map(|w| w as i32).chain([i32::MAX, i32::MIN, -1, 0]).collect();
    let b: Vec<i32> = bits(6, 64).into_iter().map(|w| w as i32).chain([1, -1, i32::MIN, 5]).collect();
    let x = dev.from_slice(&a, &[a.len()]).unwrap();
    let y = dev.from_slice(&b, &[b.len()]).unwrap();
    let got = x.zip_map(&y, |p, q| &p * &q + &p - q).unwrap().to_vec().unwrap();
    let neg = x.map(|p| -p.abs()).unwrap().to_vec().unwrap();
    for i in 0..a.len() {
        assert_eq!(got[i], a[i].wrapping_mul(b[i]).wrapping_add(a[i]).wrapping_sub(b[i]));
        assert_eq!(neg[i], a[i].wrapping_abs().wrapping_neg());
    }
    let pw = x.map(|p| p.pow(3)).unwrap().to_vec().unwrap();
    for i in 0..a.len() {
        assert_eq!(pw[i], a[i].wrapping_pow(3), "{}^3", a[i]);
    }
    let e = dev.from_slice(&[-1i32, -2, -3, 0, 31, 2], &[6]).unwrap();
    let base = dev.from_slice(&[2i32, -1, -1, 0, 2, -3], &[6]).unwrap();
    let got = base.zip_map(&e, |p, q| p.pow(q)).unwrap().to_vec().unwrap();
    assert_eq!(got, vec![0, 1, -1, 1, i32::MIN, 9]);
    let u = dev.from_slice(&[0u32, 1, 5], &[3]).unwrap();
    assert_eq!(u.map(|p| -p).unwrap().to_vec().unwrap(), vec![0, u32::MAX, u32::MAX - 4]);
}

#[test]
fn float_to_int_casts_saturate_and_nan_is_zero() {
    let Some(dev) = common::device() else { return };
    let v = specials();
    let x = dev.from_slice(&v, &[v.len()]).unwrap();
    let i = x.cast::<i32>().unwrap().to_vec().unwrap();
    let u = x.cast::<u32>().unwrap().to_vec().unwrap();
    for k in 0..v.len() {
        assert_eq!(i[k], v[k] as i32, "{} as i32", v[k]);
        assert_eq!(u[k], v[k] as u32, "{} as u32", v[k]);
    }
    // Through a map too, and i32 <-> u32 keep the bits.
    let ints = dev.from_slice(&[-1i32, i32::MIN, 7], &[3]).unwrap();
    assert_eq!(ints.cast::<u32>().unwrap().to_vec().unwrap(), vec![u32::MAX, 1 << 31, 7]);
    let back = ints.map_to::<u32>(|p| p.cast(DType::U32)).unwrap().to_vec().unwrap();
    assert_eq!(back, vec![u32::MAX, 1 << 31, 7]);
    let big = dev.from_slice(&[16777217u32, u32::MAX, 3], &[3]).unwrap();
    assert_eq!(big.cast::<f32>().unwrap().to_vec().unwrap(), vec![16777217u32 as f32, u32::MAX as f32, 3.0]);
}

#[test]
fn rounding_is_half_to_even() {
    let Some(dev) = common::device() else { return };
    let v = [0.5f32, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999998, 8388609.0, -3.7, 3.7];
    let x = dev.from_slice(&v, &[v.len()]).unwrap();
    let r = x.map(|p| p.round()).unwrap().to_vec().unwrap();
    let f = x.map(|p| p.floor()).unwrap().to_vec().unwrap();
    let c = x.map(|p| p.ceil()).unwrap().to_vec().unwrap();
    for k in 0..v.len() {
        assert_eq!(r[k], v[k].round_ties_even(), "round({})", v[k]);
        assert_eq!(f[k], v[k].floor());
        assert_eq!(c[k], v[k].ceil());
    }
}

#[test]
fn pow_follows_ieee_special_cases() {
    let Some(dev) = common::device() else { return };
    let (a, b) =
        pairs(&[0.0f32, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -3.0, 2.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN]);
    let x = dev.from_slice(&a, &[a.len()]).unwrap();
    let y = dev.from_slice(&b, &[b.len()]).unwrap();
    let got = x.zip_map(&y, |p, q| p.pow(q)).unwrap().to_vec().unwrap();
    for k in 0..a.len() {
        let want = a[k].powf(b[k]);
        assert!(close_f32(got[k], want, 4), "pow({}, {}) = {} want {want}", a[k], b[k], got[k]);
        if want == 0.0 {
            assert_eq!(got[k].is_sign_negative(), want.is_sign_negative(), "sign of pow({}, {})", a[k], b[k]);
        }
    }
}

#[test]
fn transcendentals_are_close_and_handle_special_values() {
    let Some(dev) = common::device() else { return };
    let mut v = uniform::<f32>(9, 500, -20.0, 20.0);
    v.extend(uniform::<f32>(10, 200, -300.0, 300.0));
    v.extend([
        0.0,
        -0.0,
        1e-6,
        -1e-6,
        0.3,
        0.49,
        0.51,
        8.9,
        9.1,
        50.0,
        -50.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ]);
    let x = dev.from_slice(&v, &[v.len()]).unwrap();
    type F = (&'static str, fn(Expr) -> Expr, fn(f64) -> f64, u64);
    let cases: [F; 8] = [
        ("exp", |p| p.exp(), f64::exp, 2),
        ("ln", |p| p.ln(), f64::ln, 2),
        ("sqrt", |p| p.sqrt(), f64::sqrt, 1),
        ("tanh", |p| p.tanh(), f64::tanh, 4),
        ("sin", |p| p.sin(), f64::sin, 2),
        ("cos", |p| p.cos(), f64::cos, 2),
        ("tan", |p| p.tan(), f64::tan, 4),
        ("recip", |p| p.recip(), f64::recip, 1),
    ];
    for (name, f, host, ulps) in cases {
        let got = x.map(f).unwrap().to_vec().unwrap();
        for k in 0..v.len() {
            // The reference is the f64 function rounded to f32: the last place of the true value.
            let want = host(v[k] as f64) as f32;
            assert!(close_f32(got[k], want, ulps), "{name}({}) = {} want {want}", v[k], got[k]);
        }
    }
}

#[test]
fn transcendentals_stay_accurate_at_extremes() {
    let Some(dev) = common::device() else { return };
    // Subnormals, huge arguments (Payne-Hanek reduction), results near overflow and underflow.
    let v =
        [1e-45f32, 3e-42, 1.1e-38, 1e30, -1e30, 3e9, 123456.79, 3.4e38, 88.7, -87.3, -100.0, -103.9, 200.0, 1e6, -1e-7];
    let x = dev.from_slice(&v, &[v.len()]).unwrap();
    type F = (&'static str, fn(Expr) -> Expr, fn(f64) -> f64);
    let cases: [F; 6] = [
        ("exp", |p| p.exp(), f64::exp),
        ("ln", |p| p.ln(), f64::ln),
        ("sqrt", |p| p.abs().sqrt(), |p| p.abs().sqrt()),
        ("sin", |p| p.sin(), f64::sin),
        ("cos", |p| p.cos(), f64::cos),
        ("tan", |p| p.tan(), f64::tan),
    ];
    for (name, f, host) in cases {
        let got = x.map(f).unwrap().to_vec().unwrap();
        for k in 0..v.len() {
            let want = host(v[k] as f64) as f32;
            // Subnormal results: within a couple of units of the smallest subnormal.
            let ok = close_f32(got[k], want, 3) || (want.abs() < 1.2e-38 && (got[k] - want).abs() <= 3e-45);
            assert!(ok, "{name}({}) = {} want {want}", v[k], got[k]);
        }
    }
    let (a, b) = pairs(&[2.0f32, 10.0, 1e15, 0.5, 1.0001, 3e-39, 7.5, 1.0 + f32::EPSILON]);
    let (a, b): (Vec<f32>, Vec<f32>) = a.iter().zip(&b).map(|(p, q)| (*p, q.min(40.0) * 2.0 - 3.0)).unzip();
    let x = dev.from_slice(&a, &[a.len()]).unwrap();
    let y = dev.from_slice(&b, &[b.len()]).unwrap();
    let got = x.zip_map(&y, |p, q| p.pow(q)).unwrap().to_vec().unwrap();
    // Huge exponents of a base just above 1: ln x has no head, only a tail.
    let x2 = dev.from_slice(&[1.0 + f32::EPSILON; 4], &[4]).unwrap();
    let y2 = dev.from_slice(&[-3.4e38f32, 1e10, -3e9, 1e6], &[4]).unwrap();
    let got2 = x2.zip_map(&y2, |p, q| p.pow(q)).unwrap().to_vec().unwrap();
    let want2: Vec<f32> =
        [-3.4e38f64, 1e10, -3e9, 1e6].iter().map(|&q| (1.0 + f32::EPSILON as f64).powf(q) as f32).collect();
    for (g, w) in got2.iter().zip(&want2) {
        assert!(close_f32(*g, *w, 2), "pow(1+eps, ..) = {g} want {w}");
    }
    for k in 0..a.len() {
        let want = (a[k] as f64).powf(b[k] as f64) as f32;
        let ok = close_f32(got[k], want, 2) || (want.abs() < 1.2e-38 && (got[k] - want).abs() <= 1e-44);
        assert!(ok, "pow({}, {}) = {} want {want}", a[k], b[k], got[k]);
    }
}

#[test]
fn index_and_literals_including_non_finite_and_overflowing_ones() {
    let Some(dev) = common::device() else { return };
    let x = dev.from_slice(&[1.0f32, -2.0, 3.0], &[3]).unwrap();
    let got = x
        .map(|p| p.max(f32::NEG_INFINITY).min(f32::INFINITY) + Expr::index().cast(DType::F32))
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(got, vec![1.0, -1.0, 5.0]);
    // Literal-only subtrees that a constant folder would reject: 1/0, NaN, i32::MAX + 1.
    assert_eq!(x.map(|p| p + (Expr::float(1.0) / 0.0)).unwrap().to_vec().unwrap(), vec![f32::INFINITY; 3]);
    assert!(x.map(|p| p * 0.0 + f32::NAN).unwrap().to_vec().unwrap().iter().all(|v| v.is_nan()));
    assert_eq!(x.map(|p| p / 0.0).unwrap().to_vec().unwrap(), vec![f32::INFINITY, f32::NEG_INFINITY, f32::INFINITY]);
    let i = dev.from_slice(&[1i32, 2], &[2]).unwrap();
    let wrapped = i.map(|p| p - Expr::int(1) + (Expr::int(2147483647) + 1)).unwrap().to_vec().unwrap();
    assert_eq!(wrapped, vec![i32::MIN, i32::MIN + 1]);
}

#[test]
fn a_repeated_map_compiles_once_whatever_the_shape() {
    let Some(wdev) = common::wgpu_device() else { return };
    let dev = polycompute_core::Device::from_backend(wdev.clone());
    let f = |d: &polycompute_core::Device, n: usize| {
        let a = d.from_slice(&uniform::<f32>(n as u64, n, -1.0, 1.0), &[n]).unwrap();
        a.map(|p| p.clone() * p + 1.0).unwrap().to_vec().unwrap()
    };
    f(&dev, 10);
    let compiled = wdev.compiled_kernels();
    for n in [1000, 3, 77_777] {
        let got = f(&dev, n);
        let src = uniform::<f32>(n as u64, n, -1.0, 1.0);
        assert!(got.iter().zip(&src).all(|(g, s)| *g == s * s + 1.0));
    }
    assert_eq!(wdev.compiled_kernels(), compiled, "the same map on other sizes must reuse the kernel");
    // Freed buffers go back to the pool and come out again.
    assert!(wdev.pooled_buffers() > 0);
}

#[test]
fn more_workgroups_than_one_grid_dimension_holds() {
    let Some(dev) = common::device() else { return };
    // 65,535 workgroups of 256 threads cover 16,776,960 elements; go past that.
    let n = 65_535 * 256 + 1000;
    let z = dev.zeros::<u32>(&[n]).unwrap();
    let got = z.map(|p| p + Expr::index()).unwrap().to_vec().unwrap();
    assert_eq!(got.len(), n);
    assert!(got.iter().enumerate().all(|(i, v)| *v == i as u32), "every element written exactly once");
}

#[test]
fn f64_maps_run_where_the_adapter_has_shader_f64() {
    let Some(dev) = common::device() else { return };
    let v: Vec<f64> = vec![1.5, -2.25, 0.1, 1e300, -1e-300, f64::INFINITY, f64::NAN, -0.0, 7.0];
    let x = match dev.from_slice(&v, &[v.len()]) {
        Ok(x) => x,
        Err(e) => panic!("f64 upload must work on every device: {e}"),
    };
    let r = x.map(|p| (&p * 3.0 + 0.1).min(&p).sqrt() + (p.clone() % 2.0));
    if !common::has_f64(&dev) {
        assert!(matches!(r, Err(Error::Unsupported { dtype: DType::F64, .. })), "{r:?}");
        return;
    }
    let got = r.unwrap().to_vec().unwrap();
    for (k, &p) in v.iter().enumerate() {
        let m = (p * 3.0 + 0.1).min(p);
        let mn = if p.is_nan() || m.is_nan() { f64::NAN } else { m };
        let rem = {
            let m = p % 2.0;
            if m != 0.0 && (m < 0.0) != (2.0 < 0.0) {
                m + 2.0
            } else if m == 0.0 {
                0.0
            } else {
                m
            }
        };
        let want = mn.sqrt() + rem;
        assert!(want.is_nan() && got[k].is_nan() || got[k] == want, "{p}: {} want {want}", got[k]);
    }
    let c = x.cast::<i32>().unwrap().to_vec().unwrap();
    assert_eq!(c, v.iter().map(|&p| p as i32).collect::<Vec<_>>());
    let f = x.cast::<f32>().unwrap().to_vec().unwrap();
    for (g, &p) in f.iter().zip(&v) {
        if let Err(m) = Ulps::EXACT.check(*g, p as f32) {
            panic!("{p} as f32: {m}");
        }
    }
    // exp, ln and tanh are written out in f64 too: within 2 ulp, subnormals and overflow included.
    let w: Vec<f64> =
        vec![5e-324, 1e-310, 1e-5, 0.3, 1.0, 1.5, 10.0, 54.9, 55.1, -60.0, 700.0, 709.7, -700.0, -745.0, -746.0, 1e300];
    let y = dev.from_slice(&w, &[w.len()]).unwrap();
    let e = y.map(|p| p.exp()).unwrap().to_vec().unwrap();
    let l = y.map(|p| p.ln()).unwrap().to_vec().unwrap();
    let t = y.map(|p| (p * 0.01).tanh()).unwrap().to_vec().unwrap();
    for (k, &p) in w.iter().enumerate() {
        for (name, got, want) in [("exp", e[k], p.exp()), ("ln", l[k], p.ln()), ("tanh", t[k], (p * 0.01).tanh())] {
            if let Err(m) = Ulps::within(2).check(got, want) {
                panic!("{name}({p:e}): {m}");
            }
        }
    }
    // f64 sin, cos and tan, with Payne-Hanek reduction for huge arguments.
    let a: Vec<f64> =
        vec![0.1, -2.5, 3.0, std::f64::consts::PI, 1e6, 1.7e6, -1e7, 1e22, 1e300, -1.7976931348623157e308];
    let y = dev.from_slice(&a, &[a.len()]).unwrap();
    let s = y.map(|p| p.sin()).unwrap().to_vec().unwrap();
    let c = y.map(|p| p.cos()).unwrap().to_vec().unwrap();
    for (k, &p) in a.iter().enumerate() {
        for (name, got, want) in [("sin", s[k], p.sin()), ("cos", c[k], p.cos())] {
            if let Err(m) = Ulps::within(2).check(got, want) {
                panic!("{name}({p:e}): {m}");
            }
        }
    }
    // f64 pow is not written out: a typed Unsupported, not a wrong answer.
    match x.zip_map(&x, |p, q| p.pow(q)) {
        Err(Error::Unsupported { op, dtype: DType::F64, device }) => {
            assert!(
                op.contains("pow") && device.is_some_and(|d| d.kind == polycompute_core::BackendKind::Wgpu),
                "{op} {device:?}"
            )
        }
        other => panic!("f64 pow must be Unsupported, got {other:?}"),
    }
}

#[test]
fn copy_and_cast_move_data() {
    let Some(dev) = common::device() else { return };
    let v = uniform::<f32>(4, 1000, -100.0, 100.0);
    let x = dev.from_slice(&v, &[10, 100]).unwrap();
    let c = x.copy().unwrap();
    assert_eq!(c.shape(), &[10, 100]);
    assert_eq!(c.to_vec().unwrap(), v);
    let i = x.cast::<i32>().unwrap();
    assert_eq!(i.to_vec().unwrap(), v.iter().map(|&p| p as i32).collect::<Vec<_>>());
    let e = dev.from_slice::<f32>(&[], &[0, 4]).unwrap();
    assert_eq!(e.map(|p| p + 1.0).unwrap().to_vec().unwrap(), Vec::<f32>::new());
    assert_eq!(e.copy().unwrap().to_vec().unwrap(), Vec::<f32>::new());
}
