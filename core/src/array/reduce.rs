//! Reductions of a [`DeviceArray`]: of all elements, of one axis or of several
//! ([`Axes`]), with numpy's `keepdims`; and the reductions built from them: `var`, `std`
//! and `logsumexp`.
//!
//! Every reduction runs as one single-axis [`Op::Reduce`]: several axes that sit next to
//! each other are merged into one by a reshape (a view of a plain array, no copy); axes
//! apart are moved last by a permutation and copied once into a plain array whose trailing
//! axis is their product. `keepdims` reshapes the result (a view).

use crate::array::DeviceArray;
use crate::axis::Axes;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::op::{Op, ReduceKind};

/// The shapes of a reduction over resolved axes.
struct Plan {
    /// The reduced axes, ascending.
    reduced: Vec<usize>,
    /// The result's shape: the kept axes, with a 1 for each reduced one under keepdims.
    out: Vec<usize>,
    /// Elements reduced into each result element.
    count: usize,
}

impl Plan {
    fn new(dims: &[usize], axes: &Axes, op: &'static str) -> Result<Plan> {
        let reduced = axes.resolve(dims.len(), op)?;
        let is_reduced = |a: usize| reduced.binary_search(&a).is_ok();
        let out = (0..dims.len())
            .filter_map(|a| match (is_reduced(a), axes.is_keepdims()) {
                (false, _) => Some(dims[a]),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect();
        let count = reduced.iter().map(|&a| dims[a]).product();
        Ok(Plan { reduced, out, count })
    }
}

impl<T: Element> DeviceArray<T> {
    /// The array as an array of `U`: itself (the same buffer and view) when `U` is `T`'s
    /// dtype, else converted elementwise.
    fn converted<U: Element>(&self) -> Result<DeviceArray<U>> {
        if U::DTYPE == T::DTYPE {
            return self.retyped();
        }
        self.cast()
    }

    /// `kind` over `axes` with one `Op::Reduce`; the result has the plan's shape.
    fn reduce<U: Element>(&self, kind: ReduceKind, axes: Axes) -> Result<DeviceArray<U>> {
        let plan = Plan::new(self.shape(), &axes, kind.name())?;
        let ndim = self.ndim();
        let dims = self.shape();
        let result: DeviceArray<U> = match plan.reduced.as_slice() {
            // numpy's `axis=()`: no axis reduced, every element is its own result (the mean
            // converted to its dtype). A 0-d array's every-axis reduction still runs the op.
            [] if !axes.is_all() => return self.converted(),
            r if r.len() == ndim => self.run_reduce(kind, None)?,
            &[a] => self.run_reduce(kind, Some(a))?,
            r if r.windows(2).all(|w| w[1] == w[0] + 1) => {
                // One run of adjacent axes: merge them (a view of a plain array).
                let (first, last) = (r[0], r[r.len() - 1]);
                let mut merged = dims[..first].to_vec();
                merged.push(plan.count);
                merged.extend_from_slice(&dims[last + 1..]);
                self.reshape(&merged)?.run_reduce(kind, Some(first))?
            }
            r => {
                // Axes apart: the kept axes first, the reduced ones last, copied once.
                let kept: Vec<usize> = (0..ndim).filter(|a| r.binary_search(a).is_err()).collect();
                let perm: Vec<usize> = kept.iter().chain(r).copied().collect();
                let mut merged: Vec<usize> = kept.iter().map(|&a| dims[a]).collect();
                merged.push(plan.count);
                self.permute(&perm)?.reshape(&merged)?.run_reduce(kind, Some(kept.len()))?
            }
        };
        if result.shape() == plan.out.as_slice() {
            return Ok(result);
        }
        result.reshape(&plan.out)
    }

    fn run_reduce<U: Element>(&self, kind: ReduceKind, axis: Option<usize>) -> Result<DeviceArray<U>> {
        let op = Op::Reduce { kind, axis, shape: self.layout.shape.clone() };
        // A pending elementwise chain is the reduction's element source (map→reduce).
        if let Some(buffer) = crate::lazy::reduce(&self.device, self.storage(), &self.layout, &op)? {
            return DeviceArray::from_parts(
                self.device.clone(),
                buffer,
                op.output(&[(T::DTYPE, &self.layout.shape)])?.1,
            );
        }
        self.unary_op(op)
    }

    /// Sum over `axes` ([`Axes`]: `None` for every element, an axis, several, or
    /// [`crate::keepdims`] of these). Floats sum pairwise; integers wrap. The sum of no
    /// elements is 0; an empty axis list (`[]`) sums nothing and returns the elements.
    ///
    /// ```
    /// use polycompute_core::{keepdims, BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3])?;
    /// assert_eq!(x.sum(None)?.to_scalar()?, 21);
    /// assert_eq!(x.sum(-1)?.to_vec()?, vec![6, 15]);
    /// let rows = x.sum(keepdims(-1))?; // [2, 1]: broadcasts against x
    /// assert_eq!((rows.shape(), rows.to_vec()?), (&[2, 1][..], vec![6, 15]));
    /// assert_eq!(x.sum([0, 1])?.to_scalar()?, 21);
    /// # Ok(()) }
    /// ```
    pub fn sum(&self, axes: impl Into<Axes>) -> Result<DeviceArray<T>> {
        self.reduce(ReduceKind::Sum, axes.into())
    }

    /// Product over `axes` (as [`DeviceArray::sum`]); of no elements, 1.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(x.prod(0)?.to_vec()?, vec![3.0, 8.0]);
    /// # Ok(()) }
    /// ```
    pub fn prod(&self, axes: impl Into<Axes>) -> Result<DeviceArray<T>> {
        self.reduce(ReduceKind::Prod, axes.into())
    }

    /// Minimum over `axes` (NaN-propagating); [`Error::EmptyReduction`] when an output
    /// element has no elements to take it from.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[3u32, 1, 2, 5, 4, 0, 7, 9], &[2, 2, 2])?;
    /// assert_eq!(x.min([0, 2])?.to_vec()?, vec![0, 1]);
    /// # Ok(()) }
    /// ```
    pub fn min(&self, axes: impl Into<Axes>) -> Result<DeviceArray<T>> {
        self.reduce(ReduceKind::Min, axes.into())
    }

    /// Maximum over `axes` (NaN-propagating); an error where there are no elements.
    ///
    /// ```
    /// use polycompute_core::{keepdims, BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1.0f32, 5.0, 2.0, 3.0], &[2, 2])?;
    /// assert_eq!(x.max(keepdims(-1))?.shape(), &[2, 1]);
    /// # Ok(()) }
    /// ```
    pub fn max(&self, axes: impl Into<Axes>) -> Result<DeviceArray<T>> {
        self.reduce(ReduceKind::Max, axes.into())
    }

    /// Mean over `axes`; f64 for integer arrays. The mean of no elements is NaN.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1i32, 2, 3, 4], &[2, 2])?;
    /// let m: Vec<f64> = x.mean(-2)?.to_vec()?;
    /// assert_eq!(m, vec![2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    pub fn mean(&self, axes: impl Into<Axes>) -> Result<DeviceArray<T::Mean>> {
        self.reduce(ReduceKind::Mean, axes.into())
    }

    /// Index of the first minimum: of all elements, row-major (`None`), or along one axis
    /// (numpy allows no more); `keepdims` keeps the axis (every axis for `None`) as size 1.
    /// Several axes are an [`Error::InvalidArgument`].
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[3.0f32, 1.0, 2.0, 0.0], &[2, 2])?;
    /// assert_eq!(x.argmin(-1)?.to_vec()?, vec![1, 1]);
    /// assert_eq!(x.argmin(None)?.to_scalar()?, 3);
    /// # Ok(()) }
    /// ```
    pub fn argmin(&self, axis: impl Into<Axes>) -> Result<DeviceArray<u32>> {
        self.arg_reduce(ReduceKind::ArgMin, axis.into())
    }

