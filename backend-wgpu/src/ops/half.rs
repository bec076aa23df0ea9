//! Half precision (f16, bf16) ops that are not a map: each is built from the backend's own
//! kernels, so halves need no adapter feature and share the 32-bit kernels' tested paths.
//!
//! * Reductions read the halves in their first pass, reduce in f32 and round once.
//! * Other arithmetic widens to f32 (exact) and runs the f32 kernels: matmul and
//!   cumsum/cumprod accumulate in f32 and round each result once to the half (a map cast,
//!   round to nearest even); scatter_add rounds every addition to the half, in index order,
//!   as the CPU and numpy's `add.at` do (its kernel's rounding variant, on f32 buffers).
//! * Moving bits (concat, take, take_along_axis, pad) widens to one u32 per element, runs the
//!   32-bit kernel and packs the words back (`codegen::half::narrow`).
//! * Sorting argsorts u32 keys built from the bits in numpy's order; sort gathers the values
//!   through those indices (take_along_axis), so -0.0 and NaN payloads come back as they were.
//! * A transpose is an identity map over the permuted view (the map kernel reads halves at any
//!   element offset and writes whole words); a constant fill writes the value twice per word.
//!
//! Maps, casts and copies of halves are native (`codegen::map`, `layout::copy`); a plain cast
//! between a half and f64 works on bits and words, so it needs no `SHADER_F64`.

use std::sync::Arc;

use polycompute_core::expr::Program;
use polycompute_core::{DType, DeviceBuffer, Fill, Layout, Op, Result, Scalar, Shape};

use super::{groups, layout, map, matmul, movement, reduce, scan, sort};
use crate::buffer::WgpuBuffer;
use crate::codegen::{fill as fill_gen, half as gen, WG};
use crate::device::{Launch, WgpuDevice};
use crate::pipeline_cache::KernelKey;

/// Runs `op` when it is a half op this module implements (None: the ordinary runner handles
/// it, as it does every map, cast and copy).
pub(crate) fn execute(dev: &WgpuDevice, op: &Op, inputs: &[&WgpuBuffer]) -> Option<Result<WgpuBuffer>> {
    if let Op::Fill { fill, dtype, len } = op {
        return dtype.is_half().then(|| self::fill(dev, *fill, *dtype, *len));
    }
    let dtype = inputs.first()?.dtype();
    if let Op::Cast { to } = op {
        match (dtype, *to) {
            (h, DType::F64) if h.is_half() => return Some(f64_cast(dev, inputs[0], h, true)),
            (DType::F64, h) if h.is_half() => return Some(f64_cast(dev, inputs[0], h, false)),
            _ => {}
        }
    }
    if !dtype.is_half() {
        return None;
    }
    Some(match op {
        // Read as halves, reduced in f32 (argmin/argmax: indices), rounded once.
        Op::Reduce { kind, axis, shape } => reduce::run(dev, *kind, *axis, shape, inputs[0]).and_then(|out| {
            if out.dtype() == DType::F32 {
                map::cast(dev, &out, dtype)
            } else {
                Ok(out)
            }
        }),
        // Widening keeps each buffer's element order, so a transposed operand stays one.
        Op::Matmul { lhs, rhs, transpose } => {
            let b = map::cast(dev, inputs[1], DType::F32);
            in_f32(dev, inputs[0], dtype, |a| matmul::run(dev, lhs, rhs, *transpose, a, &b?))
        }
        Op::Transpose { shape, perm } => transpose(dev, shape, perm, inputs[0]),
        Op::Concat { axis, shapes } => concat(dev, *axis, shapes, inputs),
        Op::Take { axis, shape, indices } => {
            as_words(dev, inputs[0], |w| movement::take(dev, *axis, shape, indices, false, w, inputs[1]))
        }
        Op::TakeAlongAxis { axis, shape, indices } => {
            as_words(dev, inputs[0], |w| movement::take(dev, *axis, shape, indices, true, w, inputs[1]))
        }
        Op::Pad { shape, widths, value } => {
            let bits = half_bits(*value);
            as_words(dev, inputs[0], |w| movement::pad(dev, shape, widths, Scalar::U32(bits), w))
        }
        // An f32 running value, each output rounded once from it (as the CPU).
        Op::Scan { kind, axis, shape } => in_f32(dev, inputs[0], dtype, |x| {
            scan::scan(dev, *kind == polycompute_core::ScanKind::Prod, *axis, shape, x)
        }),
        Op::ScatterAdd { axis, shape, indices } => {
            let vals = map::cast(dev, inputs[2], DType::F32);
            in_f32(dev, inputs[0], dtype, |a| {
                movement::scatter_add_as(dev, *axis, shape, indices, &[a, inputs[1], &vals?], dtype)
            })
        }
        Op::Sort { axis, shape } => sorted(dev, *axis, shape, inputs[0]),
        Op::Argsort { axis, shape } => by_keys(dev, *axis, shape, sort::Output::Indices, inputs[0]),
        Op::TopK { k, axis, shape } => by_keys(dev, *axis, shape, sort::Output::Top(*k), inputs[0]),
        Op::Map { .. } | Op::MapViews { .. } | Op::Cast { .. } | Op::Copy | Op::Fill { .. } => return None,
    })
}

