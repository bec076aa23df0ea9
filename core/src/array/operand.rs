//! [`Operand`]: an array or a scalar of one dtype, the argument of the elementwise
//! methods that take either (`x.maximum(0.0)`, `x.maximum(&y)`), and the one place that
//! turns operands into a map's inputs and expressions.

use smallvec::SmallVec;

use crate::array::map::{self, Inputs, MapInput};
use crate::array::DeviceArray;
use crate::dtype::Element;
use crate::error::Result;
use crate::expr::Expr;

/// An array or a scalar of the element type `T`, for the methods that take either.
/// Arrays broadcast against each other (numpy rules); a scalar is a typed constant in the
/// fused kernel (no array is made for it). Built by `From` from `&DeviceArray<T>`,
/// `DeviceArray<T>` or a `T`.
///
/// ```
/// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
/// # use polycompute_core::Device;
/// let x = Device::cpu().from_slice(&[-1.0f32, 2.0], &[2])?;
/// assert_eq!(x.maximum(0.0)?.to_vec()?, vec![0.0, 2.0]);
/// assert_eq!(x.maximum(&x.map(|v| -v)?)?.to_vec()?, vec![1.0, 2.0]);
/// # Ok::<(), polycompute_core::Error>(())
/// ```
pub enum Operand<T: Element> {
    /// An array (a clone of the handle: it shares the buffer).
    Array(DeviceArray<T>),
    /// A constant.
    Scalar(T),
}

impl<T: Element> From<&DeviceArray<T>> for Operand<T> {
    fn from(a: &DeviceArray<T>) -> Self {
        Operand::Array(a.clone())
    }
}

impl<T: Element> From<DeviceArray<T>> for Operand<T> {
    fn from(a: DeviceArray<T>) -> Self {
        Operand::Array(a)
    }
}

impl<T: Element> From<T> for Operand<T> {
    fn from(v: T) -> Self {
        Operand::Scalar(v)
    }
}

/// Runs `f` over `operands` as one map whose result is `output`: arrays become the map's
/// inputs (after `extra`, which may be of other dtypes: a mask), scalars typed constants.
/// At least one operand or `extra` input is an array (every caller has one).
pub(crate) fn elementwise<T: Element, U: Element>(
    extra: &[MapInput<'_>],
    operands: &[&Operand<T>],
    context: &'static str,
    f: impl FnOnce(&[Expr], &[Expr]) -> Expr,
) -> Result<DeviceArray<U>> {
    let mut inputs: Inputs<'_> = SmallVec::new();
    inputs.extend(extra.iter().copied());
    let arrays = operands.iter().filter(|o| matches!(o, Operand::Array(_))).count();
    let args = crate::expr::cache::args(extra.len() + arrays);
    let mut next = extra.len();
    let mut exprs: SmallVec<[Expr; 4]> = SmallVec::new();
    for operand in operands {
        match operand {
            Operand::Array(a) => {
                inputs.push(MapInput::from(a));
                exprs.push(args[next].clone());
                next += 1;
            }
            Operand::Scalar(v) => exprs.push(Expr::scalar(v.to_scalar())),
        }
    }
    let expr = f(&args[..extra.len()], &exprs);
    let (device, storage, shape) = map::run_lazy(&inputs, &expr, U::DTYPE, context)?;
    DeviceArray::from_storage(device, storage, shape)
}
