// On docs.rs (nightly, `--cfg docsrs`) each feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
//! polycompute-testing: a test kit for checking results across backends (the facade's
//! `polycompute::testing`, with its feature `testing`): the same special values, the same
//! deterministic inputs, one ULP comparison and one way to run a check on every device, for
//! the workspace's own tests, the conformance suite and users' own pipelines.
//!
//! - [`specials`]: the special values of each dtype (±0, ±Inf, NaN, subnormals, extremes,
//!   values around powers of two and the integer ranges) and their pairs.
//! - [`ulps`]: ULP distance, and a comparison ([`Ulps`]) in which a NaN matches only a NaN
//!   and the sign of zero counts or not, as asked; a mismatch describes itself.
//! - [`inputs`]: the deterministic input generator ([`Gen`]), computed from core's Philox
//!   streams on the host, so every backend and every machine sees the same inputs.
//! - [`devices`]: runs a closure on every available device ([`for_each_device`]), honouring
//!   `POLYCOMPUTE_REQUIRE`: a required backend without devices is an error, any other is
//!   skipped and says so on stderr.
//! - [`check`]: cross-backend checks of your own code ([`Check`]): one closure returning one
//!   or several arrays of any dtype ([`IntoOutputs`]), run on `cpu:0` (the reference) and on
//!   every other device, compared under a [`Tolerance`] (exact for integers and ULPs for
//!   floats by default; `ulps(n)`, `abs`/`rel`, sum-like), with failures that name the
//!   device, the output and the first differing elements.
//! - [`backend_tests!`]: one test per backend kind (`my_check::cpu`, `my_check::wgpu`,
//!   `my_check::cuda`), skipped visibly without devices, failing when required.
//! - [`snapshot`] and [`assert_device_snapshot!`]: one insta snapshot of the
//!   outputs that every backend shares.
//!
//! ```
//! use polycompute_testing::{inputs, specials, Ulps};
//!
//! let x: Vec<f32> = inputs::uniform(7, 4, -1.0, 1.0);
//! assert_eq!(x, inputs::uniform::<f32>(7, 4, -1.0, 1.0), "the same seed gives the same inputs");
//! let want: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
//! Ulps::EXACT.compare(&want, &want).unwrap();
//! assert!(specials::f32().iter().any(|v| v.is_nan()));
//! ```

pub mod check;
pub mod devices;
pub mod inputs;
mod macros;
pub mod outputs;
pub mod snapshot;
pub mod specials;
pub mod tolerance;
pub mod ulps;

pub use check::{Check, CheckError, CheckFailed, OutputKey, Report, Scope, ValueMismatch};
pub use devices::{for_each_device, Required, TestKitError};
pub use inputs::Gen;
pub use outputs::{named, HostArray, IntoOutputs, Named};
pub use specials::Specials;
pub use tolerance::{Tolerance, DEFAULT_FLOAT_ULPS};
pub use ulps::{Mismatch, Mismatches, SignedZeros, UlpFloat, Ulps};

#[doc(inline)]
pub use crate::__polycompute_assert_device_snapshot as assert_device_snapshot;
#[doc(inline)]
pub use crate::__polycompute_backend_tests as backend_tests;
/// The insta crate, for [`assert_device_snapshot!`] (a test needs no dependency of its own).
pub use insta;
// The macros name core's items through the kit, so that a user who reaches the kit through
// the facade (`polycompute::testing`) needs no dependency on polycompute-core.
#[doc(hidden)]
pub use polycompute_core as __core;
