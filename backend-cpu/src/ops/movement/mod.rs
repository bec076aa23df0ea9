//! Data movement along one axis ([`super::axis::Axis`]): concatenation and padding
//! ([`concat`](mod@concat)) and indexing ([`index`]). `Concat` and `Take` write into a block
//! of the device's caching allocator; the others return plain vectors.

mod concat;
mod index;

use std::sync::Arc;

use polycompute_core::{HostSlice, Result, Scalar, Shape};

use crate::buffer::{host_vec, typed, Output};
use crate::memory::Pool;
use crate::num::{with_dtype, Num};

/// `Op::Concat` into a block of the device's caching allocator ([`concat::concat_into`]).
pub(crate) fn concat(axis: usize, shapes: &[Shape], data: &[HostSlice<'_>], pool: &Arc<Pool>) -> Result<Output> {
    let dtype = data.first().map_or(polycompute_core::DType::F32, |d| d.dtype());
    let len = concat::concat_len(shapes, axis);
    with_dtype!(dtype, T => Output::write::<T>(pool, len, |out| {
        concat::concat_into::<T>(data, shapes, axis, out)
    }))
}

/// `Op::Take` into a block of the device's caching allocator ([`index::take_into`]).
pub(crate) fn take(
    axis: usize,
    shape: &Shape,
    indices: &Shape,
    data: &[HostSlice<'_>],
    pool: &Arc<Pool>,
) -> Result<Output> {
    let dtype = data[0].dtype();
    let len = index::take_len(shape, indices, axis);
    with_dtype!(dtype, T => Output::write::<T>(pool, len, |out| {
        index::take_into::<T>(typed(data[0]), data[1], shape, indices, axis, out)
    }))
}

/// `Op::TakeAlongAxis` ([`index::take_along_axis`]).
pub(crate) fn take_along_axis(axis: usize, shape: &Shape, indices: &Shape, data: &[HostSlice<'_>]) -> Result<Output> {
    let dtype = data.first().map_or(polycompute_core::DType::F32, |d| d.dtype());
    Ok(Output::host(with_dtype!(dtype, T => {
        host_vec(index::take_along_axis::<T>(typed(data[0]), data[1], shape, indices, axis))
    })))
}

/// `Op::ScatterAdd` ([`index::scatter_add`]).
pub(crate) fn scatter_add(axis: usize, shape: &Shape, indices: &Shape, data: &[HostSlice<'_>]) -> Result<Output> {
    let dtype = data.first().map_or(polycompute_core::DType::F32, |d| d.dtype());
    Ok(Output::host(with_dtype!(dtype, T => host_vec(index::scatter_add::<T>(
        typed(data[0]), data[1], typed(data[2]), shape, indices, axis
    )))))
}

/// `Op::Pad` ([`concat::pad`]).
pub(crate) fn pad(shape: &Shape, widths: &[(usize, usize)], value: Scalar, data: &[HostSlice<'_>]) -> Result<Output> {
    let dtype = data.first().map_or(polycompute_core::DType::F32, |d| d.dtype());
    Ok(Output::host(with_dtype!(dtype, T => {
        let v = <T as polycompute_core::Element>::from_scalar(value).unwrap_or(T::ZERO);
        host_vec(concat::pad::<T>(typed(data[0]), shape, widths, v))
    })))
}
