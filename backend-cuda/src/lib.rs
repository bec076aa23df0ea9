//! polycompute-cuda: the CUDA backend. The driver is used through `cust` (one primary
//! context per device, made current on whichever thread calls, and one stream per device);
//! every op runs as CUDA C++ generated from polycompute's IR ([`codegen`]) and compiled at
//! run time by NVRTC ([`nvrtc`]) to a CUBIN for the device's own architecture. Matmul uses
//! cuBLAS when `libcublas` loads, else (or on request, see [`set_matmul_impl`]) an own tiled
//! kernel.
//!
//! Nothing here is needed to build: the driver library, NVRTC and cuBLAS are found at run
//! time, and a machine without them gets `Error::BackendUnavailable` with the reason (see
//! `docs/cuda.md` for building and testing without a GPU).

#![warn(missing_docs)]

mod backend;
mod buffer;
pub mod codegen;
mod cublas;
mod device;
mod driver;
pub mod errors;
mod exec;
mod module_cache;
pub mod nvrtc;

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use polycompute_core::registry::BACKEND_FACTORIES;
use polycompute_core::Backend;

pub use backend::CudaBackend;
pub use cublas::cublas_status;
pub use device::CudaDevice;
pub use nvrtc::NVRTC_ENV;

#[linkme::distributed_slice(BACKEND_FACTORIES)]
static CUDA_BACKEND: fn() -> Arc<dyn Backend> = || Arc::new(CudaBackend);

/// Which matmul implementation the CUDA backend uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MatmulImpl {
    /// cuBLAS when it loads, else the own kernel (the default).
    Auto,
    /// Always the own tiled kernel.
    Own,
    /// Always cuBLAS; an error (`Unsupported`) when libcublas cannot be loaded.
    Cublas,
}

/// The environment variable that chooses the matmul implementation at start-up:
/// `auto` (default), `own` or `cublas`.
pub const MATMUL_ENV: &str = "POLYCOMPUTE_CUDA_MATMUL";

static MATMUL_IMPL: AtomicU8 = AtomicU8::new(u8::MAX);

/// Chooses the matmul implementation for every CUDA device of this process (the bench
/// compares `Own` with `Cublas` this way); overrides [`MATMUL_ENV`].
pub fn set_matmul_impl(imp: MatmulImpl) {
    MATMUL_IMPL.store(imp as u8, Ordering::Relaxed);
}

/// The matmul implementation in force.
pub fn matmul_impl() -> MatmulImpl {
    match MATMUL_IMPL.load(Ordering::Relaxed) {
        0 => MatmulImpl::Auto,
        1 => MatmulImpl::Own,
        2 => MatmulImpl::Cublas,
        _ => match std::env::var(MATMUL_ENV).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            Ok("own") => MatmulImpl::Own,
            Ok("cublas") => MatmulImpl::Cublas,
            _ => MatmulImpl::Auto,
        },
    }
}
