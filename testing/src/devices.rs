//! Running a check on every available device, and `POLYCOMPUTE_REQUIRE`.
//!
//! A test that runs where a backend has no device would pass without checking anything.
//! So a backend without devices is *skipped visibly* (a line on stderr), and the backends
//! that `POLYCOMPUTE_REQUIRE` lists (comma-separated: `POLYCOMPUTE_REQUIRE=wgpu,cuda`) are
//! *required*: when one of them has no device, that is an error. CI sets it for what it has.
//!
//! ```no_run
//! use polycompute_testing::for_each_device;
//!
//! // Every device of every backend linked into this test binary.
//! let ran = for_each_device(|dev| {
//!     let x = dev.from_slice(&[1.0f32, 2.0], &[2]).unwrap();
//!     assert_eq!(x.map(|v| v * 2.0).unwrap().to_vec().unwrap(), vec![2.0, 4.0], "on {}", dev.id());
//! })
//! .unwrap();
//! assert!(!ran.is_empty());
//! ```

use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use polycompute_core::{registry, BackendKind, Device};

/// The environment variable that lists the required backends.
pub const REQUIRE_ENV: &str = "POLYCOMPUTE_REQUIRE";

/// What went wrong in finding the devices to test.
#[derive(Debug, thiserror::Error)]
pub enum TestKitError {
    /// `POLYCOMPUTE_REQUIRE` names something that is no backend.
    #[error("{REQUIRE_ENV}: {name:?} is not cpu, wgpu or cuda")]
    UnknownBackend {
        /// The name as written.
        name: String,
    },
    /// A required backend has no device to test.
    #[error("{kind} is required by {REQUIRE_ENV} but unavailable: {reason}")]
    Required {
        /// The backend.
        kind: BackendKind,
        /// Why it has no device.
        reason: String,
    },
    /// A device the backend lists does not open.
    #[error("{id} is listed but does not open: {source}")]
    Open {
        /// The device id (`wgpu:1`).
        id: polycompute_core::DeviceId,
        /// The error opening it.
        #[source]
        source: polycompute_core::Error,
    },
}

/// The backends that must have a device for tests to pass.
///
/// ```
/// use polycompute_testing::Required;
/// use polycompute_core::BackendKind;
/// let r = Required::parse("wgpu, CUDA").unwrap();
/// assert!(r.contains(BackendKind::Cuda) && !r.contains(BackendKind::Cpu));
/// assert!(Required::parse("tpu").is_err());
/// assert!(Required::parse("").unwrap().kinds().is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Required(Vec<BackendKind>);

impl Required {
    /// No backend required.
    pub fn none() -> Required {
        Required(Vec::new())
    }

    /// Parses a comma-separated list of backend names (case and spaces do not matter).
    pub fn parse(list: &str) -> Result<Required, TestKitError> {
        let mut kinds = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let kind = BackendKind::parse(name).ok_or_else(|| TestKitError::UnknownBackend { name: name.into() })?;
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        Ok(Required(kinds))
    }

    /// What `POLYCOMPUTE_REQUIRE` lists (nothing when it is unset).
    pub fn from_env() -> Result<Required, TestKitError> {
        std::env::var(REQUIRE_ENV).map_or(Ok(Required::none()), |list| Required::parse(&list))
    }

    /// Whether `kind` is required.
    pub fn contains(&self, kind: BackendKind) -> bool {
        self.0.contains(&kind)
    }

    /// The required backends, in the order listed.
    pub fn kinds(&self) -> &[BackendKind] {
        &self.0
    }

    /// The answer for a backend without devices: an error when it is required, otherwise
    /// `Ok` after a "SKIPPED" line on stderr, so that a skip is never silent.
    pub fn skip_or_fail(&self, kind: BackendKind, reason: impl fmt::Display) -> Result<(), TestKitError> {
        if self.contains(kind) {
            return Err(TestKitError::Required { kind, reason: reason.to_string() });
        }
        eprintln!("SKIPPED {kind}: {reason} (set {REQUIRE_ENV}={kind} to make this a failure)");
        Ok(())
    }

