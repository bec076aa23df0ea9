//! Fill: constants of every dtype and the Philox streams, bit-identical to core's reference.

mod common;

use polycompute_core::philox;
use polycompute_core::{DType, Error};

#[test]
fn uniform_streams_are_bit_identical_to_the_reference() {
    let Some(dev) = common::device() else { return };
    for (seed, n) in [(0u64, 1usize), (7, 1001), (0xDEAD_BEEF_0123_4567, 4099)] {
        let u = dev.uniform::<u32>(seed, &[n]).unwrap().to_vec().unwrap();
        assert!(u.iter().enumerate().all(|(i, &v)| v == philox::uniform_u32(seed, i as u64)), "u32 seed {seed}");
        let i = dev.uniform::<i32>(seed, &[n]).unwrap().to_vec().unwrap();
        assert!(i.iter().enumerate().all(|(k, &v)| v as u32 == philox::uniform_u32(seed, k as u64)));
        let f = dev.uniform::<f32>(seed, &[n]).unwrap().to_vec().unwrap();
        for (k, v) in f.iter().enumerate() {
            assert_eq!(v.to_bits(), philox::uniform_f32(seed, k as u64).to_bits(), "f32 seed {seed} element {k}");
        }
        match dev.uniform::<f64>(seed, &[n]) {
            Ok(a) => {
                for (k, v) in a.to_vec().unwrap().iter().enumerate() {
                    assert_eq!(v.to_bits(), philox::uniform_f64(seed, k as u64).to_bits(), "f64 element {k}");
                }
            }
            Err(Error::Unsupported { dtype: DType::F64, .. }) => assert!(!common::has_f64(&dev)),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn normal_f32_matches_the_reference_within_a_few_ulps() {
    let Some(dev) = common::device() else { return };
    let n = 4003;
    let got = dev.normal::<f32>(11, &[n]).unwrap().to_vec().unwrap();
    for (k, v) in got.iter().enumerate() {
        let want = philox::normal_f32(11, k as u64);
        assert!((v - want).abs() <= 1e-5 * want.abs().max(1.0), "element {k}: {v} vs {want}");
    }
    match dev.normal::<f64>(11, &[1001]) {
        Ok(a) => {
            for (k, v) in a.to_vec().unwrap().iter().enumerate() {
                let want = philox::normal_f64(11, k as u64);
                assert!((v - want).abs() <= 1e-14 * want.abs().max(1.0), "f64 element {k}: {v} vs {want}");
            }
        }
        Err(Error::Unsupported { dtype: DType::F64, .. }) => assert!(!common::has_f64(&dev)),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn constants_of_every_dtype() {
    let Some(dev) = common::device() else { return };
    assert_eq!(dev.full(-2.5f32, &[3, 5]).unwrap().to_vec().unwrap(), vec![-2.5; 15]);
    assert_eq!(dev.full(i32::MIN, &[7]).unwrap().to_vec().unwrap(), vec![i32::MIN; 7]);
    assert_eq!(dev.full(u32::MAX, &[1]).unwrap().to_vec().unwrap(), vec![u32::MAX]);
    let big = 1e300 + 0.5e285;
    assert_eq!(dev.full(big, &[9]).unwrap().to_vec().unwrap(), vec![big; 9]);
    let nan = dev.full(f32::NAN, &[2]).unwrap().to_vec().unwrap();
    assert!(nan.iter().all(|v| v.is_nan()));
    assert_eq!(dev.zeros::<f64>(&[0]).unwrap().to_vec().unwrap(), Vec::<f64>::new());
}
