//! The user API end to end on the CPU device: ndarray interop both ways (views and
//! non-contiguous arrays), maps with broadcasting, reductions, matmul, casts, fills.
//! Expected values are computed here independently, in f64 where it matters.

use ndarray::{s, Array, Array2, Array3, ArrayD, Axis, IxDyn};
use polycompute::{map, DType, Device, Expr};

fn cpu() -> Device {
    Device::cpu()
}

#[test]
fn ndarray_round_trip_including_views_and_strided_arrays() {
    let a = Array::from_shape_fn((4, 5), |(i, j)| (i * 10 + j) as f32);
    let dev = cpu();
    assert_eq!(dev.upload(&a).unwrap().to_ndarray().unwrap(), a.clone().into_dyn());
    let t = a.t();
    assert_eq!(dev.upload(&t).unwrap().to_ndarray().unwrap(), t.to_owned().into_dyn());
    let strided = a.slice(s![..;2, 1..;3]);
    let up = dev.upload(&strided).unwrap();
    assert_eq!(up.shape(), &[2, 2]);
    assert_eq!(up.to_vec().unwrap(), vec![1.0, 4.0, 21.0, 24.0]);
    let scalar = ndarray::arr0(7u32);
    assert_eq!(dev.upload(&scalar).unwrap().to_scalar().unwrap(), 7);
}

#[test]
fn fused_map_with_broadcasting_matches_ndarray() {
    let dev = cpu();
    let x = Array::from_shape_fn((3, 1, 4), |(i, _, k)| (i as f64) - (k as f64) * 0.5);
    let y = Array::from_shape_fn((5, 1), |(j, _)| j as f64 * 0.25 + 1.0);
    let dx = dev.upload(&x).unwrap();
    let dy = dev.upload(&y).unwrap();
    let out: polycompute::DeviceArray<f64> = map(&[&dx, &dy], |v| &v[0] * 2.0 + v[1].clone().sqrt() - 1).unwrap();
    assert_eq!(out.shape(), &[3, 5, 4]);
    let expected = x.mapv(|v| v * 2.0) + y.mapv(f64::sqrt) - 1.0;
    assert_eq!(out.to_ndarray().unwrap(), expected.into_dyn());
}

