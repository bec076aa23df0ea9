//! The caching allocator seen through the public API: buffers are reused, the cache stays
//! within its bound, a loop of ops does not grow resident memory, released and dropped
//! caches go back to the system, and a recycled block is always overwritten in full.

use std::sync::{Arc, Mutex, MutexGuard};

use polycompute_core::{map, Backend, Device, DeviceBackend};
use polycompute_cpu::{CpuBackend, CpuDevice};

fn device(limit: usize) -> (Arc<CpuDevice>, Device) {
    let info = CpuBackend.devices().unwrap().remove(0);
    let cpu = Arc::new(CpuDevice::with_cache_limit(info, limit));
    let backend: Arc<dyn DeviceBackend> = cpu.clone();
    (cpu, Device::from_backend(backend))
}

/// The tests of this binary run one at a time, so that one's memory does not blur
/// another's resident-set figures.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Resident set size of this process, in bytes (Linux).
#[cfg(target_os = "linux")]
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

const MIB: usize = 1 << 20;

#[test]
fn a_loop_of_ops_reuses_buffers_and_keeps_memory_bounded() {
    let _serial = one_at_a_time();
    let limit = 96 * MIB;
    let (cpu, d) = device(limit);
    let sizes = [1 << 22, (3 << 20) + 5, 1 << 18, 1000];
    let mut resident = Vec::new();
    for round in 0..24 {
        let n = sizes[round % sizes.len()];
        let x = d.uniform::<f32>(round as u64, &[n]).unwrap();
        let y: polycompute_core::DeviceArray<f32> = map(&[&x, &x], |a| &a[0] * 2.0f32 + &a[1]).unwrap();
        let s = y.sum(None).unwrap().to_scalar().unwrap();
        assert!(s.is_finite() && s > 0.0);
        drop((x, y));
        let stats = cpu.cache_stats();
        assert!(stats.cached_bytes <= limit, "{stats:?}");
        #[cfg(target_os = "linux")]
        resident.push(resident_bytes());
    }
    let stats = cpu.cache_stats();
    assert_eq!(stats.live_bytes, 0, "every buffer was dropped: {stats:?}");
    // After the first pass over the sizes, every allocation is served from the cache.
    assert!(stats.hits >= 3 * stats.misses, "{stats:?}");
    #[cfg(target_os = "linux")]
    {
        // Once each size has been seen, resident memory stops growing.
        let settled = resident[2 * sizes.len()];
        let peak = *resident[2 * sizes.len()..].iter().max().unwrap();
        assert!(peak <= settled + 8 * MIB, "resident memory grew from {settled} to {peak} bytes");
    }
    let _ = &mut resident;
}

#[test]
fn released_and_dropped_caches_go_back_to_the_system() {
    let _serial = one_at_a_time();
    let (cpu, d) = device(1 << 30);
    let n = 8 * MIB; // 32 MiB of f32 per array
    let arrays: Vec<_> = (0..4).map(|s| d.uniform::<f32>(s, &[n]).unwrap()).collect();
    drop(arrays);
    let cached = cpu.cache_stats().cached_bytes;
    assert!(cached >= 4 * 32 * MIB, "{:?}", cpu.cache_stats());
    #[cfg(target_os = "linux")]
    let before = resident_bytes();
    cpu.release_cached();
    let stats = cpu.cache_stats();
    assert_eq!((stats.cached_bytes, stats.released_bytes), (0, cached as u64));
    #[cfg(target_os = "linux")]
    {
        let after = resident_bytes();
        assert!(after + 96 * MIB <= before, "resident {before} -> {after} bytes after release");
    }
    // A buffer that outlives its device is freed, not cached, when dropped.
    let kept = d.uniform::<f32>(9, &[n]).unwrap();
    drop(d);
    drop(cpu);
    assert_eq!(kept.to_vec().unwrap().len(), n);
}

#[test]
fn a_recycled_block_is_overwritten_in_full() {
    let _serial = one_at_a_time();
    let (cpu, d) = device(1 << 30);
    for n in [1000, 3 << 20] {
        drop(d.full(7.0f32, &[n]).unwrap());
        assert!(d.zeros::<f32>(&[n]).unwrap().to_vec().unwrap().iter().all(|&v| v == 0.0), "zeros of {n}");
        drop(d.full(7.0f32, &[n]).unwrap());
        let empty_k = d.zeros::<f32>(&[n, 0]).unwrap().matmul(&d.zeros::<f32>(&[0, 1]).unwrap()).unwrap();
        assert!(empty_k.to_vec().unwrap().iter().all(|&v| v == 0.0), "matmul with k = 0 over {n} rows");
    }
    assert!(cpu.cache_stats().hits > 0);
}

