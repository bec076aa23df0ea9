// On docs.rs (nightly, `--cfg docsrs`) each feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
//! polycompute-cpu: the CPU backend. Every op of `polycompute_core::Op` on every dtype,
//! with rayon for parallelism and the `gemm` crate for matrix products. Elementwise
//! programs run block-wise over chunks (numexpr's idea) and are prepared once per
//! program and shapes; reductions sum pairwise and stream memory in order.
//!
//! Buffers live in each device's caching allocator (`memory`): freed buffers are kept by
//! size class, up to a bound, for the next op of that size; large ones are 2 MiB-aligned
//! mappings advised for transparent huge pages on Linux; kernels write their outputs
//! without a zeroing pass. [`CpuDevice::cache_stats`] shows what it holds, as does
//! `Device::memory_stats` for any device.
//!
//! The crate registers itself in `polycompute_core::registry::BACKEND_FACTORIES`, so
//! linking it is enough for `Device::cpu()` to work. A program that depends on it without
//! naming any of its items (an integration test, say) links it with
//! `extern crate polycompute_cpu;`.
//!
//! The semantics are those written in `polycompute_core::expr` and `polycompute_core::op`,
//! implemented explicitly (see `num.rs`): NaN-propagating `min`/`max` with `-0.0 < +0.0`,
//! floor division with `x / 0 == 0`, numpy's float `remainder`, wrapping integer `pow`.

#![warn(missing_docs)]

use std::sync::Arc;

use polycompute_core::registry::BACKEND_FACTORIES;
use polycompute_core::{Backend, BackendKind, DeviceBackend, DeviceInfo, Error, Result};

mod buffer;
mod device;
mod memory;
mod num;
mod num_half;
mod ops;
mod par;

pub use buffer::CpuBuffer;
pub use device::CpuDevice;
pub use memory::CacheStats;

#[linkme::distributed_slice(BACKEND_FACTORIES)]
static CPU_BACKEND: fn() -> Arc<dyn Backend> = || Arc::new(CpuBackend);
polycompute_core::keep_registered!(CPU_BACKEND);

/// The CPU backend: one device, `cpu:0`, using every core through rayon.
#[derive(Debug, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        Ok(vec![device_info()])
    }
    fn open(&self, ordinal: usize) -> Result<Arc<dyn DeviceBackend>> {
        if ordinal != 0 {
            return Err(Error::NoSuchDevice { kind: BackendKind::Cpu, ordinal, count: 1 });
        }
        Ok(Arc::new(CpuDevice::new(device_info())))
    }
}

fn device_info() -> DeviceInfo {
    let threads = rayon::current_num_threads();
    DeviceInfo {
        kind: BackendKind::Cpu,
        ordinal: 0,
        name: format!("{} CPU ({threads} threads)", std::env::consts::ARCH),
        is_cpu: true,
        memory_bytes: None,
        details: vec![
            ("threads".into(), threads.to_string()),
            ("simd".into(), ops::simd_level().into()),
            ("matmul".into(), ops::matmul_path().into()),
            ("sort".into(), ops::sort_path().into()),
        ],
    }
}
