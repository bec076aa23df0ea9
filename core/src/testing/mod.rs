//! A test kit for checking results across backends, behind the `testing` feature: the same
//! special values, the same deterministic inputs, one ULP comparison and one way to run a
//! check on every device, for the workspace's own tests and the conformance suite.
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
//!
//! ```
//! use polycompute_core::testing::{inputs, specials, Ulps};
//!
//! let x: Vec<f32> = inputs::uniform(7, 4, -1.0, 1.0);
//! assert_eq!(x, inputs::uniform::<f32>(7, 4, -1.0, 1.0), "the same seed gives the same inputs");
//! let want: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
//! Ulps::EXACT.compare(&want, &want).unwrap();
//! assert!(specials::f32().iter().any(|v| v.is_nan()));
//! ```

pub mod devices;
pub mod inputs;
pub mod specials;
pub mod ulps;

pub use devices::{for_each_device, Required, TestKitError};
pub use inputs::Gen;
pub use specials::Specials;
pub use ulps::{Mismatch, Mismatches, SignedZeros, UlpFloat, Ulps};
