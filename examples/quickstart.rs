//! The README's example: a device, a fused map, a reduction and a matrix product.

use polycompute::Device;

fn main() -> polycompute::Result<()> {
    // A CUDA or wgpu GPU when there is one, else the CPU; POLYCOMPUTE_BACKEND=cpu|wgpu|cuda[:n] chooses.
    let device = Device::default()?;
    let x = device.from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    let noise = device.uniform::<f32>(42, &[2, 2])?; // Philox: the same numbers on every device

    // One fused elementwise kernel, then a reduction and a matrix product, all on the device.
    let y = x.zip_map(&noise, |x, n| (x * 2.0 + n).sqrt())?;
    let total = y.sum(None)?.to_scalar()?;
    let product = x.matmul(&y)?;

    println!("on {}: sum {total}, x @ y =\n{}", device.id(), product.to_ndarray()?);
    Ok(())
}
