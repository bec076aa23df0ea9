//! `Expr`, the elementwise expression IR, and [`Program`], its type-checked, flattened form
//! that every backend compiles.
//!
//! An `Expr` is built with operator overloading and methods, over the arguments a call
//! provides:
//!
//! ```
//! use polycompute_core::Expr;
//! let (x, y) = (Expr::arg(0), Expr::arg(1));
//! let e = &x * 2.0 + y.sin();
//! assert_eq!(e.to_string(), "add(mul(arg0, 2.0), sin(arg1))");
//! ```
//!
//! # Semantics (identical on every backend)
//!
//! * Operands of a binary op must have the same dtype. A Rust literal (`2.0`, `3`, from
//!   [`Expr::float`] / [`Expr::int`]) is *weak*, as a Python scalar is in numpy (NEP 50): it
//!   has no dtype of its own and takes one from its context, so no literal ever widens an
//!   array's computation (see [Literal typing](#literal-typing)). A float literal next to an
//!   integer operand, a negative literal next to a `u32`, or a literal out of range is an
//!   [`crate::Error::InvalidExpr`].
//! * Comparisons (`eq ne lt le gt ge`) give 1 or 0 **in the operands' dtype** (1.0/0.0 for
//!   floats), so a mask multiplies directly; `.cast(DType::Bool)` makes it a bool mask (what
//!   `DeviceArray::lt` and the other array comparisons compute). Any comparison with NaN is
//!   false, `ne` true.
//! * `select(c, a, b)` is `a` where `c != 0`, else `b`; `c` may have any dtype (NaN counts as
//!   non-zero, i.e. true).
//! * `min`/`max` propagate NaN (numpy's `minimum`/`maximum`) and order `-0.0` below `+0.0`
//!   (IEEE 754-2019 `minimum`/`maximum`): `min(-0.0, 0.0)` is `-0.0` whichever side it is on.
//! * Integer `+ - * neg abs` wrap (two's complement). Integer `div` is floor division and
//!   `rem` the floored remainder (sign of the divisor), as numpy's `//` and `%`; division or
//!   remainder by zero gives 0, `i32::MIN / -1` wraps to `i32::MIN`. Integer `pow` wraps;
//!   a negative exponent gives the truncated `1 / x^-e` (0 unless `|x| == 1`).
//! * Float `div` and `rem` follow IEEE 754 (`x / 0` is ±inf or NaN); float `rem` is numpy's
//!   `remainder`: `r = fmod(a, b)`; a non-zero `r` whose sign differs from `b`'s gets `b`
//!   added; a zero `r` takes the sign of `b`. Float `pow` is C's `pow`.
//! * `round` rounds half to even; `floor`, `ceil`, `round` are the identity on integers.
//! * `and`, `or`, `xor` are bitwise and defined for integers and bools only.
//! * **Bools** follow numpy 2: `add` is or, `mul` and, `max`/`min` or/and, `abs` the
//!   identity; `sub`, `div`, `rem`, `pow`, `neg` and the rest of the unary ops are an
//!   [`crate::Error::InvalidExpr`] naming the op and `bool` (numpy refuses or promotes them).
//! * The float-only functions (`sqrt recip exp expm1 ln log1p log2 log10 sin cos tan tanh`)
//!   on an integer operand are an `InvalidExpr`; cast first.
//! * `cast` to an integer from a float truncates toward zero and saturates at the target's
//!   range, NaN gives 0 (Rust's `as`); between integers it keeps the low bits (wrapping;
//!   `i32` and `u32` reinterpret each other's bits); to a float it rounds to nearest even; a
//!   bool is 0 or 1, and anything to bool is `!= 0` (NaN true, both zeros false).
//! * [`Expr::index`] is the flat row-major index of the output element, as `u32`.
//! * **Half dtypes** (`f16`, `bf16`): every instruction computes in f32 from its operands
//!   (widened exactly) and rounds its result once to the half, to nearest even — numpy's
//!   float16 rule, op by op, so `a * x + y` rounds the product and then the sum. Overflow
//!   gives ±Inf; subnormals, NaN and -0.0 are IEEE's. A float literal meeting a half operand
//!   is rounded once from its f64 value. A cast to a half rounds once from the exact value
//!   (f64, i32 and u32 directly, not through f32); a half to an integer follows the rule
//!   above. Mixing a half and f32 without a cast is a dtype mismatch, as for any two dtypes.
//!
//! ```
//! use polycompute_core::{f16, DType, Expr, Program, Scalar};
//! // 2049 is a tie in f16: it rounds to the even 2048.
//! let p = Program::compile(&(Expr::scalar(Scalar::F16(f16::from_f32(2048.0))) + 1), &[]).unwrap();
//! assert_eq!(p.insts[p.output()].op, polycompute_core::expr::InstOp::Lit(Scalar::F16(f16::from_f32(2048.0))));
//! assert_eq!(p.output_dtype(), DType::F16);
//! ```
//!
//! # Literal typing
//!
//! A literal's dtype is decided, in this order, by:
//!
//! 1. **the typed operand it meets**: in `x * 2.0` over an f32 array the `2.0` is an f32 and
//!    the product stays f32; in `x + 3` over f32 the `3` is `3.0f32`; a subexpression of
//!    literals (`x * (Expr::float(1.0) / 3.0)`) is computed in the dtype it meets;
//! 2. **its use**, when no typed operand is in reach (both branches of a `select`, a
//!    literal alone): a cast's target (`select(c, 1.0, 0.0).cast(F32)` selects between
//!    f32 constants and the cast disappears; `(Expr::int(7) / 2).cast(F32)` is 3.5,
//!    computed in f32), then the result dtype the caller asks for
//!    ([`Program::compile_to`]; `map`'s result type). A float literal never becomes an
//!    integer: cast to one, it is computed as f64 and converted;
//! 3. **the default**: `f64` for float literals, `i32` for integer ones
//!    (`Program::compile(&Expr::float(1.0), &[])` is an f64 constant).
//!
//! [`Expr::scalar`] makes a literal of a fixed dtype (`Scalar::I32(7)` divides as an
//! integer whatever its use). A typed value is never converted implicitly: only an
//! explicit [`Expr::cast`] changes a dtype, so `x.cast(DType::F64)` really computes in f64
//! (and a device without f64 reports `Unsupported`, naming that sub-expression).
//!
//! The compiler folds constants: an op whose operands are all literals (a cast of a
//! literal, `Expr::float(2.0).sqrt()`, a `select` with a constant condition) becomes the
//! constant it computes, in its resolved dtype, with the semantics above. So literals
//! reach a device only in the dtype of the computation they are part of.
//!
//! ```
//! use polycompute_core::{DType, Expr, Program};
//! let x = Expr::arg(0);
//! let f32_only = |e: &Expr| Program::compile(e, &[DType::F32]).unwrap().insts.iter().all(|i| i.dtype == DType::F32);
//! assert!(f32_only(&(&x * 2.0 + 1)));
//! assert!(f32_only(&Expr::select(x.clone().le(1.0), 1.0, 0.0).cast(DType::F32)));
//! assert!(f32_only(&(&x * Expr::float(2.0).sqrt())));
//! assert!(!f32_only(&x.cast(DType::F64).sqrt().cast(DType::F32)));
//! ```

