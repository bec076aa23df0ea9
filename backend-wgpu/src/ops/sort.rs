//! sort, argsort and topk over each row's (key, index) slots: the stable radix sort of
//! [`radix`] where [`takes_radix`] says so (rows of 64 and more, 8192 slots in all), else a
//! bitonic network (the row padded to a power of two, one dispatch per step); all in one
//! submission.

mod radix;

use polycompute_core::{DType, DeviceBuffer, Result, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::movement::words;
use crate::codegen::radix::{self as radix_gen, RadixKernel};
use crate::codegen::sort::{self as gen, key_words, LOCAL_SLOTS};
use crate::codegen::WG;
use crate::device::{Launch, WgpuDevice};
use crate::ops::groups;
use crate::ops::movement::{split, word};
use crate::pipeline_cache::KernelKey;

/// What the sort returns.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Output {
    /// The sorted values (sort).
    Values,
    /// The indices in sorted order (argsort).
    Indices,
    /// The indices of the `k` largest, largest first (topk).
    Top(usize),
}

/// Sorts `input` (of `shape`) along `axis` and returns what `output` asks for.
pub(crate) fn run(
    dev: &WgpuDevice,
    axis: usize,
    shape: &Shape,
    output: Output,
    input: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    let dtype = input.dtype();
    let (outer, n, inner) = split(shape, axis);
    let rows = outer * inner;
    let kk = match output {
        Output::Top(k) => k,
        _ => n,
    };
    let out_dtype = if output == Output::Values { dtype } else { DType::U32 };
    let out = dev.alloc(out_dtype, rows * kk)?;
    if rows == 0 || kk == 0 {
        return Ok(out);
    }
    if takes_radix(rows, n) {
        return radix_sort(dev, (rows, n, inner), output, kk, input, out);
    }
    let p = n.next_power_of_two();
    let slots = rows * p;
    let slots32 = word(slots, "sort slots (rows times the axis rounded up to a power of two)")?;
    let kw = key_words(dtype);
    let keys = dev.alloc(DType::U32, slots * kw)?;
    let idx = dev.alloc(DType::U32, slots)?;
    let descending = u32::from(matches!(output, Output::Top(_)));

    let init = dev.kernel(KernelKey::SortInit(dtype), || Ok(gen::init(dtype)))?;
    let step = dev.kernel(KernelKey::SortStep(dtype), || Ok(gen::step(dtype)))?;
    let sort_buffers = vec![input.raw().clone(), keys.raw().clone(), idx.raw().clone()];
    let mut launches = vec![Launch {
        kernel: init,
        buffers: sort_buffers.clone(),
        params: vec![slots32, p as u32, n as u32, inner as u32, descending],
        groups: groups(slots, WG),
    }];
    let local = dev.kernel(KernelKey::SortLocal(dtype), || Ok(gen::local(dtype)))?;
    let blocks = slots.div_ceil(LOCAL_SLOTS) as u64;
    let local_step = |k_first: usize, k_last: usize, j_first: usize| Launch {
        kernel: local.clone(),
        buffers: sort_buffers.clone(),
        params: vec![slots32, p as u32, k_first as u32, k_last as u32, j_first as u32],
        groups: blocks,
    };
    // Every k up to the block size inside workgroups, then for each larger k the steps
    // j >= 512 globally and the rest of k locally.
    launches.push(local_step(2, p.min(LOCAL_SLOTS), 1));
    let mut k = LOCAL_SLOTS * 2;
    while k <= p {
        let mut j = k / 2;
        while j >= LOCAL_SLOTS {
            launches.push(Launch {
                kernel: step.clone(),
                buffers: sort_buffers.clone(),
                params: vec![(slots / 2) as u32, p as u32, k as u32, j as u32],
                groups: groups(slots / 2, WG),
            });
            j /= 2;
        }
        launches.push(local_step(k, k, LOCAL_SLOTS / 2));
        k *= 2;
    }
    launches.push(output_pass(dev, (rows, n, inner), p, output, kk, [input, &idx, &out])?);
    dev.launch(launches)?;
    Ok(out)
}

/// Whether rows of `n` (`rows` of them) take the radix sort rather than the bitonic network.
/// Measured on lavapipe (argsort of f32, 2^18..2^20 elements): radix is 2-14x faster from
/// rows of 64 up (the network's workgroup steps wait at a barrier per step); below 64 slots,
/// and for fewer than 8192 slots in all, where launches dominate and the network needs
/// fewer of them, the network is faster.
pub(crate) fn takes_radix(rows: usize, n: usize) -> bool {
    n >= 64 && rows * n >= 8192
}

/// The radix sort of every row: the slots (no padding; sort carries the values, argsort
/// and topk the indices), the passes, the output pass.
fn radix_sort(
    dev: &WgpuDevice,
    (rows, n, inner): (usize, usize, usize),
    output: Output,
    kk: usize,
    input: &WgpuBuffer,
    out: WgpuBuffer,
) -> Result<WgpuBuffer> {
    let dtype = input.dtype();
    let slots = rows * n;
    let kw = key_words(dtype);
    let carry_values = output == Output::Values;
    let pw = if carry_values { words(dtype) } else { 1 };
    let keys = dev.alloc(DType::U32, slots * kw)?;
    let payload = dev.alloc(DType::U32, slots * pw)?;
    let descending = u32::from(matches!(output, Output::Top(_)));
    let init =
        dev.kernel(KernelKey::Radix(RadixKernel::Init(dtype)), || Ok(radix_gen::kernel(RadixKernel::Init(dtype))))?;
    let mut launches = vec![Launch {
        kernel: init,
        buffers: vec![input.raw().clone(), keys.raw().clone(), payload.raw().clone()],
        params: vec![word(slots, "sort slots")?, n as u32, inner as u32, descending, u32::from(carry_values)],
        groups: groups(slots, WG),
    }];
    let mut scratch = Vec::new();
    launches.extend(radix::launches(dev, &keys, &payload, rows, n, (kw, pw), &mut scratch)?);
    let mut last = output_pass(dev, (rows, n, inner), n, output, kk, [input, &payload, &out])?;
    if carry_values {
        last.params[6] = 2;
    }
    launches.push(last);
    dev.launch(launches)?;
    drop(scratch);
    Ok(out)
}

/// The last pass: the first `kk` slots of each row of `p` slots (`idx`), as values or indices.
fn output_pass(
    dev: &WgpuDevice,
    (rows, n, inner): (usize, usize, usize),
    p: usize,
    output: Output,
    kk: usize,
    [input, idx, out]: [&WgpuBuffer; 3],
) -> Result<Launch> {
    let last = dev.kernel(KernelKey::SortOut, || Ok(gen::output()))?;
    let (w, indices) = if output == Output::Values { (words(input.dtype()), 0) } else { (1, 1) };
    let total = rows * kk * w;
    Ok(Launch {
        kernel: last,
        buffers: vec![input.raw().clone(), idx.raw().clone(), out.raw().clone()],
        params: vec![word(total, "sort output words")?, p as u32, n as u32, inner as u32, kk as u32, w as u32, indices],
        groups: groups(total, WG),
    })
}