    /// Index of the first maximum (as [`DeviceArray::argmin`]).
    ///
    /// ```
    /// use polycompute_core::{keepdims, BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[3.0f32, 1.0, 2.0, 4.0], &[2, 2])?;
    /// let i = x.argmax(keepdims(0))?;
    /// assert_eq!((i.shape(), i.to_vec()?), (&[1, 2][..], vec![0, 1]));
    /// # Ok(()) }
    /// ```
    pub fn argmax(&self, axis: impl Into<Axes>) -> Result<DeviceArray<u32>> {
        self.arg_reduce(ReduceKind::ArgMax, axis.into())
    }

    fn arg_reduce(&self, kind: ReduceKind, axes: Axes) -> Result<DeviceArray<u32>> {
        if let Some(given) = axes.as_given() {
            if given.len() != 1 {
                return Err(Error::InvalidArgument {
                    op: kind.name(),
                    argument: "axis",
                    why: format!("{given:?} names {} axes; give one axis, or None for every element", given.len()),
                });
            }
        }
        let plan = Plan::new(self.shape(), &axes, kind.name())?;
        // Every element (`None`) is the row-major flat index, whatever the rank.
        let axis = if axes.is_all() { None } else { plan.reduced.first().copied() };
        let result: DeviceArray<u32> = self.run_reduce(kind, axis)?;
        if result.shape() == plan.out.as_slice() {
            return Ok(result);
        }
        result.reshape(&plan.out)
    }

