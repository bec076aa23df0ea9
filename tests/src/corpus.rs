//! The corpus: every op × every dtype it supports, over edge-case shapes and values. One list,
//! run unchanged on every backend.

use std::sync::Arc;

use polycompute::{
    BinaryOp, DType, Expr, Fill, Layout, MatmulTranspose, Op, Program, ReduceKind, Result, Scalar, ScanKind, Shape,
    UnaryOp,
};

use super::inputs::{specials_len, Gen};

/// The dtypes the corpus's general cases cover, the halves included; i64, u8 and bool have
/// cases of their own (`corpus_dtypes.rs`), which leave these cases and their goldens alone.
pub(crate) const DTYPES: [DType; 6] = [DType::F32, DType::F64, DType::I32, DType::U32, DType::F16, DType::BF16];

/// The float dtypes, for the float-only cases (matmul, normal fill, fused maps).
const FLOATS: [DType; 4] = [DType::F32, DType::F64, DType::F16, DType::BF16];
use super::reference::Input;
use super::tolerance::{self, Tolerance};

/// 65,535 · 256 + 1: one element past what a single GPU dispatch dimension of 256-wide
/// workgroups covers.
pub const PAST_DISPATCH: usize = 65_535 * 256 + 1;
/// 2^24 + 3: past the last integer an f32 counts exactly.
pub const PAST_F32_COUNT: usize = (1 << 24) + 3;
/// The small sizes every size-sensitive op runs at.
pub const SIZES: [usize; 6] = [0, 1, 7, 255, 256, 257];

/// What a case computes (the host-side description of a [`polycompute::Op`]).
#[derive(Clone, Debug)]
pub enum CaseOp {
    /// An elementwise expression over the inputs, broadcast.
    Map(Expr),
    /// A reduction over all elements or one axis.
    Reduce {
        /// The reduction.
        kind: ReduceKind,
        /// `None` for all elements.
        axis: Option<usize>,
    },
    /// 2-D or batched matrix product.
    Matmul,
    /// [`CaseOp::Matmul`] of transposed views: an input the flag names holds its operand
    /// transposed (the last two axes swapped), as the buffer of `a.transpose()` does.
    MatmulTransposed(MatmulTranspose),
    /// A copy.
    Copy,
    /// An axis permutation.
    Transpose(Vec<usize>),
    /// Elementwise conversion.
    Cast(DType),
    /// A filled buffer.
    Fill {
        /// How.
        fill: Fill,
        /// Element type.
        dtype: DType,
        /// Length.
        len: usize,
    },
    /// An elementwise expression over views: input `k` (its buffer) read through
    /// `layouts[k]`, then broadcast (`Op::MapViews`).
    MapViews {
        /// The expression.
        expr: Expr,
        /// Each input's view of its buffer.
        layouts: Vec<Layout>,
    },
    /// numpy's concatenate along the axis.
    Concat(usize),
    /// numpy's take along the axis (inputs: array, indices).
    Take(usize),
    /// numpy's take_along_axis (inputs: array, indices).
    TakeAlongAxis(usize),
    /// `np.add.at` along the axis on a copy (inputs: array, indices, values).
    ScatterAdd(usize),
    /// numpy's pad with a constant.
    Pad {
        /// `(before, after)` per axis.
        widths: Vec<(usize, usize)>,
        /// The fill value.
        value: Scalar,
    },
    /// cumsum or cumprod along an axis.
    Scan {
        /// Which.
        kind: ScanKind,
        /// The axis.
        axis: usize,
    },
    /// Stable sort along the axis.
    Sort(usize),
    /// Stable argsort along the axis.
    Argsort(usize),
    /// Indices of the `k` largest along `axis`.
    TopK {
        /// How many.
        k: usize,
        /// The axis.
        axis: usize,
    },
    /// A reduction through `DeviceArray` over negative or several axes, keepdims, or one
    /// built of several ops (var, std, logsumexp): see [`crate::corpus_axes`].
    Axes(super::corpus_axes::AxesCall),
    /// An operator, elementwise method, `where_`, mixed-dtype `map` or constructor through
    /// `DeviceArray`'s public API: see [`crate::corpus_array`].
    Array(super::corpus_array::ArrayCall),
}

/// One input of a case.
#[derive(Clone, Debug)]
pub struct InputSpec {
    /// Its dimensions.
    pub dims: Vec<usize>,
    /// Its dtype.
    pub dtype: DType,
    /// How its elements are made.
    pub gen: Gen,
}

/// One conformance case.
#[derive(Clone, Debug)]
pub struct Case {
    /// Unique name: op, dtype, shape and variant, e.g. `matmul_f32_513x257x129`.
    pub name: String,
    /// The row of `polycompute check`'s table (`add`, `sum`, `cast_to_i32`, ...).
    pub op: String,
    /// The row's dtype (the input dtype; a fill's output dtype).
    pub dtype: DType,
    /// What it computes.
    pub compute: CaseOp,
    /// Its inputs.
    pub inputs: Vec<InputSpec>,
    /// How close a device must come to the reference.
    pub tolerance: Tolerance,
}

