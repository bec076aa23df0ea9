//! The corpus cases of the array vocabulary, run through `DeviceArray`'s public API: the
//! operators `+ - * / %` (array with array, broadcast; with a scalar on either side; through
//! `Result` operands; compound assignment) and unary `-`; the elementwise methods; `maximum`,
//! `minimum`, `pow` and `clip` with array and scalar operands; `where_` with a condition of
//! another dtype; `map` over a tuple of mixed dtypes; and the constructors `arange`,
//! `linspace`, `eye`, `ones` and `*_like`. Each is a map of the `Expr` ops (or host values
//! uploaded), so its reference is the ops' own (`tests/src/reference_array.rs`) and its
//! tolerance the op's.

use polycompute::{
    bf16, f16, map, where_, BinaryOp, DType, Device, DeviceArray, Element, Error, HostVec, Operand, Result, Scalar,
    Shape, UnaryOp,
};

use super::corpus::{input, label, CaseOp, InputSpec, DTYPES};
use super::inputs::{specials_len, Gen};
use super::reference::Input;
use super::scalar;
use super::tolerance::{self, Tolerance};

/// The corpus's `add` method, as a callback.
type Add<'a> = dyn FnMut(String, &str, DType, CaseOp, Vec<InputSpec>, Tolerance) + 'a;

/// An operand after the call's first array: the next input (of the call's dtype), or a
/// scalar converted to the call's dtype ([`scalar_of`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Arg {
    /// The next input array.
    Array,
    /// A constant.
    Scalar(f64),
}

/// An elementwise method without arguments.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Method {
    /// The method of a unary op (`x.log()` is `UnaryOp::Ln`).
    Unary(UnaryOp),
    /// `x.square()`, `x * x`.
    Square,
}

impl Method {
    /// numpy's name of the method.
    pub fn name(self) -> &'static str {
        match self {
            Method::Unary(UnaryOp::Ln) => "log",
            Method::Unary(op) => op.name(),
            Method::Square => "square",
        }
    }
}

/// What an array call computes.
#[derive(Clone, Debug, PartialEq)]
pub enum CallKind {
    /// `&a op &b` (broadcast) or `&a op s`.
    Operator {
        /// `Add`, `Sub`, `Mul`, `Div` or `Rem`.
        op: BinaryOp,
        /// The right operand.
        rhs: Arg,
    },
    /// `s op &a`: the scalar on the left.
    ScalarLeft {
        /// `Add`, `Sub`, `Mul`, `Div` or `Rem`.
        op: BinaryOp,
        /// The scalar.
        lhs: f64,
    },
    /// `-&a`.
    Negate,
    /// `acc op= &b` on `acc = Ok(a)`.
    Assign(BinaryOp),
    /// `&x * 2 + &y`: a `Result` on the left of `+`.
    ChainLeft,
    /// `&y - &x * 2`: a `Result` on the right of `-`.
    ChainRight,
    /// `x.method()`.
    Method(Method),
    /// `x.maximum(b)`, `x.minimum(b)` or `x.pow(b)`.
    WithOperand {
        /// `Max`, `Min` or `Pow`.
        op: BinaryOp,
        /// The operand.
        rhs: Arg,
    },
    /// `x.clip(lo, hi)`.
    Clip {
        /// The lower bound.
        lo: Arg,
        /// The upper bound.
        hi: Arg,
    },
    /// `where_(cond, a, b)`; the condition is the first input, of any dtype.
    Where {
        /// Taken where the condition is non-zero.
        a: Arg,
        /// Taken elsewhere.
        b: Arg,
    },
    /// `map((&x, &w), |(x, w)| x * w.cast(T))`, `w` the second input, of another dtype.
    MapScaled,
    /// `device.arange(start, stop, step)`, each converted to the dtype first.
    Arange {
        /// First value.
        start: f64,
        /// End (excluded).
        stop: f64,
        /// Step.
        step: f64,
    },
    /// `device.linspace(start, stop, num)`.
    Linspace {
        /// First value.
        start: f64,
        /// Last value.
        stop: f64,
        /// Number of values.
        num: usize,
    },
    /// `device.eye(n)`.
    Eye(usize),
    /// `device.ones(dims)`.
    Ones(Vec<usize>),
    /// `x.zeros_like()`.
    ZerosLike,
    /// `x.ones_like()`.
    OnesLike,
    /// `x.full_like(v)`.
    FullLike(f64),
}

/// A call through the array API whose result has the element type `dtype`.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayCall {
    /// The element type `T` of the arrays the call takes and gives (a `where_` condition
    /// and a `map`'s second input have their own).
    pub dtype: DType,
    /// What it computes.
    pub kind: CallKind,
}

/// `v` as a scalar of `dtype`: rounded to a float dtype, truncated and saturated to an
/// integer one (the corpus's scalars are integral there and in range).
pub fn scalar_of(v: f64, dtype: DType) -> Scalar {
    scalar::cast(Scalar::F64(v), dtype)
}

/// An operand in words: `array`, or the scalar as the dtype holds it.
fn describe_arg(a: Arg, dtype: DType) -> String {
    match a {
        Arg::Array => "array".into(),
        Arg::Scalar(v) => scalar_of(v, dtype).to_string(),
    }
}

/// The Rust operator of a binary op.
fn symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Rem => "%",
        _ => op.name(),
    }
}

