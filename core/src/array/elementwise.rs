//! Elementwise methods on arrays, numpy's names: `exp`, `log`, `sqrt`, `abs`, the
//! trigonometric functions, rounding, `maximum`/`minimum`, `pow`, `clip` and `where_`.
//! Each is one map (one kernel); their semantics are [`Expr`]'s (docs/conformance.md).
//!
//! ```
//! # extern crate polycompute_cpu; // links the CPU backend, as the facade does
//! # use polycompute_core::Device;
//! let x = Device::cpu().from_slice(&[-2.0f32, 0.5, 4.0], &[3])?;
//! assert_eq!(x.abs()?.sqrt()?.to_vec()?, vec![2f32.sqrt(), 0.5f32.sqrt(), 2.0]);
//! assert_eq!(x.clip(-1.0, 1.0)?.to_vec()?, vec![-1.0, 0.5, 1.0]);
//! assert_eq!(x.pow(2.0)?.to_vec()?, vec![4.0, 0.25, 16.0]);
//! # Ok::<(), polycompute_core::Error>(())
//! ```

use crate::array::map::MapInput;
use crate::array::operand::{elementwise, Operand};
use crate::array::DeviceArray;
use crate::dtype::Element;
use crate::error::Result;
use crate::expr::{BinaryOp, Expr, UnaryOp};

macro_rules! unary_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident),* $(,)?) => {
        impl<T: Element> DeviceArray<T> {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Result<DeviceArray<T>> {
                    self.unary(UnaryOp::$op)
                }
            )*
        }
    };
}

unary_methods!(
    /// `-x`; integers wrap (`-i32::MIN` is `i32::MIN`, `-x` of a `u32` is `0 - x`).
    neg => Neg,
    /// `|x|`; `abs(i32::MIN)` is `i32::MIN`, as in numpy.
    abs => Abs,
    /// The square root (floats); NaN below 0.
    sqrt => Sqrt,
    /// `1 / x` (floats).
    recip => Recip,
    /// `e^x` (floats).
    exp => Exp,
    /// `e^x - 1` (floats), accurate for tiny `|x|` (numpy's `expm1`).
    expm1 => Expm1,
    /// The natural logarithm (floats): `-inf` at 0, NaN below.
    log => Ln,
    /// `ln(1 + x)` (floats), accurate for tiny `|x|` (numpy's `log1p`): `-inf` at -1, NaN below.
    log1p => Log1p,
    /// The base-2 logarithm (floats): `-inf` at 0, NaN below; exact at powers of two.
    log2 => Log2,
    /// The base-10 logarithm (floats): `-inf` at 0, NaN below.
    log10 => Log10,
    /// The sine (floats, radians).
    sin => Sin,
    /// The cosine (floats, radians).
    cos => Cos,
    /// The tangent (floats, radians).
    tan => Tan,
    /// The hyperbolic tangent (floats).
    tanh => Tanh,
    /// Rounds down; integers are unchanged.
    floor => Floor,
    /// Rounds up; integers are unchanged.
    ceil => Ceil,
    /// Rounds to the nearest integer, halves to even (numpy's `round`, `rint`).
    round => Round,
);

impl<T: Element> DeviceArray<T> {
    fn unary(&self, op: UnaryOp) -> Result<DeviceArray<T>> {
        let x = Operand::from(self);
        elementwise(&[], &[&x], op.name(), |_, e| e[0].unary(op))
    }

    fn with(&self, op: BinaryOp, rhs: Operand<T>) -> Result<DeviceArray<T>> {
        let x = Operand::from(self);
        elementwise(&[], &[&x, &rhs], op.name(), |_, e| e[0].binary(op, e[1].clone()))
    }

    /// `x * x`, one map.
    pub fn square(&self) -> Result<DeviceArray<T>> {
        let x = Operand::from(self);
        elementwise(&[], &[&x], "square", |_, e| &e[0] * &e[0])
    }

    /// The elementwise larger of `self` and `other` (an array, broadcast, or a scalar):
    /// numpy's `maximum`, NaN-propagating, and `maximum(-0.0, 0.0)` is `0.0`.
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let x = Device::cpu().from_slice(&[-1.0f32, 3.0], &[2])?;
    /// assert_eq!(x.maximum(0.0)?.to_vec()?, vec![0.0, 3.0]); // relu
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn maximum(&self, other: impl Into<Operand<T>>) -> Result<DeviceArray<T>> {
        self.with(BinaryOp::Max, other.into())
    }

    /// The elementwise smaller of `self` and `other`: numpy's `minimum`, NaN-propagating.
    pub fn minimum(&self, other: impl Into<Operand<T>>) -> Result<DeviceArray<T>> {
        self.with(BinaryOp::Min, other.into())
    }

    /// `self` to the power `exponent` (an array, broadcast, or a scalar). Floats follow C's
    /// `pow` (`pow(x, 0)` is 1, even for NaN); integers wrap, and a negative integer
    /// exponent gives the truncated `1 / x^-e` (numpy raises an error there instead).
    pub fn pow(&self, exponent: impl Into<Operand<T>>) -> Result<DeviceArray<T>> {
        self.with(BinaryOp::Pow, exponent.into())
    }

    /// Limits every element to `[lo, hi]`, numpy's `clip`: `minimum(maximum(x, lo), hi)`,
    /// so NaN stays NaN and `lo > hi` gives `hi` everywhere. `lo` and `hi` are arrays
    /// (broadcast) or scalars.
    pub fn clip(&self, lo: impl Into<Operand<T>>, hi: impl Into<Operand<T>>) -> Result<DeviceArray<T>> {
        let (x, lo, hi) = (Operand::from(self), lo.into(), hi.into());
        elementwise(&[], &[&x, &lo, &hi], "clip", |_, e| e[0].max(e[1].clone()).min(e[2].clone()))
    }
}

/// numpy's `where(cond, a, b)`: `a` where `cond` is non-zero, else `b`, broadcast together.
/// `cond` may have any dtype (a bool mask from `x.gt(0.0)`, say); `a` and `b` are arrays or
/// scalars of one dtype. One map; `a` and `b` are both read, only one is kept.
///
/// ```
/// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
/// # use polycompute_core::{where_, Device};
/// let dev = Device::cpu();
/// let x = dev.from_slice(&[-1.0f32, 2.0, -3.0], &[3])?;
/// let positive = x.gt(0.0)?; // a DeviceArray<bool>
/// assert_eq!(where_(&positive, &x, 0.0)?.to_vec()?, vec![0.0, 2.0, 0.0]);
/// # Ok::<(), polycompute_core::Error>(())
/// ```
pub fn where_<M: Element, T: Element>(
    cond: &DeviceArray<M>,
    a: impl Into<Operand<T>>,
    b: impl Into<Operand<T>>,
) -> Result<DeviceArray<T>> {
    let (a, b) = (a.into(), b.into());
    elementwise(&[MapInput::from(cond)], &[&a, &b], "where", |c, e| {
        Expr::select(c[0].ne(Expr::scalar(M::default().to_scalar())), e[0].clone(), e[1].clone())
    })
}
