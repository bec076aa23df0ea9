//! Data movement, scans and sorting on a [`DeviceArray`]: concat/stack, take,
//! take_along_axis, scatter_add, pad, cumsum/cumprod, sort/argsort and topk. Each builds
//! one [`Op`] over plain inputs (a view is copied once first, see
//! [`DeviceArray::contiguous`]). The semantics are numpy's, written out on each op in
//! [`crate::op::Op`].
//!
//! Index arrays (`u32` or `i32`; negative indices count from the end) are checked before
//! the op is queued: the array layer computes the index array's minimum and maximum with
//! the ordinary reductions on its device and downloads those two scalars, so an index
//! out of range is an [`Error::IndexOutOfRange`] returned by the call itself, on every
//! backend, and no kernel ever sees one.

use crate::array::{same_device, DeviceArray};
use crate::backend::BufferRef;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::op::{Op, ScanKind};
use crate::shape::Shape;

/// The element types an index array may have: `u32` and `i32` (negative counts from
/// the end of the axis).
pub trait IndexElement: Element + sealed::Sealed {}
impl IndexElement for u32 {}
impl IndexElement for i32 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
}

impl<T: Element> DeviceArray<T> {
    /// Joins `arrays` along `axis` (numpy's `concatenate`): same dtype and device, equal
    /// dimensions except along `axis`.
    pub fn concat(arrays: &[&DeviceArray<T>], axis: usize) -> Result<DeviceArray<T>> {
        let Some(first) = arrays.first() else {
            return Err(Error::InvalidArgument {
                op: "concat",
                argument: "arrays",
                why: "no arrays given; pass at least one".into(),
            });
        };
        for a in arrays {
            same_device(first.device(), a.device())?;
        }
        let buffers = arrays.iter().map(|a| a.plain_buffer()).collect::<Result<Vec<BufferRef>>>()?;
        let shapes: Vec<Shape> = arrays.iter().map(|a| a.shape_ref().clone()).collect();
        let typed: Vec<(DType, &Shape)> = shapes.iter().map(|s| (T::DTYPE, s)).collect();
        let refs: Vec<&BufferRef> = buffers.iter().collect();
        first.run_on(Op::Concat { axis, shapes: shapes.clone() }, &refs, &typed)
    }

    /// Stacks `arrays` (all of one shape) along a new axis `axis` (numpy's `stack`):
    /// concat of their `expand_dims(axis)`.
    pub fn stack(arrays: &[&DeviceArray<T>], axis: usize) -> Result<DeviceArray<T>> {
        let expanded = arrays.iter().map(|a| a.expand_dims(axis)).collect::<Result<Vec<_>>>()?;
        let refs: Vec<&DeviceArray<T>> = expanded.iter().collect();
        DeviceArray::concat(&refs, axis)
    }

    /// numpy's `take(a, indices, axis)`: the elements at `indices` along `axis`; output
    /// shape `shape[..axis] ++ indices.shape ++ shape[axis + 1..]`.
    pub fn take<I: IndexElement>(&self, indices: &DeviceArray<I>, axis: usize) -> Result<DeviceArray<T>> {
        same_device(self.device(), indices.device())?;
        let n = self.axis_len(axis, "take")?;
        check_indices(indices, n, "take")?;
        let op = Op::Take { axis, shape: self.shape_ref().clone(), indices: indices.shape_ref().clone() };
        let (a, i) = (self.plain_buffer()?, indices.plain_buffer()?);
        self.run_on(op, &[&a, &i], &[(T::DTYPE, self.shape_ref()), (I::DTYPE, indices.shape_ref())])
    }

    /// [`DeviceArray::take`] of a 1-D index array (PyTorch's `index_select`).
    pub fn index_select<I: IndexElement>(&self, axis: usize, indices: &DeviceArray<I>) -> Result<DeviceArray<T>> {
        if indices.ndim() != 1 {
            return Err(Error::InvalidArgument {
                op: "index_select",
                argument: "indices",
                why: format!(
                    "indices have shape {}; index_select takes a 1-D index array (use take)",
                    indices.shape_ref()
                ),
            });
        }
        self.take(indices, axis)
    }

    /// numpy's `take_along_axis(a, indices, axis)`: `indices` has the rank of `a` and its
    /// dimensions on every other axis.
    pub fn take_along_axis<I: IndexElement>(&self, indices: &DeviceArray<I>, axis: usize) -> Result<DeviceArray<T>> {
        same_device(self.device(), indices.device())?;
        let n = self.axis_len(axis, "take_along_axis")?;
        check_indices(indices, n, "take_along_axis")?;
        let op = Op::TakeAlongAxis { axis, shape: self.shape_ref().clone(), indices: indices.shape_ref().clone() };
        let (a, i) = (self.plain_buffer()?, indices.plain_buffer()?);
        self.run_on(op, &[&a, &i], &[(T::DTYPE, self.shape_ref()), (I::DTYPE, indices.shape_ref())])
    }

