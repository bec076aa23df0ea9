//! Comparisons that make masks: `eq ne lt le gt ge` against an array (broadcast) or a
//! scalar, and the float classifications `isnan isinf isfinite`, each one map giving a
//! `DeviceArray<bool>`; and `count_nonzero`.
//!
//! In an [`Expr`] a comparison gives 1 or 0 in its operands' dtype (so that a mask
//! multiplies directly); these methods cast that result to `bool`, in the same kernel. Any
//! comparison with NaN is false except `ne`, which is true (numpy).
//!
//! ```
//! # extern crate polycompute_cpu; // links the CPU backend, as the facade does
//! # use polycompute_core::Device;
//! let x = Device::cpu().from_slice(&[-1.0f32, f32::NAN, 2.0], &[3])?;
//! assert_eq!(x.gt(0.0)?.to_vec()?, vec![false, false, true]);
//! assert_eq!(x.ne(&x)?.to_vec()?, vec![false, true, false]);
//! assert_eq!(x.isnan()?.to_vec()?, vec![false, true, false]);
//! # Ok::<(), polycompute_core::Error>(())
//! ```

use crate::array::operand::{elementwise, Operand};
use crate::array::DeviceArray;
use crate::axis::Axes;
use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::expr::{BinaryOp, Expr};

macro_rules! comparisons {
    ($($(#[$doc:meta])* $name:ident => $op:ident),* $(,)?) => {
        impl<T: Element> DeviceArray<T> {
            $(
                $(#[$doc])*
                pub fn $name(&self, other: impl Into<Operand<T>>) -> Result<DeviceArray<bool>> {
                    self.compare(BinaryOp::$op, other.into())
                }
            )*
        }
    };
}

comparisons!(
    /// `self == other`, elementwise (NaN is never equal; `-0.0 == 0.0`).
    eq => Eq,
    /// `self != other`, elementwise (true wherever either side is NaN).
    ne => Ne,
    /// `self < other`, elementwise (false wherever either side is NaN).
    lt => Lt,
    /// `self <= other`, elementwise (false wherever either side is NaN).
    le => Le,
    /// `self > other`, elementwise (false wherever either side is NaN).
    gt => Gt,
    /// `self >= other`, elementwise (false wherever either side is NaN).
    ge => Ge,
);

impl<T: Element> DeviceArray<T> {
    fn compare(&self, op: BinaryOp, other: Operand<T>) -> Result<DeviceArray<bool>> {
        let x = Operand::from(self);
        elementwise(&[], &[&x, &other], op.name(), |_, e| e[0].binary(op, e[1].clone()).cast(DType::Bool))
    }

    /// One map from `self` to a mask; `float` builds the test for floats, other dtypes
    /// (which hold no NaN and no infinity) get `x == x` (all true) or `x != x` (all false).
    fn classify(&self, context: &'static str, float: fn(&Expr) -> Expr, others: bool) -> Result<DeviceArray<bool>> {
        let x = Operand::from(self);
        elementwise(&[], &[&x], context, |_, e| {
            let x = &e[0];
            let test = if T::DTYPE.is_float() {
                float(x)
            } else if others {
                x.eq(x)
            } else {
                x.ne(x)
            };
            test.cast(DType::Bool)
        })
    }

    /// True where the element is NaN (numpy's `isnan`; never for integers and bools).
    pub fn isnan(&self) -> Result<DeviceArray<bool>> {
        self.classify("isnan", |x| x.ne(x), false)
    }

    /// True where the element is +inf or -inf (numpy's `isinf`).
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let x = Device::cpu().from_slice(&[f32::NEG_INFINITY, f32::NAN, 1.0], &[3])?;
    /// assert_eq!(x.isinf()?.to_vec()?, vec![true, false, false]);
    /// assert_eq!(x.isfinite()?.to_vec()?, vec![false, false, true]);
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn isinf(&self) -> Result<DeviceArray<bool>> {
        self.classify("isinf", |x| x.abs().eq(f64::INFINITY), false)
    }

    /// True where the element is neither NaN nor infinite (numpy's `isfinite`; always for
    /// integers and bools).
    pub fn isfinite(&self) -> Result<DeviceArray<bool>> {
        // NaN < inf is false, so one comparison excludes both.
        self.classify("isfinite", |x| x.abs().lt(f64::INFINITY), true)
    }

    /// The number of non-zero elements over `axes` (numpy's `count_nonzero`, int64 as
    /// numpy's): NaN counts, both zeros do not, `true` counts. Two kernels: the non-zero
    /// test as an i64 map, then its sum.
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let x = Device::cpu().from_slice(&[0.0f32, -0.0, f32::NAN, 3.0, 0.0, 1.0], &[2, 3])?;
    /// assert_eq!(x.count_nonzero(None)?.to_vec()?, vec![3]);
    /// assert_eq!(x.count_nonzero(1)?.to_vec()?, vec![1, 2]);
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn count_nonzero(&self, axes: impl Into<Axes>) -> Result<DeviceArray<i64>> {
        let x = Operand::from(self);
        let zero = T::default().to_scalar();
        let ones: DeviceArray<i64> =
            elementwise(&[], &[&x], "count_nonzero", |_, e| e[0].ne(Expr::scalar(zero)).cast(DType::I64))?;
        ones.sum(axes)
    }
}
