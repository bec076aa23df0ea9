//! Shapes and numpy broadcasting.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The dimensions of an array, outermost first (row-major, "C order"). A shape of no
/// dimensions is a scalar of one element.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shape(Vec<usize>);

impl Shape {
    /// A shape from its dimensions. Fails when the element count overflows `usize`.
    ///
    /// ```
    /// use polycompute_core::Shape;
    /// assert_eq!(Shape::new(&[2, 3]).unwrap().numel(), 6);
    /// ```
    pub fn new(dims: &[usize]) -> Result<Shape> {
        dims.iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| Error::InvalidShape(format!("{dims:?} has more elements than fit in usize")))?;
        Ok(Shape(dims.to_vec()))
    }

    /// The zero-dimensional shape of a scalar.
    pub fn scalar() -> Shape {
        Shape(Vec::new())
    }

    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.0.len()
    }

    /// Number of elements (1 for a scalar, 0 when any dimension is 0).
    pub fn numel(&self) -> usize {
        self.0.iter().product()
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<usize> {
        let mut strides = vec![0; self.0.len()];
        let mut acc = 1;
        for (s, &d) in strides.iter_mut().zip(&self.0).rev() {
            *s = acc;
            acc *= d;
        }
        strides
    }

    /// The shape both `self` and `other` broadcast to under numpy's rules.
    ///
    /// ```
    /// use polycompute_core::Shape;
    /// let a = Shape::new(&[4, 1, 3]).unwrap();
    /// let b = Shape::new(&[5, 1]).unwrap();
    /// assert_eq!(a.broadcast(&b, "add").unwrap().dims(), &[4, 5, 3]);
    /// ```
    pub fn broadcast(&self, other: &Shape, op: &'static str) -> Result<Shape> {
        let n = self.ndim().max(other.ndim());
        let mut out = vec![0; n];
        for (i, o) in out.iter_mut().enumerate() {
            let a = dim_from_right(&self.0, n - 1 - i);
            let b = dim_from_right(&other.0, n - 1 - i);
            *o = match (a, b) {
                (a, b) if a == b => a,
                (1, b) => b,
                (a, 1) => a,
                _ => {
                    return Err(Error::ShapeMismatch { op, lhs: self.0.clone(), rhs: other.0.clone() });
                }
            };
        }
        Ok(Shape(out))
    }

    /// Element strides for reading an array of this shape as if it had shape `target`
    /// (which it must broadcast to): broadcast dimensions get stride 0, and the result
    /// has `target.ndim()` entries.
    pub fn broadcast_strides(&self, target: &Shape) -> Vec<usize> {
        let own = self.strides();
        let offset = target.ndim() - self.ndim();
        (0..target.ndim()).map(|i| if i < offset || self.0[i - offset] == 1 { 0 } else { own[i - offset] }).collect()
    }
}

/// Dimension `k` counted from the right (0 = last), 1 past the left end.
fn dim_from_right(dims: &[usize], k: usize) -> usize {
    if k < dims.len() {
        dims[dims.len() - 1 - k]
    } else {
        1
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl From<&[usize]> for Shape {
    fn from(dims: &[usize]) -> Shape {
        Shape(dims.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_follows_numpy() {
        let s = |d: &[usize]| Shape::new(d).unwrap();
        assert_eq!(s(&[3]).broadcast(&s(&[2, 1]), "t").unwrap(), s(&[2, 3]));
        assert_eq!(s(&[]).broadcast(&s(&[4]), "t").unwrap(), s(&[4]));
        assert_eq!(s(&[0]).broadcast(&s(&[1]), "t").unwrap(), s(&[0]));
        assert!(matches!(s(&[3]).broadcast(&s(&[4]), "t"), Err(Error::ShapeMismatch { .. })));
        assert_eq!(s(&[2, 1, 3]).broadcast_strides(&s(&[4, 2, 5, 3])), vec![0, 3, 0, 1]);
    }

    #[test]
    fn overflowing_shape_is_an_error() {
        assert!(matches!(Shape::new(&[usize::MAX, 2]), Err(Error::InvalidShape(_))));
    }
}
