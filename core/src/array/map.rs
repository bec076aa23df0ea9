//! Elementwise maps: [`map`] over several arrays broadcast together, and the
//! one- and two-input forms on [`DeviceArray`].

use crate::array::{same_device, DeviceArray};
use crate::backend::BufferRef;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::expr::{compile_cached, Expr};
use crate::op::Op;

impl<T: Element> DeviceArray<T> {
    /// Applies an elementwise expression of the element (`|x| x * 2.0 + 1.0`); the result
    /// keeps the dtype `T` (use [`DeviceArray::map_to`] when it changes).
    pub fn map(&self, f: impl FnOnce(Expr) -> Expr) -> Result<DeviceArray<T>> {
        self.map_to(f)
    }

    /// [`DeviceArray::map`] with a result of another dtype (`|x| x.cast(DType::I32)`).
    pub fn map_to<U: Element>(&self, f: impl FnOnce(Expr) -> Expr) -> Result<DeviceArray<U>> {
        map(&[self], |a| f(a[0].clone()))
    }

    /// Elementwise expression of two arrays, broadcast together (`|x, y| x * y`).
    pub fn zip_map(&self, other: &DeviceArray<T>, f: impl FnOnce(Expr, Expr) -> Expr) -> Result<DeviceArray<T>> {
        map(&[self, other], |a| f(a[0].clone(), a[1].clone()))
    }
}

/// Runs one fused elementwise expression over several arrays, broadcast together (numpy
/// rules). `f` receives one [`Expr`] per input; the result's element type `U` must be the
/// expression's dtype.
///
/// The expression is type-checked before anything runs; backends compile each distinct
/// expression once and reuse it.
pub fn map<T: Element, U: Element>(
    inputs: &[&DeviceArray<T>],
    f: impl FnOnce(&[Expr]) -> Expr,
) -> Result<DeviceArray<U>> {
    let Some(first) = inputs.first() else {
        return Err(Error::InvalidExpr("map needs at least one input array; use Device::full for constants".into()));
    };
    let expr = f(&crate::expr::cache::args(inputs.len()));
    // The result type decides literals nothing else types (`select(c, 1.0, 0.0)`). A
    // closure rebuilt on every call compiles once per thread (`compile_cached`).
    let many;
    let dtypes: &[DType] = match inputs.len() {
        n @ 0..=8 => &[T::DTYPE; 8][..n],
        n => {
            many = vec![T::DTYPE; n];
            &many
        }
    };
    let program = compile_cached(&expr, dtypes, Some(U::DTYPE))?;
    if program.output_dtype() != U::DTYPE {
        return Err(Error::DTypeMismatch {
            context: "result of map".into(),
            expected: U::DTYPE,
            found: program.output_dtype(),
        });
    }
    let mut shape = first.shape_ref().clone();
    for a in &inputs[1..] {
        same_device(&first.device, &a.device)?;
        if a.shape_ref() != &shape {
            shape = shape.broadcast(a.shape_ref(), "map")?;
        }
    }
    // Views are read in place (strided, offset, negative or broadcast strides) by
    // `Op::MapViews`; plain arrays keep the plain `Op::Map`.
    let op = if inputs.iter().all(|a| a.is_plain()) {
        Op::Map { program, input_shapes: inputs.iter().map(|a| a.shape_ref().clone()).collect(), shape: shape.clone() }
    } else {
        Op::MapViews { program, inputs: inputs.iter().map(|a| a.layout.clone()).collect(), shape: shape.clone() }
    };
    // The backend layer validates the op (`Op::output`) before running it: the dtype and
    // shape are known here already, so no second validation on this side.
    let buffer = match inputs {
        [a] => first.device.backend().execute(&op, &[&a.buffer])?,
        [a, b] => first.device.backend().execute(&op, &[&a.buffer, &b.buffer])?,
        _ => {
            let buffers: Vec<&BufferRef> = inputs.iter().map(|a| &a.buffer).collect();
            first.device.backend().execute(&op, &buffers)?
        }
    };
    DeviceArray::from_parts(first.device.clone(), buffer, shape)
}
