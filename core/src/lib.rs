//! polycompute-core: dtypes, shapes, errors, the `Expr` IR, the op set, the `Backend`
//! traits, `Device`/`DeviceArray` and the platform probe. Backends depend on this crate;
//! users depend on the `polycompute` facade, which re-exports it and links the backends.

#![warn(missing_docs)]

pub mod array;
pub mod backend;
pub mod device;
pub mod device_id;
pub mod dtype;
pub mod error;
pub mod expr;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod halves;
pub mod layout;
mod movement;
pub mod op;
pub mod philox;
pub mod plan;
#[deprecated(note = "the probe is `polycompute_core::probe`, the worker mode and plan are in `polycompute_core::pool`")]
pub mod platform;
pub mod pool;
pub mod probe;
pub mod registry;
pub mod shape;
pub mod shared;
#[doc(hidden)]
pub mod sync;
mod sys;
#[cfg(feature = "testing")]
pub mod testing;
mod view;

pub use array::{map, DeviceArray};
pub use backend::{
    Backend, BackendBuffer, BackendDevice, BackendKind, BufferRef, DeviceBackend, DeviceBuffer, DeviceInfo, DeviceToken,
};
pub use device::Device;
pub use device_id::DeviceId;
pub use dtype::{bf16, f16, DType, Element, HostSlice, HostVec, Scalar};
pub use error::{Error, Result};
pub use expr::{BinaryOp, Expr, Program, UnaryOp};
pub use layout::Layout;
pub use movement::IndexElement;
pub use op::{Fill, Op, ReduceKind, ScanKind};
pub use pool::{worker_main, Pool, Task, TaskError, Tasks, WorkerContext, WorkerMode, WorkerPlan};
pub use probe::{probe, Probe};
pub use shape::Shape;
pub use shared::{SharedArray, SharedHandle};

#[doc(hidden)]
pub use linkme;
// The facade's tests record the pool's warnings with a subscriber of this tracing.
#[doc(hidden)]
pub use tracing;
