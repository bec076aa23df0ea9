// On docs.rs (nightly, `--cfg docsrs`) each feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
//! polycompute-core: dtypes, shapes, errors, the `Expr` IR, the op set, the `Backend`
//! traits, `Device`/`DeviceArray` and the backend registry. Backends depend on this crate
//! alone; the worker pool (`polycompute-pool`) builds on it; users depend on the
//! `polycompute` facade, which re-exports both and links the backends.

#![warn(missing_docs)]

pub mod array;
pub mod axis;
pub mod backend;
pub mod device;
pub mod device_id;
pub mod dtype;
pub mod error;
pub mod expr;
pub mod halves;
pub mod layout;
pub mod lazy;
mod movement;
pub mod op;
pub mod philox;
pub mod plan;
pub mod registry;
pub mod shape;
#[doc(hidden)]
pub mod sync;
mod view;

pub use array::{map, where_, DeviceArray, MapInputs, Operand};
pub use axis::{keepdims, Axes, Axis};
pub use backend::{
    Backend, BackendBuffer, BackendDevice, BackendKind, BufferRef, DeviceBackend, DeviceBuffer, DeviceInfo,
    DeviceToken, MemoryStats,
};
pub use device::Device;
pub use device_id::DeviceId;
pub use dtype::{bf16, f16, DType, Element, HostSlice, HostVec, Scalar};
pub use error::{Error, Result};
pub use expr::{BinaryOp, Expr, Program, UnaryOp};
pub use layout::Layout;
pub use lazy::FusionStats;
pub use movement::IndexElement;
pub use op::{Fill, MatmulTranspose, Op, ReduceKind, ScanKind};
pub use shape::Shape;

/// ndarray, at the version the array API uses (host arrays, [`Device::upload`],
/// [`DeviceArray::to_ndarray`]).
pub use ndarray;
/// ndarray's `s!` slice macro, for [`DeviceArray::slice`]: `x.slice(s![.., 1..;2])`.
pub use ndarray::s;

#[doc(hidden)]
pub use linkme;
// The facade's tests record the pool's warnings with a subscriber of this tracing.
#[doc(hidden)]
pub use tracing;
