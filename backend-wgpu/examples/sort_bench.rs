//! Elements per second of `sort`, `argsort` and `topk` along one row on a wgpu adapter, at
//! the sizes given as powers of two (default 16 20 24), the median of `POLYCOMPUTE_REPS`
//! (default 3) timed runs after one warm-up whose result is checked against the host.
//!
//! ```text
//! cargo run -p polycompute-wgpu --example sort_bench -- 16 20 24
//! ```
//!
//! `POLYCOMPUTE_WGPU_ORDINAL` picks the adapter (default 0), `POLYCOMPUTE_SORT_OPS` the ops
//! (a comma list of sort, argsort, topk100; default all). One line per size and op:
//! `op log2n elements/s`, so two builds' outputs can be put side by side.

use std::time::Instant;

use polycompute_core::{Backend, Device, DeviceArray};
use polycompute_testing::inputs::uniform;
use polycompute_wgpu::WgpuBackend;

type Run<'a> = Box<dyn Fn(&DeviceArray<f32>) -> polycompute_core::Result<Vec<u32>> + 'a>;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ordinal = std::env::var("POLYCOMPUTE_WGPU_ORDINAL").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    let reps: usize = std::env::var("POLYCOMPUTE_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let sizes: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![16, 20, 24] } else { sizes };
    let wanted = std::env::var("POLYCOMPUTE_SORT_OPS").unwrap_or_else(|_| "sort,argsort,topk100".into());
    let dev = Device::from_backend(WgpuBackend.open(ordinal)?);
    for log2n in sizes {
        let n = 1usize << log2n;
        let host = uniform::<f32>(u64::from(log2n), n, -1e3, 1e3);
        let x = dev.from_slice(&host, &[n])?;
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&a, &b| host[a as usize].total_cmp(&host[b as usize]));
        // Each op returns the indices it checks (sort: its values' bits), read back once.
        let ops: Vec<(&str, Run)> = vec![
            ("sort", Box::new(|x| Ok(x.sort(0)?.to_vec()?.iter().map(|v| v.to_bits()).collect()))),
            ("argsort", Box::new(|x| x.argsort(0)?.to_vec())),
            ("topk100", Box::new(|x| x.topk(100, 0)?.1.to_vec())),
        ];
        for (name, run) in ops.into_iter().filter(|(name, _)| wanted.split(',').any(|w| w == *name)) {
            let got = run(&x)?;
            let want: Vec<u32> = match name {
                "sort" => order.iter().map(|&i| host[i as usize].to_bits()).collect(),
                "argsort" => order.clone(),
                _ => {
                    let mut desc: Vec<u32> = (0..n as u32).collect();
                    desc.sort_by(|&a, &b| host[b as usize].total_cmp(&host[a as usize]));
                    desc.truncate(100);
                    desc
                }
            };
            if got != want {
                return Err(format!("{name} at 2^{log2n} differs from the host's sort").into());
            }
            let times: Vec<f64> = (0..reps)
                .map(|_| {
                    let t = Instant::now();
                    let out = match name {
                        "sort" => x.sort(0).map(|_| ()),
                        "argsort" => x.argsort(0).map(|_| ()),
                        _ => x.topk(100, 0).map(|_| ()),
                    };
                    out.and_then(|()| dev.synchronize()).map(|()| t.elapsed().as_secs_f64())
                })
                .collect::<polycompute_core::Result<_>>()?;
            println!("{name} {log2n} {:.4e}", n as f64 / median(times));
        }
    }
    Ok(())
}
