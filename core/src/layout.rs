//! [`Layout`]: how an array's elements sit in its buffer — shape, signed strides in
//! elements, and the offset of element `[0, 0, ...]` — and the zero-copy view operations
//! (slice, flip, permute, broadcast, expand/squeeze, reshape of contiguous data) that
//! only change the layout.
//!
//! Element `idx` of an array of layout `l` is buffer element
//! `l.offset + Σ idx[axis] · l.strides[axis]`, always within `0..buffer.len()` for a
//! non-empty array (checked by [`Layout::check_within`] before any backend reads it).

use ndarray::SliceInfoElem;

use crate::error::{Error, Result};
use crate::shape::Shape;

/// Shape, strides (in elements, signed: negative after a flip or a negative-step slice,
/// 0 along broadcast axes) and offset of an array in its buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// The logical shape.
    pub shape: Shape,
    /// Buffer elements between neighbours along each axis.
    pub strides: Vec<isize>,
    /// Buffer index of the first element.
    pub offset: usize,
}

impl Layout {
    /// The row-major ("C order") layout of `shape` at offset 0: what every op writes.
    pub fn contiguous(shape: Shape) -> Layout {
        let strides = shape.strides().into_iter().map(|s| s as isize).collect();
        Layout { shape, strides, offset: 0 }
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.numel()
    }

