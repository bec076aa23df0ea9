//! [`DeviceArray`]: a typed n-dimensional array on a device, and the user-level operations
//! that build and run [`Op`]s: maps in `map`, the operators in `ops`, elementwise methods
//! in `elementwise` (their array-or-scalar argument in `operand`), reductions in `reduce`.

mod compare;
mod construct;
mod elementwise;
mod logic;
mod map;
mod operand;
mod ops;
mod print;
mod reduce;

pub use elementwise::where_;
pub use map::{map, MapInputs};
pub use operand::Operand;

use std::marker::PhantomData;
use std::sync::Arc;

use crate::backend::BufferRef;
use crate::device::Device;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::expr::Program;
use crate::layout::Layout;
use crate::lazy::Storage;
use crate::op::Op;
use crate::shape::Shape;

/// An n-dimensional array of `T` in a device's memory: a buffer and a [`Layout`] (shape,
/// strides, offset), so slices, flips, transposes and broadcasts are views that share
/// the buffer. Arrays are immutable: every operation returns a new array, and `clone`
/// shares the buffer.
pub struct DeviceArray<T: Element> {
    device: Device,
    storage: Storage,
    layout: Layout,
    _elem: PhantomData<T>,
}

impl<T: Element> Clone for DeviceArray<T> {
    fn clone(&self) -> Self {
        DeviceArray {
            device: self.device.clone(),
            storage: self.storage.clone(),
            layout: self.layout.clone(),
            _elem: PhantomData,
        }
    }
}

impl<T: Element> DeviceArray<T> {
    /// The buffer holds `T`s.
    fn check_dtype(buffer: &BufferRef) -> Result<()> {
        if buffer.dtype() != T::DTYPE {
            return Err(Error::DTypeMismatch {
                context: "DeviceArray buffer".into(),
                expected: T::DTYPE,
                found: buffer.dtype(),
            });
        }
        Ok(())
    }

    /// Wraps a device buffer, checking that its dtype and length match `T` and `shape`.
    pub fn from_parts(device: Device, buffer: BufferRef, shape: Shape) -> Result<Self> {
        Self::check_dtype(&buffer)?;
        if buffer.len() != shape.numel() {
            return Err(Error::LengthMismatch {
                len: buffer.len(),
                shape: shape.dims().to_vec(),
                expected: shape.numel(),
            });
        }
        Ok(DeviceArray {
            device,
            storage: Storage::Ready(buffer),
            layout: Layout::contiguous(shape),
            _elem: PhantomData,
        })
    }

    /// A view of `buffer` through `layout` (checked to stay inside the buffer).
    pub fn from_view(device: Device, buffer: BufferRef, layout: Layout) -> Result<Self> {
        Self::check_dtype(&buffer)?;
        layout.check_within(buffer.len())?;
        Ok(DeviceArray { device, storage: Storage::Ready(buffer), layout, _elem: PhantomData })
    }

    pub(crate) fn upload_slice(device: &Device, data: &[T], shape: Shape) -> Result<Self> {
        if data.len() != shape.numel() {
            return Err(Error::LengthMismatch {
                len: data.len(),
                shape: shape.dims().to_vec(),
                expected: shape.numel(),
            });
        }
        let buffer = device.backend().upload(T::host_slice(data))?;
        DeviceArray::from_parts(device.clone(), buffer, shape)
    }