pub(crate) mod cache;
mod fold;
mod ops;
mod program;

use std::fmt;
use std::sync::Arc;

use crate::dtype::{DType, Scalar};

pub use cache::compile_cached;
pub use program::{Inst, InstOp, Program};

/// An elementwise expression: a cheap-to-clone, immutable tree. Equal trees hash equally,
/// so a backend can cache what it compiled from one.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Expr(Arc<Node>);

/// One node of an [`Expr`].
#[derive(Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// The element of input `n`, broadcast to the output shape.
    Arg(usize),
    /// A constant.
    Lit(Literal),
    /// The flat index of the output element (`u32`).
    Index,
    /// A unary operation.
    Unary(UnaryOp, Expr),
    /// A binary operation.
    Binary(BinaryOp, Expr, Expr),
    /// `select(cond, then, else)`.
    Select(Expr, Expr, Expr),
    /// A conversion to another dtype.
    Cast(Expr, DType),
}

/// A constant in an [`Expr`]: typed, or a weak Rust literal that takes its dtype from its
/// context (see the module docs' "Literal typing").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Literal {
    /// A constant of a fixed dtype.
    Typed(Scalar),
    /// A float literal (stored by bits): f32 or f64, as its context decides.
    Float(u64),
    /// An integer literal: any dtype its context decides.
    Int(i64),
}