impl ArrayCall {
    /// What it computes, in words.
    pub fn describe(&self) -> String {
        let t = self.dtype;
        match &self.kind {
            CallKind::Operator { op, rhs } => format!("&a {} {} ({t})", symbol(*op), describe_arg(*rhs, t)),
            CallKind::ScalarLeft { op, lhs } => format!("{} {} &a ({t})", scalar_of(*lhs, t), symbol(*op)),
            CallKind::Negate => format!("-&a ({t})"),
            CallKind::Assign(op) => format!("acc = Ok(a); acc {}= &b ({t})", symbol(*op)),
            CallKind::ChainLeft => format!("&x * 2 + &y ({t})"),
            CallKind::ChainRight => format!("&y - &x * 2 ({t})"),
            CallKind::Method(m) => format!("x.{}() ({t})", m.name()),
            CallKind::WithOperand { op, rhs } => {
                let name = match op {
                    BinaryOp::Max => "maximum",
                    BinaryOp::Min => "minimum",
                    _ => op.name(),
                };
                format!("x.{name}({}) ({t})", describe_arg(*rhs, t))
            }
            CallKind::Clip { lo, hi } => format!("x.clip({}, {}) ({t})", describe_arg(*lo, t), describe_arg(*hi, t)),
            CallKind::Where { a, b } => format!("where_(cond, {}, {}) ({t})", describe_arg(*a, t), describe_arg(*b, t)),
            CallKind::MapScaled => format!("map((&x, &w), |(x, w)| x * w.cast({t}))"),
            CallKind::Arange { start, stop, step } => {
                let [a, b, s] = [start, stop, step].map(|v| scalar_of(*v, t));
                format!("arange({a}, {b}, {s})")
            }
            CallKind::Linspace { start, stop, num } => {
                format!("linspace({}, {}, {num})", scalar_of(*start, t), scalar_of(*stop, t))
            }
            CallKind::Eye(n) => format!("eye::<{t}>({n})"),
            CallKind::Ones(dims) => format!("ones::<{t}>({dims:?})"),
            CallKind::ZerosLike => format!("x.zeros_like() ({t})"),
            CallKind::OnesLike => format!("x.ones_like() ({t})"),
            CallKind::FullLike(v) => format!("x.full_like({}) ({t})", scalar_of(*v, t)),
        }
    }

    /// The inputs that are elementwise operands, broadcast together (all but a `map`'s or a
    /// constructor's).
    fn broadcast_inputs(&self) -> bool {
        !matches!(
            self.kind,
            CallKind::Arange { .. }
                | CallKind::Linspace { .. }
                | CallKind::Eye(_)
                | CallKind::Ones(_)
                | CallKind::ZerosLike
                | CallKind::OnesLike
                | CallKind::FullLike(_)
        )
    }

    /// The result's dtype and shape for inputs of `dims`, as the array API's validation gives
    /// them (core's broadcasting, numpy's constructor lengths).
    pub fn output(&self, dims: &[Vec<usize>]) -> Result<(DType, Shape)> {
        let shape = if self.broadcast_inputs() {
            let mut shape = Shape::scalar();
            for d in dims {
                shape = shape.broadcast(&Shape::new(d)?, "array call")?;
            }
            shape
        } else {
            match &self.kind {
                CallKind::Arange { start, stop, step } => Shape::new(&[arange_len(self.dtype, *start, *stop, *step)])?,
                CallKind::Linspace { num, .. } => Shape::new(&[*num])?,
                CallKind::Eye(n) => Shape::new(&[*n, *n])?,
                CallKind::Ones(d) => Shape::new(d)?,
                _ => Shape::new(dims.first().map_or(&[][..], |d| d.as_slice()))?,
            }
        };
        if let CallKind::Linspace { .. } = self.kind {
            if !self.dtype.is_float() {
                return Err(Error::Unsupported { op: "linspace".into(), dtype: self.dtype, device: None });
            }
        }
        Ok((self.dtype, shape))
    }

    /// The tolerance: the underlying `Expr` op's (the constructors' values are computed on the
    /// host and uploaded, so they are exact).
    pub fn tolerance(&self) -> Tolerance {
        let t = self.dtype;
        match &self.kind {
            CallKind::Operator { op, .. }
            | CallKind::ScalarLeft { op, .. }
            | CallKind::Assign(op)
            | CallKind::WithOperand { op, .. } => tolerance::binary(*op, t),
            CallKind::Negate => tolerance::unary(UnaryOp::Neg, t),
            CallKind::Method(Method::Unary(op)) => tolerance::unary(*op, t),
            CallKind::Method(Method::Square) => tolerance::binary(BinaryOp::Mul, t),
            // Two correctly rounded ops, each rounded once as the reference does.
            CallKind::ChainLeft | CallKind::ChainRight => {
                looser(tolerance::binary(BinaryOp::Mul, t), tolerance::binary(BinaryOp::Add, t))
            }
            // max, min, select, an exact cast and one multiplication: exact.
            CallKind::Clip { .. } | CallKind::Where { .. } => Tolerance::Exact,
            CallKind::MapScaled => tolerance::binary(BinaryOp::Mul, t),
            _ => Tolerance::Exact,
        }
    }

