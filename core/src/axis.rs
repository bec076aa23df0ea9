//! Axis arguments that read like numpy's: [`Axis`], one axis where a negative number counts
//! from the end (`-1` is the last axis), and [`Axes`], the axes a reduction reduces (all of
//! them, one, or several) with numpy's `keepdims` flag.
//!
//! Every axis parameter of the array API takes `impl Into<Axis>` (an integer of any of the
//! common types) or, for reductions, `impl Into<Axes>`: `None` and `Some(k)` (every older
//! call), an integer, an array or slice of integers, or [`keepdims`] of any of these.
//!
//! ```
//! use polycompute_core::{keepdims, Axes, Axis};
//! # fn main() -> polycompute_core::Result<()> {
//! assert_eq!(Axis::from(-1).resolve(3, "sum")?, 2);
//! assert_eq!(Axes::from([0, -1]).resolve(3, "sum")?, vec![0, 2]);
//! assert!(keepdims(-1).is_keepdims());
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};

/// One axis of an array: `0..ndim` from the front, `-ndim..0` from the end (`-1` is the last
/// axis), as numpy counts them. Made from `i32` (what an integer literal is), `isize` or
/// `usize`.
///
/// ```
/// use polycompute_core::Axis;
/// # fn main() -> polycompute_core::Result<()> {
/// assert_eq!(Axis::from(-1).resolve(2, "flip")?, 1);
/// assert_eq!(Axis::from(1usize).resolve(2, "flip")?, 1);
/// assert!(Axis::from(-3).resolve(2, "flip").is_err());
/// // stack and expand_dims insert an axis: -1 is the new last position.
/// assert_eq!(Axis::from(-1).resolve_insert(2, "stack")?, 2);
/// # Ok(()) }
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Axis(pub isize);

impl Axis {
    /// The axis as an index into `0..ndim`, or [`Error::AxisOutOfRange`] (naming `op`, the
    /// axis as given and `ndim`) when it is outside `-ndim..ndim`.
    pub fn resolve(self, ndim: usize, op: &'static str) -> Result<usize> {
        resolve_in(self.0, ndim, op)
    }

    /// The position of an axis to insert (stack, expand_dims) in the result's `ndim + 1`
    /// axes: `0..=ndim`, or `-(ndim + 1)..0` from the end (numpy resolves these against
    /// `ndim + 1`); [`Error::AxisOutOfRange`] otherwise, with the result's rank.
    pub fn resolve_insert(self, ndim: usize, op: &'static str) -> Result<usize> {
        resolve_in(self.0, ndim + 1, op)
    }
}

/// `axis` as an index into `0..ndim` (negative: counted from the end).
fn resolve_in(axis: isize, ndim: usize, op: &'static str) -> Result<usize> {
    // i128 holds every isize and usize, so neither the sum nor the comparison can wrap.
    let resolved = if axis < 0 { ndim as i128 + axis as i128 } else { axis as i128 };
    if (0..ndim as i128).contains(&resolved) {
        Ok(resolved as usize)
    } else {
        Err(Error::AxisOutOfRange { op, axis, ndim })
    }
}

impl From<i32> for Axis {
    fn from(axis: i32) -> Axis {
        Axis(axis as isize)
    }
}

impl From<isize> for Axis {
    fn from(axis: isize) -> Axis {
        Axis(axis)
    }
}

impl From<usize> for Axis {
    /// An axis past `isize::MAX` (no array has one) saturates, so it is still out of range.
    fn from(axis: usize) -> Axis {
        Axis(isize::try_from(axis).unwrap_or(isize::MAX))
    }
}

/// Which axes a reduction reduces: all of them (`None`, [`Axes::all`]), one, or several
/// (an array, slice or `Vec` of axes; an empty one, or [`Axes::none`], reduces none and
/// returns the input unchanged, as numpy's `axis=()`), and whether the reduced axes stay as size-1 axes
/// ([`Axes::keepdims`], [`keepdims`]). Duplicates, after negative axes are resolved, are an
/// [`Error::DuplicateAxis`].
///
/// ```
/// use polycompute_core::{keepdims, Axes};
/// # fn main() -> polycompute_core::Result<()> {
/// assert_eq!(Axes::from(None).resolve(3, "sum")?, vec![0, 1, 2]);
/// assert_eq!(Axes::from(Some(1)).resolve(3, "sum")?, vec![1]);
/// assert_eq!(Axes::from([-1, 0]).resolve(3, "sum")?, vec![0, 2]);
/// assert_eq!(Axes::from([0usize; 0]).resolve(3, "sum")?, Vec::<usize>::new());
/// assert!(Axes::from([1, -2]).resolve(3, "sum").is_err()); // both are axis 1
/// assert!(keepdims([0, 1]).is_keepdims() && !Axes::all().is_keepdims());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Axes {
    /// `None` for every axis.
    axes: Option<Vec<isize>>,
    keepdims: bool,
}

