// On docs.rs (nightly, `--cfg docsrs`) each feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
//! polycompute: portable numeric compute. Write the work once; run it on NVIDIA GPUs
//! through CUDA, on any GPU through wgpu, or on the CPU with rayon.
//!
//! ```
//! use polycompute::{Device, Expr};
//! let dev = Device::cpu();
//! assert_eq!(dev.id(), "cpu:0");
//! let x = dev.from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
//! assert_eq!(x.to_vec().unwrap(), vec![1.0, 2.0, 3.0]);
//! ```

pub use polycompute_core::*;

/// The worker pool (`polycompute-pool`): [`Pool`], [`Task`], the worker kinds, the journal.
pub mod pool {
    pub use polycompute_pool::*;
}
pub use polycompute_pool::{
    probe, shared, worker_main, Pool, Probe, SharedArray, SharedHandle, Task, TaskError, Tasks, WorkerContext,
    WorkerMode, WorkerPlan,
};

// Linking the backend crates registers them with the core registry.
pub use polycompute_cpu;
#[cfg(feature = "cuda")]
pub use polycompute_cuda;
#[cfg(feature = "wgpu")]
pub use polycompute_wgpu;

/// The cross-backend test kit (`polycompute-testing`, feature `testing`): checks of your own
/// code on every device under a tolerance, one test per backend kind, shared device snapshots.
#[cfg(feature = "testing")]
pub use polycompute_testing as testing;
