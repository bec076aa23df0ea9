//! A first end-to-end pass through the public API on `cpu:0`.

// Linking the crate registers the CPU backend.
extern crate polycompute_cpu;

use polycompute_core::{map, Device, Expr};

#[test]
fn map_reduce_fill_run_end_to_end() {
    let d = Device::cpu();
    let x = d.from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let y = d.from_slice(&[10.0f32, 20.0], &[2]).unwrap();
    let z: polycompute_core::DeviceArray<f32> = map(&[&x, &y], |a| &a[0] * 2.0 + &a[1]).unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![12.0, 24.0, 16.0, 28.0]);
    assert_eq!(x.sum(None).unwrap().to_scalar().unwrap(), 10.0);
    assert_eq!(x.sum(Some(0)).unwrap().to_vec().unwrap(), vec![4.0, 6.0]);
    assert_eq!(x.argmax(Some(1)).unwrap().to_vec().unwrap(), vec![1, 1]);
    let u = d.uniform::<f32>(3, &[10]).unwrap().to_vec().unwrap();
    let want: Vec<f32> = (0..10).map(|i| polycompute_core::philox::uniform_f32(3, i)).collect();
    assert_eq!(u, want);
    let i = x.map_to::<u32>(|_| Expr::index()).unwrap();
    assert_eq!(i.to_vec().unwrap(), vec![0, 1, 2, 3]);
    let t = x.transpose().unwrap().to_vec().unwrap();
    assert_eq!(t, vec![1.0, 3.0, 2.0, 4.0]);
    let m = x.matmul(&x).unwrap().to_vec().unwrap();
    assert_eq!(m, vec![7.0, 10.0, 15.0, 22.0]);
}
