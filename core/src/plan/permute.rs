//! Simplifying an axis permutation to the smallest transpose that moves the same data.

use crate::shape::Shape;

/// A transpose of an array of dims `dims` (input order): output axis `i` is input axis
/// `perm[i]`. As returned by [`simplify_permutation`], no dimension is 1 and no two
/// output neighbours are input neighbours in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Permutation {
    /// The input's dimensions.
    pub dims: Vec<usize>,
    /// Output axis `i` is input axis `perm[i]`.
    pub perm: Vec<usize>,
}

impl Permutation {
    /// True when the data does not move: the output's flat order is the input's.
    pub fn is_identity(&self) -> bool {
        self.perm.iter().enumerate().all(|(i, &p)| i == p)
    }

    /// The output's dimensions.
    pub fn out_dims(&self) -> Vec<usize> {
        self.perm.iter().map(|&p| self.dims[p]).collect()
    }

    /// For each output axis, the input's stride along it (row-major input): with
    /// [`Permutation::out_dims`], the strided read that produces the output in order.
    pub fn in_strides(&self) -> Vec<usize> {
        let strides = Shape::from(&self.dims[..]).strides();
        self.perm.iter().map(|&p| strides[p]).collect()
    }
}

/// The smallest transpose equivalent to permuting `dims` by `perm` (a valid
/// permutation of `dims.len()` axes): size-1 axes are dropped, and runs of output axes
/// that are consecutive input axes, in order, merge into one. A result of at most one
/// axis, or with the identity permutation, is a plain copy. An empty array gives
/// `[0]`, `[0]`.
///
/// ```
/// use polycompute_core::plan::simplify_permutation;
/// // [2, 3, 4] -> axes (1, 2, 0) is a 2-D transpose of [2, 12].
/// let p = simplify_permutation(&[2, 3, 4], &[1, 2, 0]);
/// assert_eq!((p.dims, p.perm), (vec![2, 12], vec![1, 0]));
/// ```
pub fn simplify_permutation(dims: &[usize], perm: &[usize]) -> Permutation {
    if dims.contains(&0) {
        return Permutation { dims: vec![0], perm: vec![0] };
    }
    // Size-1 axes dropped and the rest renumbered, so that axes on either side of a
    // dropped one count as neighbours.
    let kept: Vec<usize> = (0..dims.len()).filter(|&a| dims[a] != 1).collect();
    let dims: Vec<usize> = kept.iter().map(|&a| dims[a]).collect();
    let renumbered = perm.iter().filter_map(|p| kept.iter().position(|k| k == p));
    // Output order; each run of consecutive input axes is one axis.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for p in renumbered {
        match groups.last_mut() {
            Some(g) if g.last().is_some_and(|&l| l + 1 == p) => g.push(p),
            _ => groups.push(vec![p]),
        }
    }
    // The new input axes are the groups in input order.
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&g| groups[g][0]);
    let new_dims = order.iter().map(|&g| groups[g].iter().map(|&a| dims[a]).product()).collect();
    let mut new_perm = vec![0; groups.len()];
    for (new_axis, &g) in order.iter().enumerate() {
        new_perm[g] = new_axis;
    }
    Permutation { dims: new_dims, perm: new_perm }
}