#[test]
fn map_semantics_corner_cases() {
    let dev = cpu();
    let f = dev.from_slice(&[f32::NAN, 1.0, -0.0, 2.5, -2.5, 3.5], &[6]).unwrap();
    let g = dev.from_slice(&[1.0f32, f32::NAN, 0.0, 0.0, 2.0, -2.0], &[6]).unwrap();
    let mx = f.zip_map(&g, |a, b| a.max(b)).unwrap().to_vec().unwrap();
    assert!(mx[0].is_nan() && mx[1].is_nan(), "max propagates NaN: {mx:?}");
    let lt = f.zip_map(&g, |a, b| a.lt(b)).unwrap().to_vec().unwrap();
    assert_eq!(lt, vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let ne = f.zip_map(&g, |a, b| a.ne(b)).unwrap().to_vec().unwrap();
    assert_eq!(ne, vec![1.0, 1.0, 0.0, 1.0, 1.0, 1.0]);
    let rounded = f.map(|a| a.round()).unwrap().to_vec().unwrap();
    assert_eq!(&rounded[3..], &[2.0, -2.0, 4.0], "round half to even");
    let rem = f.zip_map(&g, |a, b| a % b).unwrap().to_vec().unwrap();
    assert_eq!(rem[4], 1.5, "numpy remainder takes the divisor's sign: -2.5 % 2 = 1.5");
    assert_eq!(rem[5], -0.5, "3.5 % -2 = -0.5");

    let i = dev.from_slice(&[7i32, -7, i32::MIN, 5, i32::MAX], &[5]).unwrap();
    let j = dev.from_slice(&[2i32, 2, -1, 0, 1], &[5]).unwrap();
    assert_eq!(i.zip_map(&j, |a, b| a / b).unwrap().to_vec().unwrap(), vec![3, -4, i32::MIN, 0, i32::MAX]);
    assert_eq!(i.zip_map(&j, |a, b| a % b).unwrap().to_vec().unwrap(), vec![1, 1, 0, 0, 0]);
    assert_eq!(i.zip_map(&j, |a, b| a + b).unwrap().to_vec().unwrap()[4], i32::MIN, "wraps");
    let casted = dev
        .from_slice(&[f32::NAN, 1e10, -1e10, -1.7, 2.9], &[5])
        .unwrap()
        .map_to::<i32>(|a| a.cast(DType::I32))
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(casted, vec![0, i32::MAX, i32::MIN, -1, 2]);
    let idx: Vec<u32> = dev.zeros::<u32>(&[2, 3]).unwrap().map(|z| z + Expr::index()).unwrap().to_vec().unwrap();
    assert_eq!(idx, vec![0, 1, 2, 3, 4, 5]);
    let sel = dev
        .from_slice(&[-1.0f64, 0.0, 2.0], &[3])
        .unwrap()
        .map(|x| Expr::select(x.clone().gt(0.0), x.clone() * 10.0, -x))
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(sel, vec![1.0, -0.0, 20.0]);
}

#[test]
fn reductions_over_all_elements_and_each_axis() {
    let dev = cpu();
    let a = Array3::from_shape_fn((3, 4, 5), |(i, j, k)| ((i * 31 + j * 7 + k * 3) % 11) as f64 - 5.0);
    let d = dev.upload(&a).unwrap();
    assert_eq!(d.sum(None).unwrap().to_scalar().unwrap(), a.sum());
    assert_eq!(d.mean(None).unwrap().to_scalar().unwrap(), a.mean().unwrap());
    for axis in 0..3 {
        assert_eq!(d.sum(Some(axis)).unwrap().to_ndarray().unwrap(), a.sum_axis(Axis(axis)).into_dyn());
        let mx = a.fold_axis(Axis(axis), f64::NEG_INFINITY, |m, &v| m.max(v));
        assert_eq!(d.max(Some(axis)).unwrap().to_ndarray().unwrap(), mx.into_dyn());
        let am = a.map_axis(Axis(axis), |lane| {
            let m = lane.iter().cloned().fold(f64::INFINITY, f64::min);
            lane.iter().position(|&v| v == m).unwrap() as u32
        });
        assert_eq!(d.argmin(Some(axis)).unwrap().to_ndarray().unwrap(), am.into_dyn());
    }
    let ints = dev.from_slice(&[i32::MAX, 1, 3], &[3]).unwrap();
    assert_eq!(ints.sum(None).unwrap().to_scalar().unwrap(), i32::MIN + 3, "integer sums wrap");
    assert_eq!(ints.mean(None).unwrap().to_scalar().unwrap(), (i32::MAX as f64 + 4.0) / 3.0, "exact int mean");
    let with_nan = dev.from_slice(&[1.0f32, f32::NAN, -3.0, f32::NAN], &[4]).unwrap();
    assert!(with_nan.min(None).unwrap().to_scalar().unwrap().is_nan());
    assert_eq!(with_nan.argmax(None).unwrap().to_scalar().unwrap(), 1, "first NaN wins");
}

#[test]
fn matmul_2d_and_batched_against_f64_reference() {
    let dev = cpu();
    let (m, k, n) = (33, 17, 9);
    let a = Array2::from_shape_fn((m, k), |(i, j)| ((i * 5 + j * 3) % 7) as f32 * 0.5 - 1.0);
    let b = Array2::from_shape_fn((k, n), |(i, j)| ((i * 2 + j * 11) % 5) as f32 - 2.0);
    let got = dev.upload(&a).unwrap().matmul(&dev.upload(&b).unwrap()).unwrap().to_ndarray().unwrap();
    // Every product and partial sum here is a small multiple of 0.5: exact in f32.
    let want = a.mapv(f64::from).dot(&b.mapv(f64::from)).mapv(|v| v as f32);
    assert_eq!(got, want.into_dyn());

    let batch = Array3::from_shape_fn((3, 4, 6), |(b, i, j)| (b * 100 + i * 10 + j) as f64 / 64.0);
    let rhs = Array3::from_shape_fn((3, 6, 2), |(b, i, j)| (b + i * 3 + j) as f64 / 8.0);
    let got = dev.upload(&batch).unwrap().matmul(&dev.upload(&rhs).unwrap()).unwrap().to_ndarray().unwrap();
    let mut want = ArrayD::<f64>::zeros(IxDyn(&[3, 4, 2]));
    for bi in 0..3 {
        let prod = batch.index_axis(Axis(0), bi).dot(&rhs.index_axis(Axis(0), bi));
        want.index_axis_mut(Axis(0), bi).assign(&prod.into_dyn());
    }
    assert_eq!(got, want);
}

#[test]
fn casts_transposes_and_device_moves() {
    let dev = cpu();
    let a = Array::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as i32 - 10);
    let d = dev.upload(&a).unwrap();
    assert_eq!(d.transpose().unwrap().to_ndarray().unwrap(), a.t().to_owned().into_dyn());
    let p = d.permute(&[1, 0, 2]).unwrap();
    assert_eq!(p.to_ndarray().unwrap(), a.clone().permuted_axes([1, 0, 2]).as_standard_layout().to_owned().into_dyn());
    let as_u32 = d.cast::<u32>().unwrap().to_vec().unwrap();
    assert_eq!(as_u32, a.iter().map(|&v| v as u32).collect::<Vec<_>>(), "i32 -> u32 reinterprets bits");
    let as_f32 = d.cast::<f32>().unwrap().to_vec().unwrap();
    assert_eq!(as_f32, a.iter().map(|&v| v as f32).collect::<Vec<_>>());
    let copy = d.copy().unwrap();
    assert_eq!(copy.to_vec().unwrap(), d.to_vec().unwrap());
    assert_eq!(d.to_device(&Device::cpu()).unwrap().to_vec().unwrap(), d.to_vec().unwrap());
}

