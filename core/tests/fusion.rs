//! The lazy elementwise layer: fused chains are bit-identical to the same calls run one
//! by one (fusion off), pending intermediates are never allocated, and the bounds and
//! materialization points hold. Every test holds `LOCK`: the fusion switch and the
//! allocator counters are per device, and the tests of this file share `cpu:0`.

extern crate polycompute_cpu;

use std::sync::{Mutex, MutexGuard};

use polycompute_core::{bf16, f16, map, where_, DType, Device, DeviceArray, Element, Expr, Result};

static LOCK: Mutex<()> = Mutex::new(());

fn device() -> (Device, MutexGuard<'static, ()>) {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dev = Device::cpu();
    dev.set_fusion(true);
    dev.set_fusion_min_elements(0);
    (dev, guard)
}

/// Deterministic values in roughly [-4, 4) with a few specials (a tiny xorshift).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2).wrapping_add(1);
    let mut v: Vec<f32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 8.0 - 4.0
        })
        .collect();
    for (i, x) in [0.0, -0.0, f32::NAN, f32::INFINITY, -f32::INFINITY, 1e-40].into_iter().enumerate() {
        if i < n {
            v[i * 7 % n] = x;
        }
    }
    v
}

/// The raw bytes of an array's elements, so NaNs and signed zeros compare exactly.
fn bits<T: Element>(a: &DeviceArray<T>) -> Vec<u8> {
    let v = a.to_vec().unwrap();
    let host = T::host_slice(&v);
    format!("{host:?}").into_bytes()
}

/// `f` run fused and with fusion off on `dev`; asserts the results' bits are equal and
/// returns the fused run's kernel count.
fn both_ways<T: Element>(dev: &Device, f: impl Fn() -> Result<DeviceArray<T>>) -> u64 {
    dev.set_fusion(false);
    let eager = f().unwrap();
    let eager_bits = bits(&eager);
    dev.set_fusion(true);
    let before = dev.fusion_stats();
    let fused = f().unwrap();
    let fused_bits = bits(&fused);
    let after = dev.fusion_stats();
    assert_eq!(fused_bits, eager_bits, "fused and eager results differ");
    after.launched - before.launched
}

#[test]
fn a_float_chain_is_one_kernel_and_bit_identical_for_every_float_dtype() {
    let (dev, _g) = device();
    let n = 3000;
    let xs = values(n, 1);
    let ys = values(n, 2);
    fn chain<T: Element>(x: &DeviceArray<T>, y: &DeviceArray<T>) -> Result<DeviceArray<T>> {
        let e = x.exp()?;
        let m = (&e * y)?;
        let a = (&m + x)?;
        let s = a.abs()?.sqrt()?;
        s.map(|v| &v * 0.3 - 1.0)
    }
    let x32 = dev.from_slice(&xs, &[n]).unwrap();
    let y32 = dev.from_slice(&ys, &[n]).unwrap();
    assert_eq!(both_ways(&dev, || chain(&x32, &y32)), 1);
    let x64: DeviceArray<f64> = x32.cast().unwrap();
    let y64: DeviceArray<f64> = y32.cast().unwrap();
    assert_eq!(both_ways(&dev, || chain(&x64, &y64)), 1);
    let xh: DeviceArray<f16> = x32.cast().unwrap();
    let yh: DeviceArray<f16> = y32.cast().unwrap();
    assert_eq!(both_ways(&dev, || chain(&xh, &yh)), 1);
    let xb: DeviceArray<bf16> = x32.cast().unwrap();
    let yb: DeviceArray<bf16> = y32.cast().unwrap();
    assert_eq!(both_ways(&dev, || chain(&xb, &yb)), 1);
}

#[test]
fn half_intermediates_are_rounded_to_half_as_when_stored() {
    let (dev, _g) = device();
    let n = 4096;
    let x = dev.from_slice(&values(n, 3), &[n]).unwrap();
    // f32 -> f16 -> ops in f16 -> f32 -> ops in f32 -> bf16: each boundary rounds.
    let run = || -> Result<DeviceArray<bf16>> {
        let h: DeviceArray<f16> = x.map_to(|v| (&v * 1000.0).cast(DType::F16))?;
        let h = (&h * &h)?;
        let back: DeviceArray<f32> = h.cast()?;
        let s = back.map(|v| &v / 3.0 + 0.1)?;
        s.cast()
    };
    assert_eq!(both_ways(&dev, run), 1);
}

