//! Views and data movement on the CPU device: views (slice with `s![]`, flip, permute, broadcast_to,
//! expand_dims/squeeze, reshape), maps over views, and the new ops against expectations
//! computed here with ndarray and plain loops. The cross-backend corpus is in
//! tests/src (polycompute-conformance); these pin the user API and the bad-input errors.

use ndarray::{s, Array, ArrayD, Axis, IxDyn};
use polycompute::{Device, Error};

fn cpu() -> Device {
    Device::cpu()
}

fn grid(dims: &[usize]) -> ArrayD<i32> {
    let n: usize = dims.iter().product();
    ArrayD::from_shape_vec(IxDyn(dims), (0..n as i32).map(|v| v * 7 % 31 - 9).collect()).unwrap()
}

#[test]
fn slices_flips_and_permutes_are_views_that_read_like_ndarray() {
    let a = grid(&[4, 5, 6]);
    let d = cpu().upload(&a).unwrap();
    let cases = [
        (d.slice(s![.., 1..5;2, ..]).unwrap(), a.slice(s![.., 1..5;2, ..]).to_owned().into_dyn()),
        (d.slice(s![..;-1, 2, -4..;-2]).unwrap(), a.slice(s![..;-1, 2, -4..;-2]).to_owned().into_dyn()),
        (d.slice(s![1..3, .., 0..0]).unwrap(), a.slice(s![1..3, .., 0..0]).to_owned().into_dyn()),
    ];
    for (got, want) in cases {
        assert!(std::sync::Arc::ptr_eq(got.buffer().unwrap(), d.buffer().unwrap()), "a slice shares the buffer");
        assert_eq!(got.to_ndarray().unwrap(), want);
    }
    let p = d.permute(&[2, 0, 1]).unwrap();
    assert!(std::sync::Arc::ptr_eq(p.buffer().unwrap(), d.buffer().unwrap()));
    assert_eq!(p.to_ndarray().unwrap(), a.clone().permuted_axes(IxDyn(&[2, 0, 1])).as_standard_layout().to_owned());
    let mut flipped = a.clone();
    flipped.invert_axis(Axis(1));
    assert_eq!(d.flip(1).unwrap().to_ndarray().unwrap(), flipped);
    // Clamped bounds, as numpy's.
    assert_eq!(d.slice(s![-100..100, 0, 0]).unwrap().to_vec().unwrap(), a.slice(s![.., 0, 0]).to_vec());
}

#[test]
fn maps_read_views_in_place() {
    let a = grid(&[6, 8]);
    let d = cpu().upload(&a).unwrap();
    let v = d.slice(s![..;-2, 1..;3]).unwrap();
    let got = v.map(|x| x * 3 + 1).unwrap().to_ndarray().unwrap();
    assert_eq!(got, a.slice(s![..;-2, 1..;3]).mapv(|x| x * 3 + 1).into_dyn());
    let b = d.slice(s![0..1, ..]).unwrap().broadcast_to(&[6, 8]).unwrap();
    let sum = d.zip_map(&b, |x, y| x - y).unwrap().to_ndarray().unwrap();
    assert_eq!(sum, &a - &a.slice(s![0..1, ..]));
    let t = d.transpose().unwrap();
    assert_eq!(t.map(|x| x + 0).unwrap().to_ndarray().unwrap(), a.t().to_owned().into_dyn());
}

#[test]
fn reshape_expand_squeeze() {
    let a = grid(&[2, 3, 4]);
    let d = cpu().upload(&a).unwrap();
    let r = d.slice(s![1, .., ..]).unwrap().reshape(&[12]).unwrap();
    assert!(std::sync::Arc::ptr_eq(r.buffer().unwrap(), d.buffer().unwrap()), "contiguous reshape is a view");
    assert_eq!(r.to_vec().unwrap(), a.slice(s![1, .., ..]).iter().copied().collect::<Vec<_>>());
    let t = d.permute(&[2, 1, 0]).unwrap().reshape(&[4, 6]).unwrap();
    let want = a.clone().permuted_axes(IxDyn(&[2, 1, 0])).iter().copied().collect::<Vec<_>>();
    assert_eq!(t.to_vec().unwrap(), want);
    let e = d.expand_dims(1).unwrap();
    assert_eq!(e.shape(), &[2, 1, 3, 4]);
    assert_eq!(e.squeeze(None).unwrap().shape(), &[2, 3, 4]);
    assert!(matches!(d.squeeze(Some(0)), Err(Error::InvalidArgument { argument: "axis", .. })));
}

#[test]
fn concat_stack_pad() {
    let a = grid(&[2, 3]);
    let b = grid(&[2, 5]);
    let dev = cpu();
    let (da, db) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
    let c = polycompute::DeviceArray::concat(&[&da, &db], 1).unwrap();
    assert_eq!(c.to_ndarray().unwrap(), ndarray::concatenate(Axis(1), &[a.view(), b.view()]).unwrap());
    let s2 = polycompute::DeviceArray::stack(&[&da, &da.flip(0).unwrap()], 0).unwrap();
    let mut fa = a.clone();
    fa.invert_axis(Axis(0));
    assert_eq!(s2.to_ndarray().unwrap(), ndarray::stack(Axis(0), &[a.view(), fa.view()]).unwrap());
    let err = polycompute::DeviceArray::concat(&[&da, &db], 0).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { op: "concat", argument: "arrays", .. }), "{err}");
    let p = da.pad(&[(1, 0), (2, 1)], -1).unwrap().to_ndarray().unwrap();
    assert_eq!(p.shape(), &[3, 6]);
    assert_eq!(p[[0, 0]], -1);
    assert_eq!(p.slice(s![1.., 2..5]).into_dyn(), a);
    assert_eq!(p.iter().filter(|&&v| v == -1).count() + 6, 18 + a.iter().filter(|&&v| v == -1).count());
}