    /// True when the elements are consecutive in row-major order from `offset` (strides
    /// along size-1 axes do not matter; an empty array is contiguous).
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let mut want = 1isize;
        for (&d, &s) in self.shape.dims().iter().zip(&self.strides).rev() {
            if d != 1 {
                if s != want {
                    return false;
                }
                want *= d as isize;
            }
        }
        true
    }

    /// True when the layout is the whole of a buffer of `len` elements in row-major order:
    /// an op can take that buffer as its input as it is.
    pub fn is_plain(&self, len: usize) -> bool {
        self.is_contiguous() && self.numel() == len && (self.offset == 0 || len == 0)
    }

    /// The buffer indices of the lowest and the highest element (`None` when empty).
    pub fn extent(&self) -> Option<(i128, i128)> {
        if self.numel() == 0 {
            return None;
        }
        let (mut lo, mut hi) = (self.offset as i128, self.offset as i128);
        for (&d, &s) in self.shape.dims().iter().zip(&self.strides) {
            let span = (d as i128 - 1) * s as i128;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        Some((lo, hi))
    }

    /// Checks that every element lies inside a buffer of `len` elements and that the
    /// strides match the shape's rank.
    pub fn check_within(&self, len: usize) -> Result<()> {
        if self.strides.len() != self.shape.ndim() {
            return Err(Error::InvalidShape(format!(
                "layout of shape {} has {} strides",
                self.shape,
                self.strides.len()
            )));
        }
        match self.extent() {
            Some((lo, hi)) if lo < 0 || hi >= len as i128 => Err(Error::InvalidShape(format!(
                "view of shape {} (strides {:?}, offset {}) reaches elements {lo}..={hi} of a buffer of {len}",
                self.shape, self.strides, self.offset
            ))),
            _ => Ok(()),
        }
    }

    /// Output axis `i` is axis `perm[i]` (a view; `perm` must be a permutation).
    pub fn permute(&self, perm: &[usize]) -> Result<Layout> {
        let n = self.shape.ndim();
        let mut seen = vec![false; n];
        if perm.len() != n || perm.iter().any(|&p| p >= n || std::mem::replace(&mut seen[p], true)) {
            return Err(Error::InvalidShape(format!(
                "{perm:?} is not a permutation of the {n} axes of {}",
                self.shape
            )));
        }
        let dims: Vec<usize> = perm.iter().map(|&p| self.shape.dims()[p]).collect();
        Ok(Layout {
            shape: Shape::new(&dims)?,
            strides: perm.iter().map(|&p| self.strides[p]).collect(),
            offset: self.offset,
        })
    }

    /// The elements of `axis` in reverse order (a view).
    pub fn flip(&self, axis: usize) -> Result<Layout> {
        let d = self.dim(axis, "flip")?;
        let mut out = self.clone();
        if d > 0 {
            out.offset = (self.offset as isize + (d as isize - 1) * self.strides[axis]) as usize;
        }
        out.strides[axis] = -self.strides[axis];
        Ok(out)
    }

    /// A size-1 axis inserted at `axis` (`0..=ndim`).
    pub fn expand_dims(&self, axis: usize) -> Result<Layout> {
        let n = self.shape.ndim();
        if axis > n {
            return Err(Error::AxisOutOfRange {
                op: "expand_dims",
                axis: crate::axis::Axis::from(axis).0,
                ndim: n + 1,
            });
        }
        let mut dims = self.shape.dims().to_vec();
        dims.insert(axis, 1);
        let mut strides = self.strides.clone();
        strides.insert(axis, 0);
        Ok(Layout { shape: Shape::new(&dims)?, strides, offset: self.offset })
    }

    /// Removes the size-1 `axis`, or every size-1 axis when `axis` is `None`.
    pub fn squeeze(&self, axis: Option<usize>) -> Result<Layout> {
        let dims = self.shape.dims();
        if let Some(a) = axis {
            if self.dim(a, "squeeze")? != 1 {
                return Err(Error::InvalidArgument {
                    op: "squeeze",
                    argument: "axis",
                    why: format!("axis {a} of {} has size {}, not 1", self.shape, dims[a]),
                });
            }
        }
        let keep: Vec<usize> =
            (0..dims.len()).filter(|&i| if let Some(a) = axis { i != a } else { dims[i] != 1 }).collect();
        let new_dims: Vec<usize> = keep.iter().map(|&i| dims[i]).collect();
        Ok(Layout {
            shape: Shape::new(&new_dims)?,
            strides: keep.iter().map(|&i| self.strides[i]).collect(),
            offset: self.offset,
        })
    }

    /// The view broadcast to `shape` (numpy rules; stride 0 along new or stretched axes).
    pub fn broadcast_to(&self, shape: &Shape) -> Result<Layout> {
        let (n, m) = (self.shape.ndim(), shape.ndim());
        let mismatch =
            || Error::ShapeMismatch { op: "broadcast_to", lhs: self.shape.dims().to_vec(), rhs: shape.dims().to_vec() };
        if n > m {
            return Err(mismatch());
        }
        let mut strides = vec![0isize; m];
        for i in 0..n {
            let (d, t) = (self.shape.dims()[i], shape.dims()[m - n + i]);
            strides[m - n + i] = match (d, t) {
                (d, t) if d == t => self.strides[i],
                (1, _) => 0,
                _ => return Err(mismatch()),
            };
        }
        Ok(Layout { shape: shape.clone(), strides, offset: self.offset })
    }

    /// The same elements under `shape` when the layout is contiguous (`None` otherwise:
    /// the caller copies first).
    pub fn reshape_contiguous(&self, shape: &Shape) -> Option<Layout> {
        self.is_contiguous().then(|| Layout { offset: self.offset, ..Layout::contiguous(shape.clone()) })
    }

    /// Applies ndarray's `s![]` slice description: each [`SliceInfoElem::Slice`] keeps
    /// `start..end` of its axis (negative bounds count from the end; bounds beyond the
    /// axis are clamped as numpy clamps them), then every `step`-th element, walking from
    /// the end when `step < 0` — numpy's `x[start:end][::step]`, which is how ndarray
    /// defines `s![start..end;step]`. A step of 0 is an error. [`SliceInfoElem::Index`]
    /// picks one element and drops the axis (out of range is an error, as in numpy);
    /// [`SliceInfoElem::NewAxis`] inserts a size-1 axis. Axes not named are kept whole.
    pub fn slice(&self, elems: &[SliceInfoElem]) -> Result<Layout> {
        let consumed = elems.iter().filter(|e| !matches!(e, SliceInfoElem::NewAxis)).count();
        let ndim = self.shape.ndim();
        if consumed > ndim {
            return Err(Error::InvalidArgument {
                op: "slice",
                argument: "slice",
                why: format!("{consumed} axes sliced but the array {} has {ndim}", self.shape),
            });
        }
        let (mut dims, mut strides) = (Vec::new(), Vec::new());
        let mut offset = self.offset as isize;
        let mut axis = 0;
        for e in elems {
            match *e {
                SliceInfoElem::NewAxis => {
                    dims.push(1);
                    strides.push(0);
                }
                SliceInfoElem::Index(i) => {
                    let d = self.shape.dims()[axis] as isize;
                    let j = if i < 0 { i + d } else { i };
                    if j < 0 || j >= d {
                        return Err(Error::IndexOutOfRange {
                            op: "slice",
                            argument: "slice",
                            index: i as i64,
                            len: d as usize,
                        });
                    }
                    offset += j * self.strides[axis];
                    axis += 1;
                }
                SliceInfoElem::Slice { start, end, step } => {
                    if step == 0 {
                        return Err(Error::InvalidArgument {
                            op: "slice",
                            argument: "step",
                            why: format!("axis {axis} has step 0; use a non-zero step (negative walks backwards)"),
                        });
                    }
                    let d = self.shape.dims()[axis] as isize;
                    let clamp = |b: isize| if b < 0 { (b + d).max(0) } else { b.min(d) };
                    let lo = clamp(start);
                    let hi = clamp(end.unwrap_or(d)).max(lo);
                    let len = (hi - lo + step.abs() - 1) / step.abs();
                    let first = if step > 0 { lo } else { hi - 1 };
                    if len > 0 {
                        offset += first * self.strides[axis];
                    }
                    dims.push(len as usize);
                    strides.push(self.strides[axis] * step);
                    axis += 1;
                }
            }
        }
        dims.extend_from_slice(&self.shape.dims()[axis..]);
        strides.extend_from_slice(&self.strides[axis..]);
        Ok(Layout { shape: Shape::new(&dims)?, strides, offset: offset.max(0) as usize })
    }

    fn dim(&self, axis: usize, op: &'static str) -> Result<usize> {
        self.shape.dims().get(axis).copied().ok_or(Error::AxisOutOfRange {
            op,
            axis: crate::axis::Axis::from(axis).0,
            ndim: self.shape.ndim(),
        })
    }
}