/// Declares [`UnaryOp`] and [`UnaryOp::ALL`] from one list, so no op can be left out of
/// `ALL` (every test, the conformance corpus and the NVRTC checks enumerate it).
macro_rules! unary_ops {
    ($($(#[$doc:meta])* $variant:ident),* $(,)?) => {
        /// The unary operations.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs)]
        pub enum UnaryOp {
            $($(#[$doc])* $variant,)*
        }

        impl UnaryOp {
            /// Every unary op.
            pub const ALL: [UnaryOp; [$(UnaryOp::$variant),*].len()] = [$(UnaryOp::$variant),*];
        }
    };
}

unary_ops!(
    Neg,
    Abs,
    Sqrt,
    Recip,
    Exp,
    /// `exp(x) - 1`, accurate for tiny `|x|`.
    Expm1,
    Ln,
    /// `ln(1 + x)`, accurate for tiny `|x|`.
    Log1p,
    /// The base-2 logarithm.
    Log2,
    /// The base-10 logarithm.
    Log10,
    Sin,
    Cos,
    Tan,
    Tanh,
    Floor,
    Ceil,
    /// Round half to even.
    Round,
);

impl UnaryOp {
    /// Lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Recip => "recip",
            UnaryOp::Exp => "exp",
            UnaryOp::Expm1 => "expm1",
            UnaryOp::Ln => "ln",
            UnaryOp::Log1p => "log1p",
            UnaryOp::Log2 => "log2",
            UnaryOp::Log10 => "log10",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Tan => "tan",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Round => "round",
        }
    }

    /// True for the ops defined on floats only. (A `match` without a catch-all, so a new op
    /// must be placed here.)
    pub const fn float_only(self) -> bool {
        match self {
            UnaryOp::Sqrt
            | UnaryOp::Recip
            | UnaryOp::Exp
            | UnaryOp::Expm1
            | UnaryOp::Ln
            | UnaryOp::Log1p
            | UnaryOp::Log2
            | UnaryOp::Log10
            | UnaryOp::Sin
            | UnaryOp::Cos
            | UnaryOp::Tan
            | UnaryOp::Tanh => true,
            UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round => false,
        }
    }
}

/// The binary operations.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
}

impl BinaryOp {
    /// Every binary op.
    pub const ALL: [BinaryOp; 17] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Rem,
        BinaryOp::Pow,
        BinaryOp::Min,
        BinaryOp::Max,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::Xor,
    ];

    /// Lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Rem => "rem",
            BinaryOp::Pow => "pow",
            BinaryOp::Min => "min",
            BinaryOp::Max => "max",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Xor => "xor",
        }
    }

    /// True for the comparisons, which give 1 or 0 in the operands' dtype.
    pub const fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
    }

    /// True for the bitwise ops, defined on integers only.
    pub const fn int_only(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor)
    }
}

impl Expr {
    fn new(node: Node) -> Expr {
        Expr(Arc::new(node))
    }

    /// The node at the root.
    pub fn node(&self) -> &Node {
        &self.0
    }

    /// Input `n` of the call.
    pub fn arg(n: usize) -> Expr {
        Expr::new(Node::Arg(n))
    }

    /// The flat index of the output element, as `u32`.
    pub fn index() -> Expr {
        Expr::new(Node::Index)
    }

    /// A constant of a fixed dtype.
    pub fn scalar(value: Scalar) -> Expr {
        Expr::new(Node::Lit(Literal::Typed(value)))
    }

    /// A weak float literal: it takes the dtype of the expression it meets, else of its use
    /// (a cast, the result), else f64 (module docs, "Literal typing").
    pub fn float(value: f64) -> Expr {
        Expr::new(Node::Lit(Literal::Float(value.to_bits())))
    }

