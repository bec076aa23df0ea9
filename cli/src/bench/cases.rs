//! The measured operations, run through polycompute's public API, each beside its baseline
//! and each checked once against a host computation, so a broken op cannot post a fast time.

use polycompute::{BackendKind, Device, DeviceArray};

use super::baseline;
use super::timing::{median_secs, median_secs_pair, median_secs_per_call_pair, Reps};
use super::BenchError;

/// The benchmark names, in the order they run (also the names in `--json`).
pub const NAMES: [&str; 32] = [
    "map_axpy_f32",
    "sum_f32",
    // Reductions along many short rows (see `rows.rs`).
    "sum_rows_f32",
    "argmin_rows_f32",
    // A narrow product (see `shapes.rs`).
    "matmul_skinny_f32",
    "matmul_f32_1024",
    "matmul_f32_2048",
    "uniform_f32",
    "normal_f32",
    "map_small_f32",
    // Views and data movement (see `views.rs`).
    "sort_f32",
    "argsort_f32",
    // The other sorts (see `sorts.rs`).
    "sort_f64",
    "sort_i32",
    "sort_u32",
    "sort_f16",
    "sort_rows_f32",
    "argsort_rows_f32",
    "cumsum_f32",
    "take_f32",
    "concat_f32",
    "map_step2_f32",
    "matmul_t_f32_1024",
    // Half precision (see `half.rs`).
    "map_axpy_f16",
    "map_axpy_bf16",
    "matmul_f16_1024",
    "matmul_bf16_4096",
    // Fusion across calls (see `fusion.rs`).
    "fusion_chain_f32",
    "fusion_chain_closure_f32",
    "fusion_sqdiff_sum_f32",
    "fusion_sqdiff_sum_plain_f32",
    "fusion_small_map_f32",
];

/// The `a` of `y = a*x + y`.
const A: f32 = 1.5;

/// Problem sizes and repetition counts.
#[derive(Clone, Debug)]
pub struct Config {
    /// Elements of the streaming benchmarks (map, sum, uniform).
    pub stream_len: usize,
    /// Matrix sizes behind `matmul_f32_1024` and `matmul_f32_2048`.
    pub matmul_sizes: [usize; 2],
    /// Matrix size behind `matmul_bf16_4096`.
    pub half_matmul_size: usize,
    /// Elements of the small map.
    pub small_len: usize,
    /// Calls per timed batch of the small map.
    pub small_calls: usize,
    /// Rows of the short-row reductions (`[rows, 8]`) and the skinny matmul (`[rows, 16]`).
    pub short_rows: usize,
    /// Repetitions of the streaming benchmarks and the small map's batches.
    pub stream_reps: Reps,
    /// Repetitions of each matmul (and of its baseline, interleaved).
    pub matmul_reps: Reps,
}

impl Config {
    /// The sizes the issue names: 2^24 elements, 1024³ and 2048³, 1,024-element small map.
    pub fn full(quick: bool) -> Config {
        Config {
            stream_len: 1 << 24,
            matmul_sizes: [1024, 2048],
            half_matmul_size: 4096,
            small_len: 1024,
            small_calls: 1000,
            short_rows: 200_000,
            stream_reps: if quick { Reps::new(1, 3) } else { Reps::new(2, 9) },
            matmul_reps: if quick { Reps::new(1, 3) } else { Reps::new(1, 5) },
        }
    }
}

/// One benchmark's figures before they get a name and device.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// polycompute's figure, in `unit`.
    pub value: f64,
    /// The unit: `GB/s`, `GFLOP/s` or `us/call`.
    pub unit: &'static str,
    /// The baseline in the same unit, when the device has one for this benchmark.
    pub baseline: Option<f64>,
    /// What the baseline is.
    pub baseline_name: &'static str,
}