#[test]
fn take_gather_scatter() {
    let a = grid(&[3, 4]);
    let dev = cpu();
    let d = dev.upload(&a).unwrap();
    let idx = dev.from_slice(&[3i32, -1, 0, -4], &[2, 2]).unwrap();
    let t = d.take(&idx, 1).unwrap().to_ndarray().unwrap();
    assert_eq!(t.shape(), &[3, 2, 2]);
    for r in 0..3 {
        for (k, &i) in [3usize, 3, 0, 0].iter().enumerate() {
            assert_eq!(t[[r, k / 2, k % 2]], a[[r, i]]);
        }
    }
    let bad = dev.from_slice(&[4u32], &[1]).unwrap();
    let err = d.take(&bad, 1).unwrap_err();
    assert!(matches!(err, Error::IndexOutOfRange { op: "take", index: 4, len: 4, .. }), "{err}");
    let bad = dev.from_slice(&[-5i32], &[1]).unwrap();
    assert!(matches!(d.take(&bad, 1), Err(Error::IndexOutOfRange { index: -5, .. })));
    assert!(matches!(d.take(&idx, 2), Err(Error::AxisOutOfRange { .. })));
    let picks = [2u32, 0, 1, 1, 0, 2, 2, 0];
    let along = dev.from_slice(&picks, &[2, 4]).unwrap();
    let g = d.take_along_axis(&along, 0).unwrap().to_vec().unwrap();
    let want: Vec<i32> = picks.iter().enumerate().map(|(f, &i)| a[[i as usize, f % 4]]).collect();
    assert_eq!(g, want);
    let zeros = dev.zeros::<f64>(&[4]).unwrap();
    let at = dev.from_slice(&[1u32, 3, 1, 1], &[4]).unwrap();
    let vals = dev.from_slice(&[1.0, 2.0, 3.0, 4.0], &[4]).unwrap();
    assert_eq!(zeros.scatter_add(&at, &vals, 0).unwrap().to_vec().unwrap(), vec![0.0, 8.0, 0.0, 2.0]);
}

#[test]
fn scans_sorts_topk() {
    let dev = cpu();
    let x = dev.from_slice(&[i32::MAX, 1, 2, -3], &[4]).unwrap();
    assert_eq!(x.cumsum(0).unwrap().to_vec().unwrap(), vec![i32::MAX, i32::MIN, i32::MIN + 2, i32::MAX]);
    let m = dev.from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    assert_eq!(m.cumprod(0).unwrap().to_vec().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 10.0, 18.0]);
    let f = dev.from_slice(&[3.0f32, f32::NAN, -0.0, 0.0, -1.0, f32::INFINITY, -0.0], &[7]).unwrap();
    let order = f.argsort(0).unwrap().to_vec().unwrap();
    assert_eq!(order, vec![4, 2, 3, 6, 0, 5, 1]);
    let sorted = f.sort(0).unwrap().to_vec().unwrap();
    assert_eq!(sorted[1].to_bits(), (-0.0f32).to_bits());
    assert_eq!(sorted[2].to_bits(), 0.0f32.to_bits());
    assert!(sorted[6].is_nan());
    let (vals, idx) = f.topk(3, 0).unwrap();
    assert_eq!(idx.to_vec().unwrap(), vec![1, 5, 0]);
    assert!(vals.to_vec().unwrap()[0].is_nan());
    assert!(matches!(f.topk(8, 0), Err(Error::InvalidArgument { op: "topk", argument: "k", .. })));
    let cols = dev.from_slice(&[3u32, 1, 1, 2, 2, 0], &[3, 2]).unwrap();
    assert_eq!(cols.argsort(0).unwrap().to_vec().unwrap(), vec![1, 2, 2, 0, 0, 1]);
    let ties = dev.from_slice(&[5i32, 7, 7, 1, 7], &[5]).unwrap();
    assert_eq!(ties.topk(2, 0).unwrap().1.to_vec().unwrap(), vec![1, 2]);
}

#[test]
fn slice_errors_are_typed() {
    let d = cpu().upload(&Array::from_elem((3, 3), 1.0f32)).unwrap();
    let zero = [ndarray::SliceInfoElem::Slice { start: 0, end: None, step: 0 }];
    assert!(matches!(d.slice(zero), Err(Error::InvalidArgument { op: "slice", argument: "step", .. })));
    assert!(matches!(d.slice(s![3, ..]), Err(Error::IndexOutOfRange { op: "slice", .. })));
    assert!(matches!(d.flip(2), Err(Error::AxisOutOfRange { .. })));
    assert!(matches!(d.broadcast_to(&[2, 4]), Err(Error::ShapeMismatch { .. })));
}
