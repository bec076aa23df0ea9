//! Shared test setup: the wgpu device under test, or a visible skip when there is no adapter
//! and `POLYCOMPUTE_REQUIRE` does not list wgpu (then a missing adapter fails the test).
//! Inputs, special values and ULP comparison come from the test kit
//! (`polycompute_testing`).
#![allow(dead_code)]

pub mod sort_ref;

use std::sync::Arc;

use polycompute_core::{Backend, BackendKind, Device};
use polycompute_testing::Required;
use polycompute_wgpu::{is_unavailable, WgpuBackend, WgpuDevice};

/// The ordinal under test: `POLYCOMPUTE_WGPU_ORDINAL`, or 0.
pub fn ordinal() -> usize {
    std::env::var("POLYCOMPUTE_WGPU_ORDINAL").ok().and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// `Some(device)`, or `None` after a skip notice when there is no adapter and wgpu is not
/// required; any other failure to open panics.
fn or_skip<T>(opened: polycompute_core::Result<T>) -> Option<T> {
    match opened {
        Ok(d) => Some(d),
        Err(e) if is_unavailable(&e) => {
            let skipped =
                Required::from_env().and_then(|r| r.skip_or_fail(BackendKind::Wgpu, format!("no adapter ({e})")));
            if let Err(e) = skipped {
                panic!("{e}");
            }
            None
        }
        Err(e) => panic!("wgpu device {} could not be opened: {e}", ordinal()),
    }
}

/// The concrete device under test, or `None` (skip) when there is none and none is required.
pub fn wgpu_device() -> Option<Arc<WgpuDevice>> {
    or_skip(WgpuBackend.open_device(ordinal())).map(Arc::new)
}

/// The device under test as a polycompute `Device`.
pub fn device() -> Option<Device> {
    or_skip(WgpuBackend.open(ordinal())).map(Device::from_backend)
}

/// Whether the device under test runs f64 kernels.
pub fn has_f64(dev: &Device) -> bool {
    dev.info().details.iter().any(|(k, v)| k == "shader_f64" && v == "true")
}

/// The device under test, and beside it, when it has subgroups, the same adapter opened
/// without them (`WgpuDevice::open_with_subgroups(_, false)`), so both the subgroup path
/// and the barrier fallback of the reductions run; each with a label for failures.
pub fn devices() -> Vec<(&'static str, Device)> {
    let Some(dev) = wgpu_device() else { return Vec::new() };
    let mut all = Vec::new();
    if dev.has_subgroups() {
        let fallback = WgpuDevice::open_with_subgroups(ordinal(), false)
            .unwrap_or_else(|e| panic!("wgpu device {} without subgroups could not be opened: {e}", ordinal()));
        assert!(!fallback.has_subgroups());
        all.push(("barrier fallback", Device::from_backend(Arc::new(fallback))));
    }
    let label = if dev.has_subgroups() { "subgroups" } else { "no subgroups on this adapter" };
    all.push((label, Device::from_backend(dev)));
    all
}
