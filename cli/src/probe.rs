//! `polycompute probe [--json]`: the platform, each backend's devices (or why it has none),
//! the worker plan, and (with the CUDA backend compiled in) which NVRTC and cuBLAS files it
//! loaded, or why none.

use std::fmt::Write as _;
use std::process::ExitCode;

use polycompute::{DeviceInfo, Probe};

/// Options of `probe`.
#[derive(clap::Args)]
pub struct Args {
    /// Print `polycompute::probe()` as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `probe`: prints what [`polycompute::probe()`] found.
pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let probe = polycompute::probe();
    let libraries = cuda_libraries();
    if args.json {
        let mut value = serde_json::to_value(&probe)?;
        if let (Some(map), false) = (value.as_object_mut(), libraries.is_empty()) {
            let libs = libraries
                .iter()
                .map(|(name, r)| {
                    let entry = match r {
                        Ok(file) => serde_json::json!({ "loaded": file }),
                        Err(reason) => serde_json::json!({ "error": reason }),
                    };
                    (name.to_string(), entry)
                })
                .collect();
            map.insert("cuda_libraries".into(), serde_json::Value::Object(libs));
        }
        #[cfg(feature = "mpi")]
        if let (Some(map), Some(world)) = (value.as_object_mut(), polycompute::pool::mpi_world()) {
            map.insert("mpi".into(), serde_json::to_value(world)?);
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", render(&probe));
        print!("{}", render_libraries(&libraries));
        #[cfg(feature = "mpi")]
        print!("{}", render_mpi(polycompute::pool::mpi_world()));
    }
    Ok(ExitCode::SUCCESS)
}

/// A library the CUDA backend loads at run time: its name and the file loaded, or why none.
type Library = (&'static str, Result<String, String>);

/// Which NVRTC and cuBLAS files the CUDA backend loaded (loading them now), or why none; empty
/// without the CUDA backend.
fn cuda_libraries() -> Vec<Library> {
    #[cfg(feature = "cuda")]
    {
        use polycompute::polycompute_cuda as cuda;
        vec![("nvrtc", cuda::nvrtc_status()), ("cublas", cuda::cublas_status())]
    }
    #[cfg(not(feature = "cuda"))]
    Vec::new()
}

/// The libraries block of the table (nothing when there are none).
fn render_libraries(libraries: &[Library]) -> String {
    let mut out = String::new();
    if libraries.is_empty() {
        return out;
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "cuda libraries");
    for (name, r) in libraries {
        match r {
            Ok(file) => writeln!(out, "  {name:<7} {file}"),
            Err(reason) => writeln!(out, "  {name:<7} not loaded: {reason}"),
        }
        .ok();
    }
    out
}

/// The MPI launch (feature `mpi`): world size, this rank, and every rank's host, node-local
/// rank and device; or that there is none.
#[cfg(feature = "mpi")]
fn render_mpi(world: Option<&polycompute::pool::MpiWorld>) -> String {
    let mut out = String::from("\n");
    let Some(w) = world else {
        out.push_str("mpi       not launched by mpirun/srun: the local plan\n");
        return out;
    };
    let me = w.me();
    let _ = writeln!(
        out,
        "mpi       {} ranks on {} host(s); this is rank {} (node-local rank {}) on {}",
        w.size,
        w.hosts().len(),
        w.rank,
        me.local_rank,
        me.host
    );
    for r in &w.ranks {
        let role = if r.rank == 0 { "schedules".to_string() } else { format!("works on {}", r.device) };
        let _ = writeln!(out, "  rank {:<3} {} (local rank {}): {role}", r.rank, r.host, r.local_rank);
    }
    out
}

/// The human-readable report: one block for the platform, one per backend, one for the plan.
fn render(probe: &Probe) -> String {
    let mut out = String::new();
    // `write!` into a String cannot fail; the results are ignored for that reason only.
    let _ = writeln!(out, "platform  {} / {}, {} logical cores", probe.os, probe.arch, probe.cores);
    let _ = writeln!(out);
    let _ = writeln!(out, "backends");
    for b in &probe.backends {
        if b.available {
            let n = b.devices.len();
            let _ = writeln!(out, "  {:<5} available, {n} device{}", b.kind.name(), if n == 1 { "" } else { "s" });
        } else {
            let _ = writeln!(out, "  {:<5} unavailable: {}", b.kind.name(), b.reason);
        }
        for d in &b.devices {
            render_device(&mut out, d);
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "workers   {}", serde_plain(&probe.plan.mode));
    let _ = writeln!(out, "  why     {}", probe.plan.reason);
    out
}

fn render_device(out: &mut String, d: &DeviceInfo) {
    let memory = d.memory_bytes.map_or_else(|| "memory unknown".to_string(), format_bytes);
    let kind = if d.is_cpu { ", runs on the CPU" } else { "" };
    let _ = writeln!(out, "    {:<8} {} (ordinal {}, {memory}{kind})", d.id(), d.name, d.ordinal);
    for (key, value) in &d.details {
        let _ = writeln!(out, "             {key}: {value}");
    }
}

/// A serde value as its bare string (`thread`, not `"thread"`), so the table uses the same
/// words as the JSON.
fn serde_plain<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(e) => format!("<{e}>"),
    }
}

fn format_bytes(bytes: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else {
        format!("{:.0} MiB", b / MIB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_every_backend_and_the_plan() {
        let probe = polycompute::probe();
        let text = render(&probe);
        for kind in ["cpu", "wgpu", "cuda"] {
            assert!(text.lines().any(|l| l.trim_start().starts_with(kind)), "{kind} missing in:\n{text}");
        }
        assert!(text.contains("cpu:0"), "{text}");
        assert!(text.contains("workers"), "{text}");
    }

    #[test]
    fn json_has_the_documented_fields() {
        let v = serde_json::to_value(polycompute::probe()).unwrap();
        for key in ["os", "arch", "cores", "backends", "plan"] {
            assert!(v.get(key).is_some(), "missing {key} in {v}");
        }
        let cpu = &v["backends"].as_array().unwrap().iter().find(|b| b["kind"] == "cpu").unwrap().clone();
        assert_eq!(cpu["available"], true);
        assert_eq!(cpu["devices"][0]["ordinal"], 0);
        assert!(cpu["devices"][0]["name"].is_string());
        assert!(v["plan"]["mode"].is_string() && v["plan"]["reason"].is_string());
    }

    #[test]
    fn libraries_block_says_the_file_or_why_not() {
        let text = render_libraries(&[
            ("nvrtc", Ok("/x/libnvrtc.so.13 (NVRTC 13.0)".into())),
            ("cublas", Err("libcublas not found".into())),
        ]);
        assert_eq!(
            text,
            "\ncuda libraries\n  nvrtc   /x/libnvrtc.so.13 (NVRTC 13.0)\n  cublas  not loaded: libcublas not found\n"
        );
        assert_eq!(render_libraries(&[]), "");
        assert_eq!(cuda_libraries().len(), if cfg!(feature = "cuda") { 2 } else { 0 });
    }

    #[test]
    fn bytes_read_well() {
        assert_eq!(format_bytes(3 << 30), "3.0 GiB");
        assert_eq!(format_bytes(512 << 20), "512 MiB");
    }
}
