//! The view and data-movement ops on the CPU: strided map inputs ([`strided`]), concatenation and
//! padding ([`concat`]), indexing ([`index`]), scans ([`scan`]) and sorting ([`sort`]).
//! Kept apart from `device.rs` so its match stays small. Every op here works along one
//! axis of a row-major array, seen as `[outer, n, inner]` ([`Axis`]).

mod concat;
mod index;
mod scan;
mod sort;
pub(crate) mod strided;

use polycompute_core::{DType, Error, HostSlice, HostVec, Op, Result, Shape};

use crate::device::CpuDevice;
use crate::num::{with_dtype, Num};
use crate::num_half::{narrow_vec, widen, HalfNum};
use crate::storage::host_vec;

/// A row-major array seen as `[outer, n, inner]` around one axis of length `n`.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Axis {
    /// Product of the dimensions before the axis.
    pub(crate) outer: usize,
    /// The axis's length.
    pub(crate) n: usize,
    /// Product of the dimensions after the axis.
    pub(crate) inner: usize,
}

impl Axis {
    pub(crate) fn new(shape: &Shape, axis: usize) -> Axis {
        let d = shape.dims();
        Axis { outer: d[..axis].iter().product(), n: d[axis], inner: d[axis + 1..].iter().product() }
    }
}

/// Input `k` as `T` (the typed layer checked the dtypes).
pub(crate) fn typed<'a, T: Num>(data: HostSlice<'a>) -> &'a [T] {
    T::of_slice(data).unwrap_or(&[])
}

/// Runs one of the ops `device.rs` does not match itself.
pub(crate) fn run(device: &CpuDevice, op: &Op, data: &[HostSlice<'_>]) -> Result<HostVec> {
    let dtype = data.first().map_or(polycompute_core::DType::F32, |d| d.dtype());
    Ok(match op {
        Op::Pad { shape, widths, value } => with_dtype!(dtype, T => {
            let v = <T as polycompute_core::Element>::from_scalar(*value).unwrap_or(T::ZERO);
            host_vec(concat::pad::<T>(typed(data[0]), shape, widths, v))
        }),
        Op::TakeAlongAxis { axis, shape, indices } => {
            with_dtype!(dtype, T => host_vec(index::take_along_axis::<T>(typed(data[0]), data[1], shape, indices, *axis)))
        }
        Op::ScatterAdd { axis, shape, indices } => with_dtype!(dtype, T => host_vec(index::scatter_add::<T>(
            typed(data[0]), data[1], typed(data[2]), shape, indices, *axis
        ))),
        // Halves: an f32 running value, each output rounded once from it.
        Op::Scan { kind, axis, shape } if dtype == DType::F16 => {
            host_vec(half_scan::<polycompute_core::f16>(typed(data[0]), *kind, Axis::new(shape, *axis)))
        }
        Op::Scan { kind, axis, shape } if dtype == DType::BF16 => {
            host_vec(half_scan::<polycompute_core::bf16>(typed(data[0]), *kind, Axis::new(shape, *axis)))
        }
        Op::Scan { kind, axis, shape } => {
            with_dtype!(dtype, T => host_vec(scan::scan::<T>(typed(data[0]), *kind, Axis::new(shape, *axis))))
        }
        Op::Sort { axis, shape } => {
            with_dtype!(dtype, T => host_vec(sort::sort::<T>(typed(data[0]), Axis::new(shape, *axis))))
        }
        Op::Argsort { axis, shape } => {
            with_dtype!(dtype, T => host_vec(sort::argsort::<T>(typed(data[0]), Axis::new(shape, *axis))))
        }
        Op::TopK { k, axis, shape } => {
            with_dtype!(dtype, T => host_vec(sort::topk::<T>(typed(data[0]), *k, Axis::new(shape, *axis))))
        }
        _ => {
            return Err(Error::Unsupported { op: op.name().to_string(), dtype, device: Some(device_id(device)) });
        }
    })
}

/// `Op::Concat` into a block of the device's caching allocator ([`concat::concat_into`]).
pub(crate) fn concat(
    axis: usize,
    shapes: &[Shape],
    data: &[HostSlice<'_>],
    pool: &std::sync::Arc<crate::memory::Pool>,
) -> Result<crate::storage::Output> {
    let dtype = data.first().map_or(polycompute_core::DType::F32, |d| d.dtype());
    let len = concat::concat_len(shapes, axis);
    with_dtype!(dtype, T => crate::storage::Output::write::<T>(pool, len, |out| {
        concat::concat_into::<T>(data, shapes, axis, out)
    }))
}

/// `Op::Take` into a block of the device's caching allocator ([`index::take_into`]).
pub(crate) fn take(
    axis: usize,
    shape: &Shape,
    indices: &Shape,
    data: &[HostSlice<'_>],
    pool: &std::sync::Arc<crate::memory::Pool>,
) -> Result<crate::storage::Output> {
    let dtype = data[0].dtype();
    let len = index::take_len(shape, indices, axis);
    with_dtype!(dtype, T => crate::storage::Output::write::<T>(pool, len, |out| {
        index::take_into::<T>(typed(data[0]), data[1], shape, indices, axis, out)
    }))
}

/// A half scan: accumulated in f32 over the widened values, each output rounded once.
fn half_scan<H: HalfNum>(x: &[H], kind: polycompute_core::ScanKind, a: Axis) -> Vec<H> {
    narrow_vec(&scan::scan::<f32>(&widen(x), kind, a))
}

fn device_id(device: &CpuDevice) -> polycompute_core::DeviceId {
    polycompute_core::BackendDevice::info(device).id()
}
