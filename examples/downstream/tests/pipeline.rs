//! The pipeline checked on every backend with `polycompute::testing`: `cargo test` lists
//! `histogram_of_normal::cpu`, `::wgpu` and `::cuda`; one snapshot (tests/snapshots/) is
//! shared by all of them.

use polycompute::testing::{backend_tests, named, Check, IntoOutputs, Tolerance};
use polycompute::{BackendKind, Device, DeviceArray, HostVec, Result};

fn histogram_of_normal(dev: &Device) -> Result<(polycompute::testing::Named<u32>, polycompute::testing::Named<f32>)> {
    let x = downstream::sample(dev, 5000)?;
    let h = downstream::histogram(&x, 16, -4.0, 4.0)?;
    Ok((named("counts", h.counts), named("density", h.density)))
}

// Counts are integers: exact by default. The density is one division per bin: a few ulps.
backend_tests!(histogram_of_normal, snapshot);

fn attention_step(dev: &Device) -> Result<DeviceArray<f32>> {
    let logits = dev.uniform::<f32>(7, &[16, 64])?.map(|x| x * 6.0 - 3.0)?;
    let weights = dev.uniform::<f32>(8, &[64, 8])?;
    downstream::softmax_matmul(&logits, &weights)
}

// exp on a GPU is not correctly rounded and the sums run in another order: each output is a
// sum of 64 products of magnitude < 1, so allow a few ε of Σ|terms| (at most 1 per element).
backend_tests!(
    attention_step,
    check = Check::new("attention_step").tolerance(Tolerance::sum_like(16, vec![1.0])),
    snapshot
);

#[test]
fn the_density_integrates_to_the_share_inside() {
    let dev = Device::cpu();
    let x = downstream::sample(&dev, 5000).unwrap();
    let h = downstream::histogram(&x, 16, -4.0, 4.0).unwrap();
    let counts = h.counts.to_vec().unwrap();
    let inside = x.to_vec().unwrap().iter().filter(|v| (-4.0..4.0).contains(*v)).count();
    assert_eq!(counts.iter().sum::<u32>() as usize, inside);
    let area: f32 = h.density.to_vec().unwrap().iter().map(|d| d * 0.5).sum();
    assert!((area - inside as f32 / 5000.0).abs() < 1e-5, "{area}");
}

/// The test-only wrapper: the pipeline with one count nudged by one on every device but the
/// CPU, i.e. a deliberately wrong backend.
fn wrong_off_cpu(dev: &Device) -> Result<Vec<polycompute::testing::HostArray>> {
    let mut out = histogram_of_normal(dev)?.into_outputs()?;
    if dev.kind() != BackendKind::Cpu {
        if let HostVec::F32(d) = &mut out[1].data {
            d[7] = f32::from_bits(d[7].to_bits() + 1);
        }
    }
    Ok(out)
}

#[test]
fn a_wrong_backend_fails_the_check_readably() {
    let check = Check::new("histogram").tolerance(Tolerance::exact());
    match check.run(wrong_off_cpu) {
        Ok(report) => assert_eq!(report.devices.len(), 1, "only the CPU here, nothing was nudged: {report}"),
        Err(e) => {
            let text = e.to_string();
            assert!(
                text.contains(
                    "in output 1 \"density\" (f32, shape [16]): 1 of 16 element(s) differ beyond exact; max 1 ulp seen"
                ),
                "{text}"
            );
            assert!(text.contains("\n    [7] got "), "{text}");
        }
    }
}
