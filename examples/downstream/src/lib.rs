//! A small pipeline on polycompute: a normalized histogram (maps, a matrix product and
//! reductions) and a softmax-then-matmul step, written once for every backend.

use polycompute::{DType, Device, DeviceArray, Expr, Result};

/// A histogram of values over `bins` equal bins of `[lo, hi)`.
pub struct Histogram {
    /// How many values fell in each bin (values outside `[lo, hi)` are not counted).
    pub counts: DeviceArray<u32>,
    /// The density: counts / (number of values · bin width), which integrates to the share of
    /// the values inside `[lo, hi)`.
    pub density: DeviceArray<f32>,
}

/// The normalized histogram of `x` (1-D): one-hot rows of each value's bin (a map with
/// broadcasting), summed by a matrix product with a row of ones, then normalized.
pub fn histogram(x: &DeviceArray<f32>, bins: usize, lo: f32, hi: f32) -> Result<Histogram> {
    let dev = x.device();
    let n = x.len();
    let width = (hi - lo) / bins as f32;
    // Bin of each value; -1 for values outside [lo, hi).
    let bin = x.reshape(&[n, 1])?.map(|v| {
        let b = ((v.clone() - lo) / width).floor();
        // Comparisons give 1.0 or 0.0 in the value's dtype.
        Expr::select(v.clone().ge(lo), Expr::select(v.lt(hi), b.min(Expr::float(bins as f64 - 1.0)), -1.0), -1.0)
    })?;
    let ids = dev.zeros::<f32>(&[1, bins])?.map(|_| Expr::index().cast(DType::F32))?;
    let one_hot = bin.zip_map(&ids, |b, i| b.eq(i))?;
    // Sums of 0s and 1s are exact in f32 below 2^24, in any order, on every backend.
    let counts = dev.full(1.0f32, &[1, n])?.matmul(&one_hot)?.reshape(&[bins])?;
    let density = counts.map(|c| c / Expr::float(n as f64 * width as f64))?;
    Ok(Histogram { counts: counts.cast()?, density })
}

/// Row-wise softmax of `logits` (`[rows, k]`, stabilized by the row maximum), then the
/// product with `weights` (`[k, m]`): the mixing step of an attention layer.
pub fn softmax_matmul(logits: &DeviceArray<f32>, weights: &DeviceArray<f32>) -> Result<DeviceArray<f32>> {
    let rows = logits.shape()[0];
    let max = logits.max(Some(1))?.reshape(&[rows, 1])?;
    let e = logits.zip_map(&max, |x, m| (x - m).exp())?;
    let total = e.sum(Some(1))?.reshape(&[rows, 1])?;
    e.zip_map(&total, |a, b| a / b)?.matmul(weights)
}

/// The inputs of the example: `n` values, normal around 0 (the same on every device).
pub fn sample(dev: &Device, n: usize) -> Result<DeviceArray<f32>> {
    dev.normal::<f32>(2024, &[n])
}