    /// Variance over `axes` with `ddof` delta degrees of freedom, as numpy's `var`:
    /// `sum(|x - mean|^2) / (n - ddof)`, `n` the elements reduced into each result, with the
    /// mean computed first (two passes). Floats keep their dtype (the halves compute in
    /// f32 and round once); integers give f64, as `mean` does. `ddof >= n` divides by
    /// `max(n - ddof, 0) = 0`, as numpy: `inf` where the squares add up to more than 0, NaN
    /// where they are 0 (a single element, say) or NaN.
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[4])?;
    /// assert_eq!(x.var(None, 0)?.to_scalar()?, 1.25);
    /// assert_eq!(x.var(None, 1)?.to_scalar()?, 5.0 / 3.0);
    /// assert_eq!(x.var(None, 4)?.to_scalar()?, f64::INFINITY);
    /// # Ok(()) }
    /// ```
    pub fn var(&self, axes: impl Into<Axes>, ddof: usize) -> Result<DeviceArray<T::Mean>> {
        self.moment(axes.into(), ddof, false)
    }

    /// Standard deviation: the square root of [`DeviceArray::var`] (same `ddof` rules).
    ///
    /// ```
    /// use polycompute_core::{BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1i32, 3, 5, 7], &[2, 2])?;
    /// let s: Vec<f64> = x.std(-1, 0)?.to_vec()?;
    /// assert_eq!(s, vec![1.0, 1.0]);
    /// # Ok(()) }
    /// ```
    pub fn std(&self, axes: impl Into<Axes>, ddof: usize) -> Result<DeviceArray<T::Mean>> {
        self.moment(axes.into(), ddof, true)
    }

    fn moment(&self, axes: Axes, ddof: usize, sqrt: bool) -> Result<DeviceArray<T::Mean>> {
        if T::DTYPE.is_half() {
            return self.converted::<f32>()?.float_moment(&axes, ddof, sqrt)?.converted();
        }
        self.converted::<T::Mean>()?.float_moment(&axes, ddof, sqrt)
    }

    /// The variance (or its root) of a float array, in its own dtype.
    fn float_moment(&self, axes: &Axes, ddof: usize, sqrt: bool) -> Result<DeviceArray<T>> {
        let op = if sqrt { "std" } else { "var" };
        let plan = Plan::new(self.shape(), axes, op)?;
        let mean = self.reduce::<T>(ReduceKind::Mean, axes.clone().keepdims())?;
        let squares = self.zip_map(&mean, |x, m| {
            let d = x - m;
            d.clone() * d
        })?;
        let sum = squares.sum(axes.clone())?;
        let divisor = plan.count.saturating_sub(ddof);
        sum.map(|s| {
            // `s * inf` is numpy's `s / 0` (inf, or NaN for 0 and NaN) without a division by
            // a zero literal.
            let v = if divisor > 0 { s / Expr::float(divisor as f64) } else { s * Expr::float(f64::INFINITY) };
            if sqrt {
                v.sqrt()
            } else {
                v
            }
        })
    }

    /// `log(sum(exp(x)))` over `axes`, computed stably as scipy's `logsumexp`: each result
    /// is `m + log(sum(exp(x - m)))` with `m` the maximum of its elements, or 0 where that
    /// maximum is not finite. So a row of `-inf` gives `-inf`, a row with `+inf` (and no
    /// NaN) gives `+inf`, a row with a NaN gives NaN, and a row of no elements `-inf`
    /// (`log(0)`). Floats only (the halves compute in f32 and round once); integers are
    /// [`Error::Unsupported`].
    ///
    /// ```
    /// use polycompute_core::{keepdims, BackendKind, Device};
    /// # fn main() -> polycompute_core::Result<()> {
    /// # let Ok(dev) = Device::open(BackendKind::Cpu, 0) else { return Ok(()) };
    /// let x = dev.from_slice(&[1000.0f64, 1000.0, f64::NEG_INFINITY, f64::NEG_INFINITY], &[2, 2])?;
    /// let l = x.logsumexp(-1)?.to_vec()?;
    /// assert!((l[0] - (1000.0 + 2f64.ln())).abs() < 1e-12 && l[1] == f64::NEG_INFINITY);
    /// assert_eq!(x.logsumexp(keepdims(-1))?.shape(), &[2, 1]);
    /// # Ok(()) }
    /// ```
    pub fn logsumexp(&self, axes: impl Into<Axes>) -> Result<DeviceArray<T>> {
        let axes = axes.into();
        if !T::DTYPE.is_float() {
            return Err(Error::Unsupported {
                op: "logsumexp (cast to a float first)".into(),
                dtype: T::DTYPE,
                device: None,
            });
        }
        if T::DTYPE.is_half() {
            return self.converted::<f32>()?.float_logsumexp(&axes)?.converted();
        }
        self.float_logsumexp(&axes)
    }

    fn float_logsumexp(&self, axes: &Axes) -> Result<DeviceArray<T>> {
        let plan = Plan::new(self.shape(), axes, "logsumexp")?;
        if plan.count == 0 {
            // No elements: log(0) = -inf everywhere (the maximum has no value to shift by).
            return self.map(|x| x.exp()).and_then(|e| e.sum(axes.clone())).and_then(|s| s.map(|s| s.ln()));
        }
        let max = self.reduce::<T>(ReduceKind::Max, axes.clone().keepdims())?;
        // scipy shifts by 0 where the maximum is not finite (|m| < inf is false for inf and
        // NaN). Not `m - m == 0`: a shader compiler may fold `m - m` to 0 (llvmpipe does).
        let finite = |m: Expr| m.abs().lt(Expr::float(f64::INFINITY));
        let shift = max.map(|m| Expr::select(finite(m.clone()), m, Expr::float(0.0)))?;
        let sum = self.zip_map(&shift, |x, m| (x - m).exp())?.sum(axes.clone())?;
        let shift = shift.reshape(sum.shape())?;
        sum.zip_map(&shift, |s, m| s.ln() + m)
    }
}

