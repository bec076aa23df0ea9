//! [`Device`]: an open device of any backend, and the entry points that make arrays on it.

use std::fmt;
use std::sync::Arc;

use crate::array::DeviceArray;
use crate::backend::{BackendKind, DeviceBackend, DeviceInfo};
use crate::device_id::DeviceId;
use crate::dtype::Element;
use crate::error::Result;
use crate::op::{Fill, Op};
use crate::registry;
use crate::shape::Shape;

/// The environment variable that chooses [`Device::default`]: `cpu`, `wgpu` or `cuda`,
/// optionally `:ordinal` (`cuda:1`).
pub const BACKEND_ENV: &str = "POLYCOMPUTE_BACKEND";

/// An open device. Cheap to clone; all clones share one context. The crate-level docs of
/// `polycompute` show it at work.
#[derive(Clone)]
pub struct Device {
    backend: Arc<dyn DeviceBackend>,
}

impl Device {
    /// The CPU device (`cpu:0`), always available.
    ///
    /// # Panics
    /// Only when the CPU backend crate is not linked into the program, which the
    /// `polycompute` facade crate always does: a build mistake, not a run-time condition.
    pub fn cpu() -> Device {
        match Device::open(BackendKind::Cpu, 0) {
            Ok(d) => d,
            Err(e) => {
                panic!("the CPU backend must be linked in (depend on the `polycompute` crate): {e}")
            }
        }
    }

    /// The device named by `POLYCOMPUTE_BACKEND` (`cpu`, `wgpu`, `cuda`, optionally
    /// `:ordinal`); when it is unset, the first hardware GPU of CUDA, then wgpu, and the
    /// CPU when there is none. A variable naming an unknown or unavailable backend is an
    /// error, never a silent fallback.
    // The name is pinned by the architecture; it returns a Result, so it cannot be `Default`.
    #[allow(clippy::should_implement_trait)]
    pub fn default() -> Result<Device> {
        match std::env::var(BACKEND_ENV) {
            Ok(v) if !v.trim().is_empty() => Device::parse(&v),
            _ => {
                for kind in [BackendKind::Cuda, BackendKind::Wgpu] {
                    let Ok(backend) = registry::backend(kind) else {
                        continue;
                    };
                    let Ok(devices) = backend.devices() else {
                        continue;
                    };
                    if let Some(d) = devices.iter().find(|d| !d.is_cpu) {
                        return Device::open(kind, d.ordinal);
                    }
                }
                Ok(Device::cpu())
            }
        }
    }

    /// Opens a device from its id, `"{kind}"` or `"{kind}:{ordinal}"` (`cpu`, `wgpu:1`).
    pub fn parse(id: &str) -> Result<Device> {
        Device::open_id(id.parse()?)
    }

    /// Opens the device `id` names (see [`Device::open`]).
    pub fn open_id(id: DeviceId) -> Result<Device> {
        Device::open(id.kind, id.ordinal)
    }

    /// Opens device `ordinal` of backend `kind`. Opening a device that is already open in
    /// this process returns the same context.
    pub fn open(kind: BackendKind, ordinal: usize) -> Result<Device> {
        Ok(Device { backend: registry::open(kind, ordinal)? })
    }

    /// Wraps an open backend device.
    pub fn from_backend(backend: Arc<dyn DeviceBackend>) -> Device {
        Device { backend }
    }

    /// What the device is.
    pub fn info(&self) -> &DeviceInfo {
        self.backend.info()
    }

    /// The device id, e.g. `cuda:0`.
    pub fn id(&self) -> DeviceId {
        self.info().id()
    }

    /// The backend kind.
    pub fn kind(&self) -> BackendKind {
        self.info().kind
    }

    /// The backend's device, for code that drives ops directly.
    pub fn backend(&self) -> &Arc<dyn DeviceBackend> {
        &self.backend
    }

