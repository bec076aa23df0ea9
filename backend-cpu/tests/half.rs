//! f16 and bf16 on the CPU: every elementwise result is the f32 result rounded once
//! to nearest even — checked against the `half` crate's own f32 conversions over every pair
//! of specials — and the corners that rounding has: ties to even, overflow to Inf, the
//! subnormals, NaN and -0.0. Sums, scans and matmul accumulate in f32 and round once.

mod common;

use common::dev;
use polycompute_core::{bf16, f16, DType, Element, Expr};
use polycompute_testing::specials::{pairs, Specials};

/// Bits of a half vector, NaNs made one value (payloads are not part of the contract).
fn bits<H: Element>(v: &[H]) -> Vec<u64> {
    v.iter().map(|x| if x.to_scalar().to_f64().is_nan() { u64::MAX } else { x.to_scalar().to_bits() }).collect()
}

/// Every pair of specials through `op` on the device against `want(a, b)` element by element.
fn check_binary<H: Specials>(name: &str, op: fn(Expr, Expr) -> Expr, want: impl Fn(H, H) -> H) {
    let (a, b) = pairs(&H::extended());
    let d = dev();
    let (x, y) = (d.from_slice(&a, &[a.len()]).unwrap(), d.from_slice(&b, &[b.len()]).unwrap());
    let got = x.zip_map(&y, op).unwrap().to_vec().unwrap();
    let expect: Vec<H> = a.iter().zip(&b).map(|(&p, &q)| want(p, q)).collect();
    for (i, (g, w)) in bits(&got).iter().zip(bits(&expect)).enumerate() {
        assert_eq!(*g, w, "{name} {} ({:?}, {:?}): got {:?} want {:?}", H::DTYPE, a[i], b[i], got[i], expect[i]);
    }
}

#[test]
fn binary_ops_are_the_f32_result_rounded_once() {
    check_binary::<f16>("add", |x, y| x + y, |p, q| f16::from_f32(p.to_f32() + q.to_f32()));
    check_binary::<f16>("sub", |x, y| x - y, |p, q| f16::from_f32(p.to_f32() - q.to_f32()));
    check_binary::<f16>("mul", |x, y| x * y, |p, q| f16::from_f32(p.to_f32() * q.to_f32()));
    check_binary::<f16>("div", |x, y| x / y, |p, q| f16::from_f32(p.to_f32() / q.to_f32()));
    check_binary::<bf16>("add", |x, y| x + y, |p, q| bf16::from_f32(p.to_f32() + q.to_f32()));
    check_binary::<bf16>("mul", |x, y| x * y, |p, q| bf16::from_f32(p.to_f32() * q.to_f32()));
    check_binary::<bf16>("div", |x, y| x / y, |p, q| bf16::from_f32(p.to_f32() / q.to_f32()));
}

#[test]
fn a_fused_map_rounds_after_each_operation() {
    // a*x + y with a*x = 2049 (a tie in f16: rounds to 2048) and y = 1: op by op it is
    // 2048 + 1 = 2049, a tie again, so 2048; one rounding of 2050 would give 2050.
    let d = dev();
    let x = d.from_slice(&[f16::from_f32(683.0)], &[1]).unwrap();
    let y = d.from_slice(&[f16::ONE], &[1]).unwrap();
    // 683 * 3 = 2049 -> 2048 (tie, even); 2048 + 1 = 2049 -> 2048.
    let r = x.zip_map(&y, |a, b| a * 3.0 + b).unwrap().to_vec().unwrap();
    assert_eq!(r, vec![f16::from_f32(2048.0)]);
}