impl Case {
    /// The Philox seed of input `k`: a hash of the case's name, so that cases differ.
    pub fn seed(&self, k: usize) -> u64 {
        super::golden::fnv1a(self.name.as_bytes()).wrapping_add(k as u64)
    }

    /// The inputs' elements.
    pub fn materialize(&self) -> Vec<Input> {
        self.inputs
            .iter()
            .enumerate()
            .map(|(k, i)| (i.dims.clone(), i.gen.materialize(i.dtype, i.dims.iter().product(), self.seed(k))))
            .collect()
    }

    /// The op a device executes, validated as `DeviceArray` would.
    pub fn op(&self) -> Result<Op> {
        let shapes = self.inputs.iter().map(|i| Shape::new(&i.dims)).collect::<Result<Vec<_>>>()?;
        let first = |k: usize| shapes.get(k).cloned().unwrap_or_default();
        let op = match &self.compute {
            CaseOp::Map(expr) => {
                let dtypes: Vec<DType> = self.inputs.iter().map(|i| i.dtype).collect();
                let program = Program::compile(expr, &dtypes)?;
                let mut shape = Shape::scalar();
                for s in &shapes {
                    shape = shape.broadcast(s, "map")?;
                }
                Op::Map { program: Arc::new(program), input_shapes: shapes.clone(), shape }
            }
            CaseOp::Reduce { kind, axis } => {
                Op::Reduce { kind: *kind, axis: *axis, shape: shapes.first().cloned().unwrap_or_default() }
            }
            CaseOp::Matmul => Op::Matmul {
                lhs: shapes.first().cloned().unwrap_or_default(),
                rhs: shapes.get(1).cloned().unwrap_or_default(),
                transpose: MatmulTranspose::NONE,
            },
            CaseOp::MatmulTransposed(t) => Op::Matmul {
                lhs: matrix_transposed(&first(0), t.lhs)?,
                rhs: matrix_transposed(&first(1), t.rhs)?,
                transpose: *t,
            },
            CaseOp::Copy => Op::Copy,
            CaseOp::Transpose(perm) => {
                Op::Transpose { shape: shapes.first().cloned().unwrap_or_default(), perm: perm.clone() }
            }
            CaseOp::Cast(to) => Op::Cast { to: *to },
            CaseOp::Fill { fill, dtype, len } => Op::Fill { fill: *fill, dtype: *dtype, len: *len },
            CaseOp::MapViews { expr, layouts } => {
                let dtypes: Vec<DType> = self.inputs.iter().map(|i| i.dtype).collect();
                let program = Program::compile(expr, &dtypes)?;
                let mut shape = Shape::scalar();
                for l in layouts {
                    shape = shape.broadcast(&l.shape, "map")?;
                }
                Op::MapViews { program: Arc::new(program), inputs: layouts.clone(), shape }
            }
            CaseOp::Concat(axis) => Op::Concat { axis: *axis, shapes: shapes.clone() },
            CaseOp::Take(axis) => Op::Take { axis: *axis, shape: first(0), indices: first(1) },
            CaseOp::TakeAlongAxis(axis) => Op::TakeAlongAxis { axis: *axis, shape: first(0), indices: first(1) },
            CaseOp::ScatterAdd(axis) => Op::ScatterAdd { axis: *axis, shape: first(0), indices: first(1) },
            CaseOp::Pad { widths, value } => Op::Pad { shape: first(0), widths: widths.clone(), value: *value },
            CaseOp::Scan { kind, axis } => Op::Scan { kind: *kind, axis: *axis, shape: first(0) },
            CaseOp::Sort(axis) => Op::Sort { axis: *axis, shape: first(0) },
            CaseOp::Argsort(axis) => Op::Argsort { axis: *axis, shape: first(0) },
            CaseOp::TopK { k, axis } => Op::TopK { k: *k, axis: *axis, shape: first(0) },
            CaseOp::Axes(call) => {
                return Err(polycompute::Error::InvalidArgument {
                    op: "corpus",
                    argument: "case",
                    why: format!("{} runs through DeviceArray, not as one op", call.describe()),
                })
            }
            CaseOp::Array(call) => {
                return Err(polycompute::Error::InvalidArgument {
                    op: "corpus",
                    argument: "case",
                    why: format!("{} runs through DeviceArray's API", call.describe()),
                })
            }
        };
        self.output_of(&op)?;
        Ok(op)
    }

