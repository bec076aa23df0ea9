//! Runs the pipeline on the default device (`POLYCOMPUTE_BACKEND=cpu|wgpu|cuda` chooses).

use polycompute::Device;

fn main() -> polycompute::Result<()> {
    let dev = Device::default()?;
    let x = downstream::sample(&dev, 10_000)?;
    let h = downstream::histogram(&x, 12, -3.0, 3.0)?;
    println!("on {}: counts {:?}", dev.id(), h.counts.to_vec()?);
    println!("density {:?}", h.density.to_vec()?);
    let logits = dev.uniform::<f32>(1, &[4, 16])?;
    let weights = dev.uniform::<f32>(2, &[16, 3])?;
    println!("softmax @ w =\n{}", downstream::softmax_matmul(&logits, &weights)?.to_ndarray()?);
    Ok(())
}
