//! Logic on masks: `and or xor not` of `DeviceArray<bool>` (numpy's `logical_and` and the
//! rest), each one map; the other side is a mask (broadcast) or a `bool`. Select with a
//! mask through [`crate::where_`]; count it with [`DeviceArray::count_nonzero`].
//!
//! ```
//! # extern crate polycompute_cpu; // links the CPU backend, as the facade does
//! # use polycompute_core::Device;
//! let x = Device::cpu().from_slice(&[1, 5, 9], &[3])?;
//! let inside = x.gt(2)?.and(&x.lt(8)?)?;
//! assert_eq!(inside.to_vec()?, vec![false, true, false]);
//! assert_eq!(inside.not()?.to_vec()?, vec![true, false, true]);
//! # Ok::<(), polycompute_core::Error>(())
//! ```

use crate::array::operand::{elementwise, Operand};
use crate::array::DeviceArray;
use crate::dtype::Scalar;
use crate::error::Result;
use crate::expr::{BinaryOp, Expr};

macro_rules! logic {
    ($($(#[$doc:meta])* $name:ident => $op:ident),* $(,)?) => {
        impl DeviceArray<bool> {
            $(
                $(#[$doc])*
                pub fn $name(&self, other: impl Into<Operand<bool>>) -> Result<DeviceArray<bool>> {
                    let (x, y) = (Operand::from(self), other.into());
                    elementwise(&[], &[&x, &y], BinaryOp::$op.name(), |_, e| e[0].binary(BinaryOp::$op, e[1].clone()))
                }
            )*
        }
    };
}

logic!(
    /// True where both are true (numpy's `logical_and`).
    and => And,
    /// True where either is true (numpy's `logical_or`).
    or => Or,
    /// True where exactly one is true (numpy's `logical_xor`).
    xor => Xor,
);

impl DeviceArray<bool> {
    /// True where `self` is false (numpy's `logical_not`, `~mask`).
    #[allow(clippy::should_implement_trait)] // fallible, so not `std::ops::Not`
    pub fn not(&self) -> Result<DeviceArray<bool>> {
        let x = Operand::from(self);
        elementwise(&[], &[&x], "not", |_, e| e[0].xor(Expr::scalar(Scalar::Bool(true))))
    }
}