    /// The output dtype and shape core's validation ([`Op::output`]) gives the case's op.
    pub fn output(&self) -> Result<(DType, Shape)> {
        if let (CaseOp::Axes(call), [i]) = (&self.compute, self.inputs.as_slice()) {
            return call.output(i.dtype, &i.dims);
        }
        if let CaseOp::Array(call) = &self.compute {
            return call.output(&self.inputs.iter().map(|i| i.dims.clone()).collect::<Vec<_>>());
        }
        self.output_of(&self.op()?)
    }

    fn output_of(&self, op: &Op) -> Result<(DType, Shape)> {
        let mut shapes = self.inputs.iter().map(|i| Shape::new(&i.dims)).collect::<Result<Vec<_>>>()?;
        if let Op::MapViews { inputs: layouts, .. } = op {
            // A view's shape is its layout's; its buffer must hold every element it reads.
            for (l, s) in layouts.iter().zip(shapes.iter_mut()) {
                l.check_within(s.numel())?;
                *s = l.shape.clone();
            }
        }
        if let Op::Matmul { transpose, .. } = op {
            // A transposed operand's buffer holds the operand's transpose.
            for (s, t) in shapes.iter_mut().zip([transpose.lhs, transpose.rhs]) {
                *s = matrix_transposed(s, t)?;
            }
        }
        let with: Vec<(DType, &Shape)> = self.inputs.iter().map(|i| i.dtype).zip(&shapes).collect();
        op.output(&with)
    }

    /// What the case computes, in words (for snapshot headers).
    pub fn describe(&self) -> String {
        let what = match &self.compute {
            CaseOp::Map(e) => format!("map {e}"),
            CaseOp::Reduce { kind, axis } => format!("{} axis {axis:?}", kind.name()),
            CaseOp::Matmul => "matmul".into(),
            CaseOp::MatmulTransposed(t) => {
                let which =
                    |on: bool, name: &str| if on { format!(" {name} stored transposed") } else { String::new() };
                format!("matmul of transposed views:{}{}", which(t.lhs, "lhs"), which(t.rhs, "rhs"))
            }
            CaseOp::Copy => "copy".into(),
            CaseOp::Transpose(p) => format!("transpose {p:?}"),
            CaseOp::Cast(to) => format!("cast to {to}"),
            CaseOp::Fill { fill, dtype, len } => format!("fill {fill:?} {dtype} [{len}]"),
            CaseOp::MapViews { expr, layouts } => {
                let views: Vec<String> = layouts
                    .iter()
                    .map(|l| format!("{:?} strides {:?} offset {}", l.shape.dims(), l.strides, l.offset))
                    .collect();
                format!("map {expr} over views {}", views.join(", "))
            }
            CaseOp::Concat(axis) => format!("concat axis {axis}"),
            CaseOp::Take(axis) => format!("take axis {axis}"),
            CaseOp::TakeAlongAxis(axis) => format!("take_along_axis axis {axis}"),
            CaseOp::ScatterAdd(axis) => format!("scatter_add axis {axis}"),
            CaseOp::Pad { widths, value } => format!("pad {widths:?} with {value}"),
            CaseOp::Scan { kind, axis } => format!("{} axis {axis}", kind.name()),
            CaseOp::Sort(axis) => format!("sort axis {axis}"),
            CaseOp::Argsort(axis) => format!("argsort axis {axis}"),
            CaseOp::TopK { k, axis } => format!("topk k {k} axis {axis}"),
            CaseOp::Axes(call) => call.describe(),
            CaseOp::Array(call) => call.describe(),
        };
        let inputs: Vec<String> =
            self.inputs.iter().map(|i| format!("{} {:?} {}", i.dtype, i.dims, i.gen.describe())).collect();
        format!("{what}\ninputs: {}", if inputs.is_empty() { "none".into() } else { inputs.join("; ") })
    }
}

/// `shape` with its last two axes swapped when `transposed` (a matrix or a batch of them).
pub(crate) fn matrix_transposed(shape: &Shape, transposed: bool) -> Result<Shape> {
    let mut dims = shape.dims().to_vec();
    let n = dims.len();
    if transposed && n >= 2 {
        dims.swap(n - 2, n - 1);
    }
    Shape::new(&dims)
}

/// `7x257`; `scalar` for no dimensions.
pub(crate) fn label(dims: &[usize]) -> String {
    if dims.is_empty() {
        return "scalar".into();
    }
    dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x")
}

pub(crate) fn input(dims: &[usize], dtype: DType, gen: Gen) -> InputSpec {
    InputSpec { dims: dims.to_vec(), dtype, gen }
}

fn uniform(lo: f64, hi: f64) -> Gen {
    Gen::Uniform { lo, hi }
}

/// Builds the corpus in a fixed order.
struct Corpus(Vec<Case>);

impl Corpus {
    fn add(&mut self, name: String, op: &str, dtype: DType, compute: CaseOp, inputs: Vec<InputSpec>, tol: Tolerance) {
        self.0.push(Case { name, op: op.to_string(), dtype, compute, inputs, tolerance: tol });
    }
}

