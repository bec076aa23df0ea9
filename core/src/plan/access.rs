//! How a map kernel reads one input: the one classification every backend uses.

use crate::shape::Shape;

/// How one input of a map is read for output element `i`. Ordered from cheapest to
/// dearest; the class depends only on element counts, so it is a valid cache key.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// Same element count as the output, so the same flat order (broadcasting only added
    /// size-1 axes): output element `i` reads input element `i`.
    Same,
    /// One element, read by every output element.
    Scalar,
    /// A real broadcast: the offset comes from the output coordinates and the input's
    /// strides (0 along broadcast axes), see [`crate::plan::MapLayout`].
    Strided,
}

impl Access {
    /// How an input of shape `input` is read for an output of shape `output`, to which it
    /// broadcasts. An input that is both (one element, output of one element) is `Same`;
    /// so is an empty input of an empty output.
    ///
    /// ```
    /// use polycompute_core::plan::Access;
    /// use polycompute_core::Shape;
    /// let s = |d: &[usize]| Shape::new(d).unwrap();
    /// assert_eq!(Access::classify(&s(&[1, 3]), &s(&[2, 1, 3])), Access::Strided);
    /// assert_eq!(Access::classify(&s(&[]), &s(&[4])), Access::Scalar);
    /// assert_eq!(Access::classify(&s(&[4]), &s(&[1, 4])), Access::Same);
    /// ```
    pub fn classify(input: &Shape, output: &Shape) -> Access {
        match input.numel() {
            m if m == output.numel() => Access::Same,
            1 => Access::Scalar,
            _ => Access::Strided,
        }
    }
}
