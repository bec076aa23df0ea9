//! `polycompute bench [--device ID ...] [--only NAME ...] [--json] [--quick]`: per device,
//! fused map, sum, matmul, Philox uniform and normal fills and a small repeated map, each measured
//! through the public API beside a baseline from the same run.
//!
//! Every time is the median of several repetitions after warm-up, with the device
//! synchronised inside the timed region; polycompute's and the baseline's repetitions are
//! interleaved, so load on a shared machine touches both alike. A benchmark whose warm-up
//! shows it slow (a software GPU, say) gets fewer repetitions, down to one. Baselines: on the CPU, hand-written rayon loops
//! (map, sum), a rayon constant fill (uniform), a blocked rayon loop (matmul) and a
//! single-threaded loop (small map); on a GPU, `DeviceArray::copy` bandwidth, and no
//! matmul baseline (`benches/numpy_bench.sh` runs every CPU row beside numpy).

mod baseline;
mod cases;
mod fusion;
mod half;
mod report;
mod rows;
mod shapes;
mod sorts;
mod timing;
mod views;

use std::process::ExitCode;

use polycompute::Device;

use cases::{Config, NAMES};
use report::Measurement;

/// Errors inside a benchmark: polycompute's, or a failed result check.
pub type BenchError = Box<dyn std::error::Error + Send + Sync>;

/// Options of `bench`.
#[derive(clap::Args)]
pub struct Args {
    /// Device to measure (`cpu:0`, `wgpu:0`, `cuda:0`); repeat for several. Default: every
    /// available device of every compiled-in backend.
    #[arg(long = "device", value_name = "ID")]
    devices: Vec<String>,
    /// Run only this benchmark; repeat for several. One of: map_axpy_f32, sum_f32,
    /// sum_rows_f32, argmin_rows_f32, matmul_skinny_f32, matmul_f32_1024, matmul_f32_2048, uniform_f32,
    /// normal_f32, map_small_f32, sort_f32, argsort_f32, sort_f64, sort_i32, sort_u32,
    /// sort_f16, sort_rows_f32, argsort_rows_f32, cumsum_f32, take_f32, concat_f32,
    /// map_step2_f32, matmul_t_f32_1024, map_axpy_f16, map_axpy_bf16, matmul_f16_1024,
    /// matmul_bf16_4096, fusion_chain_f32, fusion_chain_closure_f32, fusion_sqdiff_sum_f32,
    /// fusion_sqdiff_sum_plain_f32, fusion_small_map_f32.
    #[arg(long = "only", value_name = "NAME")]
    only: Vec<String>,
    /// Print a JSON list of {name, device, value, unit, baseline, ratio, ...} instead of a table.
    #[arg(long)]
    json: bool,
    /// Fewer repetitions: a rough figure in a fraction of the time.
    #[arg(long)]
    quick: bool,
}

/// Runs `bench`. Exits with failure when a benchmark failed (after printing all of them).
pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let names = selected_names(&args.only)?;
    let devices = selected_devices(&args.devices)?;
    let cfg = Config::full(args.quick);
    let rows = measure(&devices, &names, &cfg);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", report::table(&rows));
    }
    Ok(if rows.iter().any(|m| m.error.is_some()) { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn selected_names(only: &[String]) -> Result<Vec<&'static str>, String> {
    if only.is_empty() {
        return Ok(NAMES.to_vec());
    }
    for name in only {
        if !NAMES.contains(&name.as_str()) {
            return Err(format!("unknown benchmark {name:?} in --only; choose from {}", NAMES.join(", ")));
        }
    }
    Ok(NAMES.iter().copied().filter(|n| only.iter().any(|o| o == n)).collect())
}

/// The device ids asked for, or every available device; a device that cannot be opened
/// stays in the list with its error, so it is reported rather than silently skipped.
fn selected_devices(ids: &[String]) -> Result<Vec<(String, polycompute::Result<Device>)>, String> {
    if ids.is_empty() {
        let probe = polycompute::probe();
        let all: Vec<_> = probe
            .backends
            .iter()
            .filter(|b| b.available)
            .flat_map(|b| &b.devices)
            .map(|d| (d.id().to_string(), Device::open(d.kind, d.ordinal)))
            .collect();
        return Ok(all);
    }
    ids.iter()
        .map(|id| {
            // A malformed id is a usage error; an absent device is reported per line.
            polycompute::device::parse_id(id).map_err(|e| e.to_string())?;
            Ok((id.trim().to_string(), Device::parse(id)))
        })
        .collect()
}

fn measure(devices: &[(String, polycompute::Result<Device>)], names: &[&str], cfg: &Config) -> Vec<Measurement> {
    let total = devices.len() * names.len();
    let mut rows = Vec::with_capacity(total);
    for (id, device) in devices {
        for name in names {
            eprint!("[{}/{total}] {id} {name} ... ", rows.len() + 1);
            let row = match device {
                Ok(device) => match cases::run(name, device, cfg) {
                    Ok(f) => Measurement::new(name, &device.id().to_string(), f),
                    Err(e) => Measurement::failed(name, &device.id().to_string(), e.to_string()),
                },
                Err(e) => Measurement::failed(name, id, e.to_string()),
            };
            eprintln!("{}", row.summary());
            rows.push(row);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_filter_keeps_the_canonical_order() {
        assert_eq!(selected_names(&[]).unwrap(), NAMES.to_vec());
        let only = ["sum_f32".to_string(), "map_axpy_f32".to_string()];
        assert_eq!(selected_names(&only).unwrap(), vec!["map_axpy_f32", "sum_f32"]);
        assert!(selected_names(&["gemm".to_string()]).unwrap_err().contains("matmul_f32_1024"));
    }

    #[test]
    fn devices_default_to_the_cpu_and_bad_ids_are_errors() {
        let all = selected_devices(&[]).unwrap();
        assert!(all.iter().any(|(id, d)| id == "cpu:0" && d.is_ok()));
        assert!(selected_devices(&["tpu:0".to_string()]).unwrap_err().contains("cpu, wgpu or cuda"));
        let cpu9 = selected_devices(&["cpu:9".to_string()]).unwrap();
        assert!(cpu9[0].1.is_err());
    }

    #[test]
    fn measures_every_benchmark_with_tiny_sizes() {
        let devices = vec![("cpu:0".to_string(), Ok(Device::cpu()))];
        let rows = measure(&devices, &NAMES, &cases::tests::tiny());
        assert_eq!(rows.len(), NAMES.len());
        for (row, name) in rows.iter().zip(NAMES) {
            assert_eq!((row.name.as_str(), row.device.as_str()), (name, "cpu:0"));
            assert!(row.error.is_none(), "{row:?}");
            assert!(row.value.unwrap() > 0.0 && row.ratio.unwrap() > 0.0, "{row:?}");
        }
    }
}