/// The whole corpus, in a fixed order, names unique.
pub fn corpus() -> Vec<Case> {
    let mut c = Corpus(Vec::new());
    unary_cases(&mut c);
    binary_cases(&mut c);
    map_shape_cases(&mut c);
    reduce_cases(&mut c);
    matmul_cases(&mut c);
    movement_cases(&mut c);
    cast_cases(&mut c);
    fill_cases(&mut c);
    super::corpus_views::add_all(&mut |name, op, dtype, compute, inputs, tol| {
        c.add(name, op, dtype, compute, inputs, tol)
    });
    super::corpus_sizes::add_all(&mut |name, op, dtype, compute, inputs, tol| {
        c.add(name, op, dtype, compute, inputs, tol)
    });
    super::corpus_axes::add_all(&mut |name, op, dtype, compute, inputs, tol| {
        c.add(name, op, dtype, compute, inputs, tol)
    });
    super::corpus_array::add_all(&mut |name, op, dtype, compute, inputs, tol| {
        c.add(name, op, dtype, compute, inputs, tol)
    });
    super::corpus_dtypes::add_all(&mut |name, op, dtype, compute, inputs, tol| {
        c.add(name, op, dtype, compute, inputs, tol)
    });
    c.0
}

/// The size tier's larger variant: cases past each limit by far more than [`corpus`]'s own
/// size tier (minutes on a software adapter), run by `tests/conformance.rs` when
/// `POLYCOMPUTE_SIZE_TIER=large`. They have no golden snapshot: each device is compared with
/// the reference.
pub fn corpus_large() -> Vec<Case> {
    let mut c = Corpus(Vec::new());
    super::corpus_sizes::add_large(&mut |name, op, dtype, compute, inputs, tol| {
        c.add(name, op, dtype, compute, inputs, tol)
    });
    c.0
}

/// The domain a unary op is tested on with Philox inputs (inside the ranges where the GPU
/// specs state an accuracy; see the tolerance table).
fn unary_domain(op: UnaryOp, dtype: DType) -> Gen {
    use UnaryOp::*;
    match op {
        _ if dtype.is_int() => Gen::Wide { max_exp: 0 },
        Sqrt => uniform(0.0, 1000.0),
        // f16 ends at 2^16: wider inputs would be infinities.
        Recip if dtype == DType::F16 => Gen::Wide { max_exp: 14 },
        Recip => Gen::Wide { max_exp: 30 },
        Exp | Expm1 => uniform(-10.0, 10.0),
        Ln | Log2 | Log10 => uniform(0.0, 64.0),
        Log1p => uniform(-1.0, 64.0),
        Sin | Cos => uniform(-std::f64::consts::PI, std::f64::consts::PI),
        Tan => uniform(-1.0, 1.0),
        Tanh => uniform(-5.0, 5.0),
        Neg | Abs | Floor | Ceil | Round => uniform(-100.0, 100.0),
    }
}

fn unary_cases(c: &mut Corpus) {
    for op in UnaryOp::ALL {
        for dtype in DTYPES {
            if op.float_only() && dtype.is_int() {
                continue;
            }
            let tol = tolerance::unary(op, dtype);
            let e = Expr::arg(0).unary(op);
            let n = specials_len(dtype);
            let name = format!("{}_{dtype}", op.name());
            c.add(
                format!("{name}_257"),
                op.name(),
                dtype,
                CaseOp::Map(e.clone()),
                vec![input(&[257], dtype, unary_domain(op, dtype))],
                tol,
            );
            c.add(
                format!("{name}_{n}_specials"),
                op.name(),
                dtype,
                CaseOp::Map(e),
                vec![input(&[n], dtype, Gen::Specials)],
                tol,
            );
            if let Some(tiny) = tiny_domain(op) {
                c.add(
                    format!("{name}_257_tiny"),
                    op.name(),
                    dtype,
                    CaseOp::Map(Expr::arg(0).unary(op)),
                    vec![input(&[257], dtype, tiny)],
                    tol,
                );
            }
        }
    }
}

/// A second Philox domain for the functions made for small arguments, where the naive
/// formula (`exp(x) - 1`, `ln(1 + x)`) cancels or rounds `1 + x`: |x| below 2^-10, so such
/// a formula is off by about 2^10 ULPs in f32 and f64. (Every op is named, so a new one is placed here.)
fn tiny_domain(op: UnaryOp) -> Option<Gen> {
    use UnaryOp::*;
    match op {
        Expm1 | Log1p => Some(uniform(-1.0 / 1024.0, 1.0 / 1024.0)),
        Neg | Abs | Sqrt | Recip | Exp | Ln | Log2 | Log10 | Sin | Cos | Tan | Tanh | Floor | Ceil | Round => None,
    }
}

