//! Data movement on plain inputs: concat, constant pad, take, take_along_axis (32-bit
//! words, every dtype on every device) and scatter_add (arithmetic in the dtype).

use polycompute_core::{DType, DeviceBuffer, Error, Result, Scalar, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::movement::{self as gen, words};
use crate::codegen::WG;
use crate::device::{loop_ranges, Launch, WgpuDevice};
use crate::ops::groups;
use crate::pipeline_cache::KernelKey;

/// `x` as a u32 uniform word, or a TooLarge error naming `what`.
pub(crate) fn word(x: usize, what: &str) -> Result<u32> {
    u32::try_from(x).map_err(|_| Error::TooLarge(format!("{what} = {x} exceeds the u32 indices of wgpu kernels")))
}

/// (product of dims before `axis`, dim at `axis`, product of dims after).
pub(crate) fn split(shape: &Shape, axis: usize) -> (usize, usize, usize) {
    let d = shape.dims();
    (d[..axis].iter().product(), d[axis], d[axis + 1..].iter().product())
}

/// Joins `inputs` (shapes `shapes`) along `axis`: one word copy per input.
pub(crate) fn concat(dev: &WgpuDevice, axis: usize, shapes: &[Shape], inputs: &[&WgpuBuffer]) -> Result<WgpuBuffer> {
    let dtype = inputs[0].dtype();
    let w = words(dtype);
    let total_axis: usize = shapes.iter().map(|s| s.dims()[axis]).sum();
    let (outer, _, inner) = split(&shapes[0], axis);
    let out_len = outer * total_axis * inner;
    let out = dev.alloc(dtype, out_len)?;
    if out_len == 0 {
        return Ok(out);
    }
    let kernel = dev.kernel(KernelKey::Concat, || Ok(gen::concat()))?;
    let row_out = word(total_axis * inner * w, "concat row")?;
    let mut at = 0usize;
    let mut launches = Vec::new();
    for (s, b) in shapes.iter().zip(inputs) {
        let row_in = s.dims()[axis] * inner * w;
        let n = b.len() * w;
        if n > 0 {
            let params =
                vec![word(n, "concat input words")?, word(row_in, "concat row")?, row_out, word(at, "concat")?];
            launches.push(Launch {
                kernel: kernel.clone(),
                buffers: vec![b.raw().clone(), out.raw().clone()],
                params,
                groups: groups(n, WG),
            });
        }
        at += row_in;
    }
    dev.launch(launches)?;
    Ok(out)
}

/// The words of a scalar, low word first.
fn scalar_words(value: Scalar) -> [u32; 2] {
    match value {
        Scalar::F32(v) => [v.to_bits(), 0],
        Scalar::I32(v) => [v as u32, 0],
        Scalar::U32(v) => [v, 0],
        // Halves reach the 32-bit kernels widened to a word per element (ops/half.rs).
        Scalar::F16(v) => [u32::from(v.to_bits()), 0],
        Scalar::BF16(v) => [u32::from(v.to_bits()), 0],
        Scalar::F64(v) => {
            let b = v.to_bits();
            [b as u32, (b >> 32) as u32]
        }
        Scalar::I64(v) => [v as u32, (v >> 32) as u32],
        Scalar::U8(v) => [u32::from(v), 0],
        Scalar::Bool(v) => [u32::from(v), 0],
    }
}

/// numpy's `pad` with a constant.
pub(crate) fn pad(
    dev: &WgpuDevice,
    shape: &Shape,
    widths: &[(usize, usize)],
    value: Scalar,
    input: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    let dtype = input.dtype();
    let w = words(dtype);
    let dims: Vec<usize> = shape.dims().iter().zip(widths).map(|(&d, &(lo, hi))| d + lo + hi).collect();
    let n: usize = dims.iter().product();
    let out = dev.alloc(dtype, n)?;
    if n == 0 {
        return Ok(out);
    }
    if dims.len() > gen::MAX_PAD_RANK {
        return Err(Error::Unsupported {
            op: format!(
                "pad of {} axes (the wgpu kernel takes up to {}; reshape first)",
                dims.len(),
                gen::MAX_PAD_RANK
            ),
            dtype,
            device: Some(dev.id),
        });
    }
    let v = scalar_words(value);
    let mut params = vec![word(n * w, "pad output words")?, w as u32, dims.len() as u32, v[0], v[1]];
    for ((&d, &(lo, _)), &len) in dims.iter().zip(widths).zip(shape.dims()) {
        params.extend([word(d, "pad dim")?, word(lo, "pad width")?, word(len, "pad dim")?]);
    }
    params.resize(gen::pad_params(gen::MAX_PAD_RANK), 0);
    let kernel = dev.kernel(KernelKey::Pad, || Ok(gen::pad()))?;
    let buffers = vec![input.raw().clone(), out.raw().clone()];
    dev.launch(vec![Launch { kernel, buffers, params, groups: groups(n * w, WG) }])?;
    Ok(out)
}

/// take (`along` false: output `shape[..axis] ++ indices ++ shape[axis+1..]`) or
/// take_along_axis (`along` true: output of the indices' shape).
pub(crate) fn take(
    dev: &WgpuDevice,
    axis: usize,
    shape: &Shape,
    indices: &Shape,
    along: bool,
    a: &WgpuBuffer,
    idx: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    let dtype = a.dtype();
    let w = words(dtype);
    let (_, n_axis, inner) = split(shape, axis);
    let (len, m) = if along {
        (indices.numel(), indices.dims()[axis])
    } else {
        let outer: usize = shape.dims()[..axis].iter().product();
        (outer * indices.numel() * inner, indices.numel())
    };
    let out = dev.alloc(dtype, len)?;
    if len == 0 {
        return Ok(out);
    }
    let index = idx.dtype();
    let kernel = dev.kernel(KernelKey::Take { index, along }, || Ok(gen::take(index, along)))?;
    let params = vec![
        word(len * w, "take output words")?,
        w as u32,
        word(inner, "take")?,
        word(m, "take")?,
        word(n_axis, "take")?,
    ];
    let buffers = vec![a.raw().clone(), idx.raw().clone(), out.raw().clone()];
    dev.launch(vec![Launch { kernel, buffers, params, groups: groups(len * w, WG) }])?;
    Ok(out)
}

/// numpy's `add.at` along `axis` on a copy of `a`.
pub(crate) fn scatter_add(
    dev: &WgpuDevice,
    axis: usize,
    shape: &Shape,
    indices: &Shape,
    inputs: &[&WgpuBuffer],
) -> Result<WgpuBuffer> {
    scatter_add_as(dev, axis, shape, indices, inputs, inputs[0].dtype())
}

/// [`scatter_add`] adding in `dtype`: the buffers' own, or a half whose values the (f32)
/// buffers hold widened, each sum then rounded to it (ops/half.rs).
pub(crate) fn scatter_add_as(
    dev: &WgpuDevice,
    axis: usize,
    shape: &Shape,
    indices: &Shape,
    inputs: &[&WgpuBuffer],
    dtype: DType,
) -> Result<WgpuBuffer> {
    let (a, idx, vals) = (inputs[0], inputs[1], inputs[2]);
    dev.require(dtype, "scatter_add")?;
    let out = dev.alloc(a.dtype(), a.len())?;
    dev.copy(a.raw(), out.raw(), a.bytes())?;
    let (outer, n_axis, inner) = split(shape, axis);
    let m = indices.numel();
    let cols = outer * inner;
    if cols == 0 || m == 0 || a.len() == 0 {
        return Ok(out);
    }
    let index = idx.dtype();
    let kernel = dev.kernel(KernelKey::ScatterAdd { dtype, index }, || Ok(gen::scatter_add(dtype, index)))?;
    let params = vec![
        word(cols, "scatter_add columns")?,
        word(inner, "scatter_add")?,
        word(m, "scatter_add")?,
        word(n_axis, "scatter_add")?,
    ];
    let buffers = vec![idx.raw().clone(), vals.raw().clone(), out.raw().clone()];
    // Many indices in several launches (see `LOOP_BUDGET`), in order.
    let launches = loop_ranges(m, 1)
        .map(|js| {
            let mut params = params.clone();
            params.extend([js.start as u32, js.end as u32]);
            Launch { kernel: kernel.clone(), buffers: buffers.clone(), params, groups: groups(cols, WG) }
        })
        .collect();
    dev.launch(launches)?;
    Ok(out)
}