#[test]
fn integer_chains_wrap_exactly_as_stored() {
    let (dev, _g) = device();
    let n = 2048;
    let xs: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(2_654_435_761u32 as i32)).collect();
    let x = dev.from_slice(&xs, &[n]).unwrap();
    let run = || -> Result<DeviceArray<u32>> {
        let a = (&x * &x)?;
        let b = a.map(|v| &v * 7 + 12345)?;
        let c = (&b - &x)?.abs()?;
        let u: DeviceArray<u32> = c.cast()?;
        u.map(|v| &v * 3u32 as i64)
    };
    assert_eq!(both_ways(&dev, run), 1);
    let to_f: DeviceArray<f32> = x.cast().unwrap();
    let back = || -> Result<DeviceArray<i32>> { to_f.map(|v| &v * 1.5)?.cast() };
    assert_eq!(both_ways(&dev, back), 1);
}

#[test]
fn a_shared_producer_is_computed_inside_once_and_kept_when_read() {
    let (dev, _g) = device();
    let n = 5000;
    let x = dev.from_slice(&values(n, 4), &[n]).unwrap();
    let y = dev.from_slice(&values(n, 5), &[n]).unwrap();
    let run = || -> Result<DeviceArray<f32>> {
        let d = (&x - &y)?;
        &d * &d
    };
    assert_eq!(both_ways(&dev, run), 1);
    // A pending array read twice runs once; its consumer then reads the buffer as a leaf.
    let before = dev.fusion_stats();
    let d = (&x - &y).unwrap();
    let first = bits(&d);
    assert_eq!(bits(&d), first);
    let sq = (&d * &d).unwrap();
    sq.to_vec().unwrap();
    let after = dev.fusion_stats();
    assert_eq!((after.recorded - before.recorded, after.launched - before.launched), (2, 2));
}

#[test]
fn broadcast_producers_are_materialized_and_results_match() {
    let (dev, _g) = device();
    let row = dev.from_slice(&values(64, 6), &[1, 64]).unwrap();
    let col = dev.from_slice(&values(48, 7), &[48, 1]).unwrap();
    let run = || -> Result<DeviceArray<f32>> {
        let r = row.exp()?; // [1, 64], consumed broadcast: materialized
        let c = col.map(|v| &v * 2.0)?; // [48, 1], likewise
        let m = (&r + &c)?; // [48, 64]
        m.sqrt()
    };
    // r and c run alone, then the [48, 64] chain once.
    assert_eq!(both_ways(&dev, run), 3);
    let idx = || -> Result<DeviceArray<f32>> {
        let i: DeviceArray<f32> = row.map(|v| Expr::index().cast(DType::F32) + v)?;
        (&i + &col)?.map(|v| v * 0.5)
    };
    both_ways(&dev, idx);
}

#[test]
fn views_casts_and_where_fuse_or_fall_back_correctly() {
    let (dev, _g) = device();
    let x = dev.from_slice(&values(6000, 8), &[60, 100]).unwrap();
    let run = || -> Result<DeviceArray<f32>> {
        let t = x.transpose()?; // a view leaf
        let e = t.exp()?;
        let mask = e.map(|v| v.gt(1.0))?;
        let w = where_(&mask, &e, 0.0)?;
        let h: DeviceArray<f16> = w.cast()?;
        let f: DeviceArray<f32> = h.cast()?;
        f.map(|v| v + 1.0)
    };
    assert_eq!(both_ways(&dev, run), 1);
    // A view of a pending array is materialized before it is read through the view.
    let viewed = || -> Result<DeviceArray<f32>> { x.exp()?.transpose()?.map(|v| v * 2.0) };
    assert_eq!(both_ways(&dev, viewed), 2);
}

