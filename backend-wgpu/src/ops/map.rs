//! Map and Cast: core's plan (`plan::MapLayout`) says how each input is read and over
//! which coalesced dimensions; this launches the fused kernel of its signature.

use std::collections::BTreeSet;
use std::sync::Arc;

use polycompute_core::expr::Program;
use polycompute_core::plan::MapLayout;
use polycompute_core::{DType, DeviceBuffer, Error, Result, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::map::{kernel, threads};
use crate::codegen::WG;
use crate::device::{Launch, WgpuDevice};
use crate::ops::groups;
use crate::pipeline_cache::KernelKey;

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
        // Name where the dtype enters the expression (an explicit `cast(arg0, f64)`).
        let what = program.first_use_of(*d).map_or_else(|| "map".to_string(), |e| format!("map's {e}"));
        dev.require(*d, &what)?;
    }
    let max_buffers = dev.limits.max_storage_buffers_per_shader_stage as usize;
    if inputs.len() + 1 > max_buffers {
        return Err(Error::Unsupported {
            op: format!(
                "map over {} inputs (max_storage_buffers_per_shader_stage is {max_buffers}; fuse fewer arrays per map)",
                inputs.len()
            ),
            dtype: program.output_dtype(),
            device: Some(dev.id),
        });
    }
    let n = shape.numel();
    let out = dev.alloc(program.output_dtype(), n)?;
    if n == 0 {
        return Ok(out);
    }
    let layout = MapLayout::new(input_shapes, shape);
    let mut params = vec![n as u32];
    params.extend(layout.words());
    let sig = layout.signature(program);
    let kernel = dev.kernel(KernelKey::Map(sig.clone()), || kernel(&sig, dev.id))?;
    let mut buffers: Vec<wgpu::Buffer> = inputs.iter().map(|b| b.raw().clone()).collect();
    buffers.push(out.raw().clone());
    dev.launch(vec![Launch { kernel, buffers, params, groups: groups(threads(n, program.output_dtype()), WG) }])?;
    Ok(out)
}

/// Elementwise conversion to `to`: a one-instruction map (a copy when the dtype is the same).
pub(crate) fn cast(dev: &WgpuDevice, input: &WgpuBuffer, to: DType) -> Result<WgpuBuffer> {
    let from = input.dtype();
    if from == to {
        return super::layout::copy(dev, input);
    }
    let program = Arc::new(Program::cast(from, to));
    let shape = Shape::new(&[input.len()])?;
    run(dev, &program, std::slice::from_ref(&shape), &shape, &[input])
}