    /// Waits for all queued work on the device.
    /// Pending elementwise results still alive are computed first ([`crate::lazy`]).
    pub fn synchronize(&self) -> Result<()> {
        crate::lazy::flush(self)?;
        self.backend.synchronize()
    }

    /// What the device's caching allocator holds and has done (cached and live bytes,
    /// hits, misses, bytes released); `None` for a device without one.
    ///
    /// ```
    /// # fn demo(device: &polycompute_core::Device) -> polycompute_core::Result<()> {
    /// drop(device.zeros::<f32>(&[1000])?);
    /// if let Some(stats) = device.memory_stats() {
    ///     println!("{} bytes cached for reuse", stats.cached_bytes);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn memory_stats(&self) -> Option<crate::MemoryStats> {
        self.backend.memory_stats()
    }

    /// Hands the memory the device keeps cached for reuse back to the system (arrays
    /// that are alive keep theirs).
    pub fn release_cached_memory(&self) {
        self.backend.release_cached_memory()
    }

    /// Uploads an ndarray (any layout: views and non-contiguous arrays are read in logical
    /// order).
    pub fn upload<T, S, D>(&self, array: &ndarray::ArrayBase<S, D>) -> Result<DeviceArray<T>>
    where
        T: Element,
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        let shape = Shape::new(array.shape())?;
        match array.as_slice() {
            Some(data) => DeviceArray::upload_slice(self, data, shape),
            None => DeviceArray::upload_slice(self, &array.iter().copied().collect::<Vec<T>>(), shape),
        }
    }

    /// Uploads `data` as an array of the given shape (row-major).
    pub fn from_slice<T: Element>(&self, data: &[T], shape: &[usize]) -> Result<DeviceArray<T>> {
        DeviceArray::upload_slice(self, data, Shape::new(shape)?)
    }

    /// An array of `shape` with every element `value`.
    pub fn full<T: Element>(&self, value: T, shape: &[usize]) -> Result<DeviceArray<T>> {
        self.fill(Fill::Constant(value.to_scalar()), shape)
    }

    /// An array of zeros.
    pub fn zeros<T: Element>(&self, shape: &[usize]) -> Result<DeviceArray<T>> {
        self.full(T::default(), shape)
    }

    /// Counter-based uniform random numbers: `[0, 1)` for floats, raw bits for integers.
    /// Element `i` depends only on `(seed, i)` (see [`crate::philox`]), so every device
    /// gives the same values.
    pub fn uniform<T: Element>(&self, seed: u64, shape: &[usize]) -> Result<DeviceArray<T>> {
        self.fill(Fill::Uniform { seed }, shape)
    }

    /// Counter-based standard-normal random numbers (f32, f64).
    pub fn normal<T: Element>(&self, seed: u64, shape: &[usize]) -> Result<DeviceArray<T>> {
        self.fill(Fill::Normal { seed }, shape)
    }

    fn fill<T: Element>(&self, fill: Fill, shape: &[usize]) -> Result<DeviceArray<T>> {
        let shape = Shape::new(shape)?;
        let op = Op::Fill { fill, dtype: T::DTYPE, len: shape.numel() };
        op.output(&[])?;
        let buffer = self.backend.execute(&op, &[])?;
        DeviceArray::from_parts(self.clone(), buffer, shape)
    }
}

/// Splits a device id into kind and ordinal (the text form of a [`DeviceId`]).
pub fn parse_id(id: &str) -> Result<(BackendKind, usize)> {
    let id: DeviceId = id.parse()?;
    Ok((id.kind, id.ordinal))
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({} {:?})", self.id(), self.info().name)
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.backend, &other.backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn device_ids_parse() {
        assert_eq!(parse_id("cuda:1").unwrap(), (BackendKind::Cuda, 1));
        assert_eq!(parse_id("WGPU").unwrap(), (BackendKind::Wgpu, 0));
        assert!(matches!(parse_id("tpu"), Err(Error::UnknownDevice(_))));
        assert!(matches!(parse_id("cpu:x"), Err(Error::UnknownDevice(_))));
    }
}
