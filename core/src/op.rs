//! The portable op set every backend implements, and the checks that make an [`Op`]
//! valid before any backend sees it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::expr::Program;
use crate::shape::Shape;

/// One operation for [`crate::DeviceBackend::execute`]. Constructed through
/// [`crate::DeviceArray`]'s methods, which validate it, so backends may assume that
/// shapes, dtypes and input counts agree (see [`Op::output`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Fused elementwise program over inputs broadcast (numpy rules) to `shape`.
    Map {
        /// The type-checked program.
        program: Arc<Program>,
        /// Each input's own shape.
        input_shapes: Vec<Shape>,
        /// The output shape (all inputs broadcast together).
        shape: Shape,
    },
    /// A reduction over all elements (`axis: None`, output has shape `[]`) or one axis
    /// (which is removed from the shape).
    Reduce {
        /// What to compute.
        kind: ReduceKind,
        /// `None` for all elements.
        axis: Option<usize>,
        /// The input's shape.
        shape: Shape,
    },
    /// `[m, k] @ [k, n]`, or batched `[b, m, k] @ [b, k, n]`; f32 and f64.
    Matmul {
        /// Shape of the left operand.
        lhs: Shape,
        /// Shape of the right operand.
        rhs: Shape,
    },
    /// A copy into a new buffer.
    Copy,
    /// Axis permutation: output axis `i` is input axis `perm[i]`.
    Transpose {
        /// The input's shape.
        shape: Shape,
        /// The permutation.
        perm: Vec<usize>,
    },
    /// Elementwise conversion (same rules as [`crate::Expr::cast`]).
    Cast {
        /// The target dtype.
        to: DType,
    },
    /// A new buffer of `len` elements of `dtype`, filled as `fill` says.
    Fill {
        /// How to fill it.
        fill: Fill,
        /// Element type.
        dtype: DType,
        /// Element count.
        len: usize,
    },
}

/// The reductions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReduceKind {
    /// Sum (pairwise order for floats; integers wrap). Empty: 0.
    Sum,
    /// Product (integers wrap). Empty: 1.
    Prod,
    /// Minimum, NaN-propagating. Empty: an error.
    Min,
    /// Maximum, NaN-propagating. Empty: an error.
    Max,
    /// Arithmetic mean: `sum / n` in the float dtype ([`crate::Element::Mean`]; integers are
    /// summed exactly in f64). Empty: NaN, as numpy.
    Mean,
    /// Index (`u32`) of the first minimum along the reduced elements; the first NaN wins;
    /// `-0.0` and `+0.0` tie (the first of them wins).
    ArgMin,
    /// Index (`u32`) of the first maximum; the first NaN wins.
    ArgMax,
}

impl ReduceKind {
    /// Every reduction.
    pub const ALL: [ReduceKind; 7] = [
        ReduceKind::Sum,
        ReduceKind::Prod,
        ReduceKind::Min,
        ReduceKind::Max,
        ReduceKind::Mean,
        ReduceKind::ArgMin,
        ReduceKind::ArgMax,
    ];

    /// Lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            ReduceKind::Sum => "sum",
            ReduceKind::Prod => "prod",
            ReduceKind::Min => "min",
            ReduceKind::Max => "max",
            ReduceKind::Mean => "mean",
            ReduceKind::ArgMin => "argmin",
            ReduceKind::ArgMax => "argmax",
        }
    }

    /// The output dtype for an input of `dtype`.
    pub const fn output_dtype(self, dtype: DType) -> DType {
        match self {
            ReduceKind::ArgMin | ReduceKind::ArgMax => DType::U32,
            ReduceKind::Mean if dtype.is_int() => DType::F64,
            _ => dtype,
        }
    }

    /// True for the reductions that have no value on zero elements.
    pub const fn needs_elements(self) -> bool {
        matches!(self, ReduceKind::Min | ReduceKind::Max | ReduceKind::ArgMin | ReduceKind::ArgMax)
    }
}