#[cfg(test)]
mod tests {
    use ndarray::{s, ArrayD, IxDyn};

    use super::*;

    /// The elements of `l` read from `buf` in logical row-major order.
    fn read(l: &Layout, buf: &[i32]) -> Vec<i32> {
        let dims = l.shape.dims();
        (0..l.numel())
            .map(|mut i| {
                let mut off = l.offset as isize;
                for ax in (0..dims.len()).rev() {
                    off += (i % dims[ax]) as isize * l.strides[ax];
                    i /= dims[ax];
                }
                buf[off as usize]
            })
            .collect()
    }

    #[test]
    fn slices_match_ndarray() {
        let buf: Vec<i32> = (0..60).collect();
        let arr = ArrayD::from_shape_vec(IxDyn(&[3, 4, 5]), buf.clone()).unwrap();
        let l = Layout::contiguous(Shape::new(&[3, 4, 5]).unwrap());
        let cases = [
            s![.., 1..3, ..;2].as_ref().to_vec(),
            s![..;-1, .., 1].as_ref().to_vec(),
            s![1.., ..;-2, -3..-1].as_ref().to_vec(),
            s![-1, 0..4;3, ..;-3].as_ref().to_vec(),
            s![.., ndarray::NewAxis, 2..2, ..].as_ref().to_vec(),
        ];
        for c in cases {
            let view = l.slice(&c).unwrap();
            let want = arr.slice(ndarray::SliceInfo::<_, IxDyn, IxDyn>::try_from(c.clone()).unwrap());
            assert_eq!(view.shape.dims(), want.shape(), "{c:?}");
            assert_eq!(read(&view, &buf), want.iter().copied().collect::<Vec<_>>(), "{c:?}");
            view.check_within(buf.len()).unwrap();
        }
    }

    #[test]
    fn slice_bounds_clamp_and_zero_step_is_an_error() {
        let l = Layout::contiguous(Shape::new(&[5]).unwrap());
        let buf: Vec<i32> = (0..5).collect();
        assert_eq!(read(&l.slice(s![-100..100;2].as_ref()).unwrap(), &buf), vec![0, 2, 4]);
        assert_eq!(
            read(&l.slice(&[SliceInfoElem::Slice { start: 3, end: Some(1), step: 1 }]).unwrap(), &buf),
            Vec::<i32>::new()
        );
        assert!(matches!(
            l.slice(&[SliceInfoElem::Slice { start: 0, end: None, step: 0 }]),
            Err(Error::InvalidArgument { argument: "step", .. })
        ));
        assert!(matches!(l.slice(s![5].as_ref()), Err(Error::IndexOutOfRange { .. })));
    }

    #[test]
    fn views_compose() {
        let buf: Vec<i32> = (0..6).collect();
        let l = Layout::contiguous(Shape::new(&[2, 3]).unwrap());
        let t = l.permute(&[1, 0]).unwrap();
        assert_eq!(read(&t, &buf), vec![0, 3, 1, 4, 2, 5]);
        assert!(!t.is_contiguous());
        let f = l.flip(1).unwrap();
        assert_eq!(read(&f, &buf), vec![2, 1, 0, 5, 4, 3]);
        let b = Layout::contiguous(Shape::new(&[3]).unwrap()).broadcast_to(&Shape::new(&[2, 3]).unwrap()).unwrap();
        assert_eq!(read(&b, &buf), vec![0, 1, 2, 0, 1, 2]);
        let e = l.expand_dims(1).unwrap();
        assert_eq!(e.shape.dims(), &[2, 1, 3]);
        assert!(e.is_contiguous());
        assert_eq!(e.squeeze(None).unwrap(), l);
        assert!(l.squeeze(Some(0)).is_err());
        assert!(t.reshape_contiguous(&Shape::new(&[6]).unwrap()).is_none());
        assert!(l.flip(2).is_err());
        assert!(l.permute(&[0, 0]).is_err());
    }
}