    /// numpy's `np.add.at(a, (slice(None),) * axis + (indices,), values)`, on a copy:
    /// `values` has the shape `take(indices, axis)` would have; repeated indices add up.
    pub fn scatter_add<I: IndexElement>(
        &self,
        indices: &DeviceArray<I>,
        values: &DeviceArray<T>,
        axis: usize,
    ) -> Result<DeviceArray<T>> {
        same_device(self.device(), indices.device())?;
        same_device(self.device(), values.device())?;
        let n = self.axis_len(axis, "scatter_add")?;
        check_indices(indices, n, "scatter_add")?;
        let op = Op::ScatterAdd { axis, shape: self.shape_ref().clone(), indices: indices.shape_ref().clone() };
        let (a, i, v) = (self.plain_buffer()?, indices.plain_buffer()?, values.plain_buffer()?);
        self.run_on(
            op,
            &[&a, &i, &v],
            &[(T::DTYPE, self.shape_ref()), (I::DTYPE, indices.shape_ref()), (T::DTYPE, values.shape_ref())],
        )
    }

    /// numpy's `pad(a, widths, constant_values=value)`: `widths[axis] = (before, after)`.
    pub fn pad(&self, widths: &[(usize, usize)], value: T) -> Result<DeviceArray<T>> {
        self.unary_op(Op::Pad { shape: self.shape_ref().clone(), widths: widths.to_vec(), value: value.to_scalar() })
    }

    /// Running sum along `axis` (numpy's `cumsum`); integers wrap.
    pub fn cumsum(&self, axis: usize) -> Result<DeviceArray<T>> {
        self.unary_op(Op::Scan { kind: ScanKind::Sum, axis, shape: self.shape_ref().clone() })
    }

    /// Running product along `axis` (numpy's `cumprod`); integers wrap.
    pub fn cumprod(&self, axis: usize) -> Result<DeviceArray<T>> {
        self.unary_op(Op::Scan { kind: ScanKind::Prod, axis, shape: self.shape_ref().clone() })
    }

    /// Stable ascending sort along `axis`, numpy's order: NaN last, `-0.0` and `+0.0`
    /// equal (input order kept).
    pub fn sort(&self, axis: usize) -> Result<DeviceArray<T>> {
        self.unary_op(Op::Sort { axis, shape: self.shape_ref().clone() })
    }

    /// The indices that sort along `axis` (numpy's `argsort(kind='stable')`).
    pub fn argsort(&self, axis: usize) -> Result<DeviceArray<u32>> {
        self.unary_op(Op::Argsort { axis, shape: self.shape_ref().clone() })
    }

    /// The `k` largest elements along `axis` and their indices, largest first; equal
    /// values by lower index first; NaN counts as the largest; `k` larger than the axis
    /// is an error.
    pub fn topk(&self, k: usize, axis: usize) -> Result<(DeviceArray<T>, DeviceArray<u32>)> {
        let indices: DeviceArray<u32> = self.unary_op(Op::TopK { k, axis, shape: self.shape_ref().clone() })?;
        // The indices come from the op itself, so they are in range: no check needed.
        let op = Op::TakeAlongAxis { axis, shape: self.shape_ref().clone(), indices: indices.shape_ref().clone() };
        let (a, i) = (self.plain_buffer()?, indices.buffer().clone());
        let values = self.run_on(op, &[&a, &i], &[(T::DTYPE, self.shape_ref()), (DType::U32, indices.shape_ref())])?;
        Ok((values, indices))
    }

    fn axis_len(&self, axis: usize, op: &'static str) -> Result<usize> {
        self.shape().get(axis).copied().ok_or(Error::AxisOutOfRange { op, axis, ndim: self.ndim() })
    }
}

/// Checks that every index is in `-n..n` (`0..n` for `u32`) with two reductions on the
/// device and two downloaded scalars; an empty index array is always valid.
fn check_indices<I: IndexElement>(indices: &DeviceArray<I>, n: usize, op: &'static str) -> Result<()> {
    if indices.is_empty() {
        return Ok(());
    }
    let as_i64 = |a: DeviceArray<I>| -> Result<i64> { Ok(a.to_scalar()?.to_scalar().to_f64() as i64) };
    let max = as_i64(indices.max(None)?)?;
    if max >= n as i64 {
        return Err(Error::IndexOutOfRange { op, argument: "indices", index: max, len: n });
    }
    if I::DTYPE == DType::I32 {
        let min = as_i64(indices.min(None)?)?;
        if min < -(n as i64) {
            return Err(Error::IndexOutOfRange { op, argument: "indices", index: min, len: n });
        }
    }
    Ok(())
}