    /// The row of `polycompute check`: the `Expr` op's name where the call is one op.
    pub fn row(&self) -> &'static str {
        match &self.kind {
            CallKind::Operator { op, .. } | CallKind::ScalarLeft { op, .. } | CallKind::Assign(op) => op.name(),
            CallKind::Negate => "neg",
            CallKind::ChainLeft | CallKind::ChainRight => "array_chain",
            CallKind::Method(Method::Unary(op)) => op.name(),
            CallKind::Method(Method::Square) => "square",
            CallKind::WithOperand { op: BinaryOp::Max, .. } => "maximum",
            CallKind::WithOperand { op: BinaryOp::Min, .. } => "minimum",
            CallKind::WithOperand { op, .. } => op.name(),
            CallKind::Clip { .. } => "clip",
            CallKind::Where { .. } => "where",
            CallKind::MapScaled => "map_mixed",
            CallKind::Arange { .. } => "arange",
            CallKind::Linspace { .. } => "linspace",
            CallKind::Eye(_) => "eye",
            CallKind::Ones(_) => "ones",
            CallKind::ZerosLike => "zeros_like",
            CallKind::OnesLike => "ones_like",
            CallKind::FullLike(_) => "full_like",
        }
    }
}

/// numpy's `arange` length for bounds converted to `dtype` first: `ceil((stop - start) /
/// step)`, exact for integers, never below 0.
pub(crate) fn arange_len(dtype: DType, start: f64, stop: f64, step: f64) -> usize {
    let [a, b, s] = [start, stop, step].map(|v| scalar_of(v, dtype).to_f64());
    if dtype.is_int() {
        let (span, s) = (b as i128 - a as i128, s as i128);
        // ceil(span / s) from the truncated quotient: one more when inexact and positive.
        let n = span / s + i128::from(span % s != 0 && (span < 0) == (s < 0));
        n.max(0) as usize
    } else {
        ((b - a) / s).ceil().max(0.0) as usize
    }
}

/// The looser of two exact or ULP tolerances.
fn looser(a: Tolerance, b: Tolerance) -> Tolerance {
    match (a, b) {
        (Tolerance::Exact, t) | (t, Tolerance::Exact) => t,
        (Tolerance::Ulp { ulp: u, abs: x }, Tolerance::Ulp { ulp: v, abs: y }) => {
            Tolerance::Ulp { ulp: u.max(v), abs: x.max(y) }
        }
        _ => Tolerance::Bound,
    }
}

// ---- Running a call through the public API ----

/// `s op &x` with the scalar on the left: the operator impls exist per element type (the
/// scalar's type names it), so this is one impl per dtype.
pub trait ScalarLeft: Element {
    /// `self op x`.
    fn left(self, op: BinaryOp, x: &DeviceArray<Self>) -> Result<DeviceArray<Self>>;
}

macro_rules! scalar_left {
    ($($t:ty),*) => {$(
        impl ScalarLeft for $t {
            fn left(self, op: BinaryOp, x: &DeviceArray<$t>) -> Result<DeviceArray<$t>> {
                match op {
                    BinaryOp::Add => self + x,
                    BinaryOp::Sub => self - x,
                    BinaryOp::Mul => self * x,
                    BinaryOp::Div => self / x,
                    BinaryOp::Rem => self % x,
                    _ => Err(not_an_operator(op)),
                }
            }
        }
    )*};
}

scalar_left!(f32, f64, i32, u32, f16, bf16, i64, u8, bool);

fn not_an_operator(op: BinaryOp) -> Error {
    Error::InvalidArgument { op: "corpus", argument: "op", why: format!("{} has no Rust operator", op.name()) }
}

fn bad_inputs(why: &str) -> Error {
    Error::InvalidArgument { op: "corpus", argument: "inputs", why: why.into() }
}

/// The case's inputs, uploaded one at a time as the call takes them.
struct Uploads<'a> {
    device: &'a Device,
    rest: std::slice::Iter<'a, Input>,
}

impl<'a> Uploads<'a> {
    fn raw(&mut self) -> Result<&'a Input> {
        self.rest.next().ok_or_else(|| bad_inputs("fewer inputs than the call takes"))
    }

    fn array<T: Element>(&mut self) -> Result<DeviceArray<T>> {
        let (dims, v) = self.raw()?;
        let found = v.dtype();
        let data = T::from_host_vec(v.clone()).ok_or(Error::DTypeMismatch {
            context: "corpus input".into(),
            expected: T::DTYPE,
            found,
        })?;
        self.device.from_slice(&data, dims)
    }

    fn operand<T: Element>(&mut self, arg: Arg) -> Result<Operand<T>> {
        Ok(match arg {
            Arg::Array => Operand::Array(self.array()?),
            Arg::Scalar(v) => Operand::Scalar(typed(v)?),
        })
    }
}

/// `v` as a `T` ([`scalar_of`]).
fn typed<T: Element>(v: f64) -> Result<T> {
    T::from_scalar(scalar_of(v, T::DTYPE)).ok_or_else(|| bad_inputs("scalar of another dtype"))
}

