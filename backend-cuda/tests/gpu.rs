//! Checks on a real CUDA device (skipped, and saying so, where there is none, unless
//! `POLYCOMPUTE_REQUIRE` lists `cuda`): the own matmul kernel and cuBLAS agree with each other
//! and with an f64 host product, also on transposed views; the semantics corner cases of map;
//! reductions that take the segmented two-pass paths; random fills bit-equal to
//! `polycompute_core::philox`; transposes; the half dtypes (fills, a fused map, casts,
//! reductions, sort, own and cuBLAS matmul) against the CPU backend.
//! The cross-backend conformance suite (tests/conformance.rs of the facade) covers the rest.

use polycompute_core::{philox, BackendKind, DType, Device, DeviceArray, Element, Expr};
use polycompute_cuda::{cublas_status, set_matmul_impl, MatmulImpl};
use polycompute_testing as testing;

fn device() -> Option<Device> {
    // Referencing the crate links it, and linking registers the backend.
    let _ = cublas_status();
    // Skipped, and saying so, unless POLYCOMPUTE_REQUIRE lists cuda.
    testing::devices::open_or_skip(BackendKind::Cuda, 0).unwrap_or_else(|e| panic!("{e}"))
}

fn host_matmul(a: &[f64], b: &[f64], batch: usize, m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; batch * m * n];
    for z in 0..batch {
        for i in 0..m {
            for p in 0..k {
                let x = a[z * m * k + i * k + p];
                for j in 0..n {
                    c[z * m * n + i * n + j] += x * b[z * k * n + p * n + j];
                }
            }
        }
    }
    c
}

fn matmul_case<T: Element + Into<f64>>(dev: &Device, batch: usize, m: usize, k: usize, n: usize, eps: f64) {
    let shape = |r, c| if batch == 1 { vec![r, c] } else { vec![batch, r, c] };
    let a: DeviceArray<T> = dev.normal(1, &shape(m, k)).unwrap();
    let b: DeviceArray<T> = dev.normal(2, &shape(k, n)).unwrap();
    let (ah, bh): (Vec<f64>, Vec<f64>) = (
        a.to_vec().unwrap().into_iter().map(Into::into).collect(),
        b.to_vec().unwrap().into_iter().map(Into::into).collect(),
    );
    let want = host_matmul(&ah, &bh, batch, m, k, n);
    let tol = |i: usize| {
        let (z, r, c) = (i / (m * n), (i / n) % m, i % n);
        let mag: f64 = (0..k).map(|p| (ah[z * m * k + r * k + p] * bh[z * k * n + p * n + c]).abs()).sum();
        4.0 * (k as f64 + 1.0) * eps * mag + 1e-30
    };
    let mut impls = vec![MatmulImpl::Own];
    match cublas_status() {
        Ok(_) if k > 0 => impls.push(MatmulImpl::Cublas),
        Ok(_) => {}
        // Where the GPU run requires CUDA, a missing cuBLAS is a failure: the figures and the
        // default matmul path would silently be the own kernel's.
        Err(e) if testing::devices::is_required(BackendKind::Cuda) => {
            panic!("POLYCOMPUTE_REQUIRE lists cuda but cuBLAS did not load: {e}")
        }
        Err(e) => println!("cuBLAS not compared: {e}"),
    }
    let mut results = Vec::new();
    for imp in impls {
        set_matmul_impl(imp);
        let c = a.matmul(&b).unwrap();
        assert_eq!(c.shape(), shape(m, n).as_slice());
        let got: Vec<f64> = c.to_vec().unwrap().into_iter().map(Into::into).collect();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= tol(i), "{imp:?} {batch}x{m}x{k}x{n} {}: [{i}] {g} vs {w}", T::DTYPE);
        }
        // The same product of transposed views, whose buffers hold the operands transposed
        // (read in place: cuBLAS OP_T, the own kernel's pc_matmul_tn/nt/tt).
        let swap = |x: &DeviceArray<T>| if batch == 1 { x.transpose() } else { x.permute(&[0, 2, 1]) }.unwrap();
        let (at, bt) = (swap(&swap(&a).contiguous().unwrap()), swap(&swap(&b).contiguous().unwrap()));
        for (which, x, y) in [("a.T", &at, &b), ("b.T", &a, &bt), ("both", &at, &bt)] {
            let c: Vec<f64> = x.matmul(y).unwrap().to_vec().unwrap().into_iter().map(Into::into).collect();
            for (i, (g, w)) in c.iter().zip(&want).enumerate() {
                assert!((g - w).abs() <= tol(i), "{imp:?} {which} {batch}x{m}x{k}x{n}: [{i}] {g} vs {w}");
            }
        }
        results.push(got);
    }
    set_matmul_impl(MatmulImpl::Auto);
    if results.len() == 2 {
        for (i, (x, y)) in results[0].iter().zip(&results[1]).enumerate() {
            assert!((x - y).abs() <= 2.0 * tol(i), "own vs cuBLAS at {i}: {x} vs {y}");
        }
    }
}

