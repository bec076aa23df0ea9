//! The half-precision rows, each against polycompute's own f32 figure in the same
//! run (interleaved repetitions), so the ratio reads as "what half precision buys here":
//! - `map_axpy_f16`, `map_axpy_bf16`: `y = a*x + y` over the stream length, in millions of
//!   elements per second (GB/s = Melem/s × 6 / 1000 for half, × 12 / 1000 for f32) against
//!   the f32 map; the CPU target is a ratio of at least 1.6.
//! - `matmul_f16_1024`: 1024³ f16 matmul (f32 accumulation) against the f32 one, GFLOP/s.
//! - `matmul_bf16_4096`: 4096³ bf16 matmul against the f32 one (cuBLAS `GemmEx` with f32
//!   compute on CUDA), GFLOP/s.
//!
//! Each result is checked once against a host computation before it is timed.

use polycompute::{bf16, f16, Device, DeviceArray, Element};

use super::cases::{Config, Figures};
use super::timing::median_secs_pair;
use super::BenchError;

/// The `a` of `y = a*x + y` (a half type holds it exactly).
const A: f32 = 1.5;

/// A half type as the rows see it: its f32 value and its precision.
pub trait Half: Element + Copy {
    /// The value as f32 (exact).
    fn wide(self) -> f32;
    /// `x` rounded to nearest even.
    fn narrow(x: f32) -> Self;
    /// The spacing of values just above 1.
    const EPS: f32;
}

impl Half for f16 {
    fn wide(self) -> f32 {
        self.to_f32()
    }
    fn narrow(x: f32) -> Self {
        f16::from_f32(x)
    }
    const EPS: f32 = 9.765625e-4;
}

impl Half for bf16 {
    fn wide(self) -> f32 {
        self.to_f32()
    }
    fn narrow(x: f32) -> Self {
        bf16::from_f32(x)
    }
    const EPS: f32 = 7.8125e-3;
}

fn synced<T: Element>(a: polycompute::Result<DeviceArray<T>>) -> Result<DeviceArray<T>, BenchError> {
    let a = a?;
    a.device().synchronize()?;
    Ok(a)
}

fn uniform<T: Element>(device: &Device, seed: u64, shape: &[usize]) -> Result<DeviceArray<T>, BenchError> {
    synced(device.uniform::<T>(seed, shape))
}

fn axpy<T: Element>(x: &DeviceArray<T>, y: &DeviceArray<T>) -> Result<DeviceArray<T>, BenchError> {
    synced(polycompute::map(&[x, y], |a| &a[0] * A + &a[1]))
}

/// `map_axpy_f16` / `map_axpy_bf16`.
pub fn map_axpy<H: Half>(device: &Device, cfg: &Config) -> Result<Figures, BenchError> {
    let n = cfg.stream_len;
    let (x, y) = (uniform::<H>(device, 1, &[n])?, uniform::<H>(device, 2, &[n])?);
    let (xf, yf) = (uniform::<f32>(device, 1, &[n])?, uniform::<f32>(device, 2, &[n])?);
    let (xh, yh) = (x.to_vec()?, y.to_vec()?);
    let got = axpy(&x, &y)?.to_vec()?;
    // Each instruction rounds once: a*x to H, then the sum to H. A backend that contracts to
    // one fused multiply-add may differ by an ulp of the terms.
    for (i, ((&g, &x), &y)) in got.iter().zip(&xh).zip(&yh).enumerate() {
        let want = H::narrow(H::narrow(A * x.wide()).wide() + y.wide()).wide();
        let tol = 2.0 * H::EPS * ((A * x.wide()).abs() + y.wide().abs());
        if (g.wide() - want).abs() > tol || g.wide().is_nan() {
            return Err(format!("half map wrong at {i}: got {}, expected {want}", g.wide()).into());
        }
    }
    let melem = |secs: f64| n as f64 / secs / 1e6;
    let (t, tb) = median_secs_pair(cfg.stream_reps, || axpy(&x, &y), || axpy(&xf, &yf))?;
    Ok(Figures { value: melem(t), unit: "Melem/s", baseline: Some(melem(tb)), baseline_name: "polycompute f32 map" })
}

/// `matmul_f16_1024` / `matmul_bf16_4096`: `size`³ in H against the same in f32.
pub fn matmul<H: Half>(device: &Device, size: usize, cfg: &Config) -> Result<Figures, BenchError> {
    let (a, b) = (uniform::<H>(device, 3, &[size, size])?, uniform::<H>(device, 4, &[size, size])?);
    let (af, bf) = (uniform::<f32>(device, 3, &[size, size])?, uniform::<f32>(device, 4, &[size, size])?);
    let c = synced(a.matmul(&b))?.to_vec()?;
    super::cases::check_matmul(&c, &a.to_vec()?, &b.to_vec()?, size, |x: H| x.wide() as f64, H::EPS as f64)?;
    let gflops = |secs: f64| 2.0 * (size as f64).powi(3) / secs / 1e9;
    let (t, tb) = median_secs_pair(cfg.matmul_reps, || synced(a.matmul(&b)), || synced(af.matmul(&bf)))?;
    Ok(Figures {
        value: gflops(t),
        unit: "GFLOP/s",
        baseline: Some(gflops(tb)),
        baseline_name: "polycompute f32 matmul",
    })
}
