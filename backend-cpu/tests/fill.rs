//! `Op::Fill`: constants of every dtype (signed zero included), and the Philox streams bit
//! for bit against `polycompute_core::philox`, the reference, at lengths that leave
//! partial blocks and that run in parallel.

mod common;

use common::dev;
use polycompute_core::philox;
use polycompute_testing::Ulps;

const LENGTHS: [usize; 5] = [0, 1, 7, 4099, 300_001];

#[test]
fn constants_of_every_dtype() {
    let d = dev();
    for n in LENGTHS {
        assert!(d.full(-0.0f32, &[n]).unwrap().to_vec().unwrap().iter().all(|v| v.to_bits() == (-0.0f32).to_bits()));
        assert!(d.full(2.5f64, &[n]).unwrap().to_vec().unwrap().iter().all(|&v| v == 2.5));
        assert!(d.full(i32::MIN, &[n]).unwrap().to_vec().unwrap().iter().all(|&v| v == i32::MIN));
        assert!(d.zeros::<u32>(&[n]).unwrap().to_vec().unwrap().iter().all(|&v| v == 0));
    }
    assert_eq!(d.full(7u32, &[2, 3]).unwrap().shape(), &[2, 3]);
}

#[test]
fn uniform_streams_match_the_reference_bit_for_bit() {
    let d = dev();
    for seed in [0u64, 42, u64::MAX] {
        for n in LENGTHS {
            let u = d.uniform::<u32>(seed, &[n]).unwrap().to_vec().unwrap();
            assert!(u.iter().enumerate().all(|(i, &v)| v == philox::uniform_u32(seed, i as u64)), "u32 {seed} {n}");
            let s = d.uniform::<i32>(seed, &[n]).unwrap().to_vec().unwrap();
            assert!(s.iter().zip(&u).all(|(&a, &b)| a as u32 == b), "i32 {seed} {n}");
            let f = d.uniform::<f32>(seed, &[n]).unwrap().to_vec().unwrap();
            assert!(f.iter().enumerate().all(|(i, &v)| v.to_bits() == philox::uniform_f32(seed, i as u64).to_bits()));
            let g = d.uniform::<f64>(seed, &[n]).unwrap().to_vec().unwrap();
            assert!(g.iter().enumerate().all(|(i, &v)| v.to_bits() == philox::uniform_f64(seed, i as u64).to_bits()));
        }
    }
}

/// The f64 stream is the reference bit for bit; the f32 stream's vectorised `ln`, `sin` and
/// `cos` keep each element within 4 ulp of the reference's C-library ones (and about 98% of
/// them identical).
#[test]
fn normal_streams_match_the_reference() {
    let d = dev();
    let within = Ulps::within(4);
    for seed in [1u64, 1 << 40] {
        for n in LENGTHS {
            let f = d.normal::<f32>(seed, &[n]).unwrap().to_vec().unwrap();
            let want: Vec<f32> = (0..n).map(|i| philox::normal_f32(seed, i as u64)).collect();
            within.assert(&f, &want, format_args!("normal f32, seed {seed}, {n} elements"));
            let same = f.iter().zip(&want).filter(|(a, b)| a.to_bits() == b.to_bits()).count();
            assert!(same as f64 >= 0.95 * n as f64, "only {same} of {n} bit-identical");
            let g = d.normal::<f64>(seed, &[n]).unwrap().to_vec().unwrap();
            assert!(g.iter().enumerate().all(|(i, &v)| v.to_bits() == philox::normal_f64(seed, i as u64).to_bits()));
        }
    }
    assert!(d.normal::<i32>(1, &[4]).is_err());
}