#[test]
fn reductions_transposes_and_casts_take_their_outputs_from_the_cache() {
    let _serial = one_at_a_time();
    let (_cpu, d) = device(1 << 30);
    let (rows, cols) = (300, 700);
    let host: Vec<f32> = (0..rows * cols).map(|i| (i % 97) as f32 - 40.0).collect();
    let x = d.from_slice(&host, &[rows, cols]).unwrap();
    let at = |r: usize, c: usize| host[r * cols + c];
    let run = || {
        // A whole-array sum, a sum along each axis, an argmax, a transpose and a cast.
        let total = x.sum(None).unwrap().to_scalar().unwrap();
        let by_col = x.sum(Some(0)).unwrap().to_vec().unwrap();
        let by_row = x.max(Some(1)).unwrap().to_vec().unwrap();
        let argmax = x.argmax(Some(1)).unwrap().to_vec().unwrap();
        let t = x.transpose().unwrap().contiguous().unwrap().to_vec().unwrap();
        let ints = x.cast::<i32>().unwrap().to_vec().unwrap();
        (total, by_col, by_row, argmax, t, ints)
    };
    // Fill the cache with blocks of every size class the ops use, holding other data.
    let junk: Vec<_> = [1, rows, cols, rows * cols].iter().map(|&n| d.full(1e9f32, &[n]).unwrap()).collect();
    drop(junk);
    let before = d.memory_stats().expect("the CPU device has a caching allocator");
    let (total, by_col, by_row, argmax, t, ints) = run();
    let after = d.memory_stats().unwrap();
    // Every output came from a recycled block, and was overwritten in full.
    assert_eq!(after.misses, before.misses, "{before:?} -> {after:?}");
    assert!(after.hits >= before.hits + 6, "{before:?} -> {after:?}");
    assert_eq!(total, host.iter().sum::<f32>());
    assert!((0..cols).all(|c| by_col[c] == (0..rows).map(|r| at(r, c)).sum::<f32>()));
    assert!((0..rows).all(|r| by_row[r] == (0..cols).map(|c| at(r, c)).fold(f32::MIN, f32::max)));
    assert!((0..rows).all(|r| at(r, argmax[r] as usize) == by_row[r]));
    assert!((0..rows * cols).all(|i| t[i] == at(i % rows, i / rows)));
    assert!(ints.iter().zip(&host).all(|(&i, &h)| i == h as i32));
    // A loop of the same ops is served from the cache without growing it.
    for _ in 0..5 {
        run();
    }
    let settled = d.memory_stats().unwrap();
    assert_eq!(settled.misses, before.misses, "{settled:?}");
    assert_eq!(settled.cached_bytes, after.cached_bytes, "{settled:?}");
}

#[test]
fn the_device_reports_and_releases_its_cache_through_the_public_api() {
    let _serial = one_at_a_time();
    let (cpu, d) = device(64 * MIB);
    let fresh = d.memory_stats().unwrap();
    assert_eq!((fresh.limit_bytes, fresh.cached_bytes, fresh.hit_rate()), (64 * MIB, 0, None));
    let x = d.uniform::<f32>(1, &[MIB]).unwrap();
    let live = d.memory_stats().unwrap();
    assert!(live.live_bytes >= 4 * MIB && live.misses >= 1, "{live:?}");
    drop(x);
    let cached = d.memory_stats().unwrap();
    assert!(cached.cached_bytes >= 4 * MIB && cached.live_bytes == 0, "{cached:?}");
    drop(d.uniform::<f32>(2, &[MIB]).unwrap());
    assert!(d.memory_stats().unwrap().hit_rate().is_some_and(|r| r > 0.0));
    // The figures are the device's own: the same through `CpuDevice` and through `Device`.
    assert_eq!(d.memory_stats(), Some(cpu.cache_stats()));
    d.release_cached_memory();
    let released = d.memory_stats().unwrap();
    assert_eq!(released.cached_bytes, 0);
    assert_eq!(released.released_bytes, cached.cached_bytes as u64);
}