    /// Device `kind:ordinal`, or `None` when it does not open and `kind` is not required.
    pub fn open_or_skip(&self, kind: BackendKind, ordinal: usize) -> Result<Option<Device>, TestKitError> {
        match Device::open(kind, ordinal) {
            Ok(d) => Ok(Some(d)),
            Err(e) => self.skip_or_fail(kind, format!("{kind}:{ordinal} does not open: {e}")).map(|()| None),
        }
    }

    /// Every device of every backend linked in, opened. A backend that is not linked in or
    /// lists no device is skipped (or an error, when required); a listed device that does
    /// not open is always an error.
    pub fn devices(&self) -> Result<Vec<Device>, TestKitError> {
        let mut out = Vec::new();
        for (kind, backend) in registry::backends() {
            let infos = match backend.and_then(|b| b.devices()) {
                Ok(infos) if !infos.is_empty() => infos,
                Ok(_) => {
                    self.skip_or_fail(kind, "the backend lists no device")?;
                    continue;
                }
                Err(e) => {
                    self.skip_or_fail(kind, e)?;
                    continue;
                }
            };
            for info in infos {
                let dev =
                    Device::open(kind, info.ordinal).map_err(|source| TestKitError::Open { id: info.id(), source })?;
                out.push(dev);
            }
        }
        Ok(out)
    }

    /// Runs `check` on each of [`devices`](Required::devices), in order, and returns their
    /// ids. When `check` panics, the device's id goes to stderr before the panic goes on.
    pub fn for_each_device(
        &self,
        mut check: impl FnMut(&Device),
    ) -> Result<Vec<polycompute_core::DeviceId>, TestKitError> {
        let mut ran = Vec::new();
        for dev in self.devices()? {
            let id = dev.id();
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(&dev))) {
                eprintln!("the check failed on {id} ({})", dev.info().name);
                resume_unwind(panic);
            }
            ran.push(id);
        }
        Ok(ran)
    }
}

/// Whether `POLYCOMPUTE_REQUIRE` lists `kind`. A list that does not parse requires every
/// backend, so that a typo fails the tests instead of skipping them.
pub fn is_required(kind: BackendKind) -> bool {
    Required::from_env().map_or(true, |r| r.contains(kind))
}

/// [`Required::for_each_device`] with what `POLYCOMPUTE_REQUIRE` lists.
pub fn for_each_device(check: impl FnMut(&Device)) -> Result<Vec<polycompute_core::DeviceId>, TestKitError> {
    Required::from_env()?.for_each_device(check)
}

/// [`Required::open_or_skip`] with what `POLYCOMPUTE_REQUIRE` lists.
pub fn open_or_skip(kind: BackendKind, ordinal: usize) -> Result<Option<Device>, TestKitError> {
    Required::from_env()?.open_or_skip(kind, ordinal)
}

#[cfg(test)]
mod tests {
    use super::*;

    // No backend is linked into core's own tests: every kind answers BackendNotCompiled.

    #[test]
    fn names_parse_once_each_and_unknown_ones_are_errors() {
        let r = Required::parse(" cuda,wgpu,,cuda ").unwrap();
        assert_eq!(r.kinds(), &[BackendKind::Cuda, BackendKind::Wgpu]);
        let e = Required::parse("cpu,gpu").unwrap_err();
        assert_eq!(e.to_string(), "POLYCOMPUTE_REQUIRE: \"gpu\" is not cpu, wgpu or cuda");
    }

    #[test]
    fn a_missing_backend_is_skipped_unless_required() {
        let ran = Required::none().for_each_device(|_| panic!("no device exists here")).unwrap();
        assert!(ran.is_empty());
        assert!(Required::none().open_or_skip(BackendKind::Cpu, 0).unwrap().is_none());
        let required = Required::parse("cpu").unwrap();
        match required.for_each_device(|_| ()) {
            Err(TestKitError::Required { kind: BackendKind::Cpu, reason }) => {
                assert!(reason.contains("cpu"), "{reason}")
            }
            other => panic!("expected Required, got {other:?}"),
        }
        assert!(matches!(required.open_or_skip(BackendKind::Cpu, 0), Err(TestKitError::Required { .. })));
        assert!(Required::parse("wgpu").unwrap().skip_or_fail(BackendKind::Cuda, "no driver").is_ok());
    }
}
