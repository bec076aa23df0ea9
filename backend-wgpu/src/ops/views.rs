//! Map over views (`Op::MapViews`): inputs read through their layouts (signed strides,
//! offsets, broadcast axes) directly, without a copy.

use std::collections::BTreeSet;
use std::sync::Arc;

use polycompute_core::expr::Program;
use polycompute_core::plan::{Access, MapSignature};
use polycompute_core::{DType, Error, Layout, Result, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::map::kernel_over_views;
use crate::codegen::WG;
use crate::device::{Launch, WgpuDevice};
use crate::ops::groups;
use crate::pipeline_cache::KernelKey;

/// Runs `program` over the views `layouts` of `inputs`, broadcast to `shape`.
pub(crate) fn run(
    dev: &WgpuDevice,
    program: &Arc<Program>,
    layouts: &[Layout],
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
            device: Some(dev.id),
        });
    }
    let n = shape.numel();
    let out = dev.alloc(program.output_dtype(), n)?;
    if n == 0 {
        return Ok(out);
    }
    let ndim = shape.ndim();
    let mut access = Vec::with_capacity(layouts.len());
    let mut strides = Vec::new();
    let mut offsets = Vec::new();
    for (l, b) in layouts.iter().zip(inputs) {
        use polycompute_core::DeviceBuffer;
        if l.is_plain(b.len()) && l.numel() == n {
            access.push(Access::Same);
            continue;
        }
        access.push(Access::Strided);
        // Right-aligned to the output's axes; 0 where the view broadcasts (numpy rules).
        let lead = ndim - l.shape.ndim();
        for d in 0..ndim {
            let s = if d < lead || l.shape.dims()[d - lead] == 1 { 0 } else { l.strides[d - lead] };
            // Two's complement: the kernel's u32 arithmetic wraps back into the buffer.
            strides.push(s as i64 as u32);
        }
        offsets.push(
            u32::try_from(l.offset)
                .map_err(|_| Error::TooLarge(format!("view offset {} beyond u32 indices", l.offset)))?,
        );
    }
    let mut params = vec![n as u32];
    params.extend(shape.dims().iter().map(|&d| d as u32));
    params.extend(strides);
    params.extend(offsets);
    let sig = MapSignature { program: program.clone(), access, ndim };
    let kernel = dev.kernel(KernelKey::MapViews(sig.clone()), || kernel_over_views(&sig, dev.id))?;
    let mut buffers: Vec<wgpu::Buffer> = inputs.iter().map(|b| b.raw().clone()).collect();
    buffers.push(out.raw().clone());
    dev.launch(vec![Launch { kernel, buffers, params, groups: groups(n, WG) }])?;
    Ok(out)
}
