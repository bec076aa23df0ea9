//! One device used from several threads at once (as the pool's thread workers do).

mod common;

use polycompute_testing::inputs::uniform;

#[test]
fn threads_share_one_device() {
    let Some(dev) = common::device() else { return };
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let dev = dev.clone();
            std::thread::spawn(move || {
                for round in 0..5 {
                    let n = 1000 + 37 * t + round;
                    let data = uniform::<f32>((t * 10 + round) as u64, n, -10.0, 10.0);
                    let x = dev.from_slice(&data, &[n]).unwrap();
                    let y = x.map(|v| v.clone() * v + 1.0).unwrap();
                    let got = y.to_vec().unwrap();
                    assert!(got.iter().zip(&data).all(|(g, d)| *g == d * d + 1.0), "thread {t} round {round}");
                    let s = x.argmax(None).unwrap().to_scalar().unwrap() as usize;
                    let m = data.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    assert_eq!(data[s], m);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