/// How [`Op::Fill`] fills a buffer. The random fills are counter-based: element `i` is a
/// pure function of `(seed, i)`; see [`crate::philox`] for the exact recipe.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Fill {
    /// Every element equal to the scalar (which must have the buffer's dtype).
    Constant(Scalar),
    /// Uniform in `[0, 1)` (floats) or uniform raw bits (`u32`, `i32`).
    Uniform {
        /// The stream's seed.
        seed: u64,
    },
    /// Standard normal (floats only).
    Normal {
        /// The stream's seed.
        seed: u64,
    },
}

/// Largest element count an index computation handles: indices are `u32` on every device.
pub const MAX_ELEMENTS: usize = u32::MAX as usize;

impl Op {
    /// Short name for errors and reports (`map`, `sum`, `matmul`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Map { .. } => "map",
            Op::Reduce { kind, .. } => kind.name(),
            Op::Matmul { .. } => "matmul",
            Op::Copy => "copy",
            Op::Transpose { .. } => "transpose",
            Op::Cast { .. } => "cast",
            Op::Fill { .. } => "fill",
        }
    }

    /// Checks the op against its inputs (dtype and shape of each) and returns the output's
    /// dtype and shape. Every way a caller can get an op wrong is an [`Error`] here, so
    /// backends never see an invalid op.
    pub fn output(&self, inputs: &[(DType, &Shape)]) -> Result<(DType, Shape)> {
        let arity = match self {
            Op::Map { input_shapes, .. } => input_shapes.len(),
            Op::Matmul { .. } => 2,
            Op::Fill { .. } => 0,
            _ => 1,
        };
        if inputs.len() != arity {
            return Err(Error::InvalidShape(format!("{} takes {arity} input(s), got {}", self.name(), inputs.len())));
        }
        let out = match self {
            Op::Map { program, input_shapes, shape } => {
                if program.inputs.len() != inputs.len() {
                    return Err(Error::MissingArgument { index: program.inputs.len(), available: inputs.len() });
                }
                for (i, ((dtype, s), (want, declared))) in
                    inputs.iter().zip(program.inputs.iter().zip(input_shapes)).enumerate()
                {
                    if dtype != want {
                        return Err(Error::DTypeMismatch {
                            context: format!("map input {i}"),
                            expected: *want,
                            found: *dtype,
                        });
                    }
                    if *s != declared {
                        return Err(Error::InvalidShape(format!(
                            "map input {i} has shape {s}, op declares {declared}"
                        )));
                    }
                }
                let mut bcast = Shape::scalar();
                for s in input_shapes {
                    bcast = bcast.broadcast(s, "map")?;
                }
                if bcast != *shape {
                    return Err(Error::InvalidShape(format!(
                        "map output shape {shape} is not the inputs' broadcast shape {bcast}"
                    )));
                }
                check_len(shape.numel(), "map")?;
                (program.output_dtype(), shape.clone())
            }
            Op::Reduce { kind, axis, shape } => {
                let (dtype, s) = inputs[0];
                if s != shape {
                    return Err(Error::InvalidShape(format!(
                        "{} input has shape {s}, op declares {shape}",
                        kind.name()
                    )));
                }
                check_len(shape.numel(), kind.name())?;
                let out_shape = match axis {
                    None => Shape::scalar(),
                    Some(a) => {
                        if *a >= shape.ndim() {
                            return Err(Error::AxisOutOfRange { op: kind.name(), axis: *a, ndim: shape.ndim() });
                        }
                        let mut dims = shape.dims().to_vec();
                        dims.remove(*a);
                        Shape::new(&dims)?
                    }
                };
                let reduced = axis.map_or(shape.numel(), |a| shape.dims()[a]);
                if kind.needs_elements() && reduced == 0 {
                    return Err(Error::EmptyReduction { op: kind.name() });
                }
                (kind.output_dtype(dtype), out_shape)
            }
            Op::Matmul { lhs, rhs } => {
                let ((ld, ls), (rd, rs)) = (inputs[0], inputs[1]);
                if ls != lhs || rs != rhs {
                    return Err(Error::InvalidShape(format!(
                        "matmul inputs {ls} @ {rs} differ from the op's {lhs} @ {rhs}"
                    )));
                }
                if ld != rd {
                    return Err(Error::DTypeMismatch { context: "matmul rhs".into(), expected: ld, found: rd });
                }
                if !ld.is_float() {
                    return Err(Error::Unsupported { op: "matmul".into(), dtype: ld, device: None });
                }
                let shape = matmul_shape(lhs, rhs)?;
                check_len(shape.numel().max(lhs.numel()).max(rhs.numel()), "matmul")?;
                (ld, shape)
            }
            Op::Copy => (inputs[0].0, inputs[0].1.clone()),
            Op::Transpose { shape, perm } => {
                let (dtype, s) = inputs[0];
                if s != shape {
                    return Err(Error::InvalidShape(format!("transpose input has shape {s}, op declares {shape}")));
                }
                let mut seen = vec![false; perm.len()];
                if perm.len() != shape.ndim()
                    || perm.iter().any(|&p| p >= perm.len() || std::mem::replace(&mut seen[p], true))
                {
                    return Err(Error::InvalidShape(format!(
                        "{perm:?} is not a permutation of the {} axes of {shape}",
                        shape.ndim()
                    )));
                }
                check_len(shape.numel(), "transpose")?;
                let dims: Vec<usize> = perm.iter().map(|&p| shape.dims()[p]).collect();
                (dtype, Shape::new(&dims)?)
            }
            Op::Cast { to } => (*to, inputs[0].1.clone()),
            Op::Fill { fill, dtype, len } => {
                check_len(*len, "fill")?;
                match fill {
                    Fill::Constant(s) if s.dtype() != *dtype => {
                        return Err(Error::DTypeMismatch {
                            context: "fill value".into(),
                            expected: *dtype,
                            found: s.dtype(),
                        });
                    }
                    Fill::Normal { .. } if dtype.is_int() => {
                        return Err(Error::Unsupported { op: "normal fill".into(), dtype: *dtype, device: None });
                    }
                    _ => {}
                }
                (*dtype, Shape::new(&[*len])?)
            }
        };
        Ok(out)
    }
}