#[test]
fn the_leaf_and_instruction_caps_split_a_chain() {
    let (dev, _g) = device();
    let n = 1024;
    let arrays: Vec<DeviceArray<f32>> = (0..12).map(|i| dev.from_slice(&values(n, 10 + i), &[n]).unwrap()).collect();
    let many = || -> Result<DeviceArray<f32>> {
        let mut acc = arrays[0].clone();
        for a in &arrays[1..] {
            acc = (&acc + a)?;
        }
        Ok(acc)
    };
    // 12 leaves, at most 7 per kernel: two kernels.
    assert_eq!(both_ways(&dev, many), 2);
    let long = || -> Result<DeviceArray<f32>> {
        let mut acc = arrays[0].clone();
        for _ in 0..100 {
            acc = acc.map(|v| &v * 0.999 + 0.001)?;
        }
        Ok(acc)
    };
    let kernels = both_ways(&dev, long);
    assert!((2..100).contains(&kernels), "{kernels} kernels for 100 ops");
    // An op with more inputs than the leaf cap alone still runs (as one map).
    let refs: Vec<&DeviceArray<f32>> = arrays.iter().take(8).collect();
    let wide = || -> Result<DeviceArray<f32>> { map(&refs, |v| v.iter().fold(Expr::float(0.0), |a, b| a + b)) };
    assert_eq!(both_ways(&dev, wide), 1);
}

#[test]
fn fused_intermediates_are_never_allocated() {
    let (dev, _g) = device();
    let n = 1 << 16;
    let x = dev.from_slice(&values(n, 20), &[n]).unwrap();
    let allocations = |dev: &Device| dev.memory_stats().map(|s| s.hits + s.misses).expect("the CPU has an allocator");
    let chain = || -> DeviceArray<f16> {
        let a = x.exp().unwrap();
        let b = (&a * 2.0f32).unwrap();
        let c = (&b + &x).unwrap();
        let d = c.abs().unwrap().sqrt().unwrap();
        let h: DeviceArray<f16> = d.cast().unwrap();
        h.to_vec().unwrap();
        h
    };
    dev.set_fusion(false);
    let before = allocations(&dev);
    drop(chain());
    let eager = allocations(&dev) - before;
    dev.set_fusion(true);
    let before = allocations(&dev);
    drop(chain());
    let fused = allocations(&dev) - before;
    assert_eq!(eager, 6, "five ops and the abs, each one output");
    assert_eq!(fused, 1, "only the fused result");
}

#[test]
fn synchronize_and_non_elementwise_ops_materialize() {
    let (dev, _g) = device();
    let n = 4096;
    let x = dev.from_slice(&values(n, 30), &[n]).unwrap();
    let before = dev.fusion_stats();
    let kept = x.map(|v| v * 2.0).unwrap();
    dev.synchronize().unwrap();
    assert_eq!(dev.fusion_stats().launched - before.launched, 1);
    kept.to_vec().unwrap();
    assert_eq!(dev.fusion_stats().launched - before.launched, 1, "read after synchronize reuses the buffer");
    // A reduction reads the fused chain's buffer: same sum as eager.
    let sum = || -> Result<DeviceArray<f32>> { (&x * &x)?.map(|v| v + 1.0)?.sum(None) };
    both_ways(&dev, sum);
    // Validation stays at the call: a shape mismatch is raised before anything runs.
    let y = dev.from_slice(&values(3, 31), &[3]).unwrap();
    let pending = x.exp().unwrap();
    assert!((&pending + &y).is_err());
}

#[test]
fn fusion_off_runs_each_op_at_its_call() {
    let (dev, _g) = device();
    dev.set_fusion(false);
    let x = dev.from_slice(&values(4096, 40), &[4096]).unwrap();
    let before = dev.fusion_stats();
    let y = x.exp().unwrap().sqrt().unwrap();
    assert_eq!(dev.fusion_stats(), before);
    assert!(y.to_vec().is_ok());
    dev.set_fusion(true);
}

