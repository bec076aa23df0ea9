//! `Op::Map` over shapes: numpy broadcasting of several inputs (small and large enough to
//! run in parallel over many chunks), the element index, 0-d and empty arrays, and the
//! plan cache reused across calls and shapes.

mod common;

use common::dev;
use polycompute_core::{map, DType, DeviceArray, Expr};

/// Element `i` of an array of `shape` read broadcast to `out` (numpy rules), computed
/// from the multi-index.
fn bcast_index(i: usize, shape: &[usize], out: &[usize]) -> usize {
    let mut rest = i;
    let mut idx = vec![0; out.len()];
    for ax in (0..out.len()).rev() {
        idx[ax] = rest % out[ax];
        rest /= out[ax];
    }
    let off = out.len() - shape.len();
    let mut flat = 0;
    for (k, &d) in shape.iter().enumerate() {
        flat = flat * d + if d == 1 { 0 } else { idx[off + k] };
    }
    flat
}

fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919 + seed * 104_729) % 1000) as f32 * 0.25 - 100.0).collect()
}

#[test]
fn three_way_broadcasting_matches_indexing_at_every_size() {
    let d = dev();
    for (sa, sb, sc) in [
        (vec![4, 1, 3], vec![5, 1], vec![3]),
        (vec![2, 3, 1], vec![1, 1, 7], vec![]),
        (vec![300, 1], vec![1, 700], vec![300, 700]),
        (vec![64, 1, 1100], vec![9, 1], vec![1, 1100]),
        (vec![1], vec![0, 4], vec![4]),
    ] {
        let (na, nb, nc) = (sa.iter().product(), sb.iter().product(), sc.iter().product());
        let (va, vb, vc) = (values(na, 1), values(nb, 2), values(nc, 3));
        let a = d.from_slice(&va, &sa).unwrap();
        let b = d.from_slice(&vb, &sb).unwrap();
        let c = d.from_slice(&vc, &sc).unwrap();
        let got: DeviceArray<f32> =
            map(&[&a, &b, &c], |x| (&x[0] - &x[1]) * &x[2] + Expr::index().cast(DType::F32)).unwrap();
        let out = got.shape().to_vec();
        let got = got.to_vec().unwrap();
        assert_eq!(got.len(), out.iter().product::<usize>());
        for (i, &g) in got.iter().enumerate() {
            let (x, y, z) =
                (va[bcast_index(i, &sa, &out)], vb[bcast_index(i, &sb, &out)], vc[bcast_index(i, &sc, &out)]);
            let want = ((x - y) * z) + i as f32;
            assert_eq!(g, want, "{sa:?} {sb:?} {sc:?} at {i}");
        }
    }
}

#[test]
fn index_counts_the_output_in_row_major_order() {
    let d = dev();
    let n = 200_003; // several parallel tasks, a ragged last chunk
    let x = d.from_slice(&vec![0u32; n], &[n]).unwrap();
    let got = x.map(|v| v + Expr::index()).unwrap().to_vec().unwrap();
    assert!(got.iter().enumerate().all(|(i, &g)| g == i as u32));
}

#[test]
fn zero_d_and_empty_arrays() {
    let d = dev();
    let s = d.from_slice(&[3.0f64], &[]).unwrap();
    let v = d.from_slice(&[1.0f64, 2.0], &[2]).unwrap();
    let r = s.zip_map(&v, |a, b| a * b).unwrap();
    assert_eq!((r.shape(), r.to_vec().unwrap()), (&[2][..], vec![3.0, 6.0]));
    let r = s.map(|a| a + 1.0).unwrap();
    assert_eq!((r.shape(), r.to_vec().unwrap()), (&[][..], vec![4.0]));
    let e = d.from_slice::<f64>(&[], &[0, 2]).unwrap();
    let r = e.zip_map(&v, |a, b| a + b).unwrap();
    assert_eq!((r.shape(), r.to_vec().unwrap()), (&[0, 2][..], vec![]));
}

#[test]
fn casts_inside_a_map_follow_the_ir_rules() {
    let d = dev();
    let x = d.from_slice(&[-1.9f32, 2.7, f32::NAN, 1e20, -1e20, -0.5], &[6]).unwrap();
    let i: Vec<i32> = x.map_to(|v| v.cast(DType::I32)).unwrap().to_vec().unwrap();
    assert_eq!(i, vec![-1, 2, 0, i32::MAX, i32::MIN, 0]);
    let u: Vec<u32> = x.map_to(|v| v.cast(DType::U32)).unwrap().to_vec().unwrap();
    assert_eq!(u, vec![0, 2, 0, u32::MAX, 0, 0]);
    let n = d.from_slice(&[-1i32, i32::MIN], &[2]).unwrap();
    let bits: Vec<u32> = n.map_to(|v| v.cast(DType::U32)).unwrap().to_vec().unwrap();
    assert_eq!(bits, vec![u32::MAX, 1 << 31]);
}

