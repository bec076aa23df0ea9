//! The zero-copy views of a [`DeviceArray`]: slicing with ndarray's `s![]`, flips,
//! broadcasts and size-1 axes. Each returns an array that shares the buffer and has a new
//! [`Layout`]; see [`crate::layout`] for the index rules.

use ndarray::SliceInfoElem;

use crate::array::DeviceArray;
use crate::axis::{Axes, Axis};
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::Shape;

impl<T: Element> DeviceArray<T> {
    /// A view of part of the array, described with ndarray's `s![]` macro: per axis a
    /// range with an optional step (`s![.., 1..5;2]`), an index (which drops the axis), or
    /// `NewAxis`. Negative bounds count from the end; bounds past the axis are clamped
    /// as numpy clamps them; `s![a..b;-k]` is numpy's `x[a:b][::-k]` (the range, walked
    /// from its end), as ndarray defines it. A step of 0, an index out of range or more
    /// axes than the array has are typed errors.
    ///
    /// ```
    /// use polycompute_core::Device;
    /// use ndarray::s;
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(polycompute_core::BackendKind::Cpu, 0) else { return Ok(()) };
    /// let a = dev.from_slice(&[0i32, 1, 2, 3, 4, 5, 6, 7], &[2, 4])?;
    /// assert_eq!(a.slice(s![.., 1..4;2])?.to_vec()?, vec![1, 3, 5, 7]);
    /// assert_eq!(a.slice(s![1, ..;-1])?.to_vec()?, vec![7, 6, 5, 4]);
    /// # Ok(()) }
    /// ```
    pub fn slice<I: AsRef<[SliceInfoElem]>>(&self, info: I) -> Result<Self> {
        Ok(self.view(self.layout().slice(info.as_ref())?))
    }

    /// The elements of `axis` in reverse order (a view; negative counts from the end).
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(x.flip(-1)?.to_vec()?, vec![2, 1, 4, 3]);
    /// # Ok(()) }
    /// ```
    pub fn flip(&self, axis: impl Into<Axis>) -> Result<Self> {
        let axis = axis.into().resolve(self.ndim(), "flip")?;
        Ok(self.view(self.layout().flip(axis)?))
    }

    /// The array broadcast (numpy rules) to `shape`: a view that repeats elements
    /// (stride 0), read in place by maps and copied once by other ops.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Self> {
        Ok(self.view(self.layout().broadcast_to(&Shape::new(shape)?)?))
    }

    /// A size-1 axis inserted at position `axis` of the result (`0..=ndim`; negative counts
    /// from the end of the result's axes, as numpy's: `-1` appends one).
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1, 2, 3], &[3])?;
    /// assert_eq!(x.expand_dims(-1)?.shape(), &[3, 1]);
    /// assert_eq!(x.expand_dims(0)?.shape(), &[1, 3]);
    /// # Ok(()) }
    /// ```
    pub fn expand_dims(&self, axis: impl Into<Axis>) -> Result<Self> {
        let axis = axis.into().resolve_insert(self.ndim(), "expand_dims")?;
        Ok(self.view(self.layout().expand_dims(axis)?))
    }

    /// Removes the given size-1 axes (one, several, negative ones counted from the end), or
    /// every size-1 axis for `None`; an axis of another size is an error.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1, 2, 3], &[1, 3, 1])?;
    /// assert_eq!(x.squeeze(None)?.shape(), &[3]);
    /// assert_eq!(x.squeeze(-1)?.shape(), &[1, 3]);
    /// assert_eq!(x.squeeze([0, 2])?.shape(), &[3]);
    /// # Ok(()) }
    /// ```
    pub fn squeeze(&self, axes: impl Into<Axes>) -> Result<Self> {
        let axes = axes.into();
        if axes.is_keepdims() {
            return Err(Error::InvalidArgument {
                op: "squeeze",
                argument: "axis",
                why: "keepdims would keep the axes squeeze removes; pass the axes alone".into(),
            });
        }
        if axes.is_all() {
            return Ok(self.view(self.layout().squeeze(None)?));
        }
        // From the last axis down, so the positions still to remove stay where they were.
        let mut layout = self.layout().clone();
        for &a in axes.resolve(self.ndim(), "squeeze")?.iter().rev() {
            layout = layout.squeeze(Some(a))?;
        }
        Ok(self.view(layout))
    }
}

/// True when `layout` is a matrix (or a batch of matrices) whose last two axes, swapped,
/// are the whole of a buffer of `len` elements in row-major order: the transposed view a
/// GEMM reads in place ([`crate::MatmulTranspose`]).
pub(crate) fn is_transposed_matrix(layout: &Layout, len: usize) -> bool {
    let n = layout.shape.ndim();
    if n < 2 {
        return false;
    }
    let mut perm: Vec<usize> = (0..n).collect();
    perm.swap(n - 2, n - 1);
    layout.permute(&perm).is_ok_and(|swapped| swapped.is_plain(len))
}

/// When `layout` is a permutation of the whole of a buffer of `len` elements in
/// row-major order: the buffer's shape and the permutation (output axis `i` is buffer
/// axis `perm[i]`), so an [`crate::Op::Transpose`] makes it contiguous.
pub(crate) fn as_permutation(layout: &Layout, len: usize) -> Option<(Shape, Vec<usize>)> {
    if layout.offset != 0 || layout.numel() != len || layout.strides.iter().any(|&s| s < 0) {
        return None;
    }
    let n = layout.shape.ndim();
    // Buffer axes, outermost (largest stride) first.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&a| std::cmp::Reverse(layout.strides[a]));
    let base = layout.permute(&order).ok()?;
    if !base.is_contiguous() {
        return None;
    }
    let mut perm = vec![0; n];
    for (buffer_axis, &out_axis) in order.iter().enumerate() {
        perm[out_axis] = buffer_axis;
    }
    Some((base.shape, perm))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(dims: &[usize]) -> Layout {
        Layout::contiguous(Shape::from(dims))
    }

    #[test]
    fn transposed_matrices_are_the_last_two_axes_of_a_plain_buffer_swapped() {
        // [3, 5] transposed, and [2, 3, 5] with its matrices transposed: read in place.
        assert!(is_transposed_matrix(&plain(&[3, 5]).permute(&[1, 0]).unwrap(), 15));
        assert!(is_transposed_matrix(&plain(&[2, 3, 5]).permute(&[0, 2, 1]).unwrap(), 30));
        // Not transposed matrices: the batch axis moved, a slice, a flip, a plain array
        // of a larger buffer, a vector.
        assert!(!is_transposed_matrix(&plain(&[2, 3, 5]).permute(&[2, 1, 0]).unwrap(), 30));
        assert!(!is_transposed_matrix(&plain(&[2, 3, 5]).permute(&[1, 0, 2]).unwrap(), 30));
        let sliced = Layout { shape: Shape::from(&[3, 2][..]), strides: vec![1, 3], offset: 0 };
        assert!(!is_transposed_matrix(&sliced, 15));
        assert!(!is_transposed_matrix(&plain(&[3, 5]).permute(&[1, 0]).unwrap().flip(0).unwrap(), 15));
        assert!(!is_transposed_matrix(&plain(&[3, 5]).permute(&[1, 0]).unwrap(), 16));
        assert!(!is_transposed_matrix(&plain(&[5]), 5));
    }
}