/// The bits of a half scalar (any other scalar is cast by core before it gets here).
fn half_bits(value: Scalar) -> u32 {
    match value {
        Scalar::F16(v) => u32::from(v.to_bits()),
        Scalar::BF16(v) => u32::from(v.to_bits()),
        other => other.to_bits() as u32,
    }
}

/// `run` on the f32 widening of `x` (exact); a float result is rounded once to `dtype`,
/// an index result (argmin, argmax) returned as it is.
fn in_f32(
    dev: &WgpuDevice,
    x: &WgpuBuffer,
    dtype: DType,
    run: impl FnOnce(&WgpuBuffer) -> Result<WgpuBuffer>,
) -> Result<WgpuBuffer> {
    let wide = map::cast(dev, x, DType::F32)?;
    let out = run(&wide)?;
    if out.dtype() == DType::F32 {
        map::cast(dev, &out, dtype)
    } else {
        Ok(out)
    }
}

/// One u32 per element of the half array `x` (its bits, or with `key` its sort key).
fn widen(dev: &WgpuDevice, x: &WgpuBuffer, key: Option<DType>) -> Result<WgpuBuffer> {
    let n = x.len();
    let out = dev.alloc(DType::U32, n)?;
    if n == 0 {
        return Ok(out);
    }
    let kernel = dev.kernel(KernelKey::HalfWiden(key), || Ok(gen::widen(key)))?;
    let params = vec![movement::word(n, "half elements")?];
    let buffers = vec![x.raw().clone(), out.raw().clone()];
    dev.launch(vec![Launch { kernel, buffers, params, groups: groups(n, WG) }])?;
    Ok(out)
}

/// The u32 words `w` (one per element) packed back into a `dtype` half array.
fn narrow(dev: &WgpuDevice, w: &WgpuBuffer, dtype: DType) -> Result<WgpuBuffer> {
    let n = w.len();
    let out = dev.alloc(dtype, n)?;
    if n == 0 {
        return Ok(out);
    }
    let kernel = dev.kernel(KernelKey::HalfNarrow, || Ok(gen::narrow()))?;
    let params = vec![movement::word(n, "half elements")?];
    let buffers = vec![w.raw().clone(), out.raw().clone()];
    dev.launch(vec![Launch { kernel, buffers, params, groups: groups(gen::words_of(n), WG) }])?;
    Ok(out)
}

