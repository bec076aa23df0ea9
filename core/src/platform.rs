//! The old home of the probe and the worker plan, kept so that existing paths still work:
//! the probe is now [`crate::probe`](mod@crate::probe), the worker mode and plan are in
//! [`crate::pool`], and the OS-specific code is crate-private.

pub use crate::pool::{worker_plan, WorkerMode, WorkerPlan, WORKERS_ENV};
pub use crate::probe::{probe, BackendStatus, Probe};
