//! Arithmetic operators on arrays: `+ - * / %` between arrays (broadcast, numpy rules) or
//! with a scalar on either side, unary `-`, and the compound assignments.
//!
//! An operator can fail (shapes that do not broadcast, arrays on two devices, a device
//! error), so it gives a [`Result`], as candle's do: write `(&a + &b)?`. The operators also
//! take a `Result` on one side, so `&x * 2.0 + &y` needs one `?` at the end:
//!
//! ```
//! # extern crate polycompute_cpu; // links the CPU backend, as the facade does
//! # use polycompute_core::Device;
//! let dev = Device::cpu();
//! let x = dev.from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let row = dev.from_slice(&[10.0f32, 20.0], &[2])?;
//! let y = (&x * 2.0 + &row)?; // the row broadcasts over both rows of x
//! assert_eq!(y.to_vec()?, vec![12.0, 24.0, 16.0, 28.0]);
//! assert_eq!((1.0 - &x)?.to_vec()?, vec![0.0, -1.0, -2.0, -3.0]);
//! assert_eq!((-&x)?.to_vec()?, vec![-1.0, -2.0, -3.0, -4.0]);
//! # Ok::<(), polycompute_core::Error>(())
//! ```
//!
//! Both operands have one element type: `DeviceArray<f32> + DeviceArray<f64>` does not
//! compile, and nothing is promoted behind your back; convert one side with
//! [`DeviceArray::cast`]. Semantics are [`Expr`](crate::Expr)'s (docs/conformance.md):
//! integers wrap; integer `/` is floor division (numpy's `//`: cast to a float first for
//! numpy's true division) and division by zero gives 0; `%` is numpy's `remainder` (the
//! sign of the divisor).
//!
//! Compound assignment (`+=` and the rest) works on a `Result<DeviceArray<T>>`: it replaces
//! the array with the result, or keeps the first error, which the final `?` reports. (On a
//! bare array it could not report an error at all.) The right side is an array; Rust's
//! coherence rules allow no `Result<DeviceArray<T>> op scalar`, so scale with
//! `acc = acc? * 2.0`.
//!
//! ```
//! # extern crate polycompute_cpu; // links the CPU backend, as the facade does
//! # use polycompute_core::Device;
//! let dev = Device::cpu();
//! let parts = [dev.from_slice(&[1.0f32, 2.0], &[2])?, dev.from_slice(&[3.0f32, 4.0], &[2])?];
//! let mut total = dev.zeros::<f32>(&[2]);
//! for p in &parts {
//!     total += p;
//! }
//! assert_eq!(total?.to_vec()?, vec![4.0, 6.0]);
//! # Ok::<(), polycompute_core::Error>(())
//! ```

use std::ops;

use crate::array::operand::{elementwise, Operand};
use crate::array::DeviceArray;
use crate::dtype::{bf16, f16, Element};
use crate::error::Result;
use crate::expr::BinaryOp;

/// `lhs op rhs`, one map, broadcast.
fn binary<T: Element>(op: BinaryOp, lhs: Operand<T>, rhs: Operand<T>) -> Result<DeviceArray<T>> {
    elementwise(&[], &[&lhs, &rhs], op.name(), |_, e| e[0].clone().binary(op, e[1].clone()))
}

