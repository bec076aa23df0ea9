//! k-means clustering, written as in numpy: distances by broadcasting, the nearest
//! centroid by `argmin`, new centroids by a one-hot matrix product. It runs on the default
//! device (`POLYCOMPUTE_BACKEND=cpu|wgpu|cuda` chooses); `tests/tests/examples.rs` checks
//! that every device agrees with the CPU.
//!
//! ```text
//! cargo run --example kmeans
//! ```

use polycompute::{s, where_, Device, DeviceArray, Result};

/// `iters` rounds of Lloyd's algorithm on the rows of `x` (`[n, d]`), starting from its
/// first `k` rows. Returns the centroids (`[k, d]`), each point's cluster (`[n]`) and the
/// number of points in each cluster (`[k]`). A cluster that loses all its points keeps
/// its centroid.
pub fn kmeans(
    x: &DeviceArray<f32>,
    k: usize,
    iters: usize,
) -> Result<(DeviceArray<f32>, DeviceArray<u32>, DeviceArray<f32>)> {
    let dev = x.device();
    let ids = dev.arange(0, k as u32, 1)?;
    let mut centroids = x.slice(s![..k, ..])?;
    let mut labels = dev.zeros(&[x.shape()[0]])?;
    let mut counts = dev.zeros(&[k])?;
    for _ in 0..iters {
        let diff = (&x.expand_dims(1)? - &centroids.expand_dims(0)?)?; // [n, k, d]
        labels = diff.square()?.sum(-1)?.argmin(-1)?; // [n]
        let one_hot = labels.expand_dims(-1)?.zip_map(&ids, |l, i| l.eq(i))?.cast::<f32>()?; // [n, k]
        counts = one_hot.sum(0)?; // [k]
        let sums = one_hot.transpose()?.matmul(x)?; // [k, d]
        let n = counts.expand_dims(-1)?; // [k, 1]
        centroids = where_(&n, (&sums / &n.maximum(1.0)?)?, &centroids)?;
    }
    Ok((centroids, labels, counts))
}

/// Three blobs of 1,000 points around (0, 0), (5, 5) and (-5, 5): the same on every device.
pub fn blobs(dev: &Device) -> Result<DeviceArray<f32>> {
    let centers = dev.from_slice(&[0.0f32, 0.0, 5.0, 5.0, -5.0, 5.0], &[3, 1, 2])?;
    let noise = dev.normal::<f32>(7, &[3, 1000, 2])?;
    (&noise * 0.5 + &centers)?.reshape(&[3000, 2])
}

/// `x` with its rows 0, 1000 and 2000 (one of each blob) copied in front, so that
/// [`kmeans`] starts from one point of each blob (k-means++ would pick such points).
pub fn with_starts(x: &DeviceArray<f32>) -> Result<DeviceArray<f32>> {
    DeviceArray::concat(&[&x.slice(s![..;1000, ..])?, x], 0)
}

#[allow(dead_code)] // `tests/tests/examples.rs` includes this file for its functions.
fn main() -> Result<()> {
    let dev = Device::default()?;
    let (centroids, _, counts) = kmeans(&with_starts(&blobs(&dev)?)?, 3, 10)?;
    println!("on {}:\ncentroids\n{centroids}\npoints per cluster {counts}", dev.id());
    Ok(())
}
