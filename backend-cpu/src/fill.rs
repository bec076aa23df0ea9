//! `Op::Fill`: constants, and the Philox4x32-10 uniform and normal streams of
//! `polycompute_core::philox`, bit for bit, one Philox block per group of output elements
//! and parallel over tasks.

use polycompute_core::philox::{self, bits_to_unit_f32, bits_to_unit_f64};
use polycompute_core::{BufferRef, DType, Error, Fill, Result, Scalar};
use rayon::prelude::*;

use crate::num::{with_dtype, Num};
use crate::par::{PAR_MIN, TASK};
use crate::philox::{lanes, LANES};
use crate::storage::CpuBuffer;

/// A new buffer of `len` elements of `dtype`, filled as `fill` says.
pub(crate) fn fill(fill: Fill, dtype: DType, len: usize, device: &str) -> Result<BufferRef> {
    Ok(match (fill, dtype) {
        (Fill::Constant(value), _) => {
            with_dtype!(dtype, T => CpuBuffer::shared(constant::<T>(value, len, device)?))
        }
        (Fill::Uniform { seed }, DType::U32) => CpuBuffer::shared(words(seed, len, |w| w)),
        (Fill::Uniform { seed }, DType::I32) => CpuBuffer::shared(words(seed, len, |w| w as i32)),
        (Fill::Uniform { seed }, DType::F32) => CpuBuffer::shared(words(seed, len, bits_to_unit_f32)),
        (Fill::Uniform { seed }, DType::F64) => {
            CpuBuffer::shared(pairs(seed, len, |w| [unit64(w[0], w[1]), unit64(w[2], w[3])]))
        }
        (Fill::Normal { seed }, DType::F32) => CpuBuffer::shared(normal_f32(seed, len)),
        (Fill::Normal { seed }, DType::F64) => CpuBuffer::shared(pairs(seed, len, normal_f64_pair)),
        (Fill::Normal { .. }, _) => {
            return Err(Error::Unsupported { op: "normal fill".into(), dtype, device: device.into() })
        }
    })
}

fn constant<T: Num>(value: Scalar, len: usize, device: &str) -> Result<Vec<T>> {
    let v = T::from_scalar(value).ok_or_else(|| Error::DTypeMismatch {
        context: format!("fill value on {device}"),
        expected: T::DTYPE,
        found: value.dtype(),
    })?;
    // A zeroed allocation costs nothing up front; only other values need writing.
    let mut out = vec![T::ZERO; len];
    if v.to_scalar().to_bits() != 0 {
        if len >= PAR_MIN {
            out.par_chunks_mut(TASK).for_each(|c| c.fill(v));
        } else {
            out.fill(v);
        }
    }
    Ok(out)
}

/// Runs `task(first_element, part)` over `out` in parallel tasks when it is long.
fn tasks<T: Send>(out: &mut [T], task: impl Fn(usize, &mut [T]) + Sync) {
    if out.len() >= PAR_MIN {
        out.par_chunks_mut(TASK).enumerate().for_each(|(t, part)| task(t * TASK, part));
    } else {
        task(0, out);
    }
}

/// Fills `len` elements, `per_block` of them from each Philox block of stream `seed`
/// (element `i` from block `i / per_block`): `f(words, out)` writes one block's elements
/// (fewer at the very end). Blocks are generated [`LANES`] at a time.
fn blocks<T: Num>(seed: u64, len: usize, per_block: usize, f: impl Fn([u32; 4], &mut [T]) + Sync) -> Vec<T> {
    let key = philox::key(seed);
    let mut out = vec![T::ZERO; len];
    tasks(&mut out, |first, part| {
        // Tasks start at multiples of TASK, a multiple of `per_block`: whole blocks.
        let b0 = (first / per_block) as u64;
        for (g, group) in part.chunks_mut(LANES * per_block).enumerate() {
            let w = lanes(key, b0 + (g * LANES) as u64);
            for (j, c) in group.chunks_mut(per_block).enumerate() {
                f([w[0][j], w[1][j], w[2][j], w[3][j]], c);
            }
        }
    });
    out
}

/// One element per Philox word: element `i` is word `i % 4` of block `i / 4`.
fn words<T: Num>(seed: u64, len: usize, f: impl Fn(u32) -> T + Sync) -> Vec<T> {
    blocks(seed, len, 4, |w, c| {
        for (o, &w) in c.iter_mut().zip(&w) {
            *o = f(w);
        }
    })
}

/// Two elements per Philox block: element `i` comes from block `i / 2`.
fn pairs<T: Num>(seed: u64, len: usize, f: impl Fn([u32; 4]) -> [T; 2] + Sync) -> Vec<T> {
    blocks(seed, len, 2, |w, c| {
        for (o, &v) in c.iter_mut().zip(&f(w)) {
            *o = v;
        }
    })
}

#[inline]
fn unit64(lo: u32, hi: u32) -> f64 {
    bits_to_unit_f64(((hi as u64) << 32) | lo as u64)
}

/// Box–Muller on one pair of words, exactly as `philox::normal_f32`.
#[inline]
fn box_muller_f32(w0: u32, w1: u32) -> [f32; 2] {
    let u1 = ((w0 >> 8) + 1) as f32 * (1.0 / 16_777_216.0);
    let u2 = bits_to_unit_f32(w1);
    let r = (-2.0 * u1.ln()).sqrt();
    let theta = 2.0 * std::f32::consts::PI * u2;
    [r * theta.cos(), r * theta.sin()]
}

fn normal_f32(seed: u64, len: usize) -> Vec<f32> {
    blocks(seed, len, 4, |w, c| {
        let [a, b] = box_muller_f32(w[0], w[1]);
        let [e, f] = box_muller_f32(w[2], w[3]);
        for (o, &v) in c.iter_mut().zip(&[a, b, e, f]) {
            *o = v;
        }
    })
}

/// Box–Muller on one block, exactly as `philox::normal_f64`.
fn normal_f64_pair(w: [u32; 4]) -> [f64; 2] {
    let w01 = ((w[1] as u64) << 32) | w[0] as u64;
    let w23 = ((w[3] as u64) << 32) | w[2] as u64;
    let u1 = ((w01 >> 11) + 1) as f64 * (1.0 / 9_007_199_254_740_992.0);
    let u2 = bits_to_unit_f64(w23);
    let r = (-2.0 * u1.ln()).sqrt();
    let theta = 2.0 * std::f64::consts::PI * u2;
    [r * theta.cos(), r * theta.sin()]
}