/// Runs benchmark `name` on `device`.
pub fn run(name: &str, device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    match name {
        "map_axpy_f32" => map_axpy(device, cfg),
        "sum_f32" => sum(device, cfg),
        "sum_rows_f32" => super::rows::sum_rows(device, cfg),
        "argmin_rows_f32" => super::rows::argmin_rows(device, cfg),
        "matmul_skinny_f32" => super::shapes::matmul_skinny(device, cfg),
        "matmul_f32_1024" => matmul(device, cfg.matmul_sizes[0], cfg),
        "matmul_f32_2048" => matmul(device, cfg.matmul_sizes[1], cfg),
        "uniform_f32" => uniform(device, cfg),
        "normal_f32" => normal(device, cfg),
        "map_small_f32" => map_small(device, cfg),
        "sort_f32" => super::views::sort(device, cfg),
        "argsort_f32" => super::views::argsort(device, cfg),
        "sort_f64" => super::sorts::sort_f64(device, cfg),
        "sort_i32" => super::sorts::sort_i32(device, cfg),
        "sort_u32" => super::sorts::sort_u32(device, cfg),
        "sort_f16" => super::sorts::sort_f16(device, cfg),
        "sort_rows_f32" => super::sorts::sort_rows(device, cfg),
        "argsort_rows_f32" => super::sorts::argsort_rows(device, cfg),
        "cumsum_f32" => super::views::cumsum(device, cfg),
        "take_f32" => super::views::take(device, cfg),
        "concat_f32" => super::views::concat(device, cfg),
        "map_step2_f32" => super::views::map_step2(device, cfg),
        "matmul_t_f32_1024" => super::views::matmul_transposed(device, cfg),
        "map_axpy_f16" => super::half::map_axpy::<polycompute::f16>(device, cfg),
        "map_axpy_bf16" => super::half::map_axpy::<polycompute::bf16>(device, cfg),
        "matmul_f16_1024" => super::half::matmul::<polycompute::f16>(device, cfg.matmul_sizes[0], cfg),
        "matmul_bf16_4096" => super::half::matmul::<polycompute::bf16>(device, cfg.half_matmul_size, cfg),
        "fusion_chain_f32" => super::fusion::chain(device, cfg, false),
        "fusion_chain_closure_f32" => super::fusion::chain(device, cfg, true),
        "fusion_sqdiff_sum_f32" => super::fusion::sq_diff(device, cfg, false),
        "fusion_sqdiff_sum_plain_f32" => super::fusion::sq_diff(device, cfg, true),
        "fusion_small_map_f32" => super::fusion::small(device, cfg),
        other => Err(format!("unknown benchmark {other:?}; the benchmarks are {}", NAMES.join(", ")).into()),
    }
}

fn is_cpu(device: &Device) -> bool {
    device.kind() == BackendKind::Cpu
}

fn gb_per_s(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e9
}

const F32: usize = std::mem::size_of::<f32>();
const RAYON_LOOP: &str = "hand-written rayon loop";
const DEVICE_COPY: &str = "device-to-device copy";

/// Random inputs made on the device itself, so no upload is timed or needed.
fn inputs(device: &Device, seed: u64, shape: &[usize]) -> Result<DeviceArray<f32>, BenchError> {
    let x = device.uniform::<f32>(seed, shape)?;
    device.synchronize()?;
    Ok(x)
}

fn axpy(x: &DeviceArray<f32>, y: &DeviceArray<f32>) -> Result<DeviceArray<f32>, BenchError> {
    let z = polycompute::map(&[x, y], |a| &a[0] * A + &a[1])?;
    z.device().synchronize()?;
    Ok(z)
}

/// `DeviceArray::copy` (one read and one write per element), synchronised: the GPU
/// baseline for the memory-bound benchmarks.
fn device_copy(x: &DeviceArray<f32>) -> Result<DeviceArray<f32>, BenchError> {
    let c = x.copy()?;
    x.device().synchronize()?;
    Ok(c)
}

fn map_axpy(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let (x, y) = (inputs(device, 1, &[n])?, inputs(device, 2, &[n])?);
    let (xh, yh) = (x.to_vec()?, y.to_vec()?);
    check_axpy(&axpy(&x, &y)?.to_vec()?, &baseline::axpy_serial(A, &xh, &yh), &xh, &yh)?;
    let reps = cfg.stream_reps;
    let bytes = 3 * F32 * n;
    let (value, baseline, baseline_name) = if is_cpu(device) {
        let mut out = vec![0.0f32; n];
        let (t, tb) = median_secs_pair(
            reps,
            || axpy(&x, &y),
            || {
                baseline::axpy(A, &xh, &yh, &mut out);
                Ok(())
            },
        )?;
        (gb_per_s(bytes, t), gb_per_s(bytes, tb), RAYON_LOOP)
    } else {
        let (t, tb) = median_secs_pair(reps, || axpy(&x, &y), || device_copy(&x))?;
        (gb_per_s(bytes, t), gb_per_s(2 * F32 * n, tb), DEVICE_COPY)
    };
    Ok(Figures { value, unit: "GB/s", baseline: Some(baseline), baseline_name })
}