#[test]
fn map_reduce_runs_as_one_kernel_and_matches_eager_bit_for_bit() {
    let (dev, _g) = device();
    let n = 100_003; // past the CPU's block and parallel thresholds, not a multiple of a leaf
    let x = dev.from_slice(&values(n, 50), &[n]).unwrap();
    let y = dev.from_slice(&values(n, 51), &[n]).unwrap();
    type Reduce<T> = fn(&DeviceArray<T>) -> Result<DeviceArray<T>>;
    let kinds: [(&str, Reduce<f32>); 5] = [
        ("sum", |a| a.sum(None)),
        ("mean", |a| a.mean(None)),
        ("min", |a| a.min(None)),
        ("max", |a| a.max(None)),
        ("prod", |a| a.map(|v| &v * 1e-3 + 1.0)?.prod(None)),
    ];
    for (name, reduce) in kinds {
        let run = || -> Result<DeviceArray<f32>> {
            let d = (&x - &y)?;
            reduce(&(&d * &d)?)
        };
        assert_eq!(both_ways(&dev, run), 1, "{name}");
    }
    // Rows: a reduction along the last axis of a pending [rows, cols] chain.
    let m = dev.from_slice(&values(300 * 700, 52), &[300, 700]).unwrap();
    let rows = || -> Result<DeviceArray<f32>> { m.exp()?.sum(-1) };
    assert_eq!(both_ways(&dev, rows), 1);
    let row_means = || -> Result<DeviceArray<f64>> { m.cast::<f64>()?.map(|v| v.sin())?.mean(-1) };
    assert_eq!(both_ways(&dev, row_means), 1);
    // Integers (wrapping sums; mean through the wide sum) and a first axis (materialized
    // then reduced: the CPU fuses contiguous runs only) and halves (the default path).
    let xi: DeviceArray<i32> = x.map_to(|v| (v * 1e6).cast(DType::I32)).unwrap();
    let isum = || -> Result<DeviceArray<i32>> { (&xi * &xi)?.sum(None) };
    assert_eq!(both_ways(&dev, isum), 1);
    let imean = || -> Result<DeviceArray<f64>> { (&xi * 3)?.mean(None) };
    assert_eq!(both_ways(&dev, imean), 1);
    let umax = || -> Result<DeviceArray<u32>> { xi.cast::<u32>()?.map(|v| &v * 7)?.max(None) };
    assert_eq!(both_ways(&dev, umax), 1);
    let cols = || -> Result<DeviceArray<f32>> { m.exp()?.sum(0) };
    assert_eq!(both_ways(&dev, cols), 1);
    let half = || -> Result<DeviceArray<f16>> { x.cast::<f16>()?.map(|v| &v * &v)?.sum(None) };
    assert_eq!(both_ways(&dev, half), 1);
    let argmax = || -> Result<DeviceArray<u32>> { (&x * &y)?.argmax(None) };
    assert_eq!(both_ways(&dev, argmax), 1);
}

#[test]
fn map_reduce_allocates_only_its_result_and_leaves_the_chain_pending() {
    let (dev, _g) = device();
    let n = 1 << 16;
    let x = dev.from_slice(&values(n, 60), &[n]).unwrap();
    let y = dev.from_slice(&values(n, 61), &[n]).unwrap();
    let allocations = |dev: &Device| dev.memory_stats().map(|s| s.hits + s.misses).expect("the CPU has an allocator");
    let before = allocations(&dev);
    let d = (&x - &y).unwrap();
    let sq = (&d * &d).unwrap();
    let s = sq.sum(None).unwrap().to_scalar().unwrap();
    assert_eq!(allocations(&dev) - before, 1, "only the one-element sum");
    // The chain itself is still pending: reading it runs it once, and its sum agrees.
    let launched = dev.fusion_stats().launched;
    let host: Vec<f32> = sq.to_vec().unwrap();
    assert_eq!(dev.fusion_stats().launched - launched, 1);
    let resummed = dev.from_slice(&host, &[n]).unwrap().sum(None).unwrap().to_scalar().unwrap();
    assert_eq!(s.to_bits(), resummed.to_bits());
}

#[test]
fn synchronize_computes_the_ends_of_chains_not_their_held_intermediates() {
    let (dev, _g) = device();
    let x = dev.from_slice(&values(4096, 70), &[4096]).unwrap();
    let before = dev.fusion_stats().launched;
    let a = x.exp().unwrap();
    let b = (&a * 2.0f32).unwrap();
    dev.synchronize().unwrap();
    assert_eq!(dev.fusion_stats().launched - before, 1, "only b, the end of the chain");
    // The held intermediate is still readable, computed once when read.
    let a_host = bits(&a);
    assert_eq!(dev.fusion_stats().launched - before, 2);
    dev.set_fusion(false);
    assert_eq!(bits(&x.exp().unwrap()), a_host);
    dev.set_fusion(true);
    drop(b);
}
