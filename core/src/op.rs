//! The portable op set every backend implements, and the checks that make an [`Op`]
//! valid before any backend sees it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::expr::Program;
use crate::layout::Layout;
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
    /// [`Op::Map`] over inputs that are views: input `k` is read through `inputs[k]`
    /// (shape, signed strides in elements, offset into its buffer — see [`Layout`]), then
    /// broadcast (numpy rules, by the layouts' shapes) to `shape`. Strides may be negative
    /// (flips, negative-step slices) or 0 (broadcast views); every element a layout
    /// reaches lies inside its buffer (checked before the backend runs). An input whose
    /// buffer is exactly its layout in row-major order reads like an [`Op::Map`] input.
    /// The output is contiguous.
    MapViews {
        /// The type-checked program.
        program: Arc<Program>,
        /// Each input's layout in its buffer.
        inputs: Vec<Layout>,
        /// The output shape (the layouts' shapes broadcast together).
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
        /// Which operands' buffers hold the transpose of the operand (see
        /// [`MatmulTranspose`]); `lhs`/`rhs` are the operands' shapes either way.
        transpose: MatmulTranspose,
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
    /// Joins the inputs (same dtype, same rank, equal dimensions except `axis`) along
    /// `axis`, in order (numpy's `concatenate`; `stack` is concat of `expand_dims`).
    Concat {
        /// The axis joined along.
        axis: usize,
        /// Each input's shape.
        shapes: Vec<Shape>,
    },
    /// numpy's `take(a, indices, axis)`: inputs `[a, indices]`, indices `u32` or `i32`
    /// (negative counts from the end); output shape
    /// `shape[..axis] ++ indices ++ shape[axis + 1..]`. Every index is in `-n..n`
    /// (`n = shape[axis]`): the array layer checks it before queuing the op.
    Take {
        /// The axis indexed.
        axis: usize,
        /// Shape of `a`.
        shape: Shape,
        /// Shape of the index array.
        indices: Shape,
    },
    /// numpy's `take_along_axis(a, indices, axis)`: inputs `[a, indices]`, `indices` of
    /// the rank of `a` and its dimensions on every other axis (no broadcasting); output
    /// `out[.., i, ..] = a[.., indices[.., i, ..], ..]`, shape `indices`. Indices as in
    /// [`Op::Take`].
    TakeAlongAxis {
        /// The axis indexed.
        axis: usize,
        /// Shape of `a`.
        shape: Shape,
        /// Shape of the index array.
        indices: Shape,
    },
    /// numpy's `np.add.at(a, (slice(None),) * axis + (indices,), values)` on a copy of
    /// `a`: inputs `[a, indices, values]`, `values` of the shape [`Op::Take`] gives for
    /// `(shape, indices)`; every value is added to the element its index names, repeated
    /// indices accumulating (in index order on the CPU; floats may round differently on
    /// GPUs, within the summation tolerance; integers wrap). Output shape `shape`.
    ScatterAdd {
        /// The axis indexed.
        axis: usize,
        /// Shape of `a` (and of the output).
        shape: Shape,
        /// Shape of the index array.
        indices: Shape,
    },
    /// numpy's `pad(a, widths, constant_values=value)`: `widths[axis] = (before, after)`
    /// elements of `value` around each axis.
    Pad {
        /// The input's shape.
        shape: Shape,
        /// Elements added before and after, per axis.
        widths: Vec<(usize, usize)>,
        /// The fill value (the array's dtype).
        value: Scalar,
    },
    /// Inclusive scan along `axis` (numpy's `cumsum`/`cumprod`); integers wrap, floats
    /// within the summation tolerance of docs/conformance.md.
    Scan {
        /// Sum or product.
        kind: ScanKind,
        /// The axis scanned.
        axis: usize,
        /// The input's (and output's) shape.
        shape: Shape,
    },
    /// Stable ascending sort along `axis` in numpy's order: NaN last (after +inf), `-0.0`
    /// and `+0.0` equal (they keep their input order).
    Sort {
        /// The axis sorted.
        axis: usize,
        /// The input's (and output's) shape.
        shape: Shape,
    },
    /// The `u32` indices that [`Op::Sort`] puts in each place (numpy's
    /// `argsort(kind='stable')`).
    Argsort {
        /// The axis sorted.
        axis: usize,
        /// The input's (and output's) shape.
        shape: Shape,
    },
    /// The `u32` indices of the `k` largest elements along `axis`, largest first; equal
    /// values by lower index first; NaN counts as larger than +inf (NaNs come first);
    /// `-0.0` and `+0.0` are equal. Output shape: `shape` with `axis` of size `k`
    /// (`k <= shape[axis]`). The values are `take_along_axis` of these indices.
    TopK {
        /// How many.
        k: usize,
        /// The axis searched.
        axis: usize,
        /// The input's shape.
        shape: Shape,
    },
}