/// Runs `call` on `device` through `DeviceArray` and downloads the result.
pub fn execute(device: &Device, call: &ArrayCall, inputs: &[Input]) -> Result<HostVec> {
    match call.dtype {
        DType::F32 => run::<f32>(device, call, inputs),
        DType::F64 => run::<f64>(device, call, inputs),
        DType::I32 => run::<i32>(device, call, inputs),
        DType::U32 => run::<u32>(device, call, inputs),
        DType::F16 => run::<f16>(device, call, inputs),
        DType::BF16 => run::<bf16>(device, call, inputs),
        DType::I64 => run::<i64>(device, call, inputs),
        DType::U8 => run::<u8>(device, call, inputs),
        DType::Bool => run::<bool>(device, call, inputs),
    }
}

/// `&a op &b` with the operators.
fn arrays<T: Element>(op: BinaryOp, a: &DeviceArray<T>, b: &DeviceArray<T>) -> Result<DeviceArray<T>> {
    match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Rem => a % b,
        _ => Err(not_an_operator(op)),
    }
}

/// `&a op s` with the operators.
fn with_scalar<T: Element>(op: BinaryOp, a: &DeviceArray<T>, s: T) -> Result<DeviceArray<T>> {
    match op {
        BinaryOp::Add => a + s,
        BinaryOp::Sub => a - s,
        BinaryOp::Mul => a * s,
        BinaryOp::Div => a / s,
        BinaryOp::Rem => a % s,
        _ => Err(not_an_operator(op)),
    }
}

fn assign<T: Element>(op: BinaryOp, a: DeviceArray<T>, b: &DeviceArray<T>) -> Result<DeviceArray<T>> {
    let mut acc: Result<DeviceArray<T>> = Ok(a);
    match op {
        BinaryOp::Add => acc += b,
        BinaryOp::Sub => acc -= b,
        BinaryOp::Mul => acc *= b,
        BinaryOp::Div => acc /= b,
        BinaryOp::Rem => acc %= b,
        _ => return Err(not_an_operator(op)),
    }
    acc
}

fn method<T: Element>(m: Method, x: &DeviceArray<T>) -> Result<DeviceArray<T>> {
    use UnaryOp::*;
    match m {
        Method::Square => x.square(),
        Method::Unary(op) => match op {
            Neg => x.neg(),
            Abs => x.abs(),
            Sqrt => x.sqrt(),
            Recip => x.recip(),
            Exp => x.exp(),
            Ln => x.log(),
            Sin => x.sin(),
            Cos => x.cos(),
            Tan => x.tan(),
            Tanh => x.tanh(),
            Floor => x.floor(),
            Ceil => x.ceil(),
            Round => x.round(),
            // No method of that name (yet): the corpus lists none.
            _ => Err(Error::InvalidArgument {
                op: "corpus",
                argument: "method",
                why: format!("no method {}", op.name()),
            }),
        },
    }
}

fn run<T: Element + ScalarLeft>(device: &Device, call: &ArrayCall, inputs: &[Input]) -> Result<HostVec> {
    let mut up = Uploads { device, rest: inputs.iter() };
    let out: DeviceArray<T> = match &call.kind {
        CallKind::Operator { op, rhs: Arg::Array } => arrays(*op, &up.array()?, &up.array()?)?,
        CallKind::Operator { op, rhs: Arg::Scalar(s) } => with_scalar(*op, &up.array()?, typed(*s)?)?,
        CallKind::ScalarLeft { op, lhs } => typed::<T>(*lhs)?.left(*op, &up.array()?)?,
        CallKind::Negate => (-&up.array::<T>()?)?,
        CallKind::Assign(op) => {
            let a = up.array()?;
            assign(*op, a, &up.array()?)?
        }
        CallKind::ChainLeft => {
            let (x, y) = (up.array::<T>()?, up.array::<T>()?);
            (&x * typed::<T>(2.0)? + &y)?
        }
        CallKind::ChainRight => {
            let (x, y) = (up.array::<T>()?, up.array::<T>()?);
            (&y - &x * typed::<T>(2.0)?)?
        }
        CallKind::Method(m) => method(*m, &up.array()?)?,
        CallKind::WithOperand { op, rhs } => {
            let x = up.array::<T>()?;
            let rhs = up.operand(*rhs)?;
            match op {
                BinaryOp::Max => x.maximum(rhs)?,
                BinaryOp::Min => x.minimum(rhs)?,
                BinaryOp::Pow => x.pow(rhs)?,
                _ => return Err(not_an_operator(*op)),
            }
        }
        CallKind::Clip { lo, hi } => {
            let x = up.array::<T>()?;
            let lo = up.operand(*lo)?;
            x.clip(lo, up.operand(*hi)?)?
        }
        CallKind::Where { a, b } => {
            let (dims, cond) = up.raw()?;
            let (a, b) = (up.operand::<T>(*a)?, up.operand::<T>(*b)?);
            match cond {
                HostVec::F32(v) => where_(&device.from_slice(v, dims)?, a, b)?,
                HostVec::F64(v) => where_(&device.from_slice(v, dims)?, a, b)?,
                HostVec::I32(v) => where_(&device.from_slice(v, dims)?, a, b)?,
                HostVec::U32(v) => where_(&device.from_slice(v, dims)?, a, b)?,
                HostVec::F16(v) => where_(&device.from_slice(v, dims)?, a, b)?,
                HostVec::BF16(v) => where_(&device.from_slice(v, dims)?, a, b)?,
                HostVec::I64(v) => where_(&device.from_slice(v, dims)?, a, b)?,
                HostVec::U8(v) => where_(&device.from_slice(v, dims)?, a, b)?,
                HostVec::Bool(v) => where_(&device.from_slice(v, dims)?, a, b)?,
            }
        }
        CallKind::MapScaled => {
            let x = up.array::<T>()?;
            let (dims, w) = up.raw()?;
            match w {
                HostVec::F32(v) => scaled(&x, &device.from_slice(v, dims)?)?,
                HostVec::F64(v) => scaled(&x, &device.from_slice(v, dims)?)?,
                HostVec::I32(v) => scaled(&x, &device.from_slice(v, dims)?)?,
                HostVec::U32(v) => scaled(&x, &device.from_slice(v, dims)?)?,
                HostVec::F16(v) => scaled(&x, &device.from_slice(v, dims)?)?,
                HostVec::BF16(v) => scaled(&x, &device.from_slice(v, dims)?)?,
                HostVec::I64(v) => scaled(&x, &device.from_slice(v, dims)?)?,
                HostVec::U8(v) => scaled(&x, &device.from_slice(v, dims)?)?,
                HostVec::Bool(v) => scaled(&x, &device.from_slice(v, dims)?)?,
            }
        }
        CallKind::Arange { start, stop, step } => device.arange(typed(*start)?, typed(*stop)?, typed(*step)?)?,
        CallKind::Linspace { start, stop, num } => device.linspace(typed(*start)?, typed(*stop)?, *num)?,
        CallKind::Eye(n) => device.eye(*n)?,
        CallKind::Ones(dims) => device.ones(dims)?,
        CallKind::ZerosLike => up.array::<T>()?.zeros_like()?,
        CallKind::OnesLike => up.array::<T>()?.ones_like()?,
        CallKind::FullLike(v) => up.array::<T>()?.full_like(typed(*v)?)?,
    };
    download(&out)
}