    /// A weak integer literal: it takes the dtype of the expression it meets, else of its
    /// use (a cast, the result), else i32 (module docs, "Literal typing").
    pub fn int(value: i64) -> Expr {
        Expr::new(Node::Lit(Literal::Int(value)))
    }

    /// `self op rhs`. Methods take `&self` (an `Expr` is a shared handle), so one
    /// expression can be used many times without clones: `x.exp() * &x`.
    pub fn binary(&self, op: BinaryOp, rhs: impl Into<Expr>) -> Expr {
        Expr::new(Node::Binary(op, self.clone(), rhs.into()))
    }

    /// [`Expr::binary`] that moves `self` in (the operators on owned `Expr`s): one reference
    /// count fewer per node, which a small map's cost notices.
    pub(crate) fn into_binary(self, op: BinaryOp, rhs: impl Into<Expr>) -> Expr {
        Expr::new(Node::Binary(op, self, rhs.into()))
    }

    /// `op(self)`.
    pub fn unary(&self, op: UnaryOp) -> Expr {
        Expr::new(Node::Unary(op, self.clone()))
    }

    /// `then` where `cond != 0`, else `otherwise`.
    pub fn select(cond: impl Into<Expr>, then: impl Into<Expr>, otherwise: impl Into<Expr>) -> Expr {
        Expr::new(Node::Select(cond.into(), then.into(), otherwise.into()))
    }

    /// Converts to `dtype` (see the module docs for the exact rules).
    pub fn cast(&self, dtype: DType) -> Expr {
        Expr::new(Node::Cast(self.clone(), dtype))
    }
}

macro_rules! unary_methods {
    ($($name:ident => $op:ident),* $(,)?) => {
        impl Expr {
            $(
                #[doc = concat!("`", stringify!($name), "(self)`, elementwise.")]
                pub fn $name(&self) -> Expr {
                    self.unary(UnaryOp::$op)
                }
            )*
        }

        /// The ops that have an [`Expr`] method (a test checks that every op but `Neg`, which
        /// is `-x`, is here).
        #[cfg(test)]
        const METHOD_OPS: &[UnaryOp] = &[$(UnaryOp::$op),*];
    };
}

unary_methods!(
    abs => Abs, sqrt => Sqrt, recip => Recip, exp => Exp, expm1 => Expm1, ln => Ln,
    log1p => Log1p, log2 => Log2, log10 => Log10, sin => Sin, cos => Cos, tan => Tan,
    tanh => Tanh, floor => Floor, ceil => Ceil, round => Round,
);

impl Expr {
    /// The natural logarithm, numpy's name for [`Expr::ln`].
    pub fn log(&self) -> Expr {
        self.unary(UnaryOp::Ln)
    }
}

macro_rules! binary_methods {
    ($($name:ident => $op:ident),* $(,)?) => {
        impl Expr {
            $(
                #[doc = concat!("`", stringify!($name), "(self, rhs)`, elementwise.")]
                pub fn $name(&self, rhs: impl Into<Expr>) -> Expr {
                    self.binary(BinaryOp::$op, rhs)
                }
            )*
        }
    };
}

binary_methods!(
    pow => Pow, min => Min, max => Max, eq => Eq, ne => Ne, lt => Lt, le => Le, gt => Gt,
    ge => Ge, and => And, or => Or, xor => Xor,
);

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.node() {
            Node::Arg(n) => write!(f, "arg{n}"),
            Node::Index => write!(f, "index"),
            Node::Lit(Literal::Typed(s)) => write!(f, "{s}"),
            Node::Lit(Literal::Float(bits)) => write!(f, "{:?}", f64::from_bits(*bits)),
            Node::Lit(Literal::Int(v)) => write!(f, "{v}"),
            Node::Unary(op, a) => write!(f, "{}({a})", op.name()),
            Node::Binary(op, a, b) => write!(f, "{}({a}, {b})", op.name()),
            Node::Select(c, a, b) => write!(f, "select({c}, {a}, {b})"),
            Node::Cast(a, d) => write!(f, "cast({a}, {d})"),
        }
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unary_op_but_neg_has_an_expr_method() {
        for op in UnaryOp::ALL {
            assert_eq!(METHOD_OPS.contains(&op), op != UnaryOp::Neg, "{}", op.name());
        }
    }
}
