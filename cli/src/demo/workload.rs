//! The demo's batch workload: one Monte-Carlo task, built from the op set, that runs on
//! whatever device its worker opened, and the same computation for the CPU cross-check.

use polycompute::pool::{BoxError, TaskRng};
use polycompute::{Device, Task, Tasks, WorkerContext};
use serde::{Deserialize, Serialize};

/// The tasks the `polycompute` binary offers its process workers.
pub fn tasks() -> Tasks {
    Tasks::new().add(MonteCarlo)
}

/// One task's size.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Batch {
    /// Random points.
    pub samples: usize,
    /// Side of the random matrix multiplied by its transpose.
    pub size: usize,
}

/// What one task found.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Estimate {
    /// The task's index.
    pub index: u64,
    /// The device that computed it.
    pub device: polycompute::DeviceId,
    /// 4 × the fraction of points in the quarter disc: π.
    pub pi: f64,
    /// The mean of exp(-(x²+y²)) over the unit square: (√π/2·erf 1)² ≈ 0.557746.
    pub gauss: f64,
    /// The mean entry of A·Aᵀ for A uniform in [0,1)^(size×size): ≈ size/4.
    pub gram_mean: f64,
}

/// The three fill seeds of a task: drawn from its generator, so a recomputation anywhere
/// (the cross-check) uses the same random numbers.
fn seeds(rng: &mut TaskRng) -> [u64; 3] {
    [rng.seed(), rng.seed(), rng.seed()]
}

/// The computation: random fills, fused maps, array operators, reductions and a matmul on
/// `device`.
pub fn compute(device: &Device, index: u64, [sx, sy, sa]: [u64; 3], batch: Batch) -> polycompute::Result<Estimate> {
    let n = batch.samples.max(1);
    let x = device.uniform::<f32>(sx, &[n])?;
    let y = device.uniform::<f32>(sy, &[n])?;
    let r2 = x.zip_map(&y, |x, y| &x * &x + &y * &y)?;
    // A comparison gives 1.0 or 0.0 in the operands' dtype: its sum counts.
    let inside = r2.map(|r| r.le(1.0))?.sum(None)?.to_scalar()?;
    let gauss = (-&r2)?.exp()?.mean(None)?.to_scalar()?;
    let d = batch.size.max(1);
    let a = device.uniform::<f32>(sa, &[d, d])?;
    let gram = a.matmul(&a.transpose()?)?;
    let gram_mean = gram.mean(None)?.to_scalar()?;
    Ok(Estimate {
        index,
        device: device.id(),
        pi: 4.0 * f64::from(inside) / n as f64,
        gauss: f64::from(gauss),
        gram_mean: f64::from(gram_mean),
    })
}

/// The key of the demo's one submission's random streams (`Pool::seeded`).
pub const STREAM_KEY: u64 = 0;

/// Recomputes task `index` of a pool seeded with `seed` on `device`. The demo's submission is
/// its pool's first, so a task's index is also its position in the submission.
pub fn recompute(device: &Device, seed: u64, index: u64, batch: Batch) -> polycompute::Result<Estimate> {
    compute(device, index, seeds(&mut TaskRng::for_submission(seed, STREAM_KEY, index)), batch)
}

/// The demo's task.
pub struct MonteCarlo;

impl Task for MonteCarlo {
    const NAME: &'static str = "demo.monte_carlo";
    type Input = Batch;
    type Output = Estimate;

    fn run(&self, ctx: &mut WorkerContext, batch: Batch) -> Result<Estimate, BoxError> {
        let s = seeds(ctx.rng());
        Ok(compute(ctx.device(), ctx.task_index(), s, batch)?)
    }
}
