//! A map's plan: each input's [`Access`], the coalesced geometry of the strided inputs,
//! and the [`MapSignature`] a compiled kernel depends on.

use std::sync::Arc;

use super::{coalesce, Access};
use crate::expr::Program;
use crate::shape::Shape;

/// How a map over inputs of some shapes broadcast to an output shape is walked.
///
/// The strided inputs are coalesced together (one set of dims shared by all of them),
/// so a kernel decomposes the output index once. Sizes live here, not in the
/// [`MapSignature`]: a GPU kernel takes them as parameters and is reused for any size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MapLayout {
    /// How each input is read, in argument order.
    pub access: Vec<Access>,
    /// The coalesced output dimensions the strided inputs are walked over; empty when no
    /// input is [`Access::Strided`].
    pub dims: Vec<usize>,
    /// For each strided input, in argument order, its strides along `dims`.
    pub strides: Vec<Vec<usize>>,
}

impl MapLayout {
    /// Plans inputs of `input_shapes` broadcast to `output` (as [`crate::Op::Map`]
    /// declares them, already validated).
    ///
    /// ```
    /// use polycompute_core::plan::{Access, MapLayout};
    /// use polycompute_core::Shape;
    /// let s = |d: &[usize]| Shape::new(d).unwrap();
    /// let l = MapLayout::new(&[s(&[4, 5, 3]), s(&[5, 1]), s(&[])], &s(&[4, 5, 3]));
    /// assert_eq!(l.access, vec![Access::Same, Access::Strided, Access::Scalar]);
    /// assert_eq!((l.dims, l.strides), (vec![4, 5, 3], vec![vec![0, 1, 0]]));
    /// ```
    pub fn new(input_shapes: &[Shape], output: &Shape) -> MapLayout {
        let access: Vec<Access> = input_shapes.iter().map(|s| Access::classify(s, output)).collect();
        let strided: Vec<Vec<usize>> = input_shapes
            .iter()
            .zip(&access)
            .filter(|(_, a)| **a == Access::Strided)
            .map(|(s, _)| s.broadcast_strides(output))
            .collect();
        if strided.is_empty() {
            return MapLayout { access, dims: Vec::new(), strides: Vec::new() };
        }
        let c = coalesce(output.dims(), &strided);
        MapLayout { access, dims: c.dims, strides: c.strides }
    }

    /// Number of coalesced dimensions (0 when no input is strided).
    pub fn ndim(&self) -> usize {
        self.dims.len()
    }

    /// The geometry as 32-bit words, as GPU kernels take it: the `ndim` dims, then `ndim`
    /// strides for each strided input in argument order. Every value fits: a validated op
    /// has at most [`crate::op::MAX_ELEMENTS`] elements per array.
    pub fn words(&self) -> Vec<u32> {
        let mut words: Vec<u32> = self.dims.iter().map(|&d| d as u32).collect();
        for s in &self.strides {
            words.extend(s.iter().map(|&x| x as u32));
        }
        words
    }

    /// The signature of the kernel that runs `program` with this layout.
    pub fn signature(&self, program: &Arc<Program>) -> MapSignature {
        MapSignature { program: program.clone(), access: self.access.clone(), ndim: self.ndim() }
    }
}

/// What a compiled map kernel depends on — the program, how each input is read and the
/// number of coalesced dimensions — and nothing else: sizes and strides travel as
/// parameters. Kernel caches key on it, so a repeated map compiles once whatever its
/// shape. (Cast and a transpose that keeps its last axis are maps too: see
/// [`Program::cast`] and [`Program::identity`].)
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MapSignature {
    /// The program.
    pub program: Arc<Program>,
    /// How each input is read.
    pub access: Vec<Access>,
    /// Coalesced dimensions (0 when no input is strided).
    pub ndim: usize,
}

impl MapSignature {
    /// The positions of the strided inputs, in argument order.
    pub fn strided(&self) -> impl Iterator<Item = usize> + '_ {
        self.access.iter().enumerate().filter(|(_, a)| **a == Access::Strided).map(|(k, _)| k)
    }
}
