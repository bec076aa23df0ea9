//! Size tiers on a real CUDA device (skipped, and saying so, where there is none, unless
//! `POLYCOMPUTE_REQUIRE` lists `cuda`): every op family at shapes past CUDA's 65,535 blocks
//! along y and z, 65,535 rows, indices and batch entries, 2^24 reduced elements and long
//! scans and sorts, checked exactly (integers, or small integers in f32) against the host.
//! `tests/launch_limits.rs` checks these launches' grids against the fake driver; this runs
//! them. Each array stays within a few hundred MiB.

use polycompute_core::{BackendKind, Device};
use polycompute_cuda::{cublas_status, set_matmul_impl, MatmulImpl};
use polycompute_testing as testing;

fn device() -> Option<Device> {
    // Referencing the crate links it, and linking registers the backend.
    let _ = cublas_status();
    testing::devices::open_or_skip(BackendKind::Cuda, 0).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_op_family_is_exact_past_the_grid_limits() {
    let Some(dev) = device() else { return };
    // Map over more than 65,535 blocks of 256 elements.
    let n = 65_535 * 256 + 7;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = dev.from_slice(&xs, &[n]).unwrap();
    let got = x.map(|e| e * 2.0).unwrap().to_vec().unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == 2.0 * i as f32), "map");

    // Reductions: all of 2^24 + 5 elements (wrapping u32 sum), 70,000 rows, 70,000 columns.
    let len = (1 << 24) + 5;
    let us: Vec<u32> = (0..len as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let u = dev.from_slice(&us, &[len]).unwrap();
    let want = us.iter().fold(0u32, |a, &b| a.wrapping_add(b));
    assert_eq!(u.sum(None).unwrap().to_vec().unwrap(), vec![want], "sum of 2^24 + 5");
    let rows = 70_000;
    let m: Vec<u32> = (0..rows as u32 * 3).collect();
    let md = dev.from_slice(&m, &[rows, 3]).unwrap();
    let want: Vec<u32> = m.chunks(3).map(|r| r.iter().sum()).collect();
    assert_eq!(md.sum(Some(1)).unwrap().to_vec().unwrap(), want, "70,000 row sums");
    let cols = dev.from_slice(&m, &[3, rows]).unwrap();
    let want: Vec<u32> = (0..rows).map(|j| m[2 * rows + j]).collect();
    assert_eq!(cols.max(Some(0)).unwrap().to_vec().unwrap(), want, "70,000 column maxima");

    // Matmul, own kernel and (where it loads) cuBLAS: 65,539 row tiles of 128; 70,000 batch
    // entries; K = 100,000. Small integers: every sum is exact in f32.
    let mut impls = vec![MatmulImpl::Own];
    if cublas_status().is_ok() {
        impls.push(MatmulImpl::Cublas);
    }
    for imp in impls {
        set_matmul_impl(imp);
        for (batch, mm, k, nn) in [(1, 128 * 65_539 + 3, 2, 1), (70_000, 2, 3, 2), (1, 2, 100_000, 2)] {
            let a: Vec<f32> = (0..batch * mm * k).map(|i| (i % 3) as f32).collect();
            let b: Vec<f32> = (0..batch * k * nn).map(|i| (i % 2) as f32).collect();
            let shape = |r, c| if batch == 1 { vec![r, c] } else { vec![batch, r, c] };
            let (ad, bd) = (dev.from_slice(&a, &shape(mm, k)).unwrap(), dev.from_slice(&b, &shape(k, nn)).unwrap());
            let got = ad.matmul(&bd).unwrap().to_vec().unwrap();
            for z in 0..batch {
                for i in 0..mm {
                    for j in 0..nn {
                        let s: f32 = (0..k).map(|p| a[(z * mm + i) * k + p] * b[(z * k + p) * nn + j]).sum();
                        let g = got[(z * mm + i) * nn + j];
                        assert_eq!(g, s, "{imp:?} {batch}x{mm}x{k}x{nn} at [{z}, {i}, {j}]");
                    }
                }
            }
        }
    }
    set_matmul_impl(MatmulImpl::Auto);

    // take (reversed rows) and scatter_add (every row into one of 5) with 70,000 indices.
    let rev: Vec<u32> = (0..rows as u32).rev().collect();
    let idx = dev.from_slice(&rev, &[rows]).unwrap();
    let got = md.take(&idx, 0).unwrap().to_vec().unwrap();
    let want: Vec<u32> = rev.iter().flat_map(|&r| m[r as usize * 3..r as usize * 3 + 3].to_vec()).collect();
    assert_eq!(got, want, "take");
    let fives: Vec<u32> = (0..rows as u32).map(|i| i % 5).collect();
    let into = dev.from_slice(&fives, &[rows]).unwrap();
    let zeros = dev.from_slice(&[0u32; 15], &[5, 3]).unwrap();
    let got = zeros.scatter_add(&into, &md, 0).unwrap().to_vec().unwrap();
    let mut want = vec![0u32; 15];
    for (i, &t) in fives.iter().enumerate() {
        for c in 0..3 {
            want[t as usize * 3 + c] = want[t as usize * 3 + c].wrapping_add(m[i * 3 + c]);
        }
    }
    assert_eq!(got, want, "scatter_add");

    // Scans: 70,000 rows of 100, and one row of 2^20 (chunked), wrapping u32 sums.
    let s: Vec<u32> = (0..rows as u32 * 100).map(|i| i % 13).collect();
    let got = dev.from_slice(&s, &[rows, 100]).unwrap().cumsum(1).unwrap().to_vec().unwrap();
    let want: Vec<u32> = s
        .chunks(100)
        .flat_map(|r| {
            r.iter()
                .scan(0u32, |a, &x| {
                    *a += x;
                    Some(*a)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(got, want, "cumsum of 70,000 rows");
    let long = &us[..1 << 20];
    let got = dev.from_slice(long, &[1 << 20]).unwrap().cumsum(0).unwrap().to_vec().unwrap();
    let want: Vec<u32> = long
        .iter()
        .scan(0u32, |a, &x| {
            *a = a.wrapping_add(x);
            Some(*a)
        })
        .collect();
    assert_eq!(got, want, "cumsum of 2^20");

    // Sorts: one row of 70,000 (a permutation) and 70,000 rows of 4.
    let perm: Vec<f32> = (0..rows).map(|i| ((i * 7919) % rows) as f32).collect();
    let p = dev.from_slice(&perm, &[rows]).unwrap();
    let sorted = p.sort(0).unwrap().to_vec().unwrap();
    assert!(sorted.iter().enumerate().all(|(i, &v)| v == i as f32), "sort of 70,000");
    let order = p.argsort(0).unwrap().to_vec().unwrap();
    assert!(order.iter().enumerate().all(|(i, &j)| perm[j as usize] == i as f32), "argsort of 70,000");
    let q: Vec<f32> = (0..rows * 4).map(|i| ((i * 7919) % 1000) as f32).collect();
    let got = dev.from_slice(&q, &[rows, 4]).unwrap().sort(1).unwrap().to_vec().unwrap();
    let want: Vec<f32> = q
        .chunks(4)
        .flat_map(|r| {
            let mut r = r.to_vec();
            r.sort_by(f32::total_cmp);
            r
        })
        .collect();
    assert_eq!(got, want, "sort of 70,000 rows of 4");
}
