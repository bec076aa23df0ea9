//! Map and Cast: coalesce the broadcast into as few dimensions as possible, choose how each
//! input is read, and launch the fused kernel.

use std::collections::BTreeSet;
use std::sync::Arc;

use polycompute_core::expr::{Inst, InstOp, Program};
use polycompute_core::{DType, DeviceBuffer, Error, Result, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::map::{kernel, InputMode};
use crate::codegen::WG;
use crate::device::{Launch, WgpuDevice};
use crate::ops::groups;
use crate::pipeline_cache::KernelKey;

/// Output dims and per-input strides with size-1 axes dropped and neighbouring axes merged
/// wherever every input walks them as one (e.g. a [4, 5, 3] + [3] broadcast is [20, 3]).
pub(crate) fn coalesce(dims: &[usize], strides: &[Vec<usize>]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut out_dims: Vec<usize> = Vec::new();
    let mut out_strides: Vec<Vec<usize>> = vec![Vec::new(); strides.len()];
    for (axis, &d) in dims.iter().enumerate() {
        if d == 1 {
            continue;
        }
        let merge =
            !out_dims.is_empty() && strides.iter().zip(&out_strides).all(|(s, o)| o[o.len() - 1] == s[axis] * d);
        if let (true, Some(last_dim)) = (merge, out_dims.last_mut()) {
            *last_dim *= d;
            for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
                if let Some(last) = o.last_mut() {
                    *last = s[axis];
                }
            }
        } else {
            out_dims.push(d);
            for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
                o.push(s[axis]);
            }
        }
    }
    (out_dims, out_strides)
}

/// Runs `program` over `inputs` broadcast to `shape`.
pub(crate) fn run(
    dev: &WgpuDevice,
    program: &Arc<Program>,
    input_shapes: &[Shape],
    shape: &Shape,
    inputs: &[&WgpuBuffer],
) -> Result<WgpuBuffer> {
    let dtypes: BTreeSet<DType> = program.insts.iter().map(|i| i.dtype).chain(program.inputs.iter().copied()).collect();
    for d in &dtypes {
        dev.require(*d, "map")?;
    }
    let max_buffers = dev.limits.max_storage_buffers_per_shader_stage as usize;
    if inputs.len() + 1 > max_buffers {
        return Err(Error::Unsupported {
            op: format!(
                "map over {} inputs (max_storage_buffers_per_shader_stage is {max_buffers}; fuse fewer arrays per map)",
                inputs.len()
            ),
            dtype: program.output_dtype(),
            device: dev.id.clone(),
        });
    }
    let n = shape.numel();
    let out = dev.alloc(program.output_dtype(), n)?;
    if n == 0 {
        return Ok(out);
    }
    let modes: Vec<InputMode> = input_shapes
        .iter()
        .map(|s| match s.numel() {
            1 => InputMode::Scalar,
            m if m == n => InputMode::Same,
            _ => InputMode::Strided,
        })
        .collect();
    let strided: Vec<Vec<usize>> = input_shapes
        .iter()
        .zip(&modes)
        .filter(|(_, m)| **m == InputMode::Strided)
        .map(|(s, _)| s.broadcast_strides(shape))
        .collect();
    let (dims, strides) = if strided.is_empty() { (Vec::new(), Vec::new()) } else { coalesce(shape.dims(), &strided) };
    let mut params = vec![n as u32];
    params.extend(dims.iter().map(|&d| d as u32));
    for s in &strides {
        params.extend(s.iter().map(|&x| x as u32));
    }
    let key = KernelKey::Map { program: program.clone(), modes: modes.clone(), ndim: dims.len() };
    let kernel = dev.kernel(key, || kernel(program, &modes, dims.len(), &dev.id))?;
    let mut buffers: Vec<wgpu::Buffer> = inputs.iter().map(|b| b.raw().clone()).collect();
    buffers.push(out.raw().clone());
    dev.launch(vec![Launch { kernel, buffers, params, groups: groups(n, WG) }])?;
    Ok(out)
}

/// Elementwise conversion to `to`: a one-instruction map (a copy when the dtype is the same).
pub(crate) fn cast(dev: &WgpuDevice, input: &WgpuBuffer, to: DType) -> Result<WgpuBuffer> {
    let from = input.dtype();
    if from == to {
        return super::layout::copy(dev, input);
    }
    let program = Arc::new(Program {
        inputs: vec![from],
        insts: vec![Inst { op: InstOp::Arg(0), dtype: from }, Inst { op: InstOp::Cast(0), dtype: to }],
    });
    let shape = Shape::new(&[input.len()])?;
    run(dev, &program, std::slice::from_ref(&shape), &shape, &[input])
}

#[cfg(test)]
mod tests {
    use super::coalesce;

    #[test]
    fn broadcast_dims_coalesce() {
        // [4, 5, 3] + [3]: the first input is contiguous, the second repeats every 3.
        let (d, s) = coalesce(&[4, 5, 3], &[vec![15, 3, 1], vec![0, 0, 1]]);
        assert_eq!(d, vec![20, 3]);
        assert_eq!(s, vec![vec![3, 1], vec![0, 1]]);
        // A transposed-looking broadcast [3, 1] against [3, 4] keeps two dims.
        let (d, s) = coalesce(&[3, 4], &[vec![1, 0]]);
        assert_eq!((d, s), (vec![3, 4], vec![vec![1, 0]]));
        // Size-1 axes vanish.
        let (d, s) = coalesce(&[1, 6, 1], &[vec![0, 1, 0]]);
        assert_eq!((d, s), (vec![6], vec![vec![1]]));
    }
}