#[test]
fn own_matmul_and_cublas_agree() {
    let Some(dev) = device() else { return };
    for (batch, m, k, n) in [
        (1, 1, 1, 1),
        (1, 127, 65, 33),
        (1, 256, 256, 256),
        (3, 64, 129, 96),
        (1, 1000, 1, 7),
        (1, 3, 0, 4),
        (2, 130, 17, 260),
    ] {
        matmul_case::<f32>(&dev, batch, m, k, n, f32::EPSILON as f64);
        matmul_case::<f64>(&dev, batch, m, k, n, f64::EPSILON);
    }
}

fn map1<T: Element, U: Element>(dev: &Device, x: &[T], f: impl FnOnce(Expr) -> Expr) -> Vec<U> {
    let a = dev.from_slice(x, &[x.len()]).unwrap();
    a.map_to::<U>(f).unwrap().to_vec().unwrap()
}

fn map2<T: Element>(dev: &Device, x: &[T], y: &[T], f: impl FnOnce(Expr, Expr) -> Expr) -> Vec<T> {
    let (a, b) = (dev.from_slice(x, &[x.len()]).unwrap(), dev.from_slice(y, &[y.len()]).unwrap());
    a.zip_map(&b, f).unwrap().to_vec().unwrap()
}

#[test]
fn map_follows_the_shared_semantics() {
    let Some(dev) = device() else { return };
    // Integer floor division and remainder; by zero gives 0; MIN / -1 wraps.
    let (x, y) = ([7, -7, 7, -7, 5, i32::MIN, i32::MIN, 3], [2, 2, -2, -2, 0, -1, 1, i32::MIN]);
    assert_eq!(map2(&dev, &x, &y, |a, b| a / b), vec![3, -4, -4, 3, 0, i32::MIN, i32::MIN, -1]);
    assert_eq!(map2(&dev, &x, &y, |a, b| a % b), vec![1, 1, -1, -1, 0, 0, 0, -2147483645]);
    assert_eq!(map2(&dev, &[u32::MAX, 9], &[0, 4], |a, b| a / b), vec![0, 2]);
    // Wrapping arithmetic and pow.
    assert_eq!(map2(&dev, &[i32::MAX, i32::MIN], &[1, 1], |a, b| a + b), vec![i32::MIN, i32::MIN + 1]);
    assert_eq!(map2(&dev, &[i32::MIN, 0], &[1, i32::MIN], |a, b| a - b), vec![i32::MAX, i32::MIN]);
    assert_eq!(map2(&dev, &[0x10000, -3], &[0x10000, 0x40000000], |a, b| a * b), vec![0, 0x40000000]);
    assert_eq!(map2(&dev, &[3, -1, 2, 2], &[4, -3, -1, 31], |a, b| a.pow(b)), vec![81, -1, 0, i32::MIN]);
    // Float remainder is numpy's; min/max propagate NaN and order -0.0 below 0.0.
    let rem = map2(&dev, &[5.5f64, -5.5, 5.5, 0.0, -0.0], &[2.0, 2.0, -2.0, -3.0, 3.0], |a, b| a % b);
    assert_eq!(rem.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [1.5f64, 0.5, -0.5, -0.0, 0.0].map(f64::to_bits));
    let mn = map2(&dev, &[f32::NAN, 1.0, -0.0, 0.0], &[1.0, f32::NAN, 0.0, -0.0], |a, b| a.min(b));
    assert!(mn[0].is_nan() && mn[1].is_nan());
    assert_eq!((mn[2].to_bits(), mn[3].to_bits()), ((-0.0f32).to_bits(), (-0.0f32).to_bits()));
    let mx = map2(&dev, &[-0.0f32, 0.0], &[0.0, -0.0], |a, b| a.max(b));
    assert_eq!((mx[0].to_bits(), mx[1].to_bits()), (0.0f32.to_bits(), 0.0f32.to_bits()));
    // Comparisons with NaN are false, != true; select treats NaN as true.
    assert_eq!(map2(&dev, &[f32::NAN, 1.0], &[f32::NAN, 1.0], |a, b| a.ne(b)), vec![1.0, 0.0]);
    assert_eq!(map2(&dev, &[f32::NAN, 1.0], &[f32::NAN, 1.0], |a, b| a.lt(b)), vec![0.0, 0.0]);
    assert_eq!(map1::<f32, f32>(&dev, &[f32::NAN, 0.0, -0.0], |c| Expr::select(c, 1.0, 2.0)), vec![1.0, 2.0, 2.0]);
    // Round half to even; saturating casts with NaN -> 0.
    assert_eq!(map1::<f64, f64>(&dev, &[0.5, 1.5, 2.5, -0.5, -1.5], |a| a.round()), vec![0.0, 2.0, 2.0, -0.0, -2.0]);
    let src = [f32::NAN, 1e10, -1e10, -1.9, 2.9, f32::INFINITY];
    assert_eq!(map1::<f32, i32>(&dev, &src, |a| a.cast(DType::I32)), src.iter().map(|&v| v as i32).collect::<Vec<_>>());
    assert_eq!(map1::<f32, u32>(&dev, &src, |a| a.cast(DType::U32)), src.iter().map(|&v| v as u32).collect::<Vec<_>>());
    assert_eq!(map1::<i32, u32>(&dev, &[-1, 5], |a| a.cast(DType::U32)), vec![u32::MAX, 5]);
    assert_eq!(
        map1::<u32, f32>(&dev, &[u32::MAX, 16_777_217], |a| a.cast(DType::F32)),
        vec![u32::MAX as f32, 16_777_217u32 as f32]
    );
    // Broadcasting and the index.
    let a = dev.from_slice(&[1.0f32, 2.0, 3.0], &[3, 1]).unwrap();
    let b = dev.from_slice(&[10.0f32, 20.0], &[2]).unwrap();
    let c: DeviceArray<f32> =
        polycompute_core::map(&[&a, &b], |v| &v[0] * &v[1] + Expr::index().cast(DType::F32)).unwrap();
    assert_eq!(c.shape(), &[3, 2]);
    assert_eq!(c.to_vec().unwrap(), vec![10.0, 21.0, 22.0, 43.0, 34.0, 65.0]);
}

