//! Turning wgpu's errors into polycompute's: error scopes around every operation, an
//! uncaptured-error handler and a device-lost callback, so no error ever reaches wgpu's
//! default handler (which panics).

use std::sync::{Arc, Mutex};

use polycompute_core::{Error, Result};

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
    pub(crate) fn check(&self, device_id: &str) -> Result<()> {
        if let Some(why) = lock(&self.lost).clone() {
            return Err(Error::DeviceFault { device: device_id.to_string(), code: -1, message: why, sticky: true });
        }
        let pending: Vec<String> = std::mem::take(&mut *lock(&self.uncaptured));
        if !pending.is_empty() {
            return Err(Error::Backend { device: device_id.to_string(), message: pending.join("; ") });
        }
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
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
    pub(crate) fn finish(self, device_id: &str, bytes: u64) -> Result<()> {
        match self.pop() {
            None => Ok(()),
            Some(e) => Err(convert(&e, device_id, bytes)),
        }
    }
}

/// A wgpu error as a polycompute error.
pub(crate) fn convert(e: &wgpu::Error, device_id: &str, bytes: u64) -> Error {
    match e {
        wgpu::Error::OutOfMemory { .. } => Error::OutOfMemory { device: device_id.to_string(), bytes },
        wgpu::Error::Internal { .. } => {
            Error::DeviceFault { device: device_id.to_string(), code: -2, message: describe(e), sticky: false }
        }
        wgpu::Error::Validation { .. } => Error::Backend {
            device: device_id.to_string(),
            message: format!("wgpu validation error (a bug in polycompute-wgpu; please report it): {}", describe(e)),
        },
    }
}

/// The error for a shader that did not compile: the generated source and wgpu's log.
pub(crate) fn kernel_compile(e: &wgpu::Error, device_id: &str, code: &str) -> Error {
    Error::KernelCompile { device: device_id.to_string(), code: code.to_string(), log: describe(e) }
}
