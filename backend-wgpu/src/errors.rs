//! Turning wgpu's errors into polycompute's: error scopes around every operation, an
//! uncaptured-error handler and a device-lost callback, so no error ever reaches wgpu's
//! default handler (which panics).

use polycompute_core::sync::LockUnpoisoned;
use polycompute_core::DeviceId;
use std::sync::{Arc, Mutex};

use polycompute_core::{Error, Result};

/// The `code` of an [`Error::DeviceFault`] from the wgpu backend. wgpu reports faults as
/// typed errors, not numbers, so the backend numbers the kinds it raises; the codes are
/// negative so they never collide with a driver's own (CUDA's are positive).
///
/// ```
/// use polycompute_wgpu::FaultCode;
///
/// assert_eq!(FaultCode::from_code(FaultCode::DeviceLost.code()), Some(FaultCode::DeviceLost));
/// assert!(FaultCode::DeviceLost.sticky());
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum FaultCode {
    /// The device is lost (a driver reset, a removed GPU, or the device destroyed): sticky,
    /// every later operation fails until the device is opened again.
    DeviceLost = -1,
    /// wgpu reported an internal error (the driver failed an operation it accepted).
    Internal = -2,
    /// Waiting for the device's submitted work (a poll) failed.
    WaitFailed = -3,
    /// A readback failed: the staging buffer's mapping failed or never completed.
    ReadbackFailed = -4,
}

impl FaultCode {
    /// Every code, in numeric order from -1 down.
    pub const ALL: [FaultCode; 4] =
        [FaultCode::DeviceLost, FaultCode::Internal, FaultCode::WaitFailed, FaultCode::ReadbackFailed];

    /// The number carried in [`Error::DeviceFault`]'s `code`.
    pub const fn code(self) -> i64 {
        self as i64
    }

    /// The fault kind of a `DeviceFault` code, if the wgpu backend raises it.
    pub fn from_code(code: i64) -> Option<FaultCode> {
        FaultCode::ALL.into_iter().find(|c| c.code() == code)
    }

    /// Whether the fault poisons the device (only a lost device does).
    pub const fn sticky(self) -> bool {
        matches!(self, FaultCode::DeviceLost)
    }

    /// The [`Error::DeviceFault`] of this kind on `device`.
    pub(crate) fn error(self, device: DeviceId, message: String) -> Error {
        Error::DeviceFault { device, code: self.code(), message, sticky: self.sticky() }
    }
}

/// What wgpu reported outside any error scope, and whether the device is lost.
#[derive(Debug, Default)]
pub(crate) struct ErrorSink {
    uncaptured: Mutex<Vec<String>>,
    lost: Mutex<Option<String>>,
}

impl ErrorSink {
    /// Installs the handlers on `device` and returns the sink they report to.
    pub(crate) fn install(device: &wgpu::Device) -> Arc<ErrorSink> {
        let sink = Arc::new(ErrorSink::default());
        let s = sink.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            tracing::warn!("wgpu uncaptured error: {e}");
            lock(&s.uncaptured).push(describe(&e));
        }));
        let s = sink.clone();
        device.set_device_lost_callback(move |reason, message| {
            // Also `Destroyed`: when polycompute drops the device nobody checks any more, and
            // when other code destroys it, every later operation must say so.
            *lock(&s.lost) = Some(format!("device lost ({reason:?}): {message}"));
        });
        sink
    }

    /// Whether the device has been lost.
    pub(crate) fn lost(&self) -> Option<String> {
        lock(&self.lost).clone()
    }

    /// `DeviceFault { sticky: true }` once the device is lost, and any error that escaped a
    /// scope since the last check.
    pub(crate) fn check(&self, device_id: DeviceId) -> Result<()> {
        if let Some(why) = lock(&self.lost).clone() {
            return Err(FaultCode::DeviceLost.error(device_id, why));
        }
        let pending: Vec<String> = std::mem::take(&mut *lock(&self.uncaptured));
        if !pending.is_empty() {
            return Err(Error::Backend { device: device_id, message: pending.join("; ") });
        }
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock_unpoisoned()
}

/// The full text of a wgpu error, including its sources (naga's log for a shader error).
fn describe(e: &wgpu::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str("\n  caused by: ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// The error scopes of one operation: out-of-memory, validation and internal errors are all
/// captured. Scopes are per thread, so one operation's errors never land in another's.
pub(crate) struct Scope {
    guards: Vec<wgpu::ErrorScopeGuard>,
}

impl Scope {
    /// Opens the scopes on `device`.
    pub(crate) fn push(device: &wgpu::Device) -> Scope {
        let guards = [wgpu::ErrorFilter::Internal, wgpu::ErrorFilter::Validation, wgpu::ErrorFilter::OutOfMemory]
            .into_iter()
            .map(|f| device.push_error_scope(f))
            .collect();
        Scope { guards }
    }

    /// Closes the scopes; the first error they caught, as wgpu reported it.
    pub(crate) fn pop(mut self) -> Option<wgpu::Error> {
        let mut first = None;
        // Scopes pop innermost first.
        while let Some(g) = self.guards.pop() {
            if let Some(e) = pollster::block_on(g.pop()) {
                first.get_or_insert(e);
            }
        }
        first
    }

    /// Closes the scopes and converts what they caught: out-of-memory to
    /// [`Error::OutOfMemory`] (for an allocation of `bytes`), anything else to
    /// [`Error::Backend`] with wgpu's description.
    pub(crate) fn finish(self, device_id: DeviceId, bytes: u64) -> Result<()> {
        match self.pop() {
            None => Ok(()),
            Some(e) => Err(convert(&e, device_id, bytes)),
        }
    }
}

/// A wgpu error as a polycompute error.
pub(crate) fn convert(e: &wgpu::Error, device_id: DeviceId, bytes: u64) -> Error {
    match e {
        wgpu::Error::OutOfMemory { .. } => Error::OutOfMemory { device: device_id, bytes },
        wgpu::Error::Internal { .. } => FaultCode::Internal.error(device_id, describe(e)),
        wgpu::Error::Validation { .. } => Error::Backend {
            device: device_id,
            message: format!("wgpu validation error (a bug in polycompute-wgpu; please report it): {}", describe(e)),
        },
    }
}

/// The error for a shader that did not compile: the generated source and wgpu's log.
pub(crate) fn kernel_compile(e: &wgpu::Error, device_id: DeviceId, code: &str) -> Error {
    Error::KernelCompile { device: device_id, code: code.to_string(), log: describe(e) }
}

#[cfg(test)]
mod tests {
    use super::FaultCode;
    use polycompute_core::Error;

    #[test]
    fn fault_codes_are_distinct_negative_and_round_trip() {
        for (i, c) in FaultCode::ALL.into_iter().enumerate() {
            assert_eq!(c.code(), -(i as i64) - 1, "{c:?}");
            assert_eq!(FaultCode::from_code(c.code()), Some(c));
        }
        assert_eq!(FaultCode::from_code(0), None);
        assert_eq!(FaultCode::from_code(700), None);
    }

    #[test]
    fn only_a_lost_device_is_a_sticky_fault() {
        for c in FaultCode::ALL {
            match c.error(polycompute_core::DeviceId::new(polycompute_core::BackendKind::Wgpu, 0), "why".into()) {
                Error::DeviceFault { code, sticky, .. } => {
                    assert_eq!(code, c.code());
                    assert_eq!(sticky, c == FaultCode::DeviceLost, "{c:?}");
                }
                e => panic!("{c:?} made {e:?}"),
            }
        }
    }
}