#[test]
fn rounding_corners() {
    let d = dev();
    let h = |v: f32| f16::from_f32(v);
    let run = |a: &[f16], b: &[f16], op: fn(Expr, Expr) -> Expr| {
        let (x, y) = (d.from_slice(a, &[a.len()]).unwrap(), d.from_slice(b, &[b.len()]).unwrap());
        x.zip_map(&y, op).unwrap().to_vec().unwrap()
    };
    // Ties to even: 2048 + 1 and 2048 + 3 lie halfway between representable neighbours.
    assert_eq!(run(&[h(2048.0), h(2048.0)], &[h(1.0), h(3.0)], |x, y| x + y), vec![h(2048.0), h(2052.0)]);
    // Overflow: 65504 + 16 is the tie between MAX (odd) and 2^16: Inf; 65504 + 8 stays MAX.
    assert_eq!(run(&[f16::MAX, f16::MAX], &[h(16.0), h(8.0)], |x, y| x + y), vec![f16::INFINITY, f16::MAX]);
    assert_eq!(run(&[f16::MIN], &[h(2.0)], |x, y| x * y), vec![f16::NEG_INFINITY]);
    // Subnormals: the smallest halved is a tie with 0 (even); 3 of them halved is a tie
    // between 1 and 2 of them (even: 2).
    let tiny = f16::from_bits(1);
    assert_eq!(run(&[tiny, f16::from_bits(3)], &[h(0.5), h(0.5)], |x, y| x * y), vec![f16::ZERO, f16::from_bits(2)]);
    // -0.0: -0 * 1 and 3 * -0 are -0; -0 + -0 is -0 but -0 + 0 is +0; 3 - 3 is +0.
    let nz = f16::NEG_ZERO;
    assert_eq!(bits(&run(&[nz, h(3.0)], &[h(1.0), nz], |x, y| x * y)), bits(&[nz, nz]));
    assert_eq!(bits(&run(&[nz, nz], &[nz, f16::ZERO], |x, y| x + y)), bits(&[nz, f16::ZERO]));
    assert_eq!(bits(&run(&[h(3.0)], &[h(3.0)], |x, y| x - y)), bits(&[f16::ZERO]));
    // NaN propagates through arithmetic and min/max.
    let n = run(&[f16::NAN, h(1.0)], &[h(1.0), f16::NAN], |x, y| x.min(y) + 1.0);
    assert!(n.iter().all(|v| v.is_nan()));
    // bf16: 256 + 1 is a tie (to 256), 256 + 3 rounds to 260; MAX * 2 overflows.
    let b = |v: f32| bf16::from_f32(v);
    let (x, y) = (
        d.from_slice(&[b(256.0), b(256.0), bf16::MAX], &[3]).unwrap(),
        d.from_slice(&[b(1.0), b(3.0), b(2.0)], &[3]).unwrap(),
    );
    let r = x.zip_map(&y, |p, q| Expr::select(p.clone().gt(1e38), p.clone() * q.clone(), p + q)).unwrap();
    assert_eq!(r.to_vec().unwrap(), vec![b(256.0), b(260.0), bf16::INFINITY]);
}

#[test]
fn casts_round_once_and_saturate() {
    let d = dev();
    // f64 -> f16 from the exact value: 1 + 2^-11 + 2^-40 is above the tie, so it rounds up
    // (rounding through f32 first would lose the 2^-40 and round down to 1).
    let above = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    let x = d.from_slice(&[above, 1.0 + 2f64.powi(-11), 65519.0, 65520.0, -1e-10], &[5]).unwrap();
    let h = x.cast::<f16>().unwrap().to_vec().unwrap();
    assert_eq!(bits(&h), bits(&[f16::from_bits(0x3c01), f16::ONE, f16::MAX, f16::INFINITY, f16::NEG_ZERO]));
    // i32 -> bf16: 2^25 + 2^17 + 1 must round up to 2^25 + 2^18 (through f32 it would tie).
    let i = d.from_slice(&[(1i32 << 25) + (1 << 17) + 1, i32::MAX], &[2]).unwrap();
    let r = i.cast::<bf16>().unwrap().to_vec().unwrap();
    assert_eq!(r, vec![bf16::from_f32(((1 << 25) + (1 << 18)) as f32), bf16::from_f32(2_147_483_648.0)]);
    // Halves to integers: truncation, saturation, NaN to 0.
    let s = d.from_slice(&[f16::from_f32(-2.75), f16::MAX, f16::NEG_INFINITY, f16::NAN], &[4]).unwrap();
    assert_eq!(s.cast::<i32>().unwrap().to_vec().unwrap(), vec![-2, 65504, i32::MIN, 0]);
    assert_eq!(s.cast::<u32>().unwrap().to_vec().unwrap(), vec![0, 65504, 0, 0]);
    // f16 -> bf16 -> f16 keeps what both hold; f32 -> f16 is half's own conversion.
    let f: Vec<f32> = <f32 as Specials>::extended();
    let got = d.from_slice(&f, &[f.len()]).unwrap().cast::<f16>().unwrap().to_vec().unwrap();
    assert_eq!(bits(&got), bits(&f.iter().map(|&v| f16::from_f32(v)).collect::<Vec<_>>()));
}

