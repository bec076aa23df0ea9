//! Sort, argsort and topk along an axis: the key pass, the merge passes (ping-ponging
//! between two scratch key/index buffers) and the output pass of [`codegen::sort`].

use polycompute_core::{DType, Result, Shape};

use crate::buffer::CudaBuffer;
use crate::codegen::movement::split_axis;
use crate::codegen::sort::{self, SortOutput};
use crate::device::{CudaDevice, Params};

const BLOCK: u32 = 256;

/// Sorts `src` (of `shape`) along `axis` and writes `output`: the values (same dtype), all
/// indices (u32), or the first `k` indices of the descending order (u32, axis resized to k).
pub(super) fn run(
    dev: &CudaDevice,
    src: &CudaBuffer,
    axis: usize,
    shape: &Shape,
    output: SortOutput,
    k: usize,
) -> Result<CudaBuffer> {
    let (outer, n, inner) = split_axis(shape, axis);
    let out_dtype = if output == SortOutput::Values { src.dtype } else { DType::U32 };
    let out_len = if output == SortOutput::TopK { outer * k * inner } else { src.len };
    let out = dev.new_buffer(out_dtype, out_len)?;
    let total = src.len;
    if total == 0 || out_len == 0 {
        return Ok(out);
    }
    let name = match output {
        SortOutput::Values => "sort",
        SortOutput::Indices => "argsort",
        SortOutput::TopK => "topk",
    };
    let grid = dev.strided(name, total, BLOCK)?;
    // Keys of 8 bytes are stored as two u32 words.
    let key_words = sort::key_bytes(src.dtype) / 4;
    let mut keys = [dev.new_buffer(DType::U32, total * key_words)?, dev.new_buffer(DType::U32, total * key_words)?];
    let mut idx = [dev.new_buffer(DType::U32, total)?, dev.new_buffer(DType::U32, total)?];
    let mut p = Params::default();
    p.ptr(src.ptr).ptr(keys[0].ptr).ptr(idx[0].ptr).len(total).len(n).len(inner);
    dev.launch(&sort::keys_kernel(src.dtype, output == SortOutput::TopK), &grid, &mut p)?;
    let merge = sort::merge_kernel(sort::key_bytes(src.dtype));
    for w in sort::merge_widths(n) {
        let mut p = Params::default();
        p.ptr(keys[0].ptr).ptr(idx[0].ptr).ptr(keys[1].ptr).ptr(idx[1].ptr);
        p.len(total).len(n).len(w);
        dev.launch(&merge, &grid, &mut p)?;
        keys.swap(0, 1);
        idx.swap(0, 1);
    }
    let mut p = Params::default();
    if output == SortOutput::Values {
        p.ptr(src.ptr).ptr(idx[0].ptr).ptr(out.ptr).len(total).len(n).len(inner);
        dev.launch(&sort::gather_kernel(src.dtype.size_bytes()), &grid, &mut p)?;
    } else {
        let k = if output == SortOutput::TopK { k } else { n };
        p.ptr(idx[0].ptr).ptr(out.ptr).len(total).len(n).len(inner).len(k);
        dev.launch(&sort::indices_kernel(), &grid, &mut p)?;
    }
    Ok(out)
}