/// `x * w.cast(T)` over a tuple of two dtypes.
fn scaled<T: Element, W: Element>(x: &DeviceArray<T>, w: &DeviceArray<W>) -> Result<DeviceArray<T>> {
    map((x, w), |(x, w)| x * w.cast(T::DTYPE))
}

fn download<U: Element>(a: &DeviceArray<U>) -> Result<HostVec> {
    let plain = a.contiguous()?;
    let backend = a.device().backend();
    backend.synchronize()?;
    backend.download(plain.buffer()?)
}

// ---- The cases ----

/// The operators' ops.
const OPERATORS: [BinaryOp; 5] = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Rem];

/// Adds every case, in a fixed order.
pub(crate) fn add_all(add: &mut Add<'_>) {
    for dtype in DTYPES {
        operators(add, dtype);
        methods(add, dtype);
        operand_methods(add, dtype);
        clip(add, dtype);
        wheres(add, dtype);
        mixed_maps(add, dtype);
        constructors(add, dtype);
    }
}

/// `-3`, `0.5` and `-0.0` in a case name: `m3`, `0p5`, `m0`.
fn num(v: f64) -> String {
    let text = if v == 0.0 && v.is_sign_negative() { "-0".into() } else { format!("{v}") };
    text.replace('-', "m").replace('.', "p")
}

fn case(add: &mut Add<'_>, name: String, call: ArrayCall, inputs: Vec<InputSpec>) {
    let (dtype, row, tol) = (call.dtype, call.row(), call.tolerance());
    add(format!("array_{name}"), row, dtype, CaseOp::Array(call), inputs, tol);
}

fn call(dtype: DType, kind: CallKind) -> ArrayCall {
    ArrayCall { dtype, kind }
}

/// Whole numbers in `[lo, hi]`, `lo` raised to 0 for `u32`.
fn ints(dtype: DType, lo: i64, hi: i64) -> Gen {
    Gen::Ints { lo: if dtype == DType::U32 { lo.max(0) } else { lo }, hi }
}

/// `v`, or its magnitude for `u32` (which has no negative scalars).
fn signed(dtype: DType, v: f64) -> f64 {
    if dtype == DType::U32 {
        v.abs()
    } else {
        v
    }
}

/// Philox inputs of an operator: (lhs, rhs).
fn domain(op: BinaryOp, dtype: DType) -> (Gen, Gen) {
    let raw = Gen::Wide { max_exp: 0 };
    match op {
        BinaryOp::Div | BinaryOp::Rem if dtype.is_int() => (raw, ints(dtype, -10, 10)),
        _ if dtype.is_int() => (raw.clone(), raw),
        // f16's finite range ends below 2^16: products of 2^±7 stay inside it.
        _ if dtype == DType::F16 => (Gen::Wide { max_exp: 7 }, Gen::Wide { max_exp: 7 }),
        _ => (Gen::Wide { max_exp: 20 }, Gen::Wide { max_exp: 20 }),
    }
}

