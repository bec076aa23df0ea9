//! Axes through the array API on views (the corpus's axes cases read plain arrays): a
//! reduction over several axes of a transposed, sliced or flipped view equals the same
//! reduction of its contiguous copy; keepdims broadcasts back; negative axes of the
//! movement ops are numpy's. Plus the cost of a reduction over two axes apart (ignored by
//! default: `cargo test --release --test axes -- --ignored --nocapture`).

use ndarray::s;
use polycompute::{keepdims, Device, DeviceArray};

fn cpu() -> Device {
    Device::cpu()
}

fn iota(dims: &[usize]) -> DeviceArray<f64> {
    let n: usize = dims.iter().product();
    cpu().from_slice(&(0..n).map(|i| (i * 7 % 11) as f64 - 5.0).collect::<Vec<_>>(), dims).unwrap()
}

#[test]
fn reductions_of_views_equal_those_of_their_copies() {
    let x = iota(&[4, 5, 6]);
    let views = [
        x.permute(&[2, 0, 1]).unwrap(),
        x.slice(s![1..4, ..;2, ..]).unwrap(),
        x.flip(-1).unwrap(),
        x.slice(s![.., 1..2, ..]).unwrap().broadcast_to(&[4, 3, 6]).unwrap(),
    ];
    for v in &views {
        let c = v.contiguous().unwrap();
        for axes in [vec![0isize, -1], vec![-2, -1], vec![1], vec![]] {
            let (a, b) = (v.sum(axes.clone()).unwrap(), c.sum(axes.clone()).unwrap());
            assert_eq!((a.shape(), a.to_vec().unwrap()), (b.shape(), b.to_vec().unwrap()), "sum {axes:?}");
            let (a, b) = (v.max(keepdims(axes.clone())).unwrap(), c.max(keepdims(axes.clone())).unwrap());
            assert_eq!((a.shape(), a.to_vec().unwrap()), (b.shape(), b.to_vec().unwrap()), "max {axes:?}");
            let (a, b) = (v.var(axes.clone(), 0).unwrap(), c.var(axes.clone(), 0).unwrap());
            assert_eq!(a.to_vec().unwrap(), b.to_vec().unwrap(), "var {axes:?}");
        }
        assert_eq!(v.argmax(-2).unwrap().to_vec().unwrap(), c.argmax(-2).unwrap().to_vec().unwrap());
    }
}

#[test]
fn keepdims_results_broadcast_against_the_input() {
    let x = iota(&[3, 4]);
    let centred = x.zip_map(&x.mean(keepdims(-1)).unwrap(), |a, m| a - m).unwrap();
    for row in centred.sum(-1).unwrap().to_vec().unwrap() {
        assert!(row.abs() < 1e-12, "{row}");
    }
    // softmax rows through logsumexp: exp(x - lse) sums to 1.
    let lse = x.logsumexp(keepdims(-1)).unwrap();
    let softmax = x.zip_map(&lse, |a, l| (a - l).exp()).unwrap();
    for row in softmax.sum(-1).unwrap().to_vec().unwrap() {
        assert!((row - 1.0).abs() < 1e-12, "{row}");
    }
}

#[test]
fn negative_axes_of_the_movement_ops_are_numpys() {
    let x = iota(&[2, 3]);
    assert_eq!(x.cumsum(-1).unwrap().to_vec().unwrap(), x.cumsum(1).unwrap().to_vec().unwrap());
    assert_eq!(x.sort(-2).unwrap().to_vec().unwrap(), x.sort(0).unwrap().to_vec().unwrap());
    assert_eq!(x.flip(-2).unwrap().to_vec().unwrap(), x.flip(0).unwrap().to_vec().unwrap());
    let stacked = DeviceArray::stack(&[&x, &x], -1).unwrap();
    assert_eq!(stacked.shape(), &[2, 3, 2]);
    assert_eq!(DeviceArray::stack(&[&x, &x], -3).unwrap().shape(), &[2, 2, 3]);
    assert_eq!(DeviceArray::concat(&[&x, &x], -1).unwrap().shape(), &[2, 6]);
    assert_eq!(x.expand_dims(-1).unwrap().shape(), &[2, 3, 1]);
    assert_eq!(x.expand_dims(-3).unwrap().shape(), &[1, 2, 3]);
    let (values, indices) = x.topk(2, -1).unwrap();
    let (v1, i1) = x.topk(2, 1).unwrap();
    assert_eq!((values.to_vec().unwrap(), indices.to_vec().unwrap()), (v1.to_vec().unwrap(), i1.to_vec().unwrap()));
    // Index arrays' own axes: take along -1 is take along the last axis.
    let i = cpu().from_slice(&[2u32, 0], &[2]).unwrap();
    assert_eq!(x.take(&i, -1).unwrap().to_vec().unwrap(), x.take(&i, 1).unwrap().to_vec().unwrap());
    // Older calls, unchanged: `Some(k)` and `None` still name one axis and every axis.
    assert_eq!(x.sum(Some(1)).unwrap().to_vec().unwrap(), x.sum(-1).unwrap().to_vec().unwrap());
    assert_eq!(x.squeeze(None).unwrap().shape(), &[2, 3]);
}

/// The cost of a sum over two axes apart (the kept axis first, the reduced ones last: one
/// transposing copy, then the single-axis kernel) against the single-axis sum of the same
/// 2^22 f32 elements, and two axes next to each other (a reshape, no copy).
#[test]
#[ignore = "a measurement: run with --release --ignored --nocapture"]
fn cost_of_a_sum_over_two_axes() {
    let dims = [64, 256, 256];
    let n: usize = dims.iter().product();
    let x = cpu().from_slice(&(0..n).map(|i| (i % 13) as f32).collect::<Vec<_>>(), &dims).unwrap();
    let time = |what: &str, f: &dyn Fn() -> DeviceArray<f32>| {
        f().to_vec().unwrap();
        let reps = 20;
        let start = std::time::Instant::now();
        for _ in 0..reps {
            f().to_vec().unwrap();
        }
        let each = start.elapsed() / reps;
        println!("{what}: {each:?}");
        each
    };
    let one = time("sum(-1) of [64, 256, 256] f32", &|| x.sum(-1).unwrap());
    let adjacent = time("sum([-2, -1]), merged by a reshape", &|| x.sum([-2, -1]).unwrap());
    let apart = time("sum([0, 2]), moved last and copied", &|| x.sum([0, 2]).unwrap());
    println!(
        "apart / one axis: {:.2}, adjacent / one axis: {:.2}",
        apart.as_secs_f64() / one.as_secs_f64(),
        adjacent.as_secs_f64() / one.as_secs_f64()
    );
}
