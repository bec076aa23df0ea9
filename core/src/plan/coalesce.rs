//! Coalescing a strided walk: the fewest dimensions that visit the same offsets in the
//! same order.

/// A walk over output dimensions, in row-major order, reading each input at the offset
/// `Σ index[axis] · strides[input][axis]`, reduced to as few dimensions as possible.
///
/// Invariants: no dimension is 1; when the walk is empty, `dims == [0]` and every stride
/// is 0; when it has one element, `dims` is empty (rank 0, every stride vector empty).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Coalesced {
    /// The coalesced dimensions, outermost first.
    pub dims: Vec<usize>,
    /// For each input, its stride (in elements) along each of `dims`.
    pub strides: Vec<Vec<usize>>,
}

impl Coalesced {
    /// Number of coalesced dimensions.
    pub fn ndim(&self) -> usize {
        self.dims.len()
    }
}

/// Coalesces a walk over `dims` (outermost first) in which input `k` steps by
/// `strides[k][axis]` elements along `axis` (0 on a broadcast axis). Size-1 axes are
/// dropped, and neighbouring axes merge when every input walks them as one (the outer
/// stride is the inner stride times the inner size). Every `strides[k]` must have
/// `dims.len()` entries.
///
/// A broadcast `[4, 5, 3] + [3]` becomes `[20, 3]`:
/// ```
/// use polycompute_core::plan::coalesce;
/// let c = coalesce(&[4, 5, 3], &[vec![15, 3, 1], vec![0, 0, 1]]);
/// assert_eq!(c.dims, vec![20, 3]);
/// assert_eq!(c.strides, vec![vec![3, 1], vec![0, 1]]);
/// ```
pub fn coalesce(dims: &[usize], strides: &[Vec<usize>]) -> Coalesced {
    if dims.contains(&0) {
        return Coalesced { dims: vec![0], strides: vec![vec![0]; strides.len()] };
    }
    let mut out = Coalesced { dims: Vec::with_capacity(dims.len()), strides: vec![Vec::new(); strides.len()] };
    for (axis, &size) in dims.iter().enumerate() {
        if size == 1 {
            continue;
        }
        let merge = !out.dims.is_empty()
            && strides.iter().zip(&out.strides).all(|(s, o)| o.last().is_some_and(|&outer| outer == s[axis] * size));
        match out.dims.last_mut() {
            Some(last) if merge => {
                *last *= size;
                for (s, o) in strides.iter().zip(out.strides.iter_mut()) {
                    if let Some(outer) = o.last_mut() {
                        *outer = s[axis];
                    }
                }
            }
            _ => {
                out.dims.push(size);
                for (s, o) in strides.iter().zip(out.strides.iter_mut()) {
                    o.push(s[axis]);
                }
            }
        }
    }
    out
}
