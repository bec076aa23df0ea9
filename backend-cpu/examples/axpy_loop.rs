//! Times a loop of `a*x + y` on 2^24 f32 and prints each call's GB/s and the allocator's
//! figures: a quick look at whether the caching allocator keeps a loop off the kernel.
//!
//! `cargo run --release -p polycompute-cpu --example axpy_loop`

use std::sync::Arc;
use std::time::Instant;

use polycompute_core::{map, Backend, Device, DeviceArray, DeviceBackend};
use polycompute_cpu::{CpuBackend, CpuDevice};

fn main() -> polycompute_core::Result<()> {
    let info = CpuBackend.devices()?.remove(0);
    let cpu = Arc::new(CpuDevice::new(info));
    let backend: Arc<dyn DeviceBackend> = cpu.clone();
    let args: Vec<String> = std::env::args().collect();
    let d = if args.iter().any(|a| a == "registry") { Device::cpu() } else { Device::from_backend(backend) };
    let fresh = args.iter().any(|a| a == "fresh");
    let n = 1 << 24;
    let (x, y) = (d.uniform::<f32>(1, &[n])?, d.uniform::<f32>(2, &[n])?);
    for i in 0..12 {
        let start = Instant::now();
        let z: DeviceArray<f32> = map(&[&x, &y], |a| &a[0] * 1.5f32 + &a[1])?;
        let secs = start.elapsed().as_secs_f64();
        drop(z);
        if fresh {
            let (xh, yh) = (vec![1.0f32; 16], vec![2.0f32; 16]);
            let big: Vec<f32> = (0..n).map(|i| xh[i % 16] * 1.5 + yh[i % 16]).collect();
            std::hint::black_box(big);
        }
        println!("call {i:2}: {:6.2} GB/s", 12.0 * n as f64 / secs / 1e9);
    }
    println!("{:?}", cpu.cache_stats());
    Ok(())
}
