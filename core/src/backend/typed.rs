//! The typed backend layer: a backend implements [`BackendDevice`] over its own buffer
//! type, and the one blanket [`DeviceBackend`] implementation here does everything that
//! must happen before backend code runs, the same way for every backend: it downcasts each
//! buffer, checks that it belongs to this very device instance ([`DeviceToken`]), checks
//! buffer lengths against the shapes the op declares, and validates the op with
//! [`Op::output`] (dtypes, shapes, arity). So a backend's `execute` sees only valid ops
//! on its own buffers of the right sizes, whoever called — `Device::backend()` is public.
//!
//! A backend adopts it by implementing [`BackendBuffer`] for its buffer type (carrying the
//! token of the device that made it) and [`BackendDevice`] for its device (and no longer
//! `DeviceBackend` directly); `Arc::new(device)` is then an `Arc<dyn DeviceBackend>`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use smallvec::{smallvec, SmallVec};

use super::{BufferRef, DeviceBackend, DeviceBuffer, DeviceInfo, MemoryStats};
use crate::dtype::{DType, HostSlice, HostVec};
use crate::error::{Error, Result};
use crate::op::Op;
use crate::shape::Shape;

/// The identity of one open device instance: unique within the process, so two devices of
/// one backend (`wgpu:0` and `wgpu:1`, or `cpu:0` opened twice), whose buffers share a
/// type, still tell their buffers apart.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeviceToken(u64);