#[test]
fn random_fills_are_counter_based() {
    let dev = cpu();
    let u = dev.uniform::<f32>(42, &[1000]).unwrap().to_vec().unwrap();
    let expect: Vec<f32> = (0..1000).map(|i| polycompute::philox::uniform_f32(42, i)).collect();
    assert_eq!(u, expect);
    // A sub-range is the same stream: element i depends only on (seed, i).
    let head = dev.uniform::<f32>(42, &[10]).unwrap().to_vec().unwrap();
    assert_eq!(head[..], u[..10]);
    let bits = dev.uniform::<u32>(7, &[9]).unwrap().to_vec().unwrap();
    assert_eq!(bits, (0..9).map(|i| polycompute::philox::uniform_u32(7, i)).collect::<Vec<_>>());
    let n = dev.normal::<f64>(3, &[20_000]).unwrap();
    let mean = n.mean(None).unwrap().to_scalar().unwrap();
    let var = n.map(|x| &x * &x).unwrap().mean(None).unwrap().to_scalar().unwrap();
    assert!(mean.abs() < 0.03 && (var - 1.0).abs() < 0.05, "mean {mean}, var {var}");
    let full = dev.full(2.5f64, &[3]).unwrap().to_vec().unwrap();
    assert_eq!(full, vec![2.5; 3]);
}

#[test]
fn large_map_and_sum_are_correct_in_parallel() {
    let dev = cpu();
    let n = (1 << 20) + 3;
    let x = dev.uniform::<f32>(1, &[n]).unwrap();
    let host = x.to_vec().unwrap();
    let y = x.map(|v| v * 2.0 - 1.0).unwrap().to_vec().unwrap();
    assert!(y.iter().zip(&host).all(|(&y, &h)| y == h * 2.0 - 1.0));
    let exact: f64 = host.iter().map(|&v| v as f64).sum();
    let sum = x.sum(None).unwrap().to_scalar().unwrap() as f64;
    let bound = 21.0 * f32::EPSILON as f64 * host.iter().map(|&v| v.abs() as f64).sum::<f64>();
    assert!((sum - exact).abs() <= bound, "sum {sum} vs {exact}, bound {bound}");
}

#[test]
fn special_values_survive_the_round_trip_on_every_device() {
    use polycompute::testing::{for_each_device, Specials, Ulps};

    // Data movement keeps every bit: NaN, -0.0, subnormals and the integer extremes.
    fn round_trip<T: Specials>(dev: &Device) -> Vec<u64> {
        let v = T::extended();
        let back = dev.from_slice(&v, &[v.len()]).unwrap().to_vec().unwrap();
        back.iter().map(|x| x.to_scalar().to_bits()).collect()
    }
    fn bits<T: Specials>() -> Vec<u64> {
        T::extended().iter().map(|x| x.to_scalar().to_bits()).collect()
    }
    let ran = for_each_device(|dev| {
        assert_eq!(round_trip::<f32>(dev), bits::<f32>(), "f32 on {}", dev.id());
        assert_eq!(round_trip::<f64>(dev), bits::<f64>(), "f64 on {}", dev.id());
        assert_eq!(round_trip::<i32>(dev), bits::<i32>(), "i32 on {}", dev.id());
        assert_eq!(round_trip::<u32>(dev), bits::<u32>(), "u32 on {}", dev.id());
        // And through an op: a copy.
        let v = f32::extended();
        let copied = dev.from_slice(&v, &[v.len()]).unwrap().copy().unwrap().to_vec().unwrap();
        Ulps::EXACT.assert(&copied, &v, format!("copy on {}", dev.id()));
    })
    .unwrap();
    assert!(ran.iter().any(|id| *id == "cpu:0"), "the CPU is always there: {ran:?}");
}