/// Which operands of an [`Op::Matmul`] arrive as the transpose of a row-major matrix: a
/// transposed view (`a.t()`, the last two axes swapped) is passed as its buffer, as it is,
/// and the backend's GEMM reads it transposed (`gemm`'s strides, cuBLAS's `transa`/`transb`,
/// a kernel variant) instead of a copy being made first.
///
/// With `lhs` set, the lhs buffer holds `[.., k, m]` row-major for an operand of shape
/// `[.., m, k]`; with `rhs` set, the rhs buffer holds `[.., n, k]` for `[.., k, n]`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MatmulTranspose {
    /// The lhs buffer is the lhs operand transposed (its last two axes swapped).
    pub lhs: bool,
    /// The rhs buffer is the rhs operand transposed.
    pub rhs: bool,
}

impl MatmulTranspose {
    /// Neither operand transposed: both buffers are the operands, row-major.
    pub const NONE: MatmulTranspose = MatmulTranspose { lhs: false, rhs: false };

    /// True when at least one operand is transposed.
    pub const fn any(self) -> bool {
        self.lhs || self.rhs
    }
}

/// The scans of [`Op::Scan`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScanKind {
    /// Running sum (`cumsum`).
    Sum,
    /// Running product (`cumprod`).
    Prod,
}

impl ScanKind {
    /// Both scans.
    pub const ALL: [ScanKind; 2] = [ScanKind::Sum, ScanKind::Prod];

