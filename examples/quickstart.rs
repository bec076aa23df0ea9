//! The README's example: a device, numpy's vocabulary, a fused map and a matrix product.

use polycompute::{keepdims, Device};

fn main() -> polycompute::Result<()> {
    // A CUDA or wgpu GPU when there is one, else the CPU; POLYCOMPUTE_BACKEND=cpu|wgpu|cuda[:n] chooses.
    let device = Device::default()?;
    let x = device.from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    let noise = device.uniform::<f32>(42, &[2, 2])?; // Philox: the same numbers on every device

    // numpy's vocabulary: operators broadcast, reductions take axes (negative too) and keepdims.
    let centered = (&x - &x.mean(keepdims(-1))?)?;
    // A whole expression as one fused kernel, then a reduction and a matrix product.
    let y = x.zip_map(&noise, |x, n| (x * 2.0 + n).sqrt())?;
    let total = y.sum(None)?.to_scalar()?;
    let product = centered.matmul(&y)?;

    println!("on {}: sum {total}, centered x @ y =\n{product}", device.id());
    Ok(())
}