macro_rules! binary_operator {
    ($trait:ident, $method:ident, $assign:ident, $assign_method:ident, $op:ident) => {
        binary_operator!(@arrays $trait, $method, $op, &DeviceArray<T>, &DeviceArray<T>);
        binary_operator!(@arrays $trait, $method, $op, DeviceArray<T>, DeviceArray<T>);
        binary_operator!(@arrays $trait, $method, $op, &DeviceArray<T>, DeviceArray<T>);
        binary_operator!(@arrays $trait, $method, $op, DeviceArray<T>, &DeviceArray<T>);
        binary_operator!(@arrays $trait, $method, $op, &DeviceArray<T>, T);
        binary_operator!(@arrays $trait, $method, $op, DeviceArray<T>, T);

        // A `Result` on one side: the error passes through.
        impl<T: Element> ops::$trait<&DeviceArray<T>> for Result<DeviceArray<T>> {
            type Output = Result<DeviceArray<T>>;
            fn $method(self, rhs: &DeviceArray<T>) -> Result<DeviceArray<T>> {
                binary(BinaryOp::$op, self?.into(), rhs.into())
            }
        }
        impl<T: Element> ops::$trait<DeviceArray<T>> for Result<DeviceArray<T>> {
            type Output = Result<DeviceArray<T>>;
            fn $method(self, rhs: DeviceArray<T>) -> Result<DeviceArray<T>> {
                binary(BinaryOp::$op, self?.into(), rhs.into())
            }
        }
        impl<T: Element> ops::$trait<Result<DeviceArray<T>>> for &DeviceArray<T> {
            type Output = Result<DeviceArray<T>>;
            fn $method(self, rhs: Result<DeviceArray<T>>) -> Result<DeviceArray<T>> {
                binary(BinaryOp::$op, self.into(), rhs?.into())
            }
        }
        impl<T: Element> ops::$trait<Result<DeviceArray<T>>> for DeviceArray<T> {
            type Output = Result<DeviceArray<T>>;
            fn $method(self, rhs: Result<DeviceArray<T>>) -> Result<DeviceArray<T>> {
                binary(BinaryOp::$op, self.into(), rhs?.into())
            }
        }

        // Compound assignment on a `Result`, which keeps the first error.
        impl<T: Element> ops::$assign<&DeviceArray<T>> for Result<DeviceArray<T>> {
            fn $assign_method(&mut self, rhs: &DeviceArray<T>) {
                *self = binary_assign(self, BinaryOp::$op, rhs.into());
            }
        }
        impl<T: Element> ops::$assign<DeviceArray<T>> for Result<DeviceArray<T>> {
            fn $assign_method(&mut self, rhs: DeviceArray<T>) {
                *self = binary_assign(self, BinaryOp::$op, rhs.into());
            }
        }

        binary_operator!(@scalar_left $trait, $method, $op, f32, f64, i32, u32, f16, bf16, i64, u8, bool);
    };
    (@arrays $trait:ident, $method:ident, $op:ident, $lhs:ty, $rhs:ty) => {
        impl<T: Element> ops::$trait<$rhs> for $lhs {
            type Output = Result<DeviceArray<T>>;
            fn $method(self, rhs: $rhs) -> Result<DeviceArray<T>> {
                binary(BinaryOp::$op, self.into(), rhs.into())
            }
        }
    };
    // `2.0 * &x`: the scalar's type names the element type, one impl per dtype.
    (@scalar_left $trait:ident, $method:ident, $op:ident, $($t:ty),*) => {
        $(
            impl ops::$trait<&DeviceArray<$t>> for $t {
                type Output = Result<DeviceArray<$t>>;
                fn $method(self, rhs: &DeviceArray<$t>) -> Result<DeviceArray<$t>> {
                    binary(BinaryOp::$op, self.into(), rhs.into())
                }
            }
            impl ops::$trait<DeviceArray<$t>> for $t {
                type Output = Result<DeviceArray<$t>>;
                fn $method(self, rhs: DeviceArray<$t>) -> Result<DeviceArray<$t>> {
                    binary(BinaryOp::$op, self.into(), rhs.into())
                }
            }
        )*
    };
}

/// `*lhs op rhs` for a compound assignment: the first error stays.
fn binary_assign<T: Element>(
    lhs: &mut Result<DeviceArray<T>>,
    op: BinaryOp,
    rhs: Operand<T>,
) -> Result<DeviceArray<T>> {
    let taken = std::mem::replace(lhs, Err(crate::Error::InvalidExpr("compound assignment in progress".into())));
    binary(op, taken?.into(), rhs)
}

binary_operator!(Add, add, AddAssign, add_assign, Add);
binary_operator!(Sub, sub, SubAssign, sub_assign, Sub);
binary_operator!(Mul, mul, MulAssign, mul_assign, Mul);
binary_operator!(Div, div, DivAssign, div_assign, Div);
binary_operator!(Rem, rem, RemAssign, rem_assign, Rem);

impl<T: Element> ops::Neg for &DeviceArray<T> {
    type Output = Result<DeviceArray<T>>;
    /// Negation (integers wrap: `-i32::MIN` is `i32::MIN`; `-x` of a `u32` is `0 - x`).
    fn neg(self) -> Result<DeviceArray<T>> {
        self.neg()
    }
}

impl<T: Element> ops::Neg for DeviceArray<T> {
    type Output = Result<DeviceArray<T>>;
    fn neg(self) -> Result<DeviceArray<T>> {
        DeviceArray::neg(&self)
    }
}