#[test]
fn reductions_over_every_path() {
    let Some(dev) = device() else { return };
    // Full reductions large enough for the segmented two-pass path.
    let n = 3 * (1 << 20) + 5;
    let ones: DeviceArray<f32> = dev.full(1.0, &[n]).unwrap();
    assert_eq!(ones.sum(None).unwrap().to_scalar().unwrap(), n as f32);
    assert_eq!(ones.mean(None).unwrap().to_scalar().unwrap(), 1.0);
    let big: DeviceArray<i32> = dev.full(i32::MAX, &[n]).unwrap();
    assert_eq!(big.sum(None).unwrap().to_scalar().unwrap(), (0..n).fold(0i32, |s, _| s.wrapping_add(i32::MAX)));
    assert_eq!(big.mean(None).unwrap().to_scalar().unwrap(), i32::MAX as f64);
    let mut v: Vec<f64> = (0..n).map(|i| philox::uniform_f64(3, i as u64)).collect();
    v[n - 10] = 2.0;
    v[n - 3] = 2.0;
    let x = dev.from_slice(&v, &[n]).unwrap();
    assert_eq!(x.argmax(None).unwrap().to_scalar().unwrap(), (n - 10) as u32);
    let want: f64 = v.iter().sum();
    assert!((x.sum(None).unwrap().to_scalar().unwrap() - want).abs() <= 1e-12 * want);
    v[n / 2] = f64::NAN;
    v[n - 1] = f64::NAN;
    let x = dev.from_slice(&v, &[n]).unwrap();
    assert_eq!(x.argmin(None).unwrap().to_scalar().unwrap(), (n / 2) as u32);
    assert!(x.max(None).unwrap().to_scalar().unwrap().is_nan());
    // Axis reductions: rows, columns and segmented columns, against the host.
    for dims in [[7usize, 300, 1], [4, 20000, 3], [2, 5, 1000], [1, 100000, 2]] {
        let len = dims.iter().product::<usize>();
        let h: Vec<f32> = (0..len).map(|i| philox::normal_f32(5, i as u64)).collect();
        let x = dev.from_slice(&h, &dims).unwrap();
        let got = x.sum(Some(1)).unwrap().to_vec().unwrap();
        let mx = x.argmax(Some(1)).unwrap().to_vec().unwrap();
        for o in 0..dims[0] {
            for j in 0..dims[2] {
                let col: Vec<f32> = (0..dims[1]).map(|k| h[(o * dims[1] + k) * dims[2] + j]).collect();
                let s: f64 = col.iter().map(|&v| v as f64).sum();
                let abs: f64 = col.iter().map(|&v| v.abs() as f64).sum();
                assert!((got[o * dims[2] + j] as f64 - s).abs() <= 2.0 * f32::EPSILON as f64 * abs + 1e-6, "{dims:?}");
                let best = (0..col.len()).fold(0, |b, k| if col[k] > col[b] { k } else { b });
                assert_eq!(mx[o * dims[2] + j] as usize, best, "{dims:?}");
            }
        }
    }
    let empty: DeviceArray<f32> = dev.from_slice(&[], &[0]).unwrap();
    assert_eq!(empty.sum(None).unwrap().to_scalar().unwrap(), 0.0);
    assert_eq!(empty.prod(None).unwrap().to_scalar().unwrap(), 1.0);
    assert!(empty.mean(None).unwrap().to_scalar().unwrap().is_nan());
}

