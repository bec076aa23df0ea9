//! Elementwise maps: [`map`] over several arrays broadcast together (a tuple of arrays of
//! any dtypes, or a list of arrays of one dtype), and the one- and two-input forms on
//! [`DeviceArray`]. The operators and elementwise methods are maps too.

use smallvec::SmallVec;

use crate::array::{same_device, DeviceArray};
use crate::backend::BufferRef;
use crate::device::Device;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::expr::{compile_cached, Expr};
use crate::layout::Layout;
use crate::lazy::Storage;
use crate::op::Op;
use crate::shape::Shape;

impl<T: Element> DeviceArray<T> {
    /// Applies an elementwise expression of the element; the result keeps the dtype `T`
    /// (use [`DeviceArray::map_to`] when it changes).
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let x = Device::cpu().from_slice(&[1.0f32, 2.0], &[2])?;
    /// assert_eq!(x.map(|x| &x * &x + 1.0)?.to_vec()?, vec![2.0, 5.0]);
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn map(&self, f: impl FnOnce(Expr) -> Expr) -> Result<DeviceArray<T>> {
        self.map_to(f)
    }

    /// [`DeviceArray::map`] with a result of another dtype (`|x| x.cast(DType::I32)`).
    pub fn map_to<U: Element>(&self, f: impl FnOnce(Expr) -> Expr) -> Result<DeviceArray<U>> {
        map((self,), |(x,)| f(x))
    }

    /// Elementwise expression of two arrays, broadcast together (`|x, y| x * y`).
    pub fn zip_map(&self, other: &DeviceArray<T>, f: impl FnOnce(Expr, Expr) -> Expr) -> Result<DeviceArray<T>> {
        map((self, other), |(x, y)| f(x, y))
    }
}

/// One input of a map: where its elements are and what they are.
#[derive(Clone, Copy)]
pub(crate) struct MapInput<'a> {
    pub(crate) device: &'a Device,
    pub(crate) storage: &'a Storage,
    pub(crate) layout: &'a Layout,
    pub(crate) dtype: DType,
}

impl<'a, T: Element> From<&'a DeviceArray<T>> for MapInput<'a> {
    fn from(a: &'a DeviceArray<T>) -> Self {
        MapInput { device: &a.device, storage: a.storage(), layout: &a.layout, dtype: T::DTYPE }
    }
}

pub(crate) type Inputs<'a> = SmallVec<[MapInput<'a>; 4]>;

mod sealed {
    pub trait Sealed {}
}

/// What [`map`] accepts: a tuple of array references of any dtypes (the closure gets a
/// tuple of [`Expr`]s), or an array or slice of references to arrays of one dtype (it
/// gets an array or a `Vec` of them). Implemented for tuples of up to 8 arrays.
pub trait MapInputs: sealed::Sealed {
    /// The closure's argument: one [`Expr`] per input, in order.
    type Exprs;
    #[doc(hidden)]
    fn exprs(&self) -> Self::Exprs;
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn inputs(&self) -> Inputs<'_>;
}

impl<T: Element, const N: usize> sealed::Sealed for &[&DeviceArray<T>; N] {}
impl<T: Element, const N: usize> MapInputs for &[&DeviceArray<T>; N] {
    type Exprs = [Expr; N];
    fn exprs(&self) -> [Expr; N] {
        // Moved out, not cloned: a small map's cost is counted in atomic increments.
        let mut args = crate::expr::cache::args(N).into_iter();
        std::array::from_fn(|i| args.next().unwrap_or_else(|| Expr::arg(i)))
    }
    #[allow(private_interfaces)]
    fn inputs(&self) -> Inputs<'_> {
        self.iter().map(|a| MapInput::from(*a)).collect()
    }
}

impl<T: Element> sealed::Sealed for &[&DeviceArray<T>] {}
impl<T: Element> MapInputs for &[&DeviceArray<T>] {
    type Exprs = Vec<Expr>;
    fn exprs(&self) -> Vec<Expr> {
        crate::expr::cache::args(self.len()).into_vec()
    }
    #[allow(private_interfaces)]
    fn inputs(&self) -> Inputs<'_> {
        self.iter().map(|a| MapInput::from(*a)).collect()
    }
}

impl<T: Element> sealed::Sealed for &Vec<&DeviceArray<T>> {}
impl<T: Element> MapInputs for &Vec<&DeviceArray<T>> {
    type Exprs = Vec<Expr>;
    fn exprs(&self) -> Vec<Expr> {
        self.as_slice().exprs()
    }
    #[allow(private_interfaces)]
    fn inputs(&self) -> Inputs<'_> {
        self.iter().map(|a| MapInput::from(*a)).collect()
    }
}

macro_rules! tuple_inputs {
    ($($t:ident $i:tt),+) => {
        impl<$($t: Element),+> sealed::Sealed for ($(&DeviceArray<$t>,)+) {}
        impl<$($t: Element),+> MapInputs for ($(&DeviceArray<$t>,)+) {
            type Exprs = ($(tuple_inputs!(@expr $t),)+);
            fn exprs(&self) -> Self::Exprs {
                let mut args = crate::expr::cache::args(tuple_inputs!(@count $($t)+)).into_iter();
                ($(args.next().unwrap_or_else(|| Expr::arg($i)),)+)
            }
            #[allow(private_interfaces)]
            fn inputs(&self) -> Inputs<'_> {
                let mut inputs = Inputs::new();
                $(inputs.push(MapInput::from(self.$i));)+
                inputs
            }
        }
    };
    (@expr $t:ident) => { Expr };
    (@count $($t:ident)+) => { [$(stringify!($t)),+].len() };
}

