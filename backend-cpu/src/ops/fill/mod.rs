//! `Op::Fill`: constants, and the Philox4x32-10 uniform and normal streams of
//! `polycompute_core::philox`, bit for bit, one Philox block per group of output elements
//! and parallel over tasks.

mod box_muller;
mod philox;

use polycompute_core::philox::{bits_to_unit_f32, bits_to_unit_f64};
use std::sync::Arc;

use polycompute_core::{bf16, f16, DType, DeviceId, Error, Fill, Result, Scalar};
use rayon::prelude::*;

use crate::buffer::Output;
use crate::memory::Pool;
use crate::num::{with_dtype, CastTo, Num};
use crate::par::{PAR_MIN, TASK};
use philox::{lanes, LANES};

/// A new buffer of `len` elements of `dtype`, filled as `fill` says.
pub(crate) fn fill(fill: Fill, dtype: DType, len: usize, device: DeviceId, pool: &Arc<Pool>) -> Result<Output> {
    match (fill, dtype) {
        (Fill::Constant(value), _) => {
            with_dtype!(dtype, T => {
                let v = constant::<T>(value, device)?;
                Output::write::<T>(pool, len, |out| tasks(out, |_, part| part.fill(v)))
            })
        }
        (Fill::Uniform { seed }, DType::U32) => Output::write(pool, len, |o| words(seed, o, |w| w)),
        (Fill::Uniform { seed }, DType::I32) => Output::write(pool, len, |o| words(seed, o, |w| w as i32)),
        (Fill::Uniform { seed }, DType::F32) => Output::write(pool, len, |o| words(seed, o, bits_to_unit_f32)),
        (Fill::Uniform { seed }, DType::F64) => {
            Output::write(pool, len, |o| blocks(seed, o, |w| [unit64(w[0], w[1]), unit64(w[2], w[3])]))
        }
        (Fill::Normal { seed }, DType::F32) => Output::write(pool, len, |o| normal_f32(seed, o)),
        (Fill::Normal { seed }, DType::F64) => Output::write(pool, len, |o| blocks(seed, o, normal_f64_pair)),
        // The halves: the f32 stream, each element rounded once to nearest even (so the
        // same values as every other backend's; rounding can reach 1.0 from below).
        (Fill::Uniform { seed }, DType::F16) => {
            Output::write(pool, len, |o| words(seed, o, |w| f16::from_f32(bits_to_unit_f32(w))))
        }
        (Fill::Uniform { seed }, DType::BF16) => {
            Output::write(pool, len, |o| words(seed, o, |w| bf16::from_f32(bits_to_unit_f32(w))))
        }
        (Fill::Normal { seed }, DType::F16) => Output::write(pool, len, |o| normal_half::<f16>(seed, o)),
        (Fill::Normal { seed }, DType::BF16) => Output::write(pool, len, |o| normal_half::<bf16>(seed, o)),
        (Fill::Normal { .. }, _) => Err(Error::Unsupported { op: "normal fill".into(), dtype, device: Some(device) }),
        (Fill::Uniform { .. }, DType::I64 | DType::U8 | DType::Bool) => {
            Err(Error::Unsupported { op: "uniform fill".into(), dtype, device: Some(device) })
        }
    }
}

/// The fill value as `T`.
fn constant<T: Num>(value: Scalar, device: DeviceId) -> Result<T> {
    T::from_scalar(value).ok_or_else(|| Error::DTypeMismatch {
        context: format!("fill value on {device}"),
        expected: T::DTYPE,
        found: value.dtype(),
    })
}

/// Runs `task(first_element, part)` over `out` in parallel tasks when it is long.
fn tasks<T: Send>(out: &mut [T], task: impl Fn(usize, &mut [T]) + Sync) {
    if out.len() >= PAR_MIN {
        out.par_chunks_mut(TASK).enumerate().for_each(|(t, part)| task(t * TASK, part));
    } else {
        task(0, out);
    }
}