/// The Philox inputs of a binary op: (lhs, rhs).
fn binary_domain(op: BinaryOp, dtype: DType) -> (Gen, Gen) {
    use BinaryOp::*;
    let raw = Gen::Wide { max_exp: 0 };
    let small_ints = |lo: i64, hi: i64| Gen::Ints { lo: if dtype == DType::U32 { lo.max(0) } else { lo }, hi };
    match op {
        Div | Rem if dtype.is_int() => (raw, small_ints(-10, 10)),
        Pow if dtype.is_int() => (raw, small_ints(-4, 64)),
        Pow => (uniform(0.5, 4.0), uniform(-4.0, 4.0)),
        // Comparisons need ties: small integers in every dtype.
        Eq | Ne | Lt | Le | Gt | Ge => (small_ints(-3, 3), small_ints(-3, 3)),
        _ if dtype.is_int() => (raw.clone(), raw),
        // f16's finite range ends below 2^16: products of 2^±7 stay inside it.
        _ if dtype == DType::F16 => (Gen::Wide { max_exp: 7 }, Gen::Wide { max_exp: 7 }),
        _ => (Gen::Wide { max_exp: 20 }, Gen::Wide { max_exp: 20 }),
    }
}

/// The row name of a binary op: numpy's `minimum`/`maximum` for the elementwise min and max,
/// so that they differ from the reductions.
fn binary_row(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Min => "minimum",
        BinaryOp::Max => "maximum",
        _ => op.name(),
    }
}

fn binary_cases(c: &mut Corpus) {
    for op in BinaryOp::ALL {
        for dtype in DTYPES {
            if op.int_only() && dtype.is_float() {
                continue;
            }
            let tol = tolerance::binary(op, dtype);
            let e = Expr::arg(0).binary(op, Expr::arg(1));
            let (a, b) = binary_domain(op, dtype);
            let row = binary_row(op);
            let name = format!("{row}_{dtype}");
            c.add(
                format!("{name}_257"),
                row,
                dtype,
                CaseOp::Map(e.clone()),
                vec![input(&[257], dtype, a), input(&[257], dtype, b)],
                tol,
            );
            // Every special against every special, by broadcasting a column against a row.
            let n = specials_len(dtype);
            c.add(
                format!("{name}_{n}x{n}_specials"),
                row,
                dtype,
                CaseOp::Map(e),
                vec![input(&[n, 1], dtype, Gen::Specials), input(&[1, n], dtype, Gen::Specials)],
                tol,
            );
        }
    }
}

/// Sizes, broadcasting, select, index and a fused expression.
fn map_shape_cases(c: &mut Corpus) {
    let add = || Expr::arg(0) + Expr::arg(1);
    for dtype in DTYPES {
        let tol = tolerance::binary(BinaryOp::Add, dtype);
        let (a, b) = binary_domain(BinaryOp::Add, dtype);
        for n in SIZES.into_iter().filter(|&n| n != 257) {
            let ins = vec![input(&[n], dtype, a.clone()), input(&[n], dtype, b.clone())];
            c.add(format!("add_{dtype}_{n}"), "add", dtype, CaseOp::Map(add()), ins, tol);
        }
        for (l, r) in [(&[4, 1, 3][..], &[5, 1][..]), (&[257], &[]), (&[3, 1], &[1, 0]), (&[1], &[7, 1]), (&[], &[])] {
            let out = super::reference::broadcast(&[l, r]).unwrap_or_default();
            let ins = vec![input(l, dtype, a.clone()), input(r, dtype, b.clone())];
            let name = format!("add_{dtype}_{}_broadcast_{}_{}", label(&out), label(l), label(r));
            c.add(name, "add", dtype, CaseOp::Map(add()), ins, tol);
        }
        // The condition is every special (NaN and -0.0 included), broadcast against rows.
        let n = specials_len(dtype);
        let sel = Expr::select(Expr::arg(0), Expr::arg(1), Expr::arg(2));
        let ins = vec![input(&[n, 1], dtype, Gen::Specials), input(&[1, 7], dtype, a.clone()), input(&[7], dtype, b)];
        c.add(format!("select_{dtype}_{n}x7"), "select", dtype, CaseOp::Map(sel), ins, Tolerance::Exact);
        // The flat output index, as the dtype, added to the element.
        let idx = Expr::arg(0) + Expr::index().cast(dtype);
        let ins = vec![input(&[3, 5, 7], dtype, uniform(0.0, 100.0))];
        c.add(format!("index_{dtype}_3x5x7"), "index", dtype, CaseOp::Map(idx), ins, Tolerance::Exact);
    }
    c.add(
        format!("add_f32_{PAST_DISPATCH}"),
        "add",
        DType::F32,
        CaseOp::Map(add()),
        vec![
            input(&[PAST_DISPATCH], DType::F32, uniform(-1.0, 1.0)),
            input(&[PAST_DISPATCH], DType::F32, uniform(-1.0, 1.0)),
        ],
        Tolerance::Exact,
    );
    for dtype in [DType::I32, DType::U32] {
        // A program whose dtype changes: integer input, f64 result, through select and casts.
        // sqrt and * 0.5 are correctly rounded in f64, so the result is exact.
        let x = Expr::arg(0);
        let f = x.clone().cast(DType::F64);
        let e = Expr::select(x.gt(7), f.clone().sqrt(), f * 0.5);
        let ins = vec![input(&[257], dtype, Gen::Wide { max_exp: 0 })];
        c.add(format!("mixed_{dtype}_to_f64_257"), "mixed_to_f64", dtype, CaseOp::Map(e), ins, Tolerance::Exact);
    }
    for dtype in FLOATS {
        // x * 2 is exact, so only sin's error and the final rounding remain.
        let e = Expr::arg(0) * 2.0 + Expr::arg(1).sin();
        let tol = match tolerance::unary(UnaryOp::Sin, dtype) {
            Tolerance::Ulp { ulp, abs } => Tolerance::Ulp { ulp: ulp + 1, abs: abs * 2.0 },
            t => t,
        };
        let ins = vec![input(&[257], dtype, uniform(1.0, 2.0)), input(&[257], dtype, uniform(-3.0, 3.0))];
        c.add(format!("fused_{dtype}_257"), "fused", dtype, CaseOp::Map(e), ins, tol);
    }
}

