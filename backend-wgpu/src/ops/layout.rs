//! Data movement: Copy (a buffer-to-buffer copy) and Transpose (tiled, or a strided map when
//! the contiguous axis stays last).

use std::sync::Arc;

use polycompute_core::expr::{Inst, InstOp, Program};
use polycompute_core::{DeviceBuffer, Error, Result, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::layout::{transpose as tiled, TILE};
use crate::codegen::map::{kernel as map_kernel, InputMode};
use crate::codegen::WG;
use crate::device::{Launch, WgpuDevice};
use crate::ops::groups;
use crate::pipeline_cache::KernelKey;

/// A copy of `input` in a new buffer.
pub(crate) fn copy(dev: &WgpuDevice, input: &WgpuBuffer) -> Result<WgpuBuffer> {
    let out = dev.alloc(input.dtype(), input.len())?;
    dev.copy(input.raw(), out.raw(), input.bytes())?;
    Ok(out)
}

/// The permutation with size-1 axes dropped and runs of input axes that stay adjacent and in
/// order merged: (input dims, perm) of the smallest equivalent transpose.
pub(crate) fn simplify(dims: &[usize], perm: &[usize]) -> (Vec<usize>, Vec<usize>) {
    // Drop size-1 axes, renumbering the rest.
    let keep: Vec<usize> = (0..dims.len()).filter(|&a| dims[a] != 1).collect();
    let renum = |a: usize| keep.iter().position(|&k| k == a);
    let perm1: Vec<usize> = perm.iter().filter_map(|&p| renum(p)).collect();
    let dims1: Vec<usize> = keep.iter().map(|&a| dims[a]).collect();
    // Merge output neighbours that are input neighbours, in order.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &p in &perm1 {
        match groups.last_mut() {
            Some(g) if g.last().is_some_and(|&last| last + 1 == p) => g.push(p),
            _ => groups.push(vec![p]),
        }
    }
    // Each group becomes one input axis; number them in input order.
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&i| groups[i][0]);
    let mut new_dims = vec![0; groups.len()];
    let mut new_perm = vec![0; groups.len()];
    for (new_axis, &gi) in order.iter().enumerate() {
        new_dims[new_axis] = groups[gi].iter().map(|&a| dims1[a]).product();
    }
    for (out_axis, _) in groups.iter().enumerate() {
        new_perm[out_axis] = order.iter().position(|&gi| gi == out_axis).unwrap_or(0);
    }
    (new_dims, new_perm)
}

/// Axis permutation: output axis `i` is input axis `perm[i]`.
pub(crate) fn transpose(dev: &WgpuDevice, shape: &Shape, perm: &[usize], input: &WgpuBuffer) -> Result<WgpuBuffer> {
    let dtype = input.dtype();
    let n = shape.numel();
    let (dims, perm) = simplify(shape.dims(), perm);
    let d = dims.len();
    if d <= 1 || perm.iter().enumerate().all(|(i, &p)| i == p) {
        return copy(dev, input);
    }
    dev.require(dtype, "transpose")?;
    let in_strides = Shape::new(&dims)?.strides();
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let out_strides = Shape::new(&out_dims)?.strides();
    let out = dev.alloc(dtype, n)?;
    let gather: Vec<u32> = perm.iter().map(|&p| in_strides[p] as u32).collect();
    let launch = if perm[d - 1] == d - 1 {
        // The contiguous axis stays last: rows move whole, a strided copy is coalesced.
        let program = Arc::new(Program { inputs: vec![dtype], insts: vec![Inst { op: InstOp::Arg(0), dtype }] });
        let mut params = vec![n as u32];
        params.extend(out_dims.iter().map(|&x| x as u32));
        params.extend(&gather);
        let key = KernelKey::Map { program: program.clone(), modes: vec![InputMode::Strided], ndim: d };
        let kernel = dev.kernel(key, || map_kernel(&program, &[InputMode::Strided], d, &dev.id))?;
        Launch { kernel, buffers: vec![input.raw().clone(), out.raw().clone()], params, groups: groups(n, WG) }
    } else {
        let q = perm.iter().position(|&p| p == d - 1).unwrap_or(0);
        let tile = TILE as usize;
        let tiles_l = out_dims[d - 1].div_ceil(tile);
        let tiles_q = out_dims[q].div_ceil(tile);
        let batch: usize = (0..d).filter(|&i| i != q && i != d - 1).map(|i| out_dims[i]).product();
        let total = (tiles_l * tiles_q) as u64 * batch as u64;
        let total32 = u32::try_from(total)
            .map_err(|_| Error::TooLarge(format!("transpose of {shape} needs {total} workgroups")))?;
        let mut params = vec![total32, tiles_l as u32, tiles_q as u32];
        params.extend(out_dims.iter().map(|&x| x as u32));
        params.extend(&gather);
        params.extend(out_strides.iter().map(|&x| x as u32));
        let kernel = dev.kernel(KernelKey::Transpose { dtype, ndim: d, q }, || Ok(tiled(dtype, d, q)))?;
        Launch { kernel, buffers: vec![input.raw().clone(), out.raw().clone()], params, groups: total }
    };
    dev.launch(vec![launch])?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::simplify;

    #[test]
    fn permutations_simplify_to_their_essential_axes() {
        // [2, 3, 4] with perm [2, 0, 1]: axes 0 and 1 stay together -> a 2-D transpose.
        assert_eq!(simplify(&[2, 3, 4], &[2, 0, 1]), (vec![6, 4], vec![1, 0]));
        // Identity merges to one axis.
        assert_eq!(simplify(&[2, 3, 4], &[0, 1, 2]), (vec![24], vec![0]));
        // Size-1 axes vanish.
        assert_eq!(simplify(&[1, 5, 1, 7], &[3, 2, 1, 0]), (vec![5, 7], vec![1, 0]));
        // A genuine 3-axis permutation stays.
        assert_eq!(simplify(&[2, 3, 4], &[1, 2, 0]).1.len(), 2);
        assert_eq!(simplify(&[2, 3, 4, 5], &[3, 1, 0, 2]), (vec![2, 3, 4, 5], vec![3, 1, 0, 2]));
    }
}
