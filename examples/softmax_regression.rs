//! Softmax (multinomial logistic) regression by gradient descent, written as in numpy:
//! logits by a matrix product, probabilities by `logits - logsumexp(logits)`, the gradient
//! by another product. It runs on the default device (`POLYCOMPUTE_BACKEND` chooses);
//! `tests/tests/examples.rs` checks that every device agrees with the CPU.
//!
//! ```text
//! cargo run --example softmax_regression
//! ```

use polycompute::{keepdims, Device, DeviceArray, Result};

/// One-hot rows (`[n, classes]`, f32) of the labels `y` (`[n]`).
pub fn one_hot(y: &DeviceArray<u32>, classes: usize) -> Result<DeviceArray<f32>> {
    let ids = y.device().arange(0, classes as u32, 1)?;
    y.expand_dims(-1)?.zip_map(&ids, |label, id| label.eq(id))?.cast()
}

/// Row-wise class probabilities of `logits` (`[n, classes]`), computed stably.
pub fn softmax(logits: &DeviceArray<f32>) -> Result<DeviceArray<f32>> {
    (logits - &logits.logsumexp(keepdims(-1))?)?.exp()
}

/// Weights (`[d, classes]`) fitted to the points `x` (`[n, d]`) and labels `y` by `steps`
/// steps of gradient descent on the mean cross-entropy, with learning rate `lr`.
pub fn train(
    x: &DeviceArray<f32>,
    y: &DeviceArray<u32>,
    classes: usize,
    steps: usize,
    lr: f32,
) -> Result<DeviceArray<f32>> {
    let (n, d) = (x.shape()[0], x.shape()[1]);
    let target = one_hot(y, classes)?;
    let mut w = x.device().zeros(&[d, classes])?;
    for _ in 0..steps {
        let p = softmax(&x.matmul(&w)?)?;
        let grad = (x.transpose()?.matmul(&(&p - &target)?)? / n as f32)?;
        w = (&w - grad * lr)?;
    }
    Ok(w)
}

/// The share of points whose most probable class is their label.
pub fn accuracy(x: &DeviceArray<f32>, y: &DeviceArray<u32>, w: &DeviceArray<f32>) -> Result<f32> {
    let predicted = x.matmul(w)?.argmax(-1)?;
    predicted.zip_map(y, |p, t| p.eq(t))?.cast::<f32>()?.mean(None)?.to_scalar()
}

/// Three labelled blobs of 500 points in 2-D, with a constant feature for the bias: `x` is
/// `[1500, 3]`, `y` the blob of each point. The same on every device.
pub fn dataset(dev: &Device) -> Result<(DeviceArray<f32>, DeviceArray<u32>)> {
    let centers = dev.from_slice(&[0.0f32, 2.0, 2.0, -1.0, -2.0, -1.0], &[3, 1, 2])?;
    let points = (dev.normal::<f32>(11, &[3, 500, 2])? + &centers)?.reshape(&[1500, 2])?;
    let x = DeviceArray::concat(&[&points, &dev.ones(&[1500, 1])?], 1)?;
    let y = (dev.arange(0u32, 1500, 1)? / 500)?;
    Ok((x, y))
}

#[allow(dead_code)] // `tests/tests/examples.rs` includes this file for its functions.
fn main() -> Result<()> {
    let dev = Device::default()?;
    let (x, y) = dataset(&dev)?;
    let w = train(&x, &y, 3, 200, 0.5)?;
    println!("on {}: accuracy {:.3}\nweights\n{w}", dev.id(), accuracy(&x, &y, &w)?);
    Ok(())
}