#[test]
fn random_fills_match_the_reference_bits() {
    let Some(dev) = device() else { return };
    let n = 1001;
    let u: Vec<u32> = dev.uniform::<u32>(42, &[n]).unwrap().to_vec().unwrap();
    assert!(u.iter().enumerate().all(|(i, &v)| v == philox::uniform_u32(42, i as u64)));
    let f: Vec<f32> = dev.uniform::<f32>(42, &[n]).unwrap().to_vec().unwrap();
    assert!(f.iter().enumerate().all(|(i, &v)| v.to_bits() == philox::uniform_f32(42, i as u64).to_bits()));
    let d: Vec<f64> = dev.uniform::<f64>(u64::MAX, &[n]).unwrap().to_vec().unwrap();
    assert!(d.iter().enumerate().all(|(i, &v)| v.to_bits() == philox::uniform_f64(u64::MAX, i as u64).to_bits()));
    let g: Vec<f32> = dev.normal::<f32>(7, &[n]).unwrap().to_vec().unwrap();
    for (i, &v) in g.iter().enumerate() {
        let w = philox::normal_f32(7, i as u64);
        assert!((v - w).abs() <= 1e-5 * (1.0 + w.abs()), "{i}: {v} vs {w}");
    }
    let g: Vec<f64> = dev.normal::<f64>(7, &[n]).unwrap().to_vec().unwrap();
    for (i, &v) in g.iter().enumerate() {
        let w = philox::normal_f64(7, i as u64);
        assert!((v - w).abs() <= 1e-13 * (1.0 + w.abs()), "{i}: {v} vs {w}");
    }
    assert_eq!(dev.full(-3i32, &[5]).unwrap().to_vec().unwrap(), vec![-3; 5]);
}