impl Axes {
    /// Every axis (numpy's `axis=None`).
    pub fn all() -> Axes {
        Axes { axes: None, keepdims: false }
    }

    /// No axis (numpy's `axis=()`): a reduction over it returns the elements unchanged. The
    /// same as an empty list, which Rust cannot type as a bare `[]`.
    ///
    /// ```
    /// use polycompute_core::Axes;
    /// # fn main() -> polycompute_core::Result<()> {
    /// assert_eq!(Axes::none().resolve(2, "sum")?, Vec::<usize>::new());
    /// assert!(!Axes::none().is_all());
    /// # Ok(()) }
    /// ```
    pub fn none() -> Axes {
        Axes { axes: Some(Vec::new()), keepdims: false }
    }

    /// The same axes, keeping each reduced axis as a size-1 axis (numpy's `keepdims=True`),
    /// so the result broadcasts against the input.
    pub fn keepdims(self) -> Axes {
        Axes { keepdims: true, ..self }
    }

    /// True when the reduced axes are kept as size-1 axes.
    pub fn is_keepdims(&self) -> bool {
        self.keepdims
    }

    /// True for every axis (`None`), as opposed to a list that happens to name all of them.
    pub fn is_all(&self) -> bool {
        self.axes.is_none()
    }

    /// The axes as given (`None` for every axis).
    pub fn as_given(&self) -> Option<&[isize]> {
        self.axes.as_deref()
    }

    /// The reduced axes of an array of `ndim` dimensions, ascending: `0..ndim` for every
    /// axis; [`Error::AxisOutOfRange`] for an axis outside `-ndim..ndim`,
    /// [`Error::DuplicateAxis`] for an axis named twice.
    pub fn resolve(&self, ndim: usize, op: &'static str) -> Result<Vec<usize>> {
        let Some(given) = &self.axes else {
            return Ok((0..ndim).collect());
        };
        let mut seen = vec![false; ndim];
        let mut out = Vec::with_capacity(given.len());
        for &a in given {
            let r = Axis(a).resolve(ndim, op)?;
            if std::mem::replace(&mut seen[r], true) {
                return Err(Error::DuplicateAxis { op, axis: a, ndim });
            }
            out.push(r);
        }
        out.sort_unstable();
        Ok(out)
    }

    fn list(axes: impl IntoIterator<Item = Axis>) -> Axes {
        Axes { axes: Some(axes.into_iter().map(|a| a.0).collect()), keepdims: false }
    }
}

/// `axes` (anything an [`Axes`] is made from) with `keepdims` set: `x.max(keepdims(-1))?`
/// keeps the reduced axis as a size-1 axis, so the result broadcasts against `x`.
///
/// ```
/// use polycompute_core::{keepdims, BackendKind, Device};
/// # fn main() -> polycompute_core::Result<()> {
/// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
/// let x = dev.from_slice(&[1.0f32, 5.0, 2.0, 3.0, 0.0, 4.0], &[2, 3])?;
/// let m = x.max(keepdims(-1))?;
/// assert_eq!((m.shape(), m.to_vec()?), (&[2, 1][..], vec![5.0, 4.0]));
/// # Ok(()) }
/// ```
pub fn keepdims(axes: impl Into<Axes>) -> Axes {
    axes.into().keepdims()
}

impl From<Option<usize>> for Axes {
    fn from(axis: Option<usize>) -> Axes {
        match axis {
            None => Axes::all(),
            Some(a) => Axes::list([Axis::from(a)]),
        }
    }
}

impl From<Axis> for Axes {
    fn from(axis: Axis) -> Axes {
        Axes::list([axis])
    }
}

macro_rules! axes_from_ints {
    ($($t:ty),*) => {
        $(
            impl From<$t> for Axes {
                fn from(axis: $t) -> Axes {
                    Axes::list([Axis::from(axis)])
                }
            }
            impl<const N: usize> From<[$t; N]> for Axes {
                fn from(axes: [$t; N]) -> Axes {
                    Axes::list(axes.map(Axis::from))
                }
            }
            impl From<&[$t]> for Axes {
                fn from(axes: &[$t]) -> Axes {
                    Axes::list(axes.iter().map(|&a| Axis::from(a)))
                }
            }
            impl<const N: usize> From<&[$t; N]> for Axes {
                fn from(axes: &[$t; N]) -> Axes {
                    Axes::list(axes.iter().map(|&a| Axis::from(a)))
                }
            }
            impl From<Vec<$t>> for Axes {
                fn from(axes: Vec<$t>) -> Axes {
                    Axes::list(axes.into_iter().map(Axis::from))
                }
            }
            impl From<&Vec<$t>> for Axes {
                fn from(axes: &Vec<$t>) -> Axes {
                    Axes::list(axes.iter().map(|&a| Axis::from(a)))
                }
            }
        )*
    };
}

