//! [`Axis`]: a row-major array seen around one axis, the geometry of the data-movement,
//! scan and sort ops (every one works along one axis).

use polycompute_core::Shape;

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