#[test]
fn transposes_move_every_element() {
    let Some(dev) = device() else { return };
    for (dims, perm) in [
        (vec![33usize, 65], vec![1usize, 0]),
        (vec![3, 40, 70], vec![0, 2, 1]),
        (vec![2, 3, 4, 5], vec![3, 1, 0, 2]),
        (vec![1, 7], vec![1, 0]),
        (vec![4, 5, 6], vec![1, 2, 0]),
    ] {
        let len: usize = dims.iter().product();
        let h: Vec<f64> = (0..len).map(|i| i as f64).collect();
        let x = dev.from_slice(&h, &dims).unwrap();
        let got = x.permute(&perm).unwrap().to_vec().unwrap();
        let in_strides: Vec<usize> = (0..dims.len()).map(|d| dims[d + 1..].iter().product()).collect();
        let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
        for (i, &g) in got.iter().enumerate() {
            let mut rest = i;
            let mut off = 0;
            for d in (0..out_dims.len()).rev() {
                off += (rest % out_dims[d]) * in_strides[perm[d]];
                rest /= out_dims[d];
            }
            assert_eq!(g, h[off], "{dims:?} {perm:?} at {i}");
        }
    }
}

/// The f32 bits of each half element (exact: widening is lossless).
fn half_bits<T: Element + Into<f32>>(v: Vec<T>) -> Vec<u32> {
    v.into_iter().map(|x| x.into().to_bits()).collect()
}

/// The spacing of a half type of `mantissa` bits at `w` (its subnormal spacing at least).
fn half_ulp(w: f32, mantissa: i32) -> f32 {
    let min_exp = if mantissa == 10 { -14 } else { -126 };
    2f32.powi((w.abs().max(f32::MIN_POSITIVE).log2().floor() as i32).max(min_exp) - mantissa)
}

/// Within `ulps` units in the last place of a half type of `mantissa` bits (NaN only NaN).
fn half_close(g: f32, w: f32, mantissa: i32, ulps: f32) -> bool {
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    g == w || (g - w).abs() <= ulps * half_ulp(w, mantissa)
}

