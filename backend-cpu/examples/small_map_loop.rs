//! Times `a*x + y` on 1,024 f32 in a loop, the closure rebuilt every call as a user writes
//! it: the per-call cost of a small map (expression, validation, allocation, kernel) and
//! the heap allocations each call makes; a steady loop to profile (`perf record`).
//!
//! `cargo run --release -p polycompute-cpu --example small_map_loop [SECONDS]`

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use polycompute_core::{map, Backend, Device, DeviceArray};
use polycompute_cpu::{CpuBackend, CpuDevice};

/// The system allocator, counting allocations.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, that is from the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() -> polycompute_core::Result<()> {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let d = Device::from_backend(Arc::new(CpuDevice::new(CpuBackend.devices()?.remove(0))));
    let (x, y) = (d.uniform::<f32>(1, &[1024])?, d.uniform::<f32>(2, &[1024])?);
    let axpy = || map::<_, f32>(&[&x, &y], |a| &a[0] * 1.5f32 + &a[1]);
    drop(axpy()?); // the first call compiles and allocates the output block
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let batch = Instant::now();
        for _ in 0..10_000 {
            let z: DeviceArray<f32> = axpy()?;
            std::hint::black_box(z);
        }
        let per_call = batch.elapsed().as_secs_f64() / 1e4;
        let allocs = (ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / 1e4;
        println!("{:.3} us/call, {allocs:.1} heap allocations per call", per_call * 1e6);
        calls += 10_000;
    }
    println!("{calls} calls");
    Ok(())
}