axes_from_ints!(i32, isize, usize);

#[cfg(test)]
mod tests {
    use super::*;

    fn out_of_range(r: Result<impl std::fmt::Debug>) -> (isize, usize) {
        match r {
            Err(Error::AxisOutOfRange { axis, ndim, .. }) => (axis, ndim),
            other => panic!("expected AxisOutOfRange, got {other:?}"),
        }
    }

    #[test]
    fn negative_axes_count_from_the_end() {
        assert_eq!(Axis::from(-1).resolve(3, "t").unwrap(), 2);
        assert_eq!(Axis::from(-3).resolve(3, "t").unwrap(), 0);
        assert_eq!(Axis::from(2usize).resolve(3, "t").unwrap(), 2);
        assert_eq!(Axis::from(0isize).resolve(1, "t").unwrap(), 0);
    }

    #[test]
    fn out_of_range_both_ways_names_the_axis_and_rank() {
        assert_eq!(out_of_range(Axis::from(3).resolve(3, "t")), (3, 3));
        assert_eq!(out_of_range(Axis::from(-4).resolve(3, "t")), (-4, 3));
        assert_eq!(out_of_range(Axis::from(0).resolve(0, "t")), (0, 0));
        assert_eq!(out_of_range(Axis::from(-1).resolve(0, "t")), (-1, 0));
        assert_eq!(out_of_range(Axis::from(usize::MAX).resolve(3, "t")), (isize::MAX, 3));
        assert_eq!(out_of_range(Axis::from(isize::MIN).resolve(3, "t")), (isize::MIN, 3));
        let e = Axis::from(-4).resolve(3, "flip").unwrap_err().to_string();
        assert!(e.contains("flip") && e.contains("-4") && e.contains("-3..3"), "{e}");
    }

    #[test]
    fn inserted_axes_resolve_against_one_more_dimension() {
        assert_eq!(Axis::from(-1).resolve_insert(2, "t").unwrap(), 2);
        assert_eq!(Axis::from(2).resolve_insert(2, "t").unwrap(), 2);
        assert_eq!(Axis::from(-3).resolve_insert(2, "t").unwrap(), 0);
        assert_eq!(out_of_range(Axis::from(3).resolve_insert(2, "t")), (3, 3));
        assert_eq!(out_of_range(Axis::from(-4).resolve_insert(2, "t")), (-4, 3));
        assert_eq!(Axis::from(0).resolve_insert(0, "t").unwrap(), 0);
    }

    #[test]
    fn axes_resolve_sorted_and_reject_duplicates() {
        assert_eq!(Axes::all().resolve(3, "t").unwrap(), vec![0, 1, 2]);
        assert_eq!(Axes::from(None).resolve(0, "t").unwrap(), Vec::<usize>::new());
        assert_eq!(Axes::from(Some(2)).resolve(3, "t").unwrap(), vec![2]);
        assert_eq!(Axes::from([-1, 0]).resolve(3, "t").unwrap(), vec![0, 2]);
        assert_eq!(Axes::from(vec![2usize, 1]).resolve(3, "t").unwrap(), vec![1, 2]);
        assert_eq!(Axes::from(&[-2isize][..]).resolve(3, "t").unwrap(), vec![1]);
        assert!(matches!(Axes::from([1, -2]).resolve(3, "t"), Err(Error::DuplicateAxis { axis: -2, ndim: 3, .. })));
        assert!(matches!(Axes::from([0usize, 0]).resolve(3, "t"), Err(Error::DuplicateAxis { axis: 0, .. })));
        assert_eq!(out_of_range(Axes::from([0, 5]).resolve(3, "t")), (5, 3));
        assert_eq!(out_of_range(Axes::from(-4).resolve(3, "t")), (-4, 3));
    }

    #[test]
    fn an_empty_list_reduces_no_axis() {
        let none = Axes::from(Vec::<usize>::new());
        assert_eq!(none.resolve(3, "t").unwrap(), Vec::<usize>::new());
        assert!(!none.is_all());
        assert!(Axes::from(None).is_all());
    }

    #[test]
    fn keepdims_keeps_the_axes() {
        let k = keepdims([0, 2]);
        assert!(k.is_keepdims());
        assert_eq!(k.resolve(3, "t").unwrap(), vec![0, 2]);
        assert_eq!(keepdims(None), Axes::all().keepdims());
        assert_eq!(keepdims(Axis(-1)).as_given(), Some(&[-1isize][..]));
        assert!(!Axes::from(1).is_keepdims());
    }
}
