//! i64, u8 and bool have no wgpu kernels yet: every way they reach the device — an upload, a
//! map that computes a mask, a cast, a fill, a reduction of a mask's source — is a typed
//! `Unsupported` naming the op and the dtype, never a panic and never a wrong answer; and the
//! dtypes the device has keep working beside them.

mod common;

use polycompute_core::{DType, Error, Expr};

/// The error is `Unsupported` for `dtype` on this device, and its message names `op`.
fn unsupported<T: std::fmt::Debug>(r: polycompute_core::Result<T>, op: &str, dtype: DType) {
    match r {
        Err(e @ Error::Unsupported { .. }) => {
            let Error::Unsupported { dtype: d, device, .. } = &e else { unreachable!() };
            assert_eq!(*d, dtype, "{e}");
            assert!(device.is_some(), "the device is named: {e}");
            let text = e.to_string();
            assert!(text.contains(op) && text.contains(dtype.name()), "{text}");
        }
        other => panic!("{op} of {dtype}: expected Unsupported, got {other:?}"),
    }
}

#[test]
fn the_new_dtypes_are_unsupported_with_the_op_and_the_dtype_named() {
    let Some(dev) = common::device() else { return };
    unsupported(dev.from_slice(&[1i64, 2], &[2]), "upload", DType::I64);
    unsupported(dev.from_slice(&[1u8, 2], &[2]), "upload", DType::U8);
    unsupported(dev.from_slice(&[true, false], &[2]), "upload", DType::Bool);
    let x = dev.from_slice(&[1.0f32, f32::NAN, -2.0], &[3]).unwrap();
    // A comparison is a map whose result is bool.
    unsupported(x.gt(0.0), "map", DType::Bool);
    unsupported(x.isnan(), "map", DType::Bool);
    unsupported(x.count_nonzero(None), "map", DType::I64);
    unsupported(x.cast::<u8>(), "cast", DType::U8);
    unsupported(x.cast::<i64>(), "cast", DType::I64);
    // A bool inside a map whose inputs and result are f32.
    let masked = x.map(|v| Expr::select(v.gt(0.0).cast(DType::Bool), &v, 0.0));
    unsupported(masked, "map", DType::Bool);
    unsupported(dev.full(7i64, &[4]), "fill", DType::I64);
    // Beside them, the device still computes what it has.
    assert_eq!(x.map(|v| v.gt(0.0)).unwrap().to_vec().unwrap(), [1.0, 0.0, 0.0]);
}