/// Philox inputs of a reduction.
fn reduce_domain(kind: ReduceKind, dtype: DType) -> Gen {
    match kind {
        ReduceKind::Prod if dtype.is_int() => uniform(1.0, 3.0),
        ReduceKind::Prod => uniform(0.5, 1.5),
        ReduceKind::Sum | ReduceKind::Mean if dtype.is_float() => uniform(-1.0, 1.0),
        _ if dtype.is_int() => Gen::Wide { max_exp: 0 },
        _ => Gen::Wide { max_exp: 10 },
    }
}

fn reduce_cases(c: &mut Corpus) {
    for kind in ReduceKind::ALL {
        for dtype in DTYPES {
            let tol = tolerance::reduce(kind, dtype);
            let gen = reduce_domain(kind, dtype);
            let name = format!("{}_{dtype}", kind.name());
            let op = |axis| CaseOp::Reduce { kind, axis };
            for n in SIZES.into_iter().filter(|&n| n > 0 || !kind.needs_elements()) {
                c.add(format!("{name}_{n}"), kind.name(), dtype, op(None), vec![input(&[n], dtype, gen.clone())], tol);
            }
            let n = specials_len(dtype);
            let ins = vec![input(&[n], dtype, Gen::Specials)];
            c.add(format!("{name}_{n}_specials"), kind.name(), dtype, op(None), ins, tol);
            if dtype.is_float() {
                let with_inf = Gen::With(Box::new(gen.clone()), vec![(100, f64::INFINITY)]);
                let ins = vec![input(&[257], dtype, with_inf)];
                c.add(format!("{name}_257_inf"), kind.name(), dtype, op(None), ins, tol);
            }
            if matches!(kind, ReduceKind::ArgMin | ReduceKind::ArgMax) {
                // Many ties among five values: the first index must win.
                let ins = vec![input(&[257], dtype, Gen::Ints { lo: 0, hi: 4 })];
                c.add(format!("{name}_257_ties"), kind.name(), dtype, op(None), ins, tol);
                let ins = vec![input(&[5, 7, 33], dtype, Gen::Ints { lo: 0, hi: 4 })];
                c.add(format!("{name}_5x7x33_axis1_ties"), kind.name(), dtype, op(Some(1)), ins, tol);
            }
            for axis in 0..3 {
                let ins = vec![input(&[5, 7, 33], dtype, gen.clone())];
                c.add(format!("{name}_5x7x33_axis{axis}"), kind.name(), dtype, op(Some(axis)), ins, tol);
            }
            // Empty: an axis of zero length (no value for min/max/argmin/argmax), and a
            // non-empty axis with no output.
            for axis in [0, 1].into_iter().filter(|&a| a == 0 || !kind.needs_elements()) {
                let ins = vec![input(&[2, 0, 3], dtype, gen.clone())];
                c.add(format!("{name}_2x0x3_axis{axis}"), kind.name(), dtype, op(Some(axis)), ins, tol);
            }
        }
    }
    c.add(
        format!("sum_f32_{PAST_F32_COUNT}"),
        "sum",
        DType::F32,
        CaseOp::Reduce { kind: ReduceKind::Sum, axis: None },
        vec![input(&[PAST_F32_COUNT], DType::F32, uniform(0.0, 1.0))],
        tolerance::reduce(ReduceKind::Sum, DType::F32),
    );
}

