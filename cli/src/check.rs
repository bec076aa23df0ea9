//! `polycompute check [--device ID ...] [--filter TEXT] [--json]`: runs the conformance corpus
//! on every available device (or those named) and compares each result with the f64
//! reference. Exit status 1 on any failure.

use std::process::ExitCode;

use polycompute::{BackendKind, Device};
use polycompute_conformance::{corpus, report};

/// Options of `check`.
#[derive(clap::Args)]
pub struct Args {
    /// A device to check (`cpu`, `wgpu:1`, `cuda:0`); repeat for several. Default: every
    /// device of every available backend.
    #[arg(long = "device", value_name = "ID")]
    devices: Vec<String>,
    /// Run only the cases whose name contains this text (e.g. `matmul_f32`).
    #[arg(long, value_name = "TEXT")]
    filter: Option<String>,
    /// Print JSON: `{"cases", "failures", "results": [{"op", "dtype", "device", "status", "max_ulp"}]}`.
    #[arg(long)]
    json: bool,
}

/// Runs `check`.
pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let Found { devices, skipped, errors } =
        if args.devices.is_empty() { every_device() } else { named(&args.devices)? };
    if devices.is_empty() {
        return Err("no device to check".into());
    }
    let cases: Vec<_> =
        corpus().into_iter().filter(|c| args.filter.as_deref().is_none_or(|f| c.name.contains(f))).collect();
    let report = report::run(&devices, &cases);
    if args.json {
        let mut json = report.json();
        json["skipped"] = serde_json::json!(skipped);
        json["errors"] = serde_json::json!(errors);
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        skipped.iter().for_each(|s| println!("skipped {s}"));
        print!("{}", report.table());
        errors.iter().for_each(|e| println!("error: {e}"));
    }
    Ok(if report.failures.is_empty() && errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The devices to check, the backends skipped (and why), and devices that failed to open.
struct Found {
    devices: Vec<Device>,
    skipped: Vec<String>,
    errors: Vec<String>,
}

/// Opens the devices named on the command line; any that cannot be opened is an error.
fn named(ids: &[String]) -> Result<Found, Box<dyn std::error::Error>> {
    let devices =
        ids.iter().map(|id| Device::parse(id).map_err(|e| format!("--device {id}: {e}"))).collect::<Result<_, _>>()?;
    Ok(Found { devices, skipped: Vec::new(), errors: Vec::new() })
}

/// Every device of every backend; a backend without devices is reported as skipped, a device
/// that is listed but does not open as an error.
fn every_device() -> Found {
    let mut found = Found { devices: Vec::new(), skipped: Vec::new(), errors: Vec::new() };
    for kind in [BackendKind::Cpu, BackendKind::Wgpu, BackendKind::Cuda] {
        let infos = polycompute::registry::backend(kind).and_then(|b| b.devices());
        match infos {
            Ok(infos) => {
                for info in infos {
                    match Device::open(kind, info.ordinal) {
                        Ok(d) => found.devices.push(d),
                        Err(e) => found.errors.push(format!("{}: {e}", info.id())),
                    }
                }
            }
            Err(e) => found.skipped.push(format!("{kind}: {e}")),
        }
    }
    found
}