tuple_inputs!(A 0);
tuple_inputs!(A 0, B 1);
tuple_inputs!(A 0, B 1, C 2);
tuple_inputs!(A 0, B 1, C 2, D 3);
tuple_inputs!(A 0, B 1, C 2, D 3, E 4);
tuple_inputs!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_inputs!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_inputs!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// Runs one fused elementwise expression over several arrays, broadcast together (numpy
/// rules): one kernel, one output, however long the expression. `f` receives one [`Expr`]
/// per input; the result's element type `U` must be the expression's dtype.
///
/// Pass a tuple for inputs of different dtypes, or an array (or slice) of references to
/// arrays of one dtype:
///
/// ```
/// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
/// # use polycompute_core::{map, DType, Device, DeviceArray, Expr};
/// let dev = Device::cpu();
/// let x = dev.from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
/// let c = dev.from_slice(&[1.0f32], &[1])?;
/// let w = dev.from_slice(&[2i32, 2, 1], &[3])?;
/// let d: DeviceArray<f32> = map((&x, &c, &w), |(x, c, w)| (&x - &c) * (&x - &c) * w.cast(DType::F32))?;
/// assert_eq!(d.to_vec()?, vec![0.0, 2.0, 4.0]);
/// let s: DeviceArray<f32> = map(&[&x, &x], |v| &v[0] + &v[1])?;
/// assert_eq!(s.to_vec()?, vec![2.0, 4.0, 6.0]);
/// # Ok::<(), polycompute_core::Error>(())
/// ```
///
/// The expression is type-checked before anything runs; backends compile each distinct
/// expression once and reuse it.
pub fn map<I: MapInputs, U: Element>(inputs: I, f: impl FnOnce(I::Exprs) -> Expr) -> Result<DeviceArray<U>> {
    let list = inputs.inputs();
    let expr = f(inputs.exprs());
    let (device, storage, shape) = run_lazy(&list, &expr, U::DTYPE, "map")?;
    DeviceArray::from_storage(device, storage, shape)
}

/// [`run_lazy`] whose result is computed now (a buffer, never pending).
#[allow(dead_code)] // kept for callers that need the buffer at once
pub(crate) fn run(
    inputs: &[MapInput<'_>],
    expr: &Expr,
    output: DType,
    context: &'static str,
) -> Result<(Device, BufferRef, Shape)> {
    let (device, storage, shape) = run_lazy(inputs, expr, output, context)?;
    Ok((device, storage.into_buffer()?, shape))
}

/// The map behind [`map`], the operators and the elementwise methods: checks the inputs'
/// devices, broadcasts their shapes (`context` names the operation in a shape error),
/// compiles `expr` to a `U`-typed program and runs it, or records it as a pending result
/// when the device fuses ([`crate::lazy`]).
pub(crate) fn run_lazy(
    inputs: &[MapInput<'_>],
    expr: &Expr,
    output: DType,
    context: &'static str,
) -> Result<(Device, Storage, Shape)> {
    let Some(first) = inputs.first() else {
        return Err(Error::InvalidExpr("map needs at least one input array; use Device::full for constants".into()));
    };
    let dtypes: SmallVec<[DType; 8]> = inputs.iter().map(|a| a.dtype).collect();
    // The result type decides literals nothing else types (`select(c, 1.0, 0.0)`). A
    // closure rebuilt on every call compiles once per thread (`compile_cached`).
    let program = compile_cached(expr, &dtypes, Some(output))?;
    if program.output_dtype() != output {
        return Err(Error::DTypeMismatch {
            context: format!("result of {context}"),
            expected: output,
            found: program.output_dtype(),
        });
    }
    let mut shape = first.layout.shape.clone();
    for a in &inputs[1..] {
        same_device(first.device, a.device)?;
        if a.layout.shape != shape {
            shape = shape.broadcast(&a.layout.shape, context)?;
        }
    }
    let lazy: SmallVec<[crate::lazy::Input<'_>; 4]> =
        inputs.iter().map(|a| crate::lazy::Input { storage: a.storage, layout: a.layout }).collect();
    if let Some(storage) = crate::lazy::record(first.device, &lazy, &program, &shape)? {
        return Ok((first.device.clone(), storage, shape));
    }
    let buffers: SmallVec<[&BufferRef; 8]> = inputs.iter().map(|a| a.storage.buffer()).collect::<Result<_>>()?;
    // Views are read in place (strided, offset, negative or broadcast strides) by
    // `Op::MapViews`; plain arrays keep the plain `Op::Map`.
    let op = if inputs.iter().zip(&buffers).all(|(a, b)| a.layout.is_plain(b.len())) {
        Op::Map { program, input_shapes: inputs.iter().map(|a| a.layout.shape.clone()).collect(), shape: shape.clone() }
    } else {
        Op::MapViews { program, inputs: inputs.iter().map(|a| a.layout.clone()).collect(), shape: shape.clone() }
    };
    // The backend layer validates the op (`Op::output`) before running it: the dtype and
    // shape are known here already, so no second validation on this side.
    let backend = first.device.backend();
    let buffer = backend.execute(&op, &buffers)?;
    Ok((first.device.clone(), Storage::Ready(buffer), shape))
}