#[test]
fn cached_plans_stay_correct_across_shapes_and_data() {
    let d = dev();
    for round in 0..3 {
        for n in [5usize, 70_000, 5] {
            let a = d.from_slice(&values(n, round), &[n]).unwrap();
            let b = d.from_slice(&values(1, round + 7), &[1]).unwrap();
            let got = a.zip_map(&b, |x, y| x.max(y) - 1.0).unwrap().to_vec().unwrap();
            let (va, vb) = (values(n, round), values(1, round + 7)[0]);
            let want: Vec<f32> = va.iter().map(|&x| if x > vb { x } else { vb } - 1.0).collect();
            assert_eq!(got, want, "round {round}, n {n}");
        }
    }
}

#[test]
fn a_large_fused_program_matches_elementwise_evaluation() {
    let d = dev();
    let n = 150_001;
    let va: Vec<f64> = (0..n).map(|i| (i as f64) * 1e-3 - 20.0).collect();
    let a = d.from_slice(&va, &[n]).unwrap();
    let got =
        a.map(|x| Expr::select(x.clone().gt(0.0), x.clone().sqrt(), (x.clone() * x.clone()).tanh()) + 1.0).unwrap();
    let want: Vec<f64> = va.iter().map(|&x| if x > 0.0 { x.sqrt() } else { (x * x).tanh() } + 1.0).collect();
    assert_eq!(got.to_vec().unwrap(), want);
}

#[test]
fn affine_patterns_fused_into_one_pass_match_two_step_evaluation() {
    use polycompute_core::BinaryOp::{Add, Mul, Sub};
    let d = dev();
    let n = 70_001;
    let vx: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(7919) % 1000 - 500).collect();
    let vy: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(104_729) % 777 - 300).collect();
    let (x, y) = (d.from_slice(&vx, &[n]).unwrap(), d.from_slice(&vy, &[n]).unwrap());
    let s = d.from_slice(&[-3i32], &[1]).unwrap();
    let (fx, fy) = (x.cast::<f32>().unwrap(), y.cast::<f32>().unwrap());
    let ops = [Add, Sub, Mul];
    let apply = |op, a: i64, b: i64| match op {
        Add => a + b,
        Sub => a - b,
        _ => a * b,
    };
    for o1 in ops {
        for o2 in ops {
            for (sw1, sw2) in [(false, false), (true, false), (false, true), (true, true)] {
                // x ∘ 5 (a literal) or s ∘ x (a one-element input), then • y either way round.
                let build = |a: &[Expr], lit: bool| {
                    let sv = if lit { Expr::int(5) } else { a[2].clone() };
                    let inner = if sw1 { sv.binary(o1, a[0].clone()) } else { a[0].clone().binary(o1, sv) };
                    if sw2 {
                        a[1].clone().binary(o2, inner)
                    } else {
                        inner.binary(o2, a[1].clone())
                    }
                };
                for lit in [true, false] {
                    let sv: i64 = if lit { 5 } else { -3 };
                    let got: Vec<i32> = map(&[&x, &y, &s], |a| build(&a, lit)).unwrap().to_vec().unwrap();
                    for k in [0, 1, 4095, 4096, n / 2, n - 1] {
                        let (xv, yv) = (vx[k] as i64, vy[k] as i64);
                        let inner = if sw1 { apply(o1, sv, xv) } else { apply(o1, xv, sv) };
                        let want = if sw2 { apply(o2, yv, inner) } else { apply(o2, inner, yv) };
                        assert_eq!(got[k] as i64, want, "{o1:?} {o2:?} {sw1} {sw2} lit {lit} at {k}");
                    }
                }
                // The same in f32, exact here (small integers).
                let sf = d.from_slice(&[-3.0f32], &[1]).unwrap();
                let got: Vec<f32> = map(&[&fx, &fy, &sf], |a| build(&a, false)).unwrap().to_vec().unwrap();
                let want: Vec<i32> = map(&[&x, &y, &s], |a| build(&a, false)).unwrap().to_vec().unwrap();
                assert!(got.iter().zip(&want).all(|(&g, &w)| g == w as f32), "f32 {o1:?} {o2:?} {sw1} {sw2}");
            }
        }
    }
}
