//! Arrays print as numpy prints them (default print options). The expected strings are
//! numpy 2's `str(a)` and `repr(a)` (with our suffix: dtype, shape, device).

use polycompute_core::{bf16, f16, Device};
use polycompute_cpu as _;

fn show<T: polycompute_core::Element>(data: &[T], shape: &[usize]) -> (String, String) {
    let a = Device::cpu().from_slice(data, shape).unwrap();
    (format!("{a}"), format!("{a:?}"))
}

#[test]
fn floats_print_their_unique_digits_lined_up() {
    let (s, r) = show(&[1.0f32, 2.0, 3.0], &[3]);
    assert_eq!(s, "[1. 2. 3.]");
    assert_eq!(r, "DeviceArray([1., 2., 3.], dtype=f32, shape=[3], device=cpu:0)");
    assert_eq!(show(&[1.5f64, 2.25, 3.0, 4.0], &[2, 2]).0, "[[1.5  2.25]\n [3.   4.  ]]");
    assert_eq!(show(&[0.1f32, -0.5], &[2]).0, "[ 0.1 -0.5]");
    assert_eq!(show(&[1.0f64 / 3.0], &[1]).0, "[0.33333333]");
    assert_eq!(show(&[0.1f64 + 0.2], &[1]).0, "[0.3]", "8 digits at most, trailing zeros trimmed");
    assert_eq!(show(&[f16::from_f32(0.1)], &[1]).0, "[0.1]", "unique in the half's own precision");
    assert_eq!(show(&[bf16::from_f32(std::f32::consts::PI)], &[1]).0, "[3.14]");
    assert_eq!(show(&[-0.0f32], &[]).0, "-0.");
}

#[test]
fn scientific_notation_and_non_finite_values() {
    assert_eq!(show(&[0.1f64, 1e-5], &[2]).0, "[1.e-01 1.e-05]");
    assert_eq!(show(&[1.5e10f64, 1.0], &[2]).0, "[1.5e+10 1.0e+00]");
    assert_eq!(show(&[1e-300f64, 1.0], &[2]).0, "[1.e-300 1.e+000]");
    assert_eq!(show(&[f64::NAN, 1.0, f64::NEG_INFINITY], &[3]).0, "[ nan   1. -inf]");
    assert_eq!(show(&[f32::NAN, f32::INFINITY], &[2]).0, "[nan inf]");
}

#[test]
fn integers_right_align() {
    assert_eq!(show(&[1i32, -20, 300], &[3]).0, "[  1 -20 300]");
    let (s, r) = show(&[7u32], &[]);
    assert_eq!((s.as_str(), r.as_str()), ("7", "DeviceArray(7, dtype=u32, shape=[], device=cpu:0)"));
    assert_eq!(show::<i32>(&[], &[2, 0]).0, "[]");
    let cube: Vec<i32> = vec![0; 8];
    assert_eq!(show(&cube, &[2, 2, 2]).0, "[[[0 0]\n  [0 0]]\n\n [[0 0]\n  [0 0]]]");
}

#[test]
fn long_rows_wrap_at_75_characters() {
    // numpy's repr fits 13 items on a line after `array(`; `DeviceArray(` is 6 longer.
    let v: Vec<f64> = (0..30).map(f64::from).collect();
    assert_eq!(
        show(&v, &[30]).0,
        "[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n 18. 19. 20. 21. 22. 23. 24. 25. 26. 27. 28. 29.]"
    );
    assert_eq!(
        show(&v, &[30]).1,
        "DeviceArray([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11.,\n             12., 13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23.,\n             24., 25., 26., 27., 28., 29.],\n            dtype=f64, shape=[30], device=cpu:0)"
    );
}

#[test]
fn large_arrays_show_their_edges() {
    let v: Vec<i32> = (0..2000).collect();
    assert_eq!(show(&v, &[2000]).0, "[   0    1    2 ... 1997 1998 1999]");
    assert_eq!(show(&v, &[2, 1000]).0, "[[   0    1    2 ...  997  998  999]\n [1000 1001 1002 ... 1997 1998 1999]]");
    let (s, _) = show(&v, &[100, 20]);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 7, "{s}");
    assert_eq!(lines[0], "[[   0    1    2 ...   17   18   19]");
    assert_eq!(lines[3], " ...");
    assert_eq!(lines[6], " [1980 1981 1982 ... 1997 1998 1999]]");
}
