//! Data movement, scans and sorting on a [`DeviceArray`]: concat/stack, take,
//! take_along_axis, scatter_add, pad, cumsum/cumprod, sort/argsort and topk. Each builds
//! one [`Op`] over plain inputs (a view is copied once first, see
//! [`DeviceArray::contiguous`]). The semantics are numpy's, written out on each op in
//! [`crate::op::Op`].
//!
//! Index arrays (`u32`, `i32` or `i64`; negative indices count from the end) are checked before
//! the op is queued: the array layer computes the index array's minimum and maximum with
//! the ordinary reductions on its device and downloads those two scalars, so an index
//! out of range is an [`Error::IndexOutOfRange`] returned by the call itself, on every
//! backend, and no kernel ever sees one.

use crate::array::{same_device, DeviceArray};
use crate::axis::Axis;
use crate::backend::BufferRef;
use crate::dtype::{DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::op::{Op, ScanKind};
use crate::shape::Shape;

/// The element types an index array may have: `u32`, `i32` and `i64` (negative counts
/// from the end of the axis).
pub trait IndexElement: Element + sealed::Sealed {}
impl IndexElement for u32 {}
impl IndexElement for i32 {}
impl IndexElement for i64 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
}

impl<T: Element> DeviceArray<T> {
    /// Joins `arrays` along `axis` (numpy's `concatenate`; negative counts from the end):
    /// same dtype and device, equal dimensions except along `axis`.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device, DeviceArray};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let (a, b) = (dev.from_slice(&[1, 2], &[2, 1])?, dev.from_slice(&[3, 4], &[2, 1])?);
    /// assert_eq!(DeviceArray::concat(&[&a, &b], -1)?.to_vec()?, vec![1, 3, 2, 4]);
    /// # Ok(()) }
    /// ```
    pub fn concat(arrays: &[&DeviceArray<T>], axis: impl Into<Axis>) -> Result<DeviceArray<T>> {
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
        let axis = axis.into().resolve(first.ndim(), "concat")?;
        let buffers = arrays.iter().map(|a| a.plain_buffer()).collect::<Result<Vec<BufferRef>>>()?;
        let shapes: Vec<Shape> = arrays.iter().map(|a| a.shape_ref().clone()).collect();
        let typed: Vec<(DType, &Shape)> = shapes.iter().map(|s| (T::DTYPE, s)).collect();
        let refs: Vec<&BufferRef> = buffers.iter().collect();
        first.run_on(Op::Concat { axis, shapes: shapes.clone() }, &refs, &typed)
    }