#[cfg(test)]
mod tests {
    // Core links no backend, so its tests check the plans; the conformance corpus and the
    // facade's tests run the reductions.
    use super::Plan;
    use crate::axis::{keepdims, Axes};
    use crate::error::Error;

    #[test]
    fn plans_give_numpy_shapes() {
        let p = Plan::new(&[2, 3, 4], &Axes::from([0, -1]), "sum").unwrap();
        assert_eq!((p.reduced, p.out, p.count), (vec![0, 2], vec![3], 8));
        let p = Plan::new(&[2, 3, 4], &keepdims([0, -1]), "sum").unwrap();
        assert_eq!(p.out, vec![1, 3, 1]);
        let p = Plan::new(&[2, 3, 4], &Axes::all(), "sum").unwrap();
        assert_eq!((p.out, p.count), (vec![], 24));
        let p = Plan::new(&[2, 3, 4], &keepdims(None), "sum").unwrap();
        assert_eq!(p.out, vec![1, 1, 1]);
        let p = Plan::new(&[2, 3, 4], &Axes::from(Vec::<usize>::new()), "sum").unwrap();
        assert_eq!((p.out, p.count), (vec![2, 3, 4], 1));
        let p = Plan::new(&[2, 0, 4], &Axes::from(1), "sum").unwrap();
        assert_eq!((p.out, p.count), (vec![2, 4], 0));
        assert!(matches!(Plan::new(&[2, 3], &Axes::from(2), "sum"), Err(Error::AxisOutOfRange { axis: 2, .. })));
        assert!(matches!(Plan::new(&[2, 3], &Axes::from([0, -2]), "sum"), Err(Error::DuplicateAxis { .. })));
    }
}