fn matmul_cases(c: &mut Corpus) {
    // (batch, m, k, n); batch 0 means 2-D.
    let shapes = [
        (0, 7, 7, 7),
        (0, 1, 257, 1),
        (0, 1, 257, 129),
        (0, 129, 257, 1),
        (0, 513, 257, 129),
        (0, 4, 0, 5),
        (0, 0, 3, 2),
        (3, 33, 17, 9),
    ];
    for dtype in FLOATS {
        for (b, m, k, n) in shapes {
            let (l, r, name) = if b == 0 {
                (vec![m, k], vec![k, n], format!("matmul_{dtype}_{m}x{k}x{n}"))
            } else {
                (vec![b, m, k], vec![b, k, n], format!("matmul_{dtype}_{b}x{m}x{k}x{n}"))
            };
            let ins = vec![input(&l, dtype, uniform(-1.0, 1.0)), input(&r, dtype, uniform(-1.0, 1.0))];
            c.add(name, "matmul", dtype, CaseOp::Matmul, ins, tolerance::matmul());
        }
    }
}

/// Copy and transpose: exact data movement; floats carry the specials (NaN, -0.0).
fn movement_cases(c: &mut Corpus) {
    for dtype in DTYPES {
        let gen = if dtype.is_float() { Gen::Specials } else { Gen::Wide { max_exp: 0 } };
        for n in [0, 7, 257] {
            let ins = vec![input(&[n], dtype, gen.clone())];
            c.add(format!("copy_{dtype}_{n}"), "copy", dtype, CaseOp::Copy, ins, Tolerance::Exact);
        }
        for (dims, perm) in
            [(&[7, 257][..], &[1, 0][..]), (&[1, 257], &[1, 0]), (&[0, 3], &[1, 0]), (&[3, 5, 7], &[2, 0, 1])]
        {
            let name = format!(
                "transpose_{dtype}_{}_to_{}",
                label(dims),
                label(&perm.iter().map(|&p| dims[p]).collect::<Vec<_>>())
            );
            let ins = vec![input(dims, dtype, gen.clone())];
            c.add(name, "transpose", dtype, CaseOp::Transpose(perm.to_vec()), ins, Tolerance::Exact);
        }
    }
    let ins = vec![input(&[PAST_F32_COUNT], DType::F32, uniform(-1.0, 1.0))];
    c.add(format!("copy_f32_{PAST_F32_COUNT}"), "copy", DType::F32, CaseOp::Copy, ins, Tolerance::Exact);
}

fn cast_cases(c: &mut Corpus) {
    for from in DTYPES {
        for to in DTYPES {
            let op = format!("cast_to_{to}");
            let n = specials_len(from);
            let ins = vec![input(&[n], from, Gen::Specials)];
            c.add(format!("cast_{from}_to_{to}_{n}_specials"), &op, from, CaseOp::Cast(to), ins, Tolerance::Exact);
            // Magnitudes up to 2^40 cross every integer range.
            let ins = vec![input(&[257], from, Gen::Wide { max_exp: 40 })];
            c.add(format!("cast_{from}_to_{to}_257"), &op, from, CaseOp::Cast(to), ins, Tolerance::Exact);
        }
    }
}