/// Equal up to the rounding a fused multiply-add may change (a few ulps of the terms).
fn check_axpy(got: &[f32], want: &[f32], x: &[f32], y: &[f32]) -> Result<(), BenchError> {
    if got.len() != want.len() {
        return Err(format!("map returned {} elements, expected {}", got.len(), want.len()).into());
    }
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tol = 4.0 * f32::EPSILON * ((A * x[i]).abs() + y[i].abs());
        if (g - w).abs() > tol || g.is_nan() {
            return Err(format!("map result wrong at {i}: got {g}, expected {w}").into());
        }
    }
    Ok(())
}

fn sum(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let x = inputs(device, 1, &[n])?;
    let run = || -> Result<DeviceArray<f32>, BenchError> {
        let s = x.sum(None)?;
        device.synchronize()?;
        Ok(s)
    };
    let xh = x.to_vec()?;
    let exact: f64 = xh.iter().map(|&v| v as f64).sum();
    let got = run()?.to_scalar()? as f64;
    // Pairwise summation's bound, log2(n)·eps·Σ|x|, with room to spare.
    let tol = 2.0 * (n.max(2) as f64).log2() * f32::EPSILON as f64 * exact.abs() + 1e-6;
    if (got - exact).abs() > tol {
        return Err(format!("sum is {got}, expected {exact} (tolerance {tol:.3e})").into());
    }
    let (value, baseline, baseline_name) = if is_cpu(device) {
        let (t, tb) = median_secs_pair(cfg.stream_reps, run, || Ok(baseline::sum(&xh)))?;
        (gb_per_s(F32 * n, t), gb_per_s(F32 * n, tb), RAYON_LOOP)
    } else {
        let (t, tb) = median_secs_pair(cfg.stream_reps, run, || device_copy(&x))?;
        (gb_per_s(F32 * n, t), gb_per_s(2 * F32 * n, tb), DEVICE_COPY)
    };
    Ok(Figures { value, unit: "GB/s", baseline: Some(baseline), baseline_name })
}

fn matmul(device: &Device, size: usize, cfg: &Config) -> Result<Figures, BenchError> {
    let (a, b) = (inputs(device, 3, &[size, size])?, inputs(device, 4, &[size, size])?);
    let run = || -> Result<DeviceArray<f32>, BenchError> {
        let c = a.matmul(&b)?;
        device.synchronize()?;
        Ok(c)
    };
    let gflops = |secs: f64| 2.0 * (size as f64).powi(3) / secs / 1e9;
    let (ah, bh) = (a.to_vec()?, b.to_vec()?);
    check_matmul(&run()?.to_vec()?, &ah, &bh, size, |x| x as f64, 0.0)?;
    if !is_cpu(device) {
        // A GPU has no same-unit baseline short of a second GEMM implementation; the
        // numpy script under benches/ compares the CPU figure with OpenBLAS.
        let t = median_secs(cfg.matmul_reps, run)?;
        return Ok(Figures { value: gflops(t), unit: "GFLOP/s", baseline: None, baseline_name: "none" });
    }
    let (t, tb) = median_secs_pair(cfg.matmul_reps, run, || Ok(baseline::matmul(&ah, &bh, size, size, size)))?;
    Ok(Figures { value: gflops(t), unit: "GFLOP/s", baseline: Some(gflops(tb)), baseline_name: "blocked rayon loop" })
}

/// Checks 16 entries spread over C (`n × n`, of `T`, read as f64 by `wide`) against f64 dot
/// products: the tolerance allows f32 accumulation, plus one rounding to `T` (`out_eps`,
/// its spacing above 1; 0 for f32, whose output is the accumulator).
pub(super) fn check_matmul<T: Copy>(
    c: &[T],
    a: &[T],
    b: &[T],
    n: usize,
    wide: impl Fn(T) -> f64,
    out_eps: f64,
) -> Result<(), BenchError> {
    if c.len() != n * n {
        return Err(format!("matmul returned {} elements, expected {}", c.len(), n * n).into());
    }
    for t in 0..16usize {
        let (i, j) = ((7 * t + 3) % n, (13 * t + 5) % n);
        let (mut want, mut mag) = (0.0f64, 0.0f64);
        for p in 0..n {
            let prod = wide(a[i * n + p]) * wide(b[p * n + j]);
            want += prod;
            mag += prod.abs();
        }
        let got = wide(c[i * n + j]);
        let tol = 2.0 * n as f64 * f32::EPSILON as f64 * mag + out_eps * want.abs() + 1e-6;
        if (got - want).abs() > tol {
            return Err(format!("matmul result wrong at ({i}, {j}): got {got}, expected {want}").into());
        }
    }
    Ok(())
}

