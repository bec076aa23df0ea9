//! Reductions of a [`DeviceArray`]: of all elements or along an axis.

use crate::array::DeviceArray;
use crate::dtype::Element;
use crate::error::Result;
use crate::op::{Op, ReduceKind};

impl<T: Element> DeviceArray<T> {
    fn reduce<U: Element>(&self, kind: ReduceKind, axis: Option<usize>) -> Result<DeviceArray<U>> {
        self.unary_op(Op::Reduce { kind, axis, shape: self.layout.shape.clone() })
    }

    /// Sum of all elements (`None`, a 0-d array) or along `axis`. Floats sum pairwise;
    /// integers wrap. The sum of no elements is 0.
    pub fn sum(&self, axis: Option<usize>) -> Result<DeviceArray<T>> {
        self.reduce(ReduceKind::Sum, axis)
    }

    /// Product of all elements or along `axis`; of no elements, 1.
    pub fn prod(&self, axis: Option<usize>) -> Result<DeviceArray<T>> {
        self.reduce(ReduceKind::Prod, axis)
    }

    /// Minimum (NaN-propagating); an error on an empty array.
    pub fn min(&self, axis: Option<usize>) -> Result<DeviceArray<T>> {
        self.reduce(ReduceKind::Min, axis)
    }

    /// Maximum (NaN-propagating); an error on an empty array.
    pub fn max(&self, axis: Option<usize>) -> Result<DeviceArray<T>> {
        self.reduce(ReduceKind::Max, axis)
    }

    /// Mean; f64 for integer arrays. The mean of no elements is NaN.
    pub fn mean(&self, axis: Option<usize>) -> Result<DeviceArray<T::Mean>> {
        self.reduce(ReduceKind::Mean, axis)
    }

    /// Index of the first minimum (of all elements, row-major, or along `axis`).
    pub fn argmin(&self, axis: Option<usize>) -> Result<DeviceArray<u32>> {
        self.reduce(ReduceKind::ArgMin, axis)
    }

    /// Index of the first maximum.
    pub fn argmax(&self, axis: Option<usize>) -> Result<DeviceArray<u32>> {
        self.reduce(ReduceKind::ArgMax, axis)
    }
}