impl DeviceToken {
    /// A token no other call returns (in this process); take one when opening a device.
    pub fn fresh() -> DeviceToken {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        DeviceToken(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// A backend's buffer type, which knows the device instance that made it.
pub trait BackendBuffer: DeviceBuffer {
    /// The [`DeviceToken`] of the device that made this buffer.
    fn owner(&self) -> DeviceToken;
}

/// One open device of a backend, over its own buffer type; the blanket implementation
/// makes every `BackendDevice` a [`DeviceBackend`] that validates before calling it.
///
/// The methods may assume what the blanket implementation checked: every buffer is
/// this device's own; in `execute`, each input's length is the element count of the shape
/// the op declares for it (its own length for `Copy` and `Cast`) and [`Op::output`]
/// accepted the op for the inputs' dtypes and shapes. What they return must have the
/// dtype and length `Op::output` gives (checked too, as a backend error).
pub trait BackendDevice: Send + Sync + 'static {
    /// The backend's buffer type.
    type Buffer: BackendBuffer;
    /// What the device is.
    fn info(&self) -> &DeviceInfo;
    /// This instance's token, the one its buffers report as [`BackendBuffer::owner`].
    fn token(&self) -> DeviceToken;
    /// Copies host data into a new buffer.
    fn upload(&self, data: HostSlice<'_>) -> Result<Self::Buffer>;
    /// Copies one of this device's buffers back to the host.
    fn download(&self, buffer: &Self::Buffer) -> Result<HostVec>;
    /// Runs one validated op on this device's buffers (see the trait's docs).
    fn execute(&self, op: &Op, inputs: &[&Self::Buffer]) -> Result<Self::Buffer>;
    /// [`DeviceBackend::map_reduce`] on this device's buffers, both ops validated: `Some`
    /// when the backend fuses the pair, `None` (the default) to run the map and then the
    /// reduction.
    fn map_reduce(&self, map: &Op, reduce: &Op, inputs: &[&Self::Buffer]) -> Result<Option<Self::Buffer>> {
        let _ = (map, reduce, inputs);
        Ok(None)
    }
    /// Waits until all work queued on the device has finished.
    fn synchronize(&self) -> Result<()>;
    /// The figures of the device's caching allocator; `None` (the default) without one.
    fn memory_stats(&self) -> Option<MemoryStats> {
        None
    }
    /// Hands the allocator's cached blocks back to the system (by default nothing to do).
    fn release_cached_memory(&self) {}
}

impl<D: BackendDevice> DeviceBackend for D {
    fn info(&self) -> &DeviceInfo {
        BackendDevice::info(self)
    }

    fn upload(&self, data: HostSlice<'_>) -> Result<BufferRef> {
        let buffer = BackendDevice::upload(self, data)?;
        check_result(self, &buffer, data.dtype(), data.len())?;
        Ok(Arc::new(buffer))
    }

    fn download(&self, buffer: &BufferRef) -> Result<HostVec> {
        BackendDevice::download(self, own(self, buffer)?)
    }

    fn execute(&self, op: &Op, inputs: &[&BufferRef]) -> Result<BufferRef> {
        // Few ops take more than four inputs: no heap allocation for the common case.
        let buffers = inputs.iter().map(|b| own(self, b)).collect::<Result<Inputs<&D::Buffer>>>()?;
        let (dtype, shape) = validate(op, inputs)?;
        let out = BackendDevice::execute(self, op, &buffers)?;
        check_result(self, &out, dtype, shape.numel())?;
        Ok(Arc::new(out))
    }

    fn map_reduce(&self, map: &Op, reduce: &Op, inputs: &[&BufferRef]) -> Result<BufferRef> {
        let buffers = inputs.iter().map(|b| own(self, b)).collect::<Result<Inputs<&D::Buffer>>>()?;
        let (mapped, mapped_shape) = validate(map, inputs)?;
        let (dtype, shape) = reduce.output(&[(mapped, &mapped_shape)])?;
        match BackendDevice::map_reduce(self, map, reduce, &buffers)? {
            Some(out) => {
                check_result(self, &out, dtype, shape.numel())?;
                Ok(Arc::new(out))
            }
            None => {
                let mapped = DeviceBackend::execute(self, map, inputs)?;
                DeviceBackend::execute(self, reduce, &[&mapped])
            }
        }
    }

    fn synchronize(&self) -> Result<()> {
        BackendDevice::synchronize(self)
    }

    fn memory_stats(&self) -> Option<MemoryStats> {
        BackendDevice::memory_stats(self)
    }

    fn release_cached_memory(&self) {
        BackendDevice::release_cached_memory(self)
    }
}

/// One item per input of an op, on the stack for up to four inputs.
type Inputs<T> = SmallVec<[T; 4]>;

/// `buffer` as `D`'s own buffer type, made by this very instance; else
/// [`Error::ForeignBuffer`].
fn own<'a, D: BackendDevice>(device: &D, buffer: &'a BufferRef) -> Result<&'a D::Buffer> {
    match buffer.as_any().downcast_ref::<D::Buffer>() {
        Some(b) if b.owner() == device.token() => Ok(b),
        _ => Err(Error::ForeignBuffer { device: device.info().id() }),
    }
}

/// Checks each input's length against the shape `op` declares for it, then the op itself;
/// returns the output's dtype and shape.
fn validate(op: &Op, inputs: &[&BufferRef]) -> Result<(DType, Shape)> {
    let flat: Vec<Shape>;
    let declared: Inputs<&Shape> = match op {
        Op::Map { input_shapes, .. } => input_shapes.iter().collect(),
        Op::MapViews { inputs: layouts, .. } => {
            // A view may read any part of its buffer: check that it stays inside instead.
            if layouts.len() == inputs.len() {
                for (b, l) in inputs.iter().zip(layouts) {
                    l.check_within(b.len())?;
                }
            }
            flat = inputs.iter().zip(layouts).map(|(_, l)| l.shape.clone()).collect();
            let typed: Inputs<(DType, &Shape)> = inputs.iter().zip(&flat).map(|(b, s)| (b.dtype(), s)).collect();
            if layouts.len() != inputs.len() {
                return Err(arity(op, layouts.len(), inputs.len()));
            }
            return op.output(&typed);
        }
        Op::Reduce { shape, .. }
        | Op::Transpose { shape, .. }
        | Op::Pad { shape, .. }
        | Op::Scan { shape, .. }
        | Op::Sort { shape, .. }
        | Op::Argsort { shape, .. }
        | Op::TopK { shape, .. } => smallvec![shape],
        Op::Matmul { lhs, rhs, .. } => smallvec![lhs, rhs],
        Op::Concat { shapes, .. } => shapes.iter().collect(),
        Op::Take { shape, indices, .. } | Op::TakeAlongAxis { shape, indices, .. } => smallvec![shape, indices],
        Op::ScatterAdd { shape, indices, axis } => {
            // The values' shape follows from the others; checked by `Op::output`.
            flat = vec![crate::op::take_shape(shape, indices, *axis, "scatter_add")?];
            smallvec![shape, indices, &flat[0]]
        }
        // No declared shape: the op works on the buffer as it is.
        Op::Copy | Op::Cast { .. } | Op::Fill { .. } => {
            flat = inputs.iter().map(|b| Shape::from(&[b.len()][..])).collect();
            flat.iter().collect()
        }
    };
    if declared.len() != inputs.len() {
        return Err(arity(op, declared.len(), inputs.len()));
    }
    for (b, s) in inputs.iter().zip(&declared) {
        if b.len() != s.numel() {
            return Err(Error::LengthMismatch { len: b.len(), shape: s.dims().to_vec(), expected: s.numel() });
        }
    }
    let typed: Inputs<(DType, &Shape)> = inputs.iter().zip(declared).map(|(b, s)| (b.dtype(), s)).collect();
    op.output(&typed)
}

fn arity(op: &Op, want: usize, got: usize) -> Error {
    Error::InvalidShape(format!("{} takes {want} input(s), got {got}", op.name()))
}

/// A buffer a backend returned must be what was asked for: anything else is a backend bug,
/// reported rather than handed on.
fn check_result<D: BackendDevice>(device: &D, buffer: &D::Buffer, dtype: DType, len: usize) -> Result<()> {
    if buffer.dtype() != dtype || buffer.len() != len || buffer.owner() != device.token() {
        return Err(Error::Backend {
            device: device.info().id(),
            message: format!(
                "backend bug: made a buffer of {} {} elements (owner {:?}) where {len} {dtype} elements of {:?} were due",
                buffer.len(),
                buffer.dtype(),
                buffer.owner(),
                device.token()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::any::Any;

    use super::*;
    use crate::backend::BackendKind;
    use crate::op::ReduceKind;

    /// A host-memory fake backend: enough to exercise the blanket layer.
    #[derive(Debug)]
    struct FakeBuffer {
        data: HostVec,
        owner: DeviceToken,
    }

    impl DeviceBuffer for FakeBuffer {
        fn dtype(&self) -> DType {
            self.data.dtype()
        }
        fn len(&self) -> usize {
            self.data.len()
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    impl BackendBuffer for FakeBuffer {
        fn owner(&self) -> DeviceToken {
            self.owner
        }
    }

    struct FakeDevice {
        info: DeviceInfo,
        token: DeviceToken,
    }

    impl FakeDevice {
        fn new() -> FakeDevice {
            let info = DeviceInfo {
                kind: BackendKind::Cpu,
                ordinal: 0,
                name: "fake".into(),
                is_cpu: true,
                memory_bytes: None,
                details: Vec::new(),
            };
            FakeDevice { info, token: DeviceToken::fresh() }
        }
    }

    impl BackendDevice for FakeDevice {
        type Buffer = FakeBuffer;
        fn info(&self) -> &DeviceInfo {
            &self.info
        }
        fn token(&self) -> DeviceToken {
            self.token
        }
        fn upload(&self, data: HostSlice<'_>) -> Result<FakeBuffer> {
            Ok(FakeBuffer { data: data.to_host_vec(), owner: self.token })
        }
        fn download(&self, buffer: &FakeBuffer) -> Result<HostVec> {
            Ok(buffer.data.clone())
        }
        fn execute(&self, op: &Op, inputs: &[&FakeBuffer]) -> Result<FakeBuffer> {
            // Only what the tests run: a copy, and a deliberately wrong-sized sum.
            match op {
                Op::Copy => Ok(FakeBuffer { data: inputs[0].data.clone(), owner: self.token }),
                _ => Ok(FakeBuffer { data: HostVec::F32(vec![0.0; 2]), owner: self.token }),
            }
        }
        fn synchronize(&self) -> Result<()> {
            Ok(())
        }
    }

    fn sum(dims: &[usize]) -> Op {
        Op::Reduce { kind: ReduceKind::Sum, axis: None, shape: Shape::new(dims).unwrap() }
    }

    #[test]
    fn valid_calls_reach_the_backend() {
        let dev: Arc<dyn DeviceBackend> = Arc::new(FakeDevice::new());
        let a = dev.upload(HostSlice::I32(&[1, 2, 3])).unwrap();
        let b = dev.execute(&Op::Copy, &[&a]).unwrap();
        assert_eq!(dev.download(&b).unwrap(), HostVec::I32(vec![1, 2, 3]));
        // A backend without a caching allocator reports none, and has nothing to release.
        assert_eq!(dev.memory_stats(), None);
        dev.release_cached_memory();
    }

    #[test]
    fn another_instance_buffer_is_foreign() {
        let (one, two) = (FakeDevice::new(), FakeDevice::new());
        let theirs = DeviceBackend::upload(&two, HostSlice::F32(&[1.0])).unwrap();
        let err = DeviceBackend::execute(&one, &Op::Copy, &[&theirs]).unwrap_err();
        assert!(matches!(err, Error::ForeignBuffer { ref device } if device == "cpu:0"), "{err}");
        assert!(matches!(DeviceBackend::download(&one, &theirs), Err(Error::ForeignBuffer { .. })));
    }

    #[test]
    fn short_buffer_and_wrong_dtype_are_refused() {
        let dev = FakeDevice::new();
        let short = DeviceBackend::upload(&dev, HostSlice::F32(&[1.0, 2.0, 3.0])).unwrap();
        let err = DeviceBackend::execute(&dev, &sum(&[2, 2]), &[&short]).unwrap_err();
        assert!(matches!(err, Error::LengthMismatch { len: 3, expected: 4, .. }), "{err}");
        let program = Arc::new(crate::expr::Program::identity(DType::F64));
        let map = Op::Map { program, input_shapes: vec![Shape::new(&[3]).unwrap()], shape: Shape::new(&[3]).unwrap() };
        let err = DeviceBackend::execute(&dev, &map, &[&short]).unwrap_err();
        assert!(matches!(err, Error::DTypeMismatch { expected: DType::F64, found: DType::F32, .. }), "{err}");
        let err = DeviceBackend::execute(&dev, &Op::Copy, &[]).unwrap_err();
        assert!(matches!(err, Error::InvalidShape(_)), "{err}");
    }

    #[test]
    fn a_wrong_result_is_a_backend_error() {
        let dev = FakeDevice::new();
        let four = DeviceBackend::upload(&dev, HostSlice::F32(&[1.0; 4])).unwrap();
        // The fake returns two elements where a full sum has one.
        let err = DeviceBackend::execute(&dev, &sum(&[4]), &[&four]).unwrap_err();
        assert!(matches!(err, Error::Backend { .. }), "{err}");
    }
}
