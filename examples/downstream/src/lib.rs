//! A small pipeline on polycompute: a normalized histogram (maps, broadcasting and
//! reductions) and a softmax-then-matmul step, written once for every backend.

use polycompute::{keepdims, Device, DeviceArray, Expr, Result};

/// A histogram of values over `bins` equal bins of `[lo, hi)`.
pub struct Histogram {
    /// How many values fell in each bin (values outside `[lo, hi)` are not counted).
    pub counts: DeviceArray<u32>,
    /// The density: counts / (number of values · bin width), which integrates to the share of
    /// the values inside `[lo, hi)`.
    pub density: DeviceArray<f32>,
}

/// The normalized histogram of `x` (1-D): one-hot rows of each value's bin (a map with
/// broadcasting), summed down the rows, then normalized.
pub fn histogram(x: &DeviceArray<f32>, bins: usize, lo: f32, hi: f32) -> Result<Histogram> {
    let n = x.len();
    let width = (hi - lo) / bins as f32;
    // Bin of each value; -1 for values outside [lo, hi).
    let bin = x.reshape(&[n, 1])?.map(|v| {
        let b = ((&v - lo) / width).floor();
        // Comparisons give 1.0 or 0.0 in the value's dtype.
        Expr::select(v.ge(lo), Expr::select(v.lt(hi), b.min(Expr::float(bins as f64 - 1.0)), -1.0), -1.0)
    })?;
    let ids = x.device().arange(0.0f32, bins as f32, 1.0)?;
    let one_hot = bin.zip_map(&ids, |b, i| b.eq(i))?; // [n, bins]
                                                      // Sums of 0s and 1s are exact in f32 below 2^24, in any order, on every backend.
    let counts = one_hot.sum(0)?;
    let density = (&counts / (n as f64 * f64::from(width)) as f32)?;
    Ok(Histogram { counts: counts.cast()?, density })
}

/// Row-wise softmax of `logits` (`[rows, k]`, stabilized by the row maximum), then the
/// product with `weights` (`[k, m]`): the mixing step of an attention layer.
pub fn softmax_matmul(logits: &DeviceArray<f32>, weights: &DeviceArray<f32>) -> Result<DeviceArray<f32>> {
    let e = (logits - &logits.max(keepdims(-1))?)?.exp()?;
    (&e / &e.sum(keepdims(-1))?)?.matmul(weights)
}

/// The inputs of the example: `n` values, normal around 0 (the same on every device).
pub fn sample(dev: &Device, n: usize) -> Result<DeviceArray<f32>> {
    dev.normal::<f32>(2024, &[n])
}