fn fill_cases(c: &mut Corpus) {
    let constants = [
        Scalar::F32(-0.0),
        Scalar::F64(1.0 / 3.0),
        Scalar::I32(i32::MIN),
        Scalar::U32(u32::MAX),
        Scalar::F16(polycompute::f16::MAX),
        Scalar::BF16(polycompute::bf16::from_bits(1)),
    ];
    for value in constants {
        let dtype = value.dtype();
        for len in [0, 257] {
            let fill = CaseOp::Fill { fill: Fill::Constant(value), dtype, len };
            c.add(format!("fill_constant_{dtype}_{len}"), "fill_constant", dtype, fill, vec![], Tolerance::Exact);
        }
    }
    c.add(
        "fill_constant_f64_7_nan".into(),
        "fill_constant",
        DType::F64,
        CaseOp::Fill { fill: Fill::Constant(Scalar::F64(f64::NAN)), dtype: DType::F64, len: 7 },
        vec![],
        Tolerance::Exact,
    );
    for dtype in DTYPES {
        for (len, seed) in [(7, 0), (257, 0x0123_4567_89ab_cdef)] {
            let fill = CaseOp::Fill { fill: Fill::Uniform { seed }, dtype, len };
            c.add(format!("fill_uniform_{dtype}_{len}"), "fill_uniform", dtype, fill, vec![], Tolerance::Exact);
        }
    }
    let fill = CaseOp::Fill { fill: Fill::Uniform { seed: 42 }, dtype: DType::U32, len: PAST_DISPATCH };
    c.add(format!("fill_uniform_u32_{PAST_DISPATCH}"), "fill_uniform", DType::U32, fill, vec![], Tolerance::Exact);
    for dtype in FLOATS {
        for (len, seed) in [(7, 1), (257, u64::MAX)] {
            let fill = CaseOp::Fill { fill: Fill::Normal { seed }, dtype, len };
            c.add(
                format!("fill_normal_{dtype}_{len}"),
                "fill_normal",
                dtype,
                fill,
                vec![],
                tolerance::normal_fill(dtype),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_case_is_a_valid_op() {
        let all = corpus();
        let mut names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        let mut all_names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        all_names.sort_unstable();
        let dups: Vec<_> = all_names.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
        assert_eq!(names.len(), n, "duplicate case names: {dups:?}");
        for case in &all {
            // `output` validates the op (or, for the axes cases, the array call) and its result.
            if let Err(e) = case.output() {
                panic!("{}: {e}", case.name);
            }
        }
    }

    #[test]
    fn every_op_and_dtype_is_covered() {
        let all = corpus();
        let has = |op: &str, d: DType| all.iter().any(|c| c.op == op && c.dtype == d);
        for d in DTYPES {
            for op in ["add", "neg", "sum", "prod", "min", "max", "mean", "argmin", "argmax", "copy", "transpose"] {
                assert!(has(op, d), "{op} {d}");
            }
            for to in DTYPES {
                assert!(has(&format!("cast_to_{to}"), d));
            }
            assert!(has("fill_uniform", d) && has("select", d) && has("index", d));
        }
        for d in FLOATS {
            assert!(has("matmul", d) && has("fill_normal", d) && has("fused", d), "{d}");
        }
        assert!(all.iter().any(|c| c.name == "matmul_f32_513x257x129"));
    }

    /// The variant's number; every variant listed (no default arm), so a new op does not
    /// compile until it is counted here, and the test below then wants a case of it.
    fn variant(op: &Op) -> usize {
        match op {
            Op::Map { .. } => 0,
            Op::MapViews { .. } => 1,
            Op::Reduce { .. } => 2,
            Op::Matmul { .. } => 3,
            Op::Copy => 4,
            Op::Transpose { .. } => 5,
            Op::Cast { .. } => 6,
            Op::Fill { .. } => 7,
            Op::Concat { .. } => 8,
            Op::Take { .. } => 9,
            Op::TakeAlongAxis { .. } => 10,
            Op::ScatterAdd { .. } => 11,
            Op::Pad { .. } => 12,
            Op::Scan { .. } => 13,
            Op::Sort { .. } => 14,
            Op::Argsort { .. } => 15,
            Op::TopK { .. } => 16,
        }
    }

    #[test]
    fn every_op_variant_function_kind_and_dtype_has_cases() {
        let all = corpus();
        let mut seen = [false; 17];
        // The axes and array cases run through DeviceArray (their own tests count them).
        for c in all.iter().filter(|c| !matches!(c.compute, CaseOp::Axes(_) | CaseOp::Array(_))) {
            seen[variant(&c.op().unwrap())] = true;
        }
        let missing: Vec<usize> = (0..seen.len()).filter(|&v| !seen[v]).collect();
        assert!(missing.is_empty(), "Op variants without a conformance case: {missing:?}");
        let has_row = |op: &str, d: DType| all.iter().any(|c| c.op == op && c.dtype == d);
        for d in DType::ALL {
            assert!(all.iter().any(|c| c.dtype == d), "no case of {d}");
            // Every elementwise function on every dtype it is defined for.
            let (unary_ok, binary_ok) = (crate::corpus_dtypes::unary_defined, crate::corpus_dtypes::binary_defined);
            for f in UnaryOp::ALL.into_iter().filter(|&f| unary_ok(f, d)) {
                assert!(has_row(f.name(), d), "no case of {} on {d}", f.name());
            }
            for f in BinaryOp::ALL.into_iter().filter(|&f| binary_ok(f, d)) {
                assert!(has_row(binary_row(f), d), "no case of {} on {d}", f.name());
            }
            // numpy promotes bool sums, products and scans to integers: refused for bool.
            let bool_refused = |name: &str| d == DType::Bool && ["sum", "prod", "cumsum", "cumprod"].contains(&name);
            for k in ReduceKind::ALL.into_iter().filter(|k| !bool_refused(k.name())) {
                assert!(has_row(k.name(), d), "no case of {} on {d}", k.name());
            }
            for k in ScanKind::ALL.into_iter().filter(|k| !bool_refused(k.name())) {
                assert!(has_row(k.name(), d), "no case of {} on {d}", k.name());
            }
            for cmp in ["eq", "ne", "lt", "le", "gt", "ge"] {
                assert!(has_row(&format!("{cmp}_mask"), d), "no {cmp} mask of {d}");
            }
        }
    }
}