    /// `cumsum` or `cumprod`.
    pub const fn name(self) -> &'static str {
        match self {
            ScanKind::Sum => "cumsum",
            ScanKind::Prod => "cumprod",
        }
    }
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
            // The mean of bools is the fraction that are true, as numpy's.
            ReduceKind::Mean if !dtype.is_float() => DType::F64,
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
    /// Every dtype the op reads, computes in or writes, given its inputs' dtypes (in that
    /// order, repeats kept): what a backend checks against the dtypes it runs before it
    /// plans anything (a map's intermediate `cast(x, bool)` included).
    ///
    /// ```
    /// use polycompute_core::{DType, Expr, Op, Program, Shape};
    /// let program = Program::compile(&Expr::arg(0).gt(0.0).cast(DType::Bool), &[DType::F32]).unwrap();
    /// let s = Shape::new(&[4]).unwrap();
    /// let op = Op::Map { program: program.into(), input_shapes: vec![s.clone()], shape: s };
    /// assert!(op.dtypes_used(&[DType::F32]).contains(&DType::Bool));
    /// ```
    pub fn dtypes_used(&self, inputs: &[DType]) -> Vec<DType> {
        let mut out = inputs.to_vec();
        match self {
            Op::Map { program, .. } | Op::MapViews { program, .. } => out.extend(program.insts.iter().map(|i| i.dtype)),
            Op::Cast { to } => out.push(*to),
            Op::Fill { dtype, .. } => out.push(*dtype),
            Op::Pad { value, .. } => out.push(value.dtype()),
            _ => {}
        }
        out
    }

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
            Op::MapViews { .. } => "map",
            Op::Concat { .. } => "concat",
            Op::Take { .. } => "take",
            Op::TakeAlongAxis { .. } => "take_along_axis",
            Op::ScatterAdd { .. } => "scatter_add",
            Op::Pad { .. } => "pad",
            Op::Scan { kind, .. } => kind.name(),
            Op::Sort { .. } => "sort",
            Op::Argsort { .. } => "argsort",
            Op::TopK { .. } => "topk",
        }
    }

    /// How many input buffers the op takes. Every variant is listed (no default arm), so a
    /// new op does not compile until it says.
    ///
    /// ```
    /// use polycompute_core::Op;
    /// assert_eq!(Op::Copy.arity(), 1);
    /// ```
    pub fn arity(&self) -> usize {
        match self {
            Op::Map { input_shapes, .. } => input_shapes.len(),
            Op::MapViews { inputs, .. } => inputs.len(),
            Op::Concat { shapes, .. } => shapes.len(),
            Op::Matmul { .. } | Op::Take { .. } | Op::TakeAlongAxis { .. } => 2,
            Op::ScatterAdd { .. } => 3,
            Op::Fill { .. } => 0,
            Op::Reduce { .. }
            | Op::Copy
            | Op::Transpose { .. }
            | Op::Cast { .. }
            | Op::Pad { .. }
            | Op::Scan { .. }
            | Op::Sort { .. }
            | Op::Argsort { .. }
            | Op::TopK { .. } => 1,
        }
    }

    /// Checks the op against its inputs (dtype and shape of each) and returns the output's
    /// dtype and shape. Every way a caller can get an op wrong is an [`Error`] here, so
    /// backends never see an invalid op.
    pub fn output(&self, inputs: &[(DType, &Shape)]) -> Result<(DType, Shape)> {
        let arity = self.arity();
        if inputs.len() != arity {
            return Err(Error::InvalidShape(format!("{} takes {arity} input(s), got {}", self.name(), inputs.len())));
        }
        let out = match self {
            Op::Map { program, input_shapes, shape } => map_output(program, input_shapes, shape, inputs)?,
            Op::MapViews { program, inputs: layouts, shape } => {
                let shapes: Vec<Shape> = layouts.iter().map(|l| l.shape.clone()).collect();
                map_output(program, &shapes, shape, inputs)?
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
                            return Err(Error::AxisOutOfRange {
                                op: kind.name(),
                                axis: crate::axis::Axis::from(*a).0,
                                ndim: shape.ndim(),
                            });
                        }
                        let mut dims = shape.dims().to_vec();
                        dims.remove(*a);
                        Shape::new(&dims)?
                    }
                };
                if dtype.is_bool() && matches!(kind, ReduceKind::Sum | ReduceKind::Prod) {
                    return Err(bool_unsupported(kind.name()));
                }
                let reduced = axis.map_or(shape.numel(), |a| shape.dims()[a]);
                if kind.needs_elements() && reduced == 0 {
                    return Err(Error::EmptyReduction { op: kind.name() });
                }
                (kind.output_dtype(dtype), out_shape)
            }
            Op::Matmul { lhs, rhs, .. } => {
                // A transposed operand's buffer holds as many elements as the operand, and any
                // operand may be transposed: nothing more to check for `transpose`.
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
                    Fill::Normal { .. } if !dtype.is_float() => {
                        return Err(Error::Unsupported { op: "normal fill".into(), dtype: *dtype, device: None });
                    }
                    Fill::Uniform { .. } if matches!(dtype, DType::I64 | DType::U8 | DType::Bool) => {
                        return Err(Error::Unsupported { op: "uniform fill".into(), dtype: *dtype, device: None });
                    }
                    _ => {}
                }
                (*dtype, Shape::new(&[*len])?)
            }
            Op::Concat { axis, shapes } => {
                let first = shapes.first().ok_or(Error::InvalidArgument {
                    op: "concat",
                    argument: "arrays",
                    why: "no arrays given; pass at least one".into(),
                })?;
                let dtype = inputs[0].0;
                let nd = first.ndim();
                if *axis >= nd {
                    return Err(Error::AxisOutOfRange {
                        op: "concat",
                        axis: crate::axis::Axis::from(*axis).0,
                        ndim: nd,
                    });
                }
                let mut dims = first.dims().to_vec();
                dims[*axis] = 0;
                for (i, ((d, s), declared)) in inputs.iter().zip(shapes).enumerate() {
                    declared_is(s, declared, "concat", i)?;
                    if *d != dtype {
                        return Err(Error::DTypeMismatch {
                            context: format!("concat array {i}"),
                            expected: dtype,
                            found: *d,
                        });
                    }
                    let same = s.ndim() == nd && (0..nd).all(|a| a == *axis || s.dims()[a] == first.dims()[a]);
                    if !same {
                        return Err(Error::InvalidArgument {
                            op: "concat",
                            argument: "arrays",
                            why: format!(
                                "array {i} has shape {s} but array 0 has {first}; all must agree except along axis {axis}"
                            ),
                        });
                    }
                    dims[*axis] += s.dims()[*axis];
                }
                let out = Shape::new(&dims)?;
                check_len(out.numel(), "concat")?;
                (dtype, out)
            }
            Op::Take { axis, shape, indices } => {
                let (dtype, s) = inputs[0];
                declared_is(s, shape, "take", 0)?;
                index_input(inputs[1], indices, "take")?;
                let out = take_shape(shape, indices, *axis, "take")?;
                (dtype, out)
            }
            Op::TakeAlongAxis { axis, shape, indices } => {
                let (dtype, s) = inputs[0];
                declared_is(s, shape, "take_along_axis", 0)?;
                index_input(inputs[1], indices, "take_along_axis")?;
                along_axis(shape, indices, *axis, "take_along_axis")?;
                check_len(indices.numel().max(shape.numel()), "take_along_axis")?;
                (dtype, indices.clone())
            }
            Op::ScatterAdd { axis, shape, indices } => {
                let (dtype, s) = inputs[0];
                declared_is(s, shape, "scatter_add", 0)?;
                index_input(inputs[1], indices, "scatter_add")?;
                let want = take_shape(shape, indices, *axis, "scatter_add")?;
                let (vd, vs) = inputs[2];
                if vd != dtype {
                    return Err(Error::DTypeMismatch {
                        context: "scatter_add values".into(),
                        expected: dtype,
                        found: vd,
                    });
                }
                if *vs != want {
                    return Err(Error::InvalidArgument {
                        op: "scatter_add",
                        argument: "values",
                        why: format!("values have shape {vs}; for these indices they need {want}"),
                    });
                }
                (dtype, shape.clone())
            }
            Op::Pad { shape, widths, value } => {
                let (dtype, s) = inputs[0];
                declared_is(s, shape, "pad", 0)?;
                if widths.len() != shape.ndim() {
                    return Err(Error::InvalidArgument {
                        op: "pad",
                        argument: "widths",
                        why: format!(
                            "{} (before, after) pairs for an array of {} axes; give one per axis",
                            widths.len(),
                            shape.ndim()
                        ),
                    });
                }
                if value.dtype() != dtype {
                    return Err(Error::DTypeMismatch {
                        context: "pad value".into(),
                        expected: dtype,
                        found: value.dtype(),
                    });
                }
                let dims = shape
                    .dims()
                    .iter()
                    .zip(widths)
                    .map(|(&d, &(lo, hi))| d.checked_add(lo).and_then(|x| x.checked_add(hi)))
                    .collect::<Option<Vec<usize>>>()
                    .ok_or_else(|| Error::TooLarge(format!("pad of {shape} by {widths:?} overflows")))?;
                let out = Shape::new(&dims)?;
                check_len(out.numel(), "pad")?;
                (dtype, out)
            }
            Op::Scan { kind, axis, shape } => {
                let (dtype, s) = inputs[0];
                if dtype.is_bool() {
                    return Err(bool_unsupported(kind.name()));
                }
                declared_is(s, shape, kind.name(), 0)?;
                axis_in(*axis, shape, kind.name())?;
                check_len(shape.numel(), kind.name())?;
                (dtype, shape.clone())
            }
            Op::Sort { axis, shape } | Op::Argsort { axis, shape } => {
                let (dtype, s) = inputs[0];
                declared_is(s, shape, self.name(), 0)?;
                axis_in(*axis, shape, self.name())?;
                check_len(shape.numel(), self.name())?;
                (if matches!(self, Op::Sort { .. }) { dtype } else { DType::U32 }, shape.clone())
            }
            Op::TopK { k, axis, shape } => {
                let s = inputs[0].1;
                declared_is(s, shape, "topk", 0)?;
                axis_in(*axis, shape, "topk")?;
                let n = shape.dims()[*axis];
                if *k > n {
                    return Err(Error::InvalidArgument {
                        op: "topk",
                        argument: "k",
                        why: format!("k = {k} but axis {axis} of {shape} has {n} elements; use k <= {n}"),
                    });
                }
                check_len(shape.numel(), "topk")?;
                let mut dims = shape.dims().to_vec();
                dims[*axis] = *k;
                (DType::U32, Shape::new(&dims)?)
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

/// Validates a map over inputs of `input_shapes` (as `inputs` says they are) to `shape`.
fn map_output(
    program: &Program,
    input_shapes: &[Shape],
    shape: &Shape,
    inputs: &[(DType, &Shape)],
) -> Result<(DType, Shape)> {
    if program.inputs.len() != inputs.len() {
        return Err(Error::MissingArgument { index: program.inputs.len(), available: inputs.len() });
    }
    for (i, ((dtype, s), (want, declared))) in inputs.iter().zip(program.inputs.iter().zip(input_shapes)).enumerate() {
        if dtype != want {
            return Err(Error::DTypeMismatch { context: format!("map input {i}"), expected: *want, found: *dtype });
        }
        if *s != declared {
            return Err(Error::InvalidShape(format!("map input {i} has shape {s}, op declares {declared}")));
        }
    }
    // Inputs of the output's own shape (the common case) broadcast to it: no new shapes.
    if input_shapes.is_empty() || input_shapes.iter().any(|s| s != shape) {
        let mut bcast = Shape::scalar();
        for s in input_shapes {
            bcast = bcast.broadcast(s, "map")?;
        }
        if bcast != *shape {
            return Err(Error::InvalidShape(format!(
                "map output shape {shape} is not the inputs' broadcast shape {bcast}"
            )));
        }
    }
    check_len(shape.numel(), "map")?;
    Ok((program.output_dtype(), shape.clone()))
}

/// Checks that input `i`'s actual shape is the one the op declares.
fn declared_is(actual: &Shape, declared: &Shape, op: &str, i: usize) -> Result<()> {
    if actual != declared {
        return Err(Error::InvalidShape(format!("{op} input {i} has shape {actual}, op declares {declared}")));
    }
    Ok(())
}

fn axis_in(axis: usize, shape: &Shape, op: &'static str) -> Result<()> {
    if axis >= shape.ndim() {
        return Err(Error::AxisOutOfRange { op, axis: crate::axis::Axis::from(axis).0, ndim: shape.ndim() });
    }
    Ok(())
}

/// numpy promotes the sum, product and running sums of bools to an integer; polycompute
/// never changes a dtype implicitly, so they are refused with the calls that do it.
fn bool_unsupported(op: &str) -> Error {
    Error::Unsupported {
        op: format!("{op} (count with count_nonzero, or cast the bools to an integer first)"),
        dtype: DType::Bool,
        device: None,
    }
}

/// Checks an index input: `u32`, `i32` or `i64`, of the declared shape.
fn index_input((dtype, s): (DType, &Shape), declared: &Shape, op: &'static str) -> Result<()> {
    declared_is(s, declared, op, 1)?;
    if dtype == DType::Bool {
        return Err(Error::InvalidArgument {
            op,
            argument: "indices",
            why: "indices are bool, a mask, not positions; select with where_(mask, a, b), count with \
                  count_nonzero, or cast the mask to an integer for indices 0 and 1"
                .into(),
        });
    }
    if !dtype.is_index() {
        return Err(Error::InvalidArgument {
            op,
            argument: "indices",
            why: format!("indices are {dtype}; use u32, i32 or i64 (cast them first)"),
        });
    }
    Ok(())
}

/// Output shape of `take`: `shape[..axis] ++ indices ++ shape[axis + 1..]`.
pub fn take_shape(shape: &Shape, indices: &Shape, axis: usize, op: &'static str) -> Result<Shape> {
    axis_in(axis, shape, op)?;
    let mut dims = shape.dims()[..axis].to_vec();
    dims.extend_from_slice(indices.dims());
    dims.extend_from_slice(&shape.dims()[axis + 1..]);
    let out = Shape::new(&dims)?;
    check_len(out.numel().max(shape.numel()).max(indices.numel()), op)?;
    Ok(out)
}

/// Checks `take_along_axis` indices: the rank of `shape`, equal on every axis but `axis`.
fn along_axis(shape: &Shape, indices: &Shape, axis: usize, op: &'static str) -> Result<()> {
    axis_in(axis, shape, op)?;
    let ok =
        indices.ndim() == shape.ndim() && (0..shape.ndim()).all(|a| a == axis || indices.dims()[a] == shape.dims()[a]);
    if !ok {
        return Err(Error::InvalidArgument {
            op,
            argument: "indices",
            why: format!(
                "indices have shape {indices}; for an array of {shape} they need its rank and its dimensions on every axis but {axis} (broadcast them first)"
            ),
        });
    }
    Ok(())
}

fn check_len(len: usize, op: &str) -> Result<()> {
    if len > MAX_ELEMENTS {
        return Err(Error::TooLarge(format!(
            "{op} over {len} elements; polycompute indexes with u32, so at most {MAX_ELEMENTS} elements per array"
        )));
    }
    Ok(())
}
