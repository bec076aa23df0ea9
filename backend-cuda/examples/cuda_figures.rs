//! The CUDA backend's figures against the targets, in one binary: device-to-device
//! copy bandwidth (the baseline), a fused map (`a·x + y`) and a sum in GB/s, and f32 matmul in
//! GFLOP/s at 4096³ and 8192³ with the own kernel, cuBLAS and the default path. Prints JSON.
//!
//!   cargo run --release -p polycompute-cuda --example cuda_figures [-- --quick] [--device N]

use std::time::Instant;

use polycompute_core::{BackendKind, Device, DeviceArray, Result};
use polycompute_cuda::{cublas_status, set_matmul_impl, MatmulImpl};

/// Median seconds of `reps` timed runs after `warmup` untimed ones; `f` must synchronize.
fn median_secs<T>(warmup: usize, reps: usize, mut f: impl FnMut() -> Result<T>) -> Result<f64> {
    for _ in 0..warmup {
        f()?;
    }
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        let out = f()?;
        times.push(t.elapsed().as_secs_f64());
        drop(out);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

struct Figure {
    name: String,
    value: f64,
    unit: &'static str,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let ordinal = args
        .iter()
        .position(|a| a == "--device")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.trim_start_matches("cuda:").parse().ok())
        .unwrap_or(0);
    if let Err(e) = run(ordinal, quick) {
        eprintln!("cuda_figures: {e}");
        std::process::exit(1);
    }
}

fn run(ordinal: usize, quick: bool) -> Result<()> {
    let dev = Device::open(BackendKind::Cuda, ordinal)?;
    let (warmup, reps) = if quick { (1, 3) } else { (2, 9) };
    let n: usize = if quick { 1 << 24 } else { 1 << 27 };
    let mut figs = Vec::new();
    let gb = |bytes: usize, s: f64| bytes as f64 / s / 1e9;

    let x: DeviceArray<f32> = dev.uniform(1, &[n])?;
    let y: DeviceArray<f32> = dev.uniform(2, &[n])?;
    dev.synchronize()?;
    let copy = median_secs(warmup, reps, || {
        let c = x.copy()?;
        dev.synchronize()?;
        Ok(c)
    })?;
    figs.push(Figure { name: "copy_f32".into(), value: gb(8 * n, copy), unit: "GB/s" });
    let map = median_secs(warmup, reps, || {
        let z = polycompute_core::map(&[&x, &y], |v| &v[0] * 1.5f32 + &v[1])?;
        dev.synchronize()?;
        Ok::<DeviceArray<f32>, _>(z)
    })?;
    figs.push(Figure { name: "map_axpy_f32".into(), value: gb(12 * n, map), unit: "GB/s" });
    let sum = median_secs(warmup, reps, || {
        let s = x.sum(None)?;
        dev.synchronize()?;
        Ok(s)
    })?;
    figs.push(Figure { name: "sum_f32".into(), value: gb(4 * n, sum), unit: "GB/s" });
    drop((x, y));

    let cublas = cublas_status();
    let sizes: &[usize] = if quick { &[1024, 2048] } else { &[4096, 8192] };
    for &s in sizes {
        let a: DeviceArray<f32> = dev.uniform(3, &[s, s])?;
        let b: DeviceArray<f32> = dev.uniform(4, &[s, s])?;
        let mut imps = vec![("own", MatmulImpl::Own)];
        if cublas.is_ok() {
            imps.push(("cublas", MatmulImpl::Cublas));
        }
        imps.push(("default", MatmulImpl::Auto));
        let (w, r) = if s >= 8192 { (1, 3) } else { (warmup, reps.min(5)) };
        for (name, imp) in imps {
            set_matmul_impl(imp);
            let t = median_secs(w, r, || {
                let c = a.matmul(&b)?;
                dev.synchronize()?;
                Ok(c)
            })?;
            figs.push(Figure {
                name: format!("matmul_f32_{s}_{name}"),
                value: 2.0 * (s as f64).powi(3) / t / 1e9,
                unit: "GFLOP/s",
            });
        }
        set_matmul_impl(MatmulImpl::Auto);
    }

    let get = |name: &str| figs.iter().find(|f| f.name == name).map(|f| f.value);
    let ratio = |a: &str, b: &str| match (get(a), get(b)) {
        (Some(x), Some(y)) if y > 0.0 => format!("{:.3}", x / y),
        _ => "null".into(),
    };
    let big = sizes[0];
    let targets = [
        ("map_vs_copy", ratio("map_axpy_f32", "copy_f32"), 0.85),
        ("sum_vs_copy", ratio("sum_f32", "copy_f32"), 0.80),
        ("own_vs_cublas", ratio(&format!("matmul_f32_{big}_own"), &format!("matmul_f32_{big}_cublas")), 0.5),
        ("default_vs_cublas", ratio(&format!("matmul_f32_{big}_default"), &format!("matmul_f32_{big}_cublas")), 0.95),
    ];
    let info = dev.info();
    println!("{{");
    println!("  \"device\": \"{}\",", dev.id());
    println!("  \"name\": \"{}\",", info.name.replace('"', "'"));
    println!("  \"cublas\": \"{}\",", cublas.unwrap_or_else(|e| e).replace('"', "'"));
    println!("  \"stream_elements\": {n},");
    println!("  \"figures\": [");
    for (i, f) in figs.iter().enumerate() {
        let comma = if i + 1 < figs.len() { "," } else { "" };
        println!("    {{\"name\": \"{}\", \"value\": {:.1}, \"unit\": \"{}\"}}{comma}", f.name, f.value, f.unit);
    }
    println!("  ],");
    println!("  \"targets\": [");
    for (i, (name, value, min)) in targets.iter().enumerate() {
        let comma = if i + 1 < targets.len() { "," } else { "" };
        let met = value.parse::<f64>().map_or("null".to_string(), |v| (v >= *min).to_string());
        println!("    {{\"name\": \"{name}\", \"ratio\": {value}, \"at_least\": {min}, \"met\": {met}}}{comma}");
    }
    println!("  ]");
    println!("}}");
    Ok(())
}