/// Fills `len` elements, `N` of them from each Philox block of stream `seed` (element `i`
/// from block `i / N`, `f(words)` giving a block's `N` elements). Blocks are generated
/// [`LANES`] at a time, in code compiled for the best instruction set found at run time
/// (with AVX2 the rounds' widening multiplies run four lanes at a time instead of two).
fn blocks<T: Num, const N: usize>(seed: u64, out: &mut [T], f: impl Fn([u32; 4]) -> [T; N] + Sync) {
    let key = polycompute_core::philox::key(seed);
    let arch = pulp::Arch::new();
    // Tasks start at multiples of TASK, a multiple of N: whole blocks.
    tasks(out, |first, part| arch.dispatch(BlockTask { key, first_block: (first / N) as u64, part, f: &f }));
}

/// One task of [`blocks`], as a `pulp` kernel.
struct BlockTask<'a, T, F, const N: usize> {
    key: [u32; 2],
    first_block: u64,
    part: &'a mut [T],
    f: &'a F,
}

impl<T: Num, F: Fn([u32; 4]) -> [T; N], const N: usize> pulp::WithSimd for BlockTask<'_, T, F, N> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let BlockTask { key, first_block, part, f } = self;
        for (g, group) in part.chunks_mut(LANES * N).enumerate() {
            let w = lanes(key, first_block + (g * LANES) as u64);
            let mut vals = [[T::ZERO; N]; LANES];
            for (j, v) in vals.iter_mut().enumerate() {
                *v = f([w[0][j], w[1][j], w[2][j], w[3][j]]);
            }
            for (o, v) in group.iter_mut().zip(vals.as_flattened()) {
                *o = *v;
            }
        }
    }
}

/// One element per Philox word: element `i` is word `i % 4` of block `i / 4`.
fn words<T: Num>(seed: u64, out: &mut [T], f: impl Fn(u32) -> T + Sync) {
    blocks(seed, out, |w| w.map(&f))
}

#[inline]
fn unit64(lo: u32, hi: u32) -> f64 {
    bits_to_unit_f64(((hi as u64) << 32) | lo as u64)
}

/// The f32 normal stream: each block's two word pairs through Box–Muller, [`LANES`]
/// blocks at a time with the transcendental functions vectorised (see `box_muller`).
fn normal_f32(seed: u64, out: &mut [f32]) {
    let key = polycompute_core::philox::key(seed);
    let arch = pulp::Arch::new();
    tasks(out, |first, part| arch.dispatch(NormalTask { key, first_block: (first / 4) as u64, part }));
}

/// The f32 normal stream rounded once per element to a half type, generated a task at a
/// time (tasks start at multiples of `TASK`, whole Philox blocks, as in [`normal_f32`]).
fn normal_half<H: Num + CastTo<f32>>(seed: u64, out: &mut [H])
where
    f32: CastTo<H>,
{
    let key = polycompute_core::philox::key(seed);
    let arch = pulp::Arch::new();
    tasks(out, |first, part| {
        let mut wide: Vec<f32> = vec![0.0; part.len()];
        arch.dispatch(NormalTask { key, first_block: (first / 4) as u64, part: &mut wide });
        for (o, &v) in part.iter_mut().zip(&wide) {
            *o = v.cast();
        }
    });
}

/// One task of [`normal_f32`], as a `pulp` kernel.
struct NormalTask<'a> {
    key: [u32; 2],
    first_block: u64,
    part: &'a mut [f32],
}

impl pulp::WithSimd for NormalTask<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let NormalTask { key, first_block, part } = self;
        for (g, group) in part.chunks_mut(LANES * 4).enumerate() {
            box_muller::blocks(&lanes(key, first_block + (g * LANES) as u64), group);
        }
    }
}

/// Box–Muller on one block, exactly as `polycompute_core::philox::normal_f64`.
fn normal_f64_pair(w: [u32; 4]) -> [f64; 2] {
    let w01 = ((w[1] as u64) << 32) | w[0] as u64;
    let w23 = ((w[3] as u64) << 32) | w[2] as u64;
    let u1 = ((w01 >> 11) + 1) as f64 * (1.0 / 9_007_199_254_740_992.0);
    let u2 = bits_to_unit_f64(w23);
    let r = (-2.0 * u1.ln()).sqrt();
    let theta = 2.0 * std::f64::consts::PI * u2;
    [r * theta.cos(), r * theta.sin()]
}
