//! The array-vocabulary examples (`examples/kmeans.rs`, `examples/softmax_regression.rs`)
//! on every device: each device's results agree with the CPU's through
//! `polycompute::testing`, and the results are right (clusters found, classes learned).

#[path = "../../examples/kmeans.rs"]
mod kmeans;
#[path = "../../examples/softmax_regression.rs"]
mod softmax_regression;

use polycompute::testing::{backend_tests, Check, Tolerance};
use polycompute::{Device, DeviceArray, Result};

/// k-means of three well-separated blobs, from one point of each (`with_starts`): the labels and counts
/// are exact on every device; the centroids are means of 1,000 points, summed in a
/// device-chosen order.
fn kmeans_blobs(dev: &Device) -> Result<(DeviceArray<f32>, DeviceArray<u32>, DeviceArray<f32>)> {
    let x = kmeans::blobs(dev)?;
    kmeans::kmeans(&kmeans::with_starts(&x)?, 3, 8)
}

backend_tests!(kmeans_blobs, check = Check::new("kmeans_blobs").tolerance_for(0, Tolerance::ulps(64)));

#[test]
fn kmeans_finds_the_blobs() {
    let (centroids, labels, counts) = kmeans_blobs(&Device::cpu()).unwrap();
    let c = centroids.to_vec().unwrap();
    let mut found: Vec<(i32, i32)> = c.chunks(2).map(|p| (p[0].round() as i32, p[1].round() as i32)).collect();
    found.sort();
    assert_eq!(found, vec![(-5, 5), (0, 0), (5, 5)], "centroids {c:?}");
    let counts = counts.to_vec().unwrap();
    assert_eq!(counts.iter().sum::<f32>(), 3003.0);
    assert_eq!(counts, vec![1001.0; 3], "each blob and its starting point");
    assert_eq!(labels.shape(), &[3003]);
}

/// 100 gradient steps of softmax regression: the weights are results of 200 matrix
/// products and exponentials, so they agree to a relative 1e-4, not to the last bit.
fn softmax_regression_weights(dev: &Device) -> Result<(DeviceArray<f32>, DeviceArray<u32>)> {
    let (x, y) = softmax_regression::dataset(dev)?;
    let w = softmax_regression::train(&x, &y, 3, 100, 0.5)?;
    Ok((w.clone(), x.matmul(&w)?.argmax(-1)?))
}

backend_tests!(
    softmax_regression_weights,
    check = Check::new("softmax_regression_weights").tolerance_for(0, Tolerance::abs_rel(1e-5, 1e-4))
);

#[test]
fn softmax_regression_learns_the_classes() {
    let dev = Device::cpu();
    let (x, y) = softmax_regression::dataset(&dev).unwrap();
    let untrained = softmax_regression::accuracy(&x, &y, &dev.zeros(&[3, 3]).unwrap()).unwrap();
    let w = softmax_regression::train(&x, &y, 3, 100, 0.5).unwrap();
    let trained = softmax_regression::accuracy(&x, &y, &w).unwrap();
    assert!(untrained < 0.4 && trained > 0.9, "accuracy {untrained} before, {trained} after");
    // The probabilities of each row sum to 1.
    let p = softmax_regression::softmax(&x.matmul(&w).unwrap()).unwrap();
    for s in p.sum(-1).unwrap().to_vec().unwrap() {
        assert!((s - 1.0).abs() < 1e-5, "{s}");
    }
}