#[test]
fn literals_round_once_from_f64() {
    // 0.1 is rounded to f16 once (0x2e66), in the program as in constant folding.
    let d = dev();
    let x = d.from_slice(&[f16::ZERO], &[1]).unwrap();
    let r = x.map(|v| v + 0.1).unwrap().to_vec().unwrap();
    assert_eq!(r[0].to_bits(), 0x2e66);
    let folded = x.map(|v| v * 0.0 + (Expr::float(0.1) + 0.2)).unwrap().to_vec().unwrap();
    // 0.1 and 0.2 become f16 first (weak literals adopt the operand dtype), then add once.
    assert_eq!(folded[0], f16::from_f32(f16::from_f32(0.1).to_f32() + f16::from_f32(0.2).to_f32()));
}

#[test]
fn sums_scans_and_matmul_accumulate_in_f32() {
    // 4096 ones: rounding every partial sum to f16 would stop at 2048 (2048 + 1 ties to 2048).
    let d = dev();
    let ones = d.from_slice(&vec![f16::ONE; 4096], &[4096]).unwrap();
    assert_eq!(ones.sum(None).unwrap().to_vec().unwrap(), vec![f16::from_f32(4096.0)]);
    assert_eq!(ones.mean(None).unwrap().to_vec().unwrap(), vec![f16::ONE]);
    // cumsum: output 2049 is 2050 (rounding each partial sum would keep 2048 from here on).
    let c = ones.cumsum(0).unwrap().to_vec().unwrap();
    assert_eq!((c[2049], c[4095]), (f16::from_f32(2050.0), f16::from_f32(4096.0)));
    let row = d.from_slice(&vec![bf16::ONE; 1024], &[1, 1024]).unwrap();
    let col = d.from_slice(&vec![bf16::ONE; 1024], &[1024, 1]).unwrap();
    assert_eq!(row.matmul(&col).unwrap().to_vec().unwrap(), vec![bf16::from_f32(1024.0)]);
    // max/argmax compare exactly.
    let v = d.from_slice(&[f16::from_bits(0x3c00), f16::from_bits(0x3c01), f16::from_bits(0x3bff)], &[3]).unwrap();
    assert_eq!(v.max(None).unwrap().to_vec().unwrap(), vec![f16::from_bits(0x3c01)]);
    assert_eq!(v.argmax(None).unwrap().to_vec().unwrap(), vec![1u32]);
}

#[test]
fn random_fills_are_the_f32_streams_rounded() {
    let d = dev();
    let u32s = d.uniform::<f32>(7, &[1000]).unwrap().to_vec().unwrap();
    let u16s = d.uniform::<f16>(7, &[1000]).unwrap().to_vec().unwrap();
    assert_eq!(u16s, u32s.iter().map(|&v| f16::from_f32(v)).collect::<Vec<_>>());
    let n32 = d.normal::<f32>(9, &[1001]).unwrap().to_vec().unwrap();
    let nb = d.normal::<bf16>(9, &[1001]).unwrap().to_vec().unwrap();
    assert_eq!(nb, n32.iter().map(|&v| bf16::from_f32(v)).collect::<Vec<_>>());
    assert_eq!(DType::BF16.size_bytes(), 2);
}