/// A cast between the half `half` and f64 on bits and words (`codegen::half::f64_cast`): no
/// f64 arithmetic, so it runs on adapters without `SHADER_F64` too.
fn f64_cast(dev: &WgpuDevice, x: &WgpuBuffer, half: DType, to_f64: bool) -> Result<WgpuBuffer> {
    let n = x.len();
    let out = dev.alloc(if to_f64 { DType::F64 } else { half }, n)?;
    if n == 0 {
        return Ok(out);
    }
    let kernel = dev.kernel(KernelKey::HalfF64 { half, to_f64 }, || Ok(gen::f64_cast(half, to_f64)))?;
    let params = vec![movement::word(n, "cast elements")?];
    let threads = if to_f64 { n } else { gen::words_of(n) };
    let buffers = vec![x.raw().clone(), out.raw().clone()];
    dev.launch(vec![Launch { kernel, buffers, params, groups: groups(threads, WG) }])?;
    Ok(out)
}

/// `run` (a 32-bit data-movement op) on the widened bits of `x`, packed back.
fn as_words(
    dev: &WgpuDevice,
    x: &WgpuBuffer,
    run: impl FnOnce(&WgpuBuffer) -> Result<WgpuBuffer>,
) -> Result<WgpuBuffer> {
    let wide = widen(dev, x, None)?;
    narrow(dev, &run(&wide)?, x.dtype())
}

fn concat(dev: &WgpuDevice, axis: usize, shapes: &[Shape], inputs: &[&WgpuBuffer]) -> Result<WgpuBuffer> {
    let wide = inputs.iter().map(|x| widen(dev, x, None)).collect::<Result<Vec<_>>>()?;
    let refs: Vec<&WgpuBuffer> = wide.iter().collect();
    narrow(dev, &movement::concat(dev, axis, shapes, &refs)?, inputs[0].dtype())
}

/// argsort or topk of the halves `x` along `axis`: the same op on their u32 sort keys.
fn by_keys(dev: &WgpuDevice, axis: usize, shape: &Shape, output: sort::Output, x: &WgpuBuffer) -> Result<WgpuBuffer> {
    let keys = widen(dev, x, Some(x.dtype()))?;
    sort::run(dev, axis, shape, output, &keys)
}

/// sort: the values at the argsort's indices (the original bits, -0.0 and NaNs included).
fn sorted(dev: &WgpuDevice, axis: usize, shape: &Shape, x: &WgpuBuffer) -> Result<WgpuBuffer> {
    let order = by_keys(dev, axis, shape, sort::Output::Indices, x)?;
    as_words(dev, x, |w| movement::take(dev, axis, shape, shape, true, w, &order))
}

/// A transpose as an identity map over the permuted view (whole output words per thread).
fn transpose(dev: &WgpuDevice, shape: &Shape, perm: &[usize], x: &WgpuBuffer) -> Result<WgpuBuffer> {
    let view = Layout::contiguous(shape.clone()).permute(perm)?;
    if view.shape.ndim() <= 1 {
        return layout::copy(dev, x);
    }
    let identity = Arc::new(Program::identity(x.dtype()));
    map::run_views(dev, &identity, std::slice::from_ref(&view), &view.shape, &[x])
}

/// A constant: its bits twice per word. Philox: the f32 stream (the existing recipe), rounded
/// once to the half, so every backend draws the same halves.
fn fill(dev: &WgpuDevice, how: Fill, dtype: DType, len: usize) -> Result<WgpuBuffer> {
    match how {
        Fill::Constant(value) => {
            let out = dev.alloc(dtype, len)?;
            let words = gen::words_of(len);
            if words == 0 {
                return Ok(out);
            }
            let bits = half_bits(value);
            let kernel = dev.kernel(KernelKey::FillConstant(1), || Ok(fill_gen::constant(1)))?;
            let params = vec![movement::word(words, "fill words")?, bits | (bits << 16), 0];
            let buffers = vec![out.raw().clone()];
            dev.launch(vec![Launch { kernel, buffers, params, groups: groups(words, WG) }])?;
            Ok(out)
        }
        Fill::Uniform { .. } | Fill::Normal { .. } => {
            let wide = super::fill::run(dev, how, DType::F32, len)?;
            map::cast(dev, &wide, dtype)
        }
    }
}
