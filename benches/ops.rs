//! Criterion benchmarks of the CPU device through the public API: fused map, sum, matmul,
//! Philox uniform fill, and the per-call cost of a small map. `cargo bench --bench ops`.
//!
//! Throughput is reported as bytes moved (map: 2 reads + 1 write; sum: 1 read; uniform:
//! 1 write) and, for matmul, as "elements" that are floating-point operations (2·n³), so
//! criterion's `elem/s` reads as FLOP/s. `polycompute bench` gives the same figures beside
//! baselines; this file is for tracking changes over time with criterion's statistics.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use polycompute::{Device, DeviceArray};

const STREAM_LEN: usize = 1 << 22;
const F32: u64 = std::mem::size_of::<f32>() as u64;

fn random(device: &Device, seed: u64, shape: &[usize]) -> DeviceArray<f32> {
    device.uniform::<f32>(seed, shape).expect("the CPU device runs uniform fills")
}

fn map_and_sum(c: &mut Criterion) {
    let device = Device::cpu();
    let mut group = c.benchmark_group("stream_f32");
    group.sample_size(20).measurement_time(Duration::from_secs(3));
    let (x, y) = (random(&device, 1, &[STREAM_LEN]), random(&device, 2, &[STREAM_LEN]));

    group.throughput(Throughput::Bytes(3 * F32 * STREAM_LEN as u64));
    group.bench_function(BenchmarkId::new("map_axpy", STREAM_LEN), |b| {
        b.iter(|| polycompute::map::<_, f32>(&[&x, &y], |a| &a[0] * 1.5 + &a[1]).expect("map runs"))
    });

    group.throughput(Throughput::Bytes(F32 * STREAM_LEN as u64));
    group.bench_function(BenchmarkId::new("sum", STREAM_LEN), |b| b.iter(|| x.sum(None).expect("sum runs")));
    group.bench_function(BenchmarkId::new("uniform", STREAM_LEN), |b| {
        b.iter(|| device.uniform::<f32>(black_box(5), &[STREAM_LEN]).expect("uniform runs"))
    });
    group.finish();
}

fn matmul(c: &mut Criterion) {
    let device = Device::cpu();
    let mut group = c.benchmark_group("matmul_f32");
    group.sample_size(10).measurement_time(Duration::from_secs(4));
    for n in [256usize, 1024] {
        let (a, b) = (random(&device, 3, &[n, n]), random(&device, 4, &[n, n]));
        group.throughput(Throughput::Elements(2 * (n as u64).pow(3)));
        group.bench_function(BenchmarkId::from_parameter(n), |bench| bench.iter(|| a.matmul(&b).expect("matmul runs")));
    }
    group.finish();
}

/// The cost of one call once the expression is prepared: 1,024 elements is too little work
/// to hide dispatch, so this measures the overhead (target: at most 10 µs per call).
fn small_map(c: &mut Criterion) {
    let device = Device::cpu();
    let n = 1024;
    let (x, y) = (random(&device, 1, &[n]), random(&device, 2, &[n]));
    let mut group = c.benchmark_group("map_small_f32");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new("axpy", n), |b| {
        b.iter(|| polycompute::map::<_, f32>(&[&x, &y], |a| &a[0] * 1.5 + &a[1]).expect("map runs"))
    });
    group.finish();
}

criterion_group!(benches, map_and_sum, matmul, small_map);
criterion_main!(benches);