fn operators(add: &mut Add<'_>, dtype: DType) {
    let t = dtype;
    let n = specials_len(t);
    for op in OPERATORS {
        let name = op.name();
        let (a, b) = domain(op, t);
        let kind = CallKind::Operator { op, rhs: Arg::Array };
        // Broadcast: [2, 1, 3] with [4, 3]; [3] with a 0-d array; every special against every
        // special (division by zero, MIN / -1, wrapping, NaN, the zeros).
        let ins = vec![input(&[2, 1, 3], t, a.clone()), input(&[4, 3], t, b.clone())];
        case(add, format!("{name}_{t}_2x1x3_4x3"), call(t, kind.clone()), ins);
        let ins = vec![input(&[3], t, a.clone()), input(&[], t, b.clone())];
        case(add, format!("{name}_{t}_3_0d"), call(t, kind.clone()), ins);
        let ins = vec![input(&[n, 1], t, Gen::Specials), input(&[1, n], t, Gen::Specials)];
        case(add, format!("{name}_{t}_{n}x{n}_specials"), call(t, kind), ins);
        // A scalar on the right: the specials by 3 (and, for / and %, by 0).
        let mut scalars = vec![signed(t, -3.0)];
        if matches!(op, BinaryOp::Div | BinaryOp::Rem) {
            scalars.push(0.0);
        }
        for s in scalars {
            let kind = CallKind::Operator { op, rhs: Arg::Scalar(s) };
            let ins = vec![input(&[n], t, Gen::Specials)];
            case(add, format!("{name}_{t}_{n}_specials_scalar_{}", num(s)), call(t, kind), ins);
        }
        // A scalar on the left: 7 - x, 7 / x (x = 0 among the specials), 7 % x.
        let kind = CallKind::ScalarLeft { op, lhs: 7.0 };
        case(add, format!("{name}_{t}_scalar_7_{n}_specials"), call(t, kind), vec![input(&[n], t, Gen::Specials)]);
        // Compound assignment on a Result.
        let ins = vec![input(&[4, 3], t, a), input(&[3], t, b)];
        case(add, format!("{name}_assign_{t}_4x3_3"), call(t, CallKind::Assign(op)), ins);
    }
    let ins = vec![input(&[n], t, Gen::Specials)];
    case(add, format!("neg_operator_{t}_{n}_specials"), call(t, CallKind::Negate), ins);
    let (a, b) = domain(BinaryOp::Add, t);
    let ins = vec![input(&[0, 3], t, a.clone()), input(&[3], t, b.clone())];
    case(add, format!("add_{t}_0x3_3"), call(t, CallKind::Operator { op: BinaryOp::Add, rhs: Arg::Array }), ins);
    let ins = || vec![input(&[4, 3], t, a.clone()), input(&[3], t, b.clone())];
    case(add, format!("chain_left_{t}_4x3_3"), call(t, CallKind::ChainLeft), ins());
    case(add, format!("chain_right_{t}_4x3_3"), call(t, CallKind::ChainRight), ins());
}

/// The methods without arguments, in the order of `core/src/array/elementwise.rs`.
const METHODS: [Method; 14] = [
    Method::Unary(UnaryOp::Neg),
    Method::Unary(UnaryOp::Abs),
    Method::Unary(UnaryOp::Sqrt),
    Method::Unary(UnaryOp::Recip),
    Method::Unary(UnaryOp::Exp),
    Method::Unary(UnaryOp::Ln),
    Method::Unary(UnaryOp::Sin),
    Method::Unary(UnaryOp::Cos),
    Method::Unary(UnaryOp::Tan),
    Method::Unary(UnaryOp::Tanh),
    Method::Unary(UnaryOp::Floor),
    Method::Unary(UnaryOp::Ceil),
    Method::Unary(UnaryOp::Round),
    Method::Square,
];

fn methods(add: &mut Add<'_>, dtype: DType) {
    let n = specials_len(dtype);
    for m in METHODS {
        if matches!(m, Method::Unary(op) if op.float_only() && dtype.is_int()) {
            continue;
        }
        let ins = vec![input(&[n], dtype, Gen::Specials)];
        case(add, format!("{}_{dtype}_{n}_specials", m.name()), call(dtype, CallKind::Method(m)), ins);
    }
}

fn operand_methods(add: &mut Add<'_>, dtype: DType) {
    let t = dtype;
    let n = specials_len(t);
    for (op, name) in [(BinaryOp::Max, "maximum"), (BinaryOp::Min, "minimum"), (BinaryOp::Pow, "pow")] {
        let kind = CallKind::WithOperand { op, rhs: Arg::Array };
        let ins = vec![input(&[n, 1], t, Gen::Specials), input(&[1, n], t, Gen::Specials)];
        case(add, format!("{name}_{t}_{n}x{n}_specials"), call(t, kind.clone()), ins);
        let (a, b) = match op {
            BinaryOp::Pow if t.is_int() => (Gen::Wide { max_exp: 0 }, ints(t, -2, 40)),
            BinaryOp::Pow => (Gen::Uniform { lo: 0.5, hi: 4.0 }, Gen::Uniform { lo: -4.0, hi: 4.0 }),
            _ => domain(op, t),
        };
        let ins = vec![input(&[2, 1, 3], t, a), input(&[4, 3], t, b)];
        case(add, format!("{name}_{t}_2x1x3_4x3"), call(t, kind), ins);
        // Scalars: relu's 0 (maximum(-0.0, 0.0) is 0.0), -0.0 (minimum(0.0, -0.0) is -0.0),
        // and pow's squares, roots, 0 (1 even for NaN) and -1.
        let scalars: Vec<f64> = match op {
            BinaryOp::Max => vec![0.0],
            BinaryOp::Min => vec![-0.0],
            _ if t == DType::U32 => vec![3.0, 0.0],
            _ if t.is_int() => vec![3.0, 0.0, -1.0],
            _ => vec![2.0, 0.5, 0.0, -1.0],
        };
        for s in scalars {
            let kind = CallKind::WithOperand { op, rhs: Arg::Scalar(s) };
            let ins = vec![input(&[n], t, Gen::Specials)];
            case(add, format!("{name}_{t}_{n}_specials_scalar_{}", num(s)), call(t, kind), ins);
        }
    }
}