fn uniform(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    const SEED: u64 = 5;
    let n = cfg.stream_len;
    let run = || -> Result<DeviceArray<f32>, BenchError> {
        let u = device.uniform::<f32>(SEED, &[n])?;
        device.synchronize()?;
        Ok(u)
    };
    let got = run()?.to_vec()?;
    // Philox is counter-based: element i must be bit-identical to the host reference.
    for i in [0, 1, 2, 3, 4, 5, n / 3, n / 2, n.saturating_sub(2), n.saturating_sub(1)] {
        let want = polycompute::philox::uniform_f32(SEED, i as u64);
        if i < n && got[i].to_bits() != want.to_bits() {
            return Err(format!("uniform element {i} is {}, the Philox reference is {want}", got[i]).into());
        }
    }
    fill_figures(device, cfg, run)
}

fn normal(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    const SEED: u64 = 6;
    let n = cfg.stream_len;
    let run = || -> Result<DeviceArray<f32>, BenchError> {
        let z = device.normal::<f32>(SEED, &[n])?;
        device.synchronize()?;
        Ok(z)
    };
    let got = run()?.to_vec()?;
    // Counter-based like the uniform stream; Box-Muller's transcendentals may differ from
    // the host reference (by up to 2^-7 on a GPU, conformance's normal-fill tolerance).
    for i in [0, 1, 2, 3, 4, 5, n / 3, n / 2, n.saturating_sub(2), n.saturating_sub(1)] {
        let want = polycompute::philox::normal_f32(SEED, i as u64);
        if i < n && (got[i] - want).abs() > 0.008 + 1e-5 * want.abs() {
            return Err(format!("normal element {i} is {}, the Philox reference is {want}", got[i]).into());
        }
    }
    fill_figures(device, cfg, run)
}

/// Times the random fill `run` of `cfg.stream_len` f32s (checked by the caller) against a
/// rayon constant fill on the CPU, or the device copy on a GPU.
fn fill_figures(
    device: &Device,
    cfg: &Config,
    run: impl FnMut() -> Result<DeviceArray<f32>, BenchError>,
) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let (value, baseline, baseline_name) = if is_cpu(device) {
        let mut out = vec![0.0f32; n];
        let (t, tb) = median_secs_pair(cfg.stream_reps, run, || {
            baseline::fill(&mut out, 0.5);
            Ok(())
        })?;
        (gb_per_s(F32 * n, t), gb_per_s(F32 * n, tb), "rayon constant fill")
    } else {
        let x = inputs(device, 1, &[n])?;
        let (t, tb) = median_secs_pair(cfg.stream_reps, run, || device_copy(&x))?;
        (gb_per_s(F32 * n, t), gb_per_s(2 * F32 * n, tb), DEVICE_COPY)
    };
    Ok(Figures { value, unit: "GB/s", baseline: Some(baseline), baseline_name })
}

fn map_small(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.small_len;
    let (x, y) = (inputs(device, 1, &[n])?, inputs(device, 2, &[n])?);
    let (xh, yh) = (x.to_vec()?, y.to_vec()?);
    check_axpy(&axpy(&x, &y)?.to_vec()?, &baseline::axpy_serial(A, &xh, &yh), &xh, &yh)?;
    let (reps, calls) = (cfg.stream_reps, cfg.small_calls);
    let ((t, tb), baseline_name) = if is_cpu(device) {
        let base = || Ok(baseline::axpy_serial(A, &xh, &yh));
        (median_secs_per_call_pair(reps, calls, || axpy(&x, &y), base)?, "single-threaded loop")
    } else {
        (median_secs_per_call_pair(reps, calls, || axpy(&x, &y), || device_copy(&x))?, DEVICE_COPY)
    };
    Ok(Figures { value: t * 1e6, unit: "us/call", baseline: Some(tb * 1e6), baseline_name })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn every_name_runs() {
        let device = Device::cpu();
        for name in NAMES {
            let figures = run(name, &device, &tiny()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(figures.value > 0.0 && figures.baseline.is_some_and(|b| b > 0.0), "{name}: {figures:?}");
        }
        assert!(run("nope", &device, &tiny()).unwrap_err().to_string().contains("map_axpy_f32"));
    }

    /// Small sizes and one repetition: tests the plumbing, not the speed.
    pub(crate) fn tiny() -> Config {
        Config {
            stream_len: 10_000,
            matmul_sizes: [16, 33],
            half_matmul_size: 24,
            small_len: 1024,
            small_calls: 3,
            short_rows: 1_000,
            stream_reps: Reps::new(0, 1),
            matmul_reps: Reps::new(0, 1),
        }
    }
}