    /// Stacks `arrays` (all of one shape) along a new axis `axis` (numpy's `stack`):
    /// concat of their `expand_dims(axis)`. The new axis is a position in the result, so a
    /// negative one counts from the end of the result's axes (`-1`: a new last axis).
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device, DeviceArray};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let (a, b) = (dev.from_slice(&[1, 2], &[2])?, dev.from_slice(&[3, 4], &[2])?);
    /// let s = DeviceArray::stack(&[&a, &b], -1)?;
    /// assert_eq!((s.shape(), s.to_vec()?), (&[2, 2][..], vec![1, 3, 2, 4]));
    /// # Ok(()) }
    /// ```
    pub fn stack(arrays: &[&DeviceArray<T>], axis: impl Into<Axis>) -> Result<DeviceArray<T>> {
        let axis = axis.into();
        let Some(first) = arrays.first() else {
            return Err(Error::InvalidArgument {
                op: "stack",
                argument: "arrays",
                why: "no arrays given; pass at least one".into(),
            });
        };
        let axis = axis.resolve_insert(first.ndim(), "stack")?;
        let expanded = arrays.iter().map(|a| a.expand_dims(axis)).collect::<Result<Vec<_>>>()?;
        let refs: Vec<&DeviceArray<T>> = expanded.iter().collect();
        DeviceArray::concat(&refs, axis)
    }

    /// numpy's `take(a, indices, axis)`: the elements at `indices` along `axis` (negative
    /// counts from the end); output shape `shape[..axis] ++ indices.shape ++ shape[axis + 1..]`.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1, 2, 3, 4, 5, 6], &[2, 3])?;
    /// let i = dev.from_slice(&[2u32, 0], &[2])?;
    /// assert_eq!(x.take(&i, -1)?.to_vec()?, vec![3, 1, 6, 4]);
    /// # Ok(()) }
    /// ```
    pub fn take<I: IndexElement>(&self, indices: &DeviceArray<I>, axis: impl Into<Axis>) -> Result<DeviceArray<T>> {
        same_device(self.device(), indices.device())?;
        let (axis, n) = self.axis_len(axis.into(), "take")?;
        check_indices(indices, n, "take")?;
        let op = Op::Take { axis, shape: self.shape_ref().clone(), indices: indices.shape_ref().clone() };
        let (a, i) = (self.plain_buffer()?, indices.plain_buffer()?);
        self.run_on(op, &[&a, &i], &[(T::DTYPE, self.shape_ref()), (I::DTYPE, indices.shape_ref())])
    }

    /// [`DeviceArray::take`] of a 1-D index array (PyTorch's `index_select`).
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1, 2, 3, 4], &[2, 2])?;
    /// let i = dev.from_slice(&[-1i32], &[1])?;
    /// assert_eq!(x.index_select(-2, &i)?.to_vec()?, vec![3, 4]);
    /// # Ok(()) }
    /// ```
    pub fn index_select<I: IndexElement>(
        &self,
        axis: impl Into<Axis>,
        indices: &DeviceArray<I>,
    ) -> Result<DeviceArray<T>> {
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
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1.0f32, 9.0, 8.0, 2.0], &[2, 2])?;
    /// let i = x.argmax(polycompute_core::keepdims(-1))?;
    /// assert_eq!(x.take_along_axis(&i, -1)?.to_vec()?, vec![9.0, 8.0]);
    /// # Ok(()) }
    /// ```
    pub fn take_along_axis<I: IndexElement>(
        &self,
        indices: &DeviceArray<I>,
        axis: impl Into<Axis>,
    ) -> Result<DeviceArray<T>> {
        same_device(self.device(), indices.device())?;
        let (axis, n) = self.axis_len(axis.into(), "take_along_axis")?;
        check_indices(indices, n, "take_along_axis")?;
        let op = Op::TakeAlongAxis { axis, shape: self.shape_ref().clone(), indices: indices.shape_ref().clone() };
        let (a, i) = (self.plain_buffer()?, indices.plain_buffer()?);
        self.run_on(op, &[&a, &i], &[(T::DTYPE, self.shape_ref()), (I::DTYPE, indices.shape_ref())])
    }

    /// numpy's `np.add.at(a, (slice(None),) * axis + (indices,), values)`, on a copy:
    /// `values` has the shape `take(indices, axis)` would have; repeated indices add up.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[0, 0, 0], &[3])?;
    /// let (i, v) = (dev.from_slice(&[2u32, 2, 0], &[3])?, dev.from_slice(&[1, 2, 3], &[3])?);
    /// assert_eq!(x.scatter_add(&i, &v, -1)?.to_vec()?, vec![3, 0, 3]);
    /// # Ok(()) }
    /// ```
    pub fn scatter_add<I: IndexElement>(
        &self,
        indices: &DeviceArray<I>,
        values: &DeviceArray<T>,
        axis: impl Into<Axis>,
    ) -> Result<DeviceArray<T>> {
        same_device(self.device(), indices.device())?;
        same_device(self.device(), values.device())?;
        let (axis, n) = self.axis_len(axis.into(), "scatter_add")?;
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

    /// Running sum along `axis` (numpy's `cumsum`; negative counts from the end); integers
    /// wrap.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(x.cumsum(-1)?.to_vec()?, vec![1, 3, 3, 7]);
    /// # Ok(()) }
    /// ```
    pub fn cumsum(&self, axis: impl Into<Axis>) -> Result<DeviceArray<T>> {
        let axis = axis.into().resolve(self.ndim(), "cumsum")?;
        self.unary_op(Op::Scan { kind: ScanKind::Sum, axis, shape: self.shape_ref().clone() })
    }

    /// Running product along `axis` (numpy's `cumprod`); integers wrap.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(x.cumprod(-2)?.to_vec()?, vec![1, 2, 3, 8]);
    /// # Ok(()) }
    /// ```
    pub fn cumprod(&self, axis: impl Into<Axis>) -> Result<DeviceArray<T>> {
        let axis = axis.into().resolve(self.ndim(), "cumprod")?;
        self.unary_op(Op::Scan { kind: ScanKind::Prod, axis, shape: self.shape_ref().clone() })
    }

    /// Stable ascending sort along `axis`, numpy's order: NaN last, `-0.0` and `+0.0`
    /// equal (input order kept).
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[3.0f32, f32::NAN, 1.0], &[3])?;
    /// assert_eq!(x.sort(-1)?.to_vec()?[..2], [1.0, 3.0]);
    /// # Ok(()) }
    /// ```
    pub fn sort(&self, axis: impl Into<Axis>) -> Result<DeviceArray<T>> {
        let axis = axis.into().resolve(self.ndim(), "sort")?;
        self.unary_op(Op::Sort { axis, shape: self.shape_ref().clone() })
    }

    /// The indices that sort along `axis` (numpy's `argsort(kind='stable')`).
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[3, 1, 2], &[3])?;
    /// assert_eq!(x.argsort(-1)?.to_vec()?, vec![1, 2, 0]);
    /// # Ok(()) }
    /// ```
    pub fn argsort(&self, axis: impl Into<Axis>) -> Result<DeviceArray<u32>> {
        let axis = axis.into().resolve(self.ndim(), "argsort")?;
        self.unary_op(Op::Argsort { axis, shape: self.shape_ref().clone() })
    }

    /// The `k` largest elements along `axis` and their indices, largest first; equal
    /// values by lower index first; NaN counts as the largest; `k` larger than the axis
    /// is an error.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[3, 1, 4, 1, 5], &[5])?;
    /// let (values, indices) = x.topk(2, -1)?;
    /// assert_eq!((values.to_vec()?, indices.to_vec()?), (vec![5, 4], vec![4, 2]));
    /// # Ok(()) }
    /// ```
    pub fn topk(&self, k: usize, axis: impl Into<Axis>) -> Result<(DeviceArray<T>, DeviceArray<u32>)> {
        let axis = axis.into().resolve(self.ndim(), "topk")?;
        let indices: DeviceArray<u32> = self.unary_op(Op::TopK { k, axis, shape: self.shape_ref().clone() })?;
        // The indices come from the op itself, so they are in range: no check needed.
        let op = Op::TakeAlongAxis { axis, shape: self.shape_ref().clone(), indices: indices.shape_ref().clone() };
        let (a, i) = (self.plain_buffer()?, indices.buffer()?.clone());
        let values = self.run_on(op, &[&a, &i], &[(T::DTYPE, self.shape_ref()), (DType::U32, indices.shape_ref())])?;
        Ok((values, indices))
    }

    /// The resolved `axis` and its length.
    fn axis_len(&self, axis: Axis, op: &'static str) -> Result<(usize, usize)> {
        let axis = axis.resolve(self.ndim(), op)?;
        Ok((axis, self.shape()[axis]))
    }
}

/// Checks that every index is in `-n..n` (`0..n` for `u32`) with two reductions on the
/// device and two downloaded scalars; an empty index array is always valid.
fn check_indices<I: IndexElement>(indices: &DeviceArray<I>, n: usize, op: &'static str) -> Result<()> {
    if indices.is_empty() {
        return Ok(());
    }
    // Exact for every index dtype (through f64 an i64 past 2^53 would round).
    let as_i64 = |a: DeviceArray<I>| -> Result<i64> {
        Ok(match a.to_scalar()?.to_scalar() {
            Scalar::I64(v) => v,
            Scalar::I32(v) => v as i64,
            Scalar::U32(v) => v as i64,
            s => s.to_f64() as i64,
        })
    };
    let max = as_i64(indices.max(None)?)?;
    if max >= n as i64 {
        return Err(Error::IndexOutOfRange { op, argument: "indices", index: max, len: n });
    }
    if I::DTYPE.is_signed_int() {
        let min = as_i64(indices.min(None)?)?;
        if min < -(n as i64) {
            return Err(Error::IndexOutOfRange { op, argument: "indices", index: min, len: n });
        }
    }
    Ok(())
}