fn clip(add: &mut Add<'_>, dtype: DType) {
    let t = dtype;
    let n = specials_len(t);
    let (lo, hi) = if t == DType::U32 { (1.0, 1000.0) } else { (-1.0, 1.0) };
    // NaN stays NaN; lo > hi gives hi everywhere.
    for (l, h, what) in [(lo, hi, "lo_below_hi"), (hi, lo, "lo_above_hi")] {
        let kind = CallKind::Clip { lo: Arg::Scalar(l), hi: Arg::Scalar(h) };
        let ins = vec![input(&[n], t, Gen::Specials)];
        case(add, format!("clip_{t}_{n}_specials_{}_{}_{what}", num(l), num(h)), call(t, kind), ins);
    }
    // Array bounds that broadcast: x [4, 3], lo [3], hi [4, 1] (some rows lo > hi).
    let x = if t.is_int() { ints(t, -20, 20) } else { Gen::Uniform { lo: -4.0, hi: 4.0 } };
    let (l, h) = (ints(t, -8, 2), ints(t, -2, 8));
    let kind = CallKind::Clip { lo: Arg::Array, hi: Arg::Array };
    let ins = vec![input(&[4, 3], t, x), input(&[3], t, l), input(&[4, 1], t, h)];
    case(add, format!("clip_{t}_4x3_lo_3_hi_4x1"), call(t, kind), ins);
    // Every special as the lower bound (NaN, -0.0, infinities) of every special, hi a scalar.
    let kind = CallKind::Clip { lo: Arg::Array, hi: Arg::Scalar(hi) };
    let ins = vec![input(&[1, n], t, Gen::Specials), input(&[n, 1], t, Gen::Specials)];
    case(add, format!("clip_{t}_{n}x{n}_specials_lo_array_hi_{}", num(hi)), call(t, kind), ins);
}

fn wheres(add: &mut Add<'_>, dtype: DType) {
    let t = dtype;
    // A condition of another dtype: a float one (NaN is true, -0.0 false), an integer one.
    let float_cond = if t == DType::F32 { DType::BF16 } else { DType::F32 };
    let int_cond = if t == DType::I32 { DType::U32 } else { DType::I32 };
    let (a, b) = domain(BinaryOp::Add, t);
    let (nf, ni) = (specials_len(float_cond), specials_len(int_cond));
    // All three broadcast: [n, 1], [1, 7], [7].
    let kind = CallKind::Where { a: Arg::Array, b: Arg::Array };
    let ins = vec![input(&[nf, 1], float_cond, Gen::Specials), input(&[1, 7], t, a.clone()), input(&[7], t, b)];
    case(add, format!("where_{t}_cond_{float_cond}_{nf}x1_1x7_7"), call(t, kind), ins);
    // Scalar branches.
    let (x, y) = (signed(t, -1.0), 2.0);
    let kind = CallKind::Where { a: Arg::Scalar(x), b: Arg::Scalar(y) };
    let ins = vec![input(&[ni], int_cond, Gen::Specials)];
    case(add, format!("where_{t}_cond_{int_cond}_{ni}_scalars_{}_{}", num(x), num(y)), call(t, kind), ins);
    // An array and a scalar: [n, 1] and [1, 5].
    let kind = CallKind::Where { a: Arg::Array, b: Arg::Scalar(0.0) };
    let ins = vec![input(&[nf, 1], float_cond, Gen::Specials), input(&[1, 5], t, a)];
    case(add, format!("where_{t}_cond_{float_cond}_{nf}x1_1x5_scalar_0"), call(t, kind), ins);
}

fn mixed_maps(add: &mut Add<'_>, dtype: DType) {
    let t = dtype;
    let x = if t.is_int() { Gen::Wide { max_exp: 0 } } else { Gen::Uniform { lo: -4.0, hi: 4.0 } };
    for w in [DType::I32, DType::U32, DType::F16].into_iter().filter(|&w| w != t) {
        let ins = vec![input(&[4, 3], t, x.clone()), input(&[3], w, ints(w, -3, 3))];
        case(add, format!("map_{t}_times_{w}_4x3_3"), call(t, CallKind::MapScaled), ins);
    }
}