/// Every op family on a half dtype, against the CPU backend on the same inputs: bit for bit
/// where the result is exactly determined, within a few ULPs of the half type where it goes
/// through a math library or a different summation order.
fn half_ops_case<T: Element<Mean = T> + Into<f32>>(dev: &Device, cpu: &Device, mantissa: i32) {
    let n = 3 * (1 << 20) + 5; // long enough for the segmented reductions
                               // Philox fills: uniform is bit-equal; normal within one half ULP (f32 math libraries differ).
    let u: DeviceArray<T> = dev.uniform(5, &[n]).unwrap();
    assert_eq!(half_bits(u.to_vec().unwrap()), half_bits(cpu.uniform::<T>(5, &[n]).unwrap().to_vec().unwrap()));
    let x: DeviceArray<T> = cpu.normal(6, &[n]).unwrap();
    let (xc, xd) = (x.clone(), x.to_device(dev).unwrap());
    let g = half_bits(dev.normal::<T>(6, &[n]).unwrap().to_vec().unwrap());
    for (i, (a, b)) in g.iter().zip(half_bits(xc.to_vec().unwrap())).enumerate() {
        assert!(half_close(f32::from_bits(*a), f32::from_bits(b), mantissa, 1.0), "normal {} [{i}]", T::DTYPE);
    }
    // A fused map, casts both ways, min/max/argmin/argmax and sort: bit for bit.
    let (uc, ud) = (u.to_device(cpu).unwrap(), u.clone());
    let axpy = |x: &DeviceArray<T>, y: &DeviceArray<T>| x.zip_map(y, |a, b| a * 3.0 + b).unwrap().to_vec().unwrap();
    assert_eq!(half_bits(axpy(&xd, &ud)), half_bits(axpy(&xc, &uc)), "axpy {}", T::DTYPE);
    let wide = |x: &DeviceArray<T>| x.cast::<f32>().unwrap().to_vec().unwrap();
    assert_eq!(wide(&xd), wide(&xc));
    let f: DeviceArray<f64> = cpu.normal(7, &[4096]).unwrap();
    let narrow = |f: &DeviceArray<f64>| half_bits(f.cast::<T>().unwrap().to_vec().unwrap());
    assert_eq!(narrow(&f.to_device(dev).unwrap()), narrow(&f));
    for axis in [None, Some(0)] {
        let ext = |x: &DeviceArray<T>| {
            let v = [x.min(axis), x.max(axis)].map(|r| half_bits(r.unwrap().to_vec().unwrap()));
            (v, x.argmin(axis).unwrap().to_vec().unwrap(), x.argmax(axis).unwrap().to_vec().unwrap())
        };
        assert_eq!(ext(&xd), ext(&xc), "extremes {}", T::DTYPE);
        // Sums and means: f64 accumulation here, f32 there (pairwise), one rounding each: within
        // 2 half ULPs plus the f32 summation's error bound (relative to the sum of magnitudes).
        let abs: f32 = xc.to_vec().unwrap().into_iter().map(|v| v.into().abs()).sum();
        let slack = 4.0 * (n as f32).log2() * f32::EPSILON * abs;
        for (g, w, scale) in [(xd.sum(axis), xc.sum(axis), 1.0), (xd.mean(axis), xc.mean(axis), n as f32)] {
            let (g, w) = (half_bits(g.unwrap().to_vec().unwrap()), half_bits(w.unwrap().to_vec().unwrap()));
            let (g, w) = (f32::from_bits(g[0]), f32::from_bits(w[0]));
            assert!((g - w).abs() <= 2.0 * half_ulp(w, mantissa) + slack / scale, "sum/mean {}: {g} vs {w}", T::DTYPE);
        }
    }
    let r: DeviceArray<T> = cpu.normal(12, &[4099, 37]).unwrap();
    let rows = |x: &DeviceArray<T>| half_bits(x.sort(1).unwrap().to_vec().unwrap());
    assert_eq!(rows(&r.to_device(dev).unwrap()), rows(&r), "sort {}", T::DTYPE);
    // Matmul: the own kernel and cuBLAS's GemmEx against an f64 host product of the same half
    // inputs: one rounding to the half type, plus what f32 accumulation may lose.
    for (m, k, nn) in [(1, 1, 1), (33, 70, 65), (128, 256, 64)] {
        let a: DeviceArray<T> = cpu.normal(8, &[m, k]).unwrap();
        let b: DeviceArray<T> = cpu.normal(9, &[k, nn]).unwrap();
        let (ah, bh): (Vec<f64>, Vec<f64>) = (
            a.to_vec().unwrap().into_iter().map(|v| v.into() as f64).collect(),
            b.to_vec().unwrap().into_iter().map(|v| v.into() as f64).collect(),
        );
        let want = host_matmul(&ah, &bh, 1, m, k, nn);
        let mag = |i: usize| (0..k).map(|p| (ah[i / nn * k + p] * bh[p * nn + i % nn]).abs()).sum::<f64>();
        let (ad, bd) = (a.to_device(dev).unwrap(), b.to_device(dev).unwrap());
        for imp in [MatmulImpl::Own, MatmulImpl::Cublas] {
            set_matmul_impl(imp);
            let got = half_bits(ad.matmul(&bd).unwrap().to_vec().unwrap());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let g = f32::from_bits(*g) as f64;
                let tol = half_ulp(*w as f32, mantissa) as f64 + 2.0 * (k as f64 + 1.0) * f32::EPSILON as f64 * mag(i);
                assert!((g - w).abs() <= tol, "{imp:?} matmul {} {m}x{k}x{nn} [{i}]: {g} vs {w}", T::DTYPE);
            }
        }
        set_matmul_impl(MatmulImpl::Auto);
    }
}

#[test]
fn half_ops_match_the_cpu_backend() {
    let Some(dev) = device() else { return };
    let _ = polycompute_cpu::CpuBackend;
    let cpu = Device::open(BackendKind::Cpu, 0).unwrap();
    half_ops_case::<polycompute_core::f16>(&dev, &cpu, 10);
    half_ops_case::<polycompute_core::bf16>(&dev, &cpu, 7);
}
