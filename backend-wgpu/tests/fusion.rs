//! The lazy elementwise layer on wgpu: a fused chain (one kernel) equals the same calls run
//! one by one, bit for bit, and a fused map→reduce (the default entry: map, then reduce)
//! equals the eager reduction. The only test of this binary that toggles fusion.

mod common;

use polycompute_core::{DType, DeviceArray};
use polycompute_testing::inputs::uniform;

#[test]
fn a_fused_chain_and_its_reduction_match_the_eager_calls_bit_for_bit() {
    let Some(dev) = common::device() else { return };
    let n = 5000;
    let x = dev.from_slice(&uniform::<f32>(1, n, -4.0, 4.0), &[n]).unwrap();
    let y = dev.from_slice(&uniform::<f32>(2, n, -4.0, 4.0), &[n]).unwrap();
    let chain = || -> (Vec<u32>, Vec<i32>, u32) {
        let e = x.exp().unwrap();
        let m = (&e * &y).unwrap();
        let a = (&m + &x).unwrap().abs().unwrap().sqrt().unwrap();
        let i: DeviceArray<i32> = a.map_to(|v| (v * 1000.0).cast(DType::I32)).unwrap();
        let wrapped = (&i * &i).unwrap().map(|v| &v * 65_537).unwrap();
        let d = (&x - &y).unwrap();
        let s = (&d * &d).unwrap().sum(None).unwrap().to_scalar().unwrap();
        (a.to_vec().unwrap().iter().map(|v| v.to_bits()).collect(), wrapped.to_vec().unwrap(), s.to_bits())
    };
    dev.set_fusion(false);
    let eager = chain();
    dev.set_fusion(true);
    let before = dev.fusion_stats();
    let fused = chain();
    let after = dev.fusion_stats();
    assert_eq!(fused, eager);
    // a (read), wrapped (read) and the reduction: three kernels for the 10 recorded ops.
    assert_eq!(after.launched - before.launched, 3, "{before:?} -> {after:?}");
    assert_eq!(after.recorded - before.recorded, 10);
}
