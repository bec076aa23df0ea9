// On docs.rs (nightly, `--cfg docsrs`) each feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
//! polycompute-cuda: the CUDA backend. The driver is used through `cust` (one primary
//! context per device, made current on whichever thread calls, and one stream per device);
//! every op runs as CUDA C++ generated from polycompute's IR (`codegen`) and compiled at
//! run time by NVRTC (`nvrtc`) to a CUBIN for the device's own architecture. Matmul uses
//! cuBLAS when `libcublas` loads, else (or on request, see [`set_matmul_impl`]) an own tiled
//! kernel.
//!
//! Nothing here is needed to build: the driver library, NVRTC and cuBLAS are found at run
//! time, and a machine without them gets `Error::BackendUnavailable` with the reason (see
//! `docs/cuda.md` for building and testing without a GPU).
//!
//! Layout (the same shape as the wgpu backend's):
//! - `codegen`: pure source generation (imports only core and std): one file per op family,
//!   the static CUDA C in `codegen/cuda/*.cuh`, and the process-wide kernel memo.
//! - `ops/`: launching, one file per op family: plan sizes, allocate, launch on the stream
//!   (`ops/matmul.rs` also chooses between cuBLAS and the own kernel).
//! - `device.rs` (open, launch, core's typed `BackendDevice`), `buffer.rs` (device memory
//!   that knows its device), `context.rs` (context, stream, stream-ordered memory),
//!   `errors.rs` (driver codes as typed errors), `launch.rs` (every launch's grid and block,
//!   checked against the device's limits).
//! - `driver.rs`, `nvrtc.rs`, `cublas.rs`: the libraries, loaded or declared (`libraries.rs`:
//!   where NVRTC and cuBLAS are looked for, [`search_places`]);
//!   `module_cache.rs`: each device's loaded kernels, keyed by their `KernelKey`.
//! - `backend.rs`: enumerating and opening devices.
//!
//! The modules are private to the crate. What needs their internals is tested inside it (the
//! host emulation of the kernels in `codegen/host/`, NVRTC compiles in `nvrtc/tests.rs`, the
//! library search in `libraries/`); `tests/` holds the checks through the public API (the fake
//! driver, a real GPU).

#![warn(missing_docs)]

mod backend;
mod buffer;
mod codegen;
mod context;
mod cublas;
mod device;
mod driver;
mod errors;
mod launch;
mod libraries;
mod module_cache;
mod nvrtc;
mod ops;

use std::sync::Arc;

use polycompute_core::registry::BACKEND_FACTORIES;
use polycompute_core::Backend;

pub use backend::CudaBackend;
pub use cublas::cublas_status;
pub use device::CudaDevice;
pub use libraries::{search_places, Place};
pub use nvrtc::{nvrtc_status, NVRTC_ENV};
pub use ops::matmul::{matmul_impl, set_matmul_impl, MatmulImpl, MATMUL_ENV};

#[linkme::distributed_slice(BACKEND_FACTORIES)]
static CUDA_BACKEND: fn() -> Arc<dyn Backend> = || Arc::new(CudaBackend);
polycompute_core::keep_registered!(CUDA_BACKEND);
