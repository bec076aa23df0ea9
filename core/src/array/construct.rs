//! numpy's constructors: `arange`, `linspace`, `eye`, `ones` on a [`Device`], and
//! `zeros_like`/`ones_like`/`full_like` on an array.
//!
//! `arange`, `linspace` and `eye` compute their values on the host, in f64 (integers
//! exactly), round each once to the element type and upload them: one transfer, and the
//! same bits on every device whatever its float support.

use crate::array::DeviceArray;
use crate::device::Device;
use crate::dtype::{bf16, f16, DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::op::MAX_ELEMENTS;

/// `v` rounded to `T` once (floats: to nearest, ties to even; integers: `v` is integral and
/// in range, as the callers guarantee).
fn from_f64<T: Element>(v: f64) -> T {
    let s = match T::DTYPE {
        DType::F32 => Scalar::F32(v as f32),
        DType::F64 => Scalar::F64(v),
        DType::F16 => Scalar::F16(f16::from_f64(v)),
        DType::BF16 => Scalar::BF16(bf16::from_f64(v)),
        DType::I32 => Scalar::I32(v as i32),
        DType::U32 => Scalar::U32(v as u32),
        DType::I64 => Scalar::I64(v as i64),
        DType::U8 => Scalar::U8(v as u8),
        DType::Bool => Scalar::Bool(v != 0.0),
    };
    T::from_scalar(s).unwrap_or_default()
}

/// The length numpy's `arange` gives, as a checked element count.
fn arange_len(start: f64, stop: f64, step: f64, exact: Option<(i128, i128, i128)>) -> Result<usize> {
    let bad = |why: String| Error::InvalidArgument { op: "arange", argument: "step", why };
    if step == 0.0 {
        return Err(bad("the step is 0, so the range never ends; give a non-zero step".into()));
    }
    if !(start.is_finite() && stop.is_finite() && step.is_finite()) {
        return Err(Error::InvalidArgument {
            op: "arange",
            argument: "start, stop and step",
            why: format!("arange({start}, {stop}, {step}) has no length: every bound must be finite"),
        });
    }
    let len = match exact {
        // Integers: ceil((stop - start) / step) exactly, never below 0.
        Some((a, b, s)) => {
            let span = b - a;
            let n = span / s + i128::from(span % s != 0);
            n.max(0) as f64
        }
        None => ((stop - start) / step).ceil().max(0.0),
    };
    if len > MAX_ELEMENTS as f64 {
        return Err(Error::TooLarge(format!(
            "arange({start}, {stop}, {step}) has {len} elements; arrays hold at most {MAX_ELEMENTS} (u32 indexing)"
        )));
    }
    Ok(len as usize)
}

impl Device {
    /// numpy's `arange(start, stop, step)`: `start, start + step, ...` while below `stop`
    /// (above it for a negative step), `ceil((stop - start) / step)` elements. Element `i`
    /// is `start + i * step` computed in f64 (integers exactly) and rounded once to `T`;
    /// numpy steps a float32 range in float32, so its last bits can differ.
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let dev = Device::cpu();
    /// assert_eq!(dev.arange(0, 10, 3)?.to_vec()?, vec![0, 3, 6, 9]);
    /// assert_eq!(dev.arange(1.0f32, 0.0, -0.25)?.to_vec()?, vec![1.0, 0.75, 0.5, 0.25]);
    /// assert!(dev.arange(0, 5, 0).is_err()); // a typed error, not an endless range
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn arange<T: Element>(&self, start: T, stop: T, step: T) -> Result<DeviceArray<T>> {
        let (a, b, s) = (start.to_scalar().to_f64(), stop.to_scalar().to_f64(), step.to_scalar().to_f64());
        let exact = T::DTYPE.is_int().then_some((a as i128, b as i128, s as i128));
        let len = arange_len(a, b, s, exact)?;
        let data: Vec<T> = match exact {
            Some((a, _, s)) => (0..len as i128).map(|i| from_f64::<T>((a + i * s) as f64)).collect(),
            None => (0..len).map(|i| from_f64::<T>(a + i as f64 * s)).collect(),
        };
        self.from_slice(&data, &[len])
    }

    /// numpy's `linspace(start, stop, num)` (floats): `num` evenly spaced values from `start`
    /// to `stop` inclusive, computed as numpy does in f64 (`i * step + start`, the last one
    /// exactly `stop`) and rounded once to `T`.
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let x = Device::cpu().linspace(0.0f64, 1.0, 5)?;
    /// assert_eq!(x.to_vec()?, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn linspace<T: Element>(&self, start: T, stop: T, num: usize) -> Result<DeviceArray<T>> {
        if !T::DTYPE.is_float() {
            return Err(Error::Unsupported { op: "linspace".into(), dtype: T::DTYPE, device: None });
        }
        if num > MAX_ELEMENTS {
            return Err(Error::TooLarge(format!("linspace of {num} elements; arrays hold at most {MAX_ELEMENTS}")));
        }
        let (a, b) = (start.to_scalar().to_f64(), stop.to_scalar().to_f64());
        let step = (b - a) / (num.max(2) - 1) as f64;
        let mut data: Vec<T> = (0..num).map(|i| from_f64::<T>(i as f64 * step + a)).collect();
        if num > 1 {
            data[num - 1] = stop;
        }
        self.from_slice(&data, &[num])
    }

    /// The `n × n` identity matrix (numpy's `eye(n)`).
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// assert_eq!(Device::cpu().eye::<i32>(2)?.to_vec()?, vec![1, 0, 0, 1]);
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn eye<T: Element>(&self, n: usize) -> Result<DeviceArray<T>> {
        let len = n.checked_mul(n).filter(|&l| l <= MAX_ELEMENTS);
        let Some(len) = len else {
            return Err(Error::TooLarge(format!("eye({n}) has {n}² elements; arrays hold at most {MAX_ELEMENTS}")));
        };
        let (zero, one) = (T::default(), from_f64::<T>(1.0));
        let data: Vec<T> = (0..len).map(|i| if i / n == i % n { one } else { zero }).collect();
        self.from_slice(&data, &[n, n])
    }

    /// An array of ones.
    pub fn ones<T: Element>(&self, shape: &[usize]) -> Result<DeviceArray<T>> {
        self.full(from_f64::<T>(1.0), shape)
    }
}

impl<T: Element> DeviceArray<T> {
    /// Zeros of this array's shape, dtype and device (numpy's `zeros_like`).
    ///
    /// ```
    /// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
    /// # use polycompute_core::Device;
    /// let x = Device::cpu().from_slice(&[1.0f32, 2.0], &[2, 1])?;
    /// assert_eq!(x.ones_like()?.shape(), &[2, 1]);
    /// assert_eq!(x.full_like(7.0)?.to_vec()?, vec![7.0, 7.0]);
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn zeros_like(&self) -> Result<DeviceArray<T>> {
        self.device.zeros(self.shape())
    }

    /// Ones of this array's shape, dtype and device (numpy's `ones_like`).
    pub fn ones_like(&self) -> Result<DeviceArray<T>> {
        self.device.ones(self.shape())
    }

    /// `value` in this array's shape, dtype and device (numpy's `full_like`).
    pub fn full_like(&self, value: T) -> Result<DeviceArray<T>> {
        self.device.full(value, self.shape())
    }
}
