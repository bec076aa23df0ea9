//! The view and data-movement ops on a real CUDA device (skipped, and saying so, where there is none,
//! unless `POLYCOMPUTE_REQUIRE` lists `cuda`), compared with the CPU backend: the host
//! emulation's cases, which a real grid runs with many threads (so races and atomics are
//! exercised), and large ones (hundreds of thousands of elements per sorted row, chunked
//! scans with carries, 65536 contended atomic adds, a long negative-step map).

use polycompute_core::{BackendKind, DType, Device};
use polycompute_testing as testing;

mod views_cases;
use views_cases::{cases, compare, large_cases};

#[test]
fn view_ops_agree_with_the_cpu_backend_on_the_device() {
    let _ = polycompute_cpu::CpuBackend;
    let _ = polycompute_cuda::cublas_status();
    let Some(cuda) = testing::devices::open_or_skip(BackendKind::Cuda, 0).unwrap_or_else(|e| panic!("{e}")) else {
        return;
    };
    let cpu = Device::open(BackendKind::Cpu, 0).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for dt in DType::ALL.into_iter().filter(|d| !matches!(d, DType::I64 | DType::U8 | DType::Bool)) {
        for c in cases(dt).into_iter().chain(large_cases(dt)) {
            let run = |dev: &Device| {
                let bufs: Vec<_> = c.inputs.iter().map(|v| dev.backend().upload(v.as_slice()).unwrap()).collect();
                let refs: Vec<_> = bufs.iter().collect();
                let out = dev.backend().execute(&c.op, &refs).unwrap_or_else(|e| panic!("{}: {e}", c.tag));
                dev.backend().download(&out).unwrap()
            };
            failures.extend(compare(&c, &run(&cuda), &run(&cpu)));
            count += 1;
        }
    }
    println!(
        "{count} view and data-movement cases on {} against the CPU backend, {} mismatches",
        cuda.info().name,
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
}