fn constructors(add: &mut Add<'_>, dtype: DType) {
    let t = dtype;
    // (start, stop, step): integral ones on every dtype (negative steps and empty ranges
    // where the dtype has them), fractional ones on floats (0.1 rounds first in the halves).
    let mut ranges: Vec<(f64, f64, f64)> = vec![(0.0, 10.0, 3.0), (3.0, 3.0, 1.0), (2.0, 100.0, 7.0)];
    if t != DType::U32 {
        ranges.extend([(5.0, -5.0, -2.0), (0.0, 5.0, -1.0), (-3.0, 4.0, 1.0)]);
    }
    if t.is_float() {
        ranges.extend([(1.0, 0.0, -0.25), (0.0, 1.0, 0.1), (-2.5, 2.5, 0.7), (1.0, 0.0, 0.5)]);
    }
    for (start, stop, step) in ranges {
        let kind = CallKind::Arange { start, stop, step };
        case(add, format!("arange_{t}_{}_{}_{}", num(start), num(stop), num(step)), call(t, kind), vec![]);
    }
    if t.is_float() {
        for (start, stop, num_) in
            [(0.0, 1.0, 0), (0.0, 1.0, 1), (0.0, 1.0, 2), (0.0, 1.0, 7), (-1.0, 3.3, 7), (2.0, -1.0, 7)]
        {
            let kind = CallKind::Linspace { start, stop, num: num_ };
            case(add, format!("linspace_{t}_{}_{}_{num_}", num(start), num(stop)), call(t, kind), vec![]);
        }
    }
    for n in [0, 1, 5] {
        case(add, format!("eye_{t}_{n}"), call(t, CallKind::Eye(n)), vec![]);
    }
    for dims in [&[2, 3][..], &[], &[0, 4]] {
        case(add, format!("ones_{t}_{}", label(dims)), call(t, CallKind::Ones(dims.to_vec())), vec![]);
    }
    let x = || vec![input(&[3, 1, 2], t, Gen::Wide { max_exp: 0 })];
    case(add, format!("zeros_like_{t}_3x1x2"), call(t, CallKind::ZerosLike), x());
    case(add, format!("ones_like_{t}_3x1x2"), call(t, CallKind::OnesLike), x());
    let v = match t {
        DType::U32 => 7.0,
        DType::I32 => -7.0,
        _ => -0.0,
    };
    case(add, format!("full_like_{t}_3x1x2_{}", num(v)), call(t, CallKind::FullLike(v)), x());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls() -> Vec<(DType, ArrayCall, Vec<InputSpec>)> {
        crate::corpus()
            .into_iter()
            .filter_map(|c| match c.compute {
                CaseOp::Array(call) => Some((c.dtype, call, c.inputs)),
                _ => None,
            })
            .collect()
    }

    /// Every operator, method and constructor on every dtype it supports, each operator with
    /// arrays broadcast, a 0-d array, and a scalar on either side.
    #[test]
    fn every_call_has_cases_on_every_dtype_it_supports() {
        let all = calls();
        for dtype in DTYPES {
            let of = |t: DType| all.iter().filter(move |(d, _, _)| *d == t).map(|(_, c, i)| (c, i));
            for op in OPERATORS {
                let has = |f: &dyn Fn(&CallKind, &Vec<InputSpec>) -> bool| of(dtype).any(|(c, i)| f(&c.kind, i));
                let arrays = |k: &CallKind| matches!(k, CallKind::Operator { op: o, rhs: Arg::Array } if *o == op);
                assert!(has(&|k, i| arrays(k) && i[0].dims == [2, 1, 3] && i[1].dims == [4, 3]), "{op:?} {dtype}");
                assert!(has(&|k, i| arrays(k) && i[1].dims.is_empty()), "{op:?} {dtype} 0-d");
                assert!(has(&|k, _| matches!(k, CallKind::Operator { op: o, rhs: Arg::Scalar(_) } if *o == op)));
                assert!(has(&|k, _| matches!(k, CallKind::ScalarLeft { op: o, .. } if *o == op)));
                assert!(has(&|k, _| matches!(k, CallKind::Assign(o) if *o == op)));
            }
            for m in METHODS {
                let wanted = !matches!(m, Method::Unary(op) if op.float_only() && dtype.is_int());
                let has = of(dtype).any(|(c, _)| c.kind == CallKind::Method(m));
                assert_eq!(has, wanted, "{} {dtype}", m.name());
            }
            for row in ["neg", "array_chain", "maximum", "minimum", "pow", "clip", "where", "map_mixed", "arange"] {
                assert!(of(dtype).any(|(c, _)| c.row() == row), "{row} {dtype}");
            }
            for row in ["eye", "ones", "zeros_like", "ones_like", "full_like"] {
                assert!(of(dtype).any(|(c, _)| c.row() == row), "{row} {dtype}");
            }
            assert_eq!(of(dtype).any(|(c, _)| c.row() == "linspace"), dtype.is_float(), "linspace {dtype}");
            // where_'s condition is of another dtype.
            assert!(of(dtype).any(|(c, i)| matches!(c.kind, CallKind::Where { .. }) && i[0].dtype != dtype));
        }
    }

    #[test]
    fn arange_lengths_follow_numpy() {
        let len = |t, a, b, s| arange_len(t, a, b, s);
        assert_eq!(len(DType::I32, 0.0, 10.0, 3.0), 4);
        assert_eq!(len(DType::I32, 5.0, -5.0, -2.0), 5);
        assert_eq!(len(DType::I32, 0.0, 5.0, -1.0), 0);
        assert_eq!(len(DType::I32, -3.0, 4.0, 1.0), 7);
        assert_eq!(len(DType::U32, 2.0, 100.0, 7.0), 14);
        assert_eq!(len(DType::F64, 1.0, 0.0, -0.25), 4);
        assert_eq!(len(DType::F64, 0.0, 1.0, 0.1), 10);
        // 0.1 in f16 is 0.0999755859375: 1 / that is just above 10.
        assert_eq!(len(DType::F16, 0.0, 1.0, 0.1), 11);
        assert_eq!(num(-0.0), "m0");
        assert_eq!(num(0.25), "0p25");
    }
}