/// Output shape of `lhs @ rhs`: `[m, k] @ [k, n] -> [m, n]`, `[b, m, k] @ [b, k, n] -> [b, m, n]`.
pub fn matmul_shape(lhs: &Shape, rhs: &Shape) -> Result<Shape> {
    let err = |why: String| Error::MatmulShape { lhs: lhs.dims().to_vec(), rhs: rhs.dims().to_vec(), why };
    let (l, r) = (lhs.dims(), rhs.dims());
    match (l.len(), r.len()) {
        (2, 2) | (3, 3) => {}
        _ => return Err(err("both operands must be 2-D, or both 3-D (batched)".into())),
    }
    let n = l.len();
    if l[n - 1] != r[n - 2] {
        return Err(err(format!("lhs has {} columns but rhs has {} rows", l[n - 1], r[n - 2])));
    }
    if n == 3 && l[0] != r[0] {
        return Err(err(format!("batch sizes differ: {} and {}", l[0], r[0])));
    }
    let mut out = l[..n - 1].to_vec();
    out.push(r[n - 1]);
    Shape::new(&out)
}

fn check_len(len: usize, op: &str) -> Result<()> {
    if len > MAX_ELEMENTS {
        return Err(Error::TooLarge(format!(
            "{op} over {len} elements; polycompute indexes with u32, so at most {MAX_ELEMENTS} elements per array"
        )));
    }
    Ok(())
}