    /// Uploads `data` (row-major) to `device` as an array of `shape`.
    pub fn from_slice(device: &Device, data: &[T], shape: &[usize]) -> Result<Self> {
        device.from_slice(data, shape)
    }

    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        self.layout.shape.dims()
    }

    /// The shape as a [`Shape`].
    pub fn shape_ref(&self) -> &Shape {
        &self.layout.shape
    }

    /// Where the elements sit in [`DeviceArray::buffer`].
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// True when the array is its whole buffer in row-major order (not a view that
    /// skips, reorders or repeats elements); ops other than maps read only such arrays,
    /// and copy a view once ([`DeviceArray::contiguous`]) first.
    pub fn is_plain(&self) -> bool {
        self.layout.is_plain(self.storage.len())
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.layout.shape.ndim()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.layout.shape.numel()
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The runtime dtype (`T::DTYPE`).
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// The device that holds the array.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The device buffer (of a view: the whole buffer it looks into; see
    /// [`DeviceArray::layout`]), computed now if the array is a pending elementwise result:
    /// the one point where the lazy layer ([`crate::lazy`]) runs a fused chain, so it
    /// returns the error a deferred computation may raise (out of memory, a lost device).
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let x = Device::cpu().from_slice(&[1.0f32, 2.0], &[2])?;
    /// assert_eq!(x.map(|v| v * 2.0)?.buffer()?.len(), 2);
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn buffer(&self) -> Result<&BufferRef> {
        self.storage.buffer()
    }

    /// An array over `storage` (a buffer, or a pending result) of `shape`, contiguous.
    pub(crate) fn from_storage(device: Device, storage: Storage, shape: Shape) -> Result<Self> {
        match storage {
            Storage::Ready(buffer) => DeviceArray::from_parts(device, buffer, shape),
            storage => Ok(DeviceArray { device, storage, layout: Layout::contiguous(shape), _elem: PhantomData }),
        }
    }

    /// The same array typed as `U`, sharing its storage (pending or not); only for `U` of
    /// `T`'s dtype.
    pub(crate) fn retyped<U: Element>(&self) -> Result<DeviceArray<U>> {
        if U::DTYPE != T::DTYPE {
            return Err(Error::DTypeMismatch { context: "retyped".into(), expected: T::DTYPE, found: U::DTYPE });
        }
        Ok(DeviceArray {
            device: self.device.clone(),
            storage: self.storage.clone(),
            layout: self.layout.clone(),
            _elem: PhantomData,
        })
    }

    pub(crate) fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Copies the elements to the host, row-major (of a view: the view's elements).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let plain = self.contiguous()?;
        let host = self.device.backend().download(plain.storage.buffer()?)?;
        let found = host.dtype();
        T::from_host_vec(host).ok_or(Error::DTypeMismatch { context: "download".into(), expected: T::DTYPE, found })
    }

    /// Copies the array to the host as an `ndarray` of dynamic dimension.
    pub fn to_ndarray(&self) -> Result<ndarray::ArrayD<T>> {
        ndarray::ArrayD::from_shape_vec(self.shape(), self.to_vec()?).map_err(|e| Error::InvalidShape(e.to_string()))
    }

    /// The single element of a one-element array (a reduction's result, say).
    pub fn to_scalar(&self) -> Result<T> {
        match self.to_vec()?.as_slice() {
            [x] => Ok(*x),
            v => Err(Error::LengthMismatch { len: v.len(), shape: self.shape().to_vec(), expected: 1 }),
        }
    }

    /// The same elements under another shape with the same element count: a view of a
    /// contiguous array (no copy); a non-contiguous view is copied once first.
    pub fn reshape(&self, shape: &[usize]) -> Result<Self> {
        let shape = Shape::new(shape)?;
        if shape.numel() != self.len() {
            return Err(Error::LengthMismatch {
                len: self.len(),
                shape: shape.dims().to_vec(),
                expected: shape.numel(),
            });
        }
        match self.layout.reshape_contiguous(&shape) {
            Some(layout) => Ok(self.view(layout)),
            None => {
                let plain = self.contiguous()?;
                Ok(plain.view(Layout::contiguous(shape)))
            }
        }
    }

    pub(crate) fn view(&self, layout: Layout) -> Self {
        DeviceArray { layout, ..self.clone() }
    }

    /// The array as a plain array ([`DeviceArray::is_plain`]): itself when it is one,
    /// else a copy of the view's elements in a new buffer (a transpose kernel for a
    /// permuted array, an identity map over the view otherwise).
    pub fn contiguous(&self) -> Result<Self> {
        if self.is_plain() {
            return Ok(self.clone());
        }
        let buffer = self.storage.buffer()?;
        if let Some((base, perm)) = crate::view::as_permutation(&self.layout, buffer.len()) {
            let op = Op::Transpose { shape: base.clone(), perm };
            return self.run_on(op, &[buffer], &[(T::DTYPE, &base)]);
        }
        let program = Arc::new(Program::identity(T::DTYPE));
        let op = Op::MapViews { program, inputs: vec![self.layout.clone()], shape: self.layout.shape.clone() };
        let shape = self.layout.shape.clone();
        self.run_on(op, &[buffer], &[(T::DTYPE, &shape)])
    }

    /// The buffer of [`DeviceArray::contiguous`].
    pub(crate) fn plain_buffer(&self) -> Result<BufferRef> {
        self.contiguous()?.storage.into_buffer()
    }

    pub(crate) fn run_on<U: Element>(
        &self,
        op: Op,
        inputs: &[&BufferRef],
        shapes: &[(DType, &Shape)],
    ) -> Result<DeviceArray<U>> {
        let (dtype, shape) = op.output(shapes)?;
        if dtype != U::DTYPE {
            return Err(Error::DTypeMismatch {
                context: format!("result of {}", op.name()),
                expected: U::DTYPE,
                found: dtype,
            });
        }
        let buffer = self.device.backend().execute(&op, inputs)?;
        DeviceArray::from_parts(self.device.clone(), buffer, shape)
    }

    pub(crate) fn unary_op<U: Element>(&self, op: Op) -> Result<DeviceArray<U>> {
        let buffer = self.plain_buffer()?;
        self.run_on(op, &[&buffer], &[(T::DTYPE, &self.layout.shape)])
    }

    /// Matrix product: `[m, k] @ [k, n]` or batched `[b, m, k] @ [b, k, n]` (f32, f64).
    ///
    /// An operand that is the transpose of a whole row-major buffer (`a.transpose()` of a
    /// 2-D array, `a.permute(&[0, 2, 1])` of a 3-D one) is read in place, transposed by the
    /// GEMM ([`crate::MatmulTranspose`]); any other view is copied once first.
    pub fn matmul(&self, rhs: &DeviceArray<T>) -> Result<DeviceArray<T>> {
        same_device(&self.device, &rhs.device)?;
        let (lhs_shape, rhs_shape) = (self.shape_ref(), rhs.shape_ref());
        let (a, lhs_t) = self.matmul_operand()?;
        let (b, rhs_t) = rhs.matmul_operand()?;
        let transpose = crate::MatmulTranspose { lhs: lhs_t, rhs: rhs_t };
        let op = Op::Matmul { lhs: lhs_shape.clone(), rhs: rhs_shape.clone(), transpose };
        self.run_on(op, &[&a, &b], &[(T::DTYPE, lhs_shape), (T::DTYPE, rhs_shape)])
    }

    /// The buffer a matmul reads for this operand, and whether it holds the operand
    /// transposed: the array's own buffer when it is plain or a transposed plain matrix
    /// ([`crate::view::is_transposed_matrix`]), else a contiguous copy.
    fn matmul_operand(&self) -> Result<(BufferRef, bool)> {
        if !self.is_plain() && crate::view::is_transposed_matrix(&self.layout, self.storage.len()) {
            return Ok((self.storage.buffer()?.clone(), true));
        }
        Ok((self.plain_buffer()?, false))
    }

    /// Converts every element to `U` (rules in [`crate::expr`]).
    pub fn cast<U: Element>(&self) -> Result<DeviceArray<U>> {
        // Recorded as the map `arg0.cast(U)`, which is `Op::Cast`'s definition.
        if let Some(storage) = crate::lazy::cast(&self.device, &self.storage, &self.layout, T::DTYPE, U::DTYPE)? {
            return DeviceArray::from_storage(self.device.clone(), storage, self.layout.shape.clone());
        }
        self.unary_op(Op::Cast { to: U::DTYPE })
    }

    /// Reverses the axes (the matrix transpose for 2-D arrays); a view.
    pub fn transpose(&self) -> Result<Self> {
        self.permute(&(0..self.ndim()).rev().collect::<Vec<_>>())
    }

    /// Permutes the axes: output axis `i` is input axis `perm[i]` (negative axes count from
    /// the end, as in numpy's `transpose(axes)`); a view (no copy).
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let x = Device::cpu().zeros::<f32>(&[2, 3, 4])?;
    /// assert_eq!(x.permute(&[-1, 0, 1])?.shape(), &[4, 2, 3]);
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn permute<A: Into<crate::Axis> + Copy>(&self, perm: &[A]) -> Result<Self> {
        let ndim = self.ndim();
        let resolved = perm.iter().map(|&a| a.into().resolve(ndim, "permute")).collect::<Result<Vec<usize>>>()?;
        Ok(self.view(self.layout.permute(&resolved)?))
    }

    /// A copy in a new buffer on the same device (of a view: its elements, contiguous).
    pub fn copy(&self) -> Result<Self> {
        if !self.is_plain() {
            return self.contiguous();
        }
        self.unary_op(Op::Copy)
    }

    /// The array on another device (a copy through the host when the devices differ).
    pub fn to_device(&self, device: &Device) -> Result<Self> {
        if *device == self.device {
            return Ok(self.clone());
        }
        device.from_slice(&self.to_vec()?, self.shape())
    }
}

pub(crate) fn same_device(a: &Device, b: &Device) -> Result<()> {
    if a != b {
        return Err(Error::DeviceMismatch { lhs: a.id(), rhs: b.id() });
    }
    Ok(())
}
