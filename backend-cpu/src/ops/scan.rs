//! `Op::Scan`: inclusive running sums and products along an axis, in order along the
//! axis (integers wrap). Each output element is written once, straight from the input.
//! Lanes of the `[outer, n, inner]` view run in parallel; with `inner > 1` a whole slab
//! `[i, ..]` is combined with slab `[i - 1, ..]` at once, which vectorises.

use polycompute_core::op::ScanKind;
use polycompute_core::{DType, HostSlice, Result, Shape};
use rayon::prelude::*;

use super::axis::Axis;
use crate::buffer::{host_vec, typed, Output};
use crate::num::{with_dtype, Num};
use crate::num_half::{narrow_vec, widen, HalfNum};
use crate::par::PAR_MIN;

/// The running sum or product of `x` along the axis `a` describes.
pub(crate) fn scan<T: Num>(x: &[T], kind: ScanKind, a: Axis) -> Vec<T> {
    // One monomorphised loop per kind: `T::add` and `T::mul` inline into it.
    match kind {
        ScanKind::Sum => scan_with(x, a, T::add),
        ScanKind::Prod => scan_with(x, a, T::mul),
    }
}

fn scan_with<T: Num>(x: &[T], a: Axis, f: impl Fn(T, T) -> T + Sync) -> Vec<T> {
    let mut out = vec![T::ZERO; x.len()];
    let block = a.n * a.inner;
    if block == 0 {
        return out;
    }
    let run = |(o, dst): (usize, &mut [T])| {
        let src = &x[o * block..(o + 1) * block];
        if a.inner == 1 {
            let mut acc = src[0];
            dst[0] = acc;
            for (d, &v) in dst[1..].iter_mut().zip(&src[1..]) {
                acc = f(acc, v);
                *d = acc;
            }
            return;
        }
        dst[..a.inner].copy_from_slice(&src[..a.inner]);
        for i in 1..a.n {
            let (done, rest) = dst.split_at_mut(i * a.inner);
            let prev = &done[(i - 1) * a.inner..];
            let cur = &src[i * a.inner..(i + 1) * a.inner];
            for ((d, &p), &v) in rest[..a.inner].iter_mut().zip(prev).zip(cur) {
                *d = f(p, v);
            }
        }
    };
    if a.outer > 1 && out.len() >= PAR_MIN {
        out.par_chunks_mut(block).enumerate().for_each(run);
    } else {
        out.chunks_mut(block).enumerate().for_each(run);
    }
    out
}

/// `Op::Scan` on any dtype. Halves: an f32 running value, each output rounded once from it.
pub(crate) fn run(kind: ScanKind, axis: usize, shape: &Shape, data: &[HostSlice<'_>]) -> Result<Output> {
    let dtype = data.first().map_or(DType::F32, |d| d.dtype());
    let a = Axis::new(shape, axis);
    Ok(Output::host(match dtype {
        DType::F16 => host_vec(half_scan::<polycompute_core::f16>(typed(data[0]), kind, a)),
        DType::BF16 => host_vec(half_scan::<polycompute_core::bf16>(typed(data[0]), kind, a)),
        // Bool scans are refused by the op's check; they would be running or / and.
        DType::F32 | DType::F64 | DType::I32 | DType::U32 | DType::I64 | DType::U8 | DType::Bool => {
            with_dtype!(dtype, T => host_vec(scan::<T>(typed(data[0]), kind, a)))
        }
    }))
}

/// A half scan: accumulated in f32 over the widened values, each output rounded once.
fn half_scan<H: HalfNum>(x: &[H], kind: ScanKind, a: Axis) -> Vec<H> {
    narrow_vec(&scan::<f32>(&widen(x), kind, a))
}
