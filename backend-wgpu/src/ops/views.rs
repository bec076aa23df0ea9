//! Map over views (`Op::MapViews`): inputs read through their layouts (signed strides,
//! offsets, broadcast axes) directly, without a copy.

use std::collections::BTreeSet;
use std::sync::Arc;

use polycompute_core::expr::Program;
use polycompute_core::plan::{Access, MapSignature};
use polycompute_core::{DType, DeviceBuffer, Error, Layout, Result, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::map::{kernel_over_views, threads};
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
    if **program == Program::identity(DType::F64) {
        return copy_f64_as_words(dev, &layouts[0], shape, inputs[0]);
    }
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
    let out = dev.alloc(program.output_dtype(), shape.numel())?;
    launch(dev, program, layouts, shape, inputs, &out)?;
    Ok(out)
}

/// A copy of an f64 view (what `contiguous` asks for) as a u32 map over the view's words:
/// one more axis of two words, strides and offset doubled. No f64 arithmetic, so it runs
/// on adapters without `SHADER_F64` too.
pub(crate) fn copy_f64_as_words(
    dev: &WgpuDevice,
    layout: &Layout,
    shape: &Shape,
    input: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    let mut dims = layout.shape.dims().to_vec();
    dims.push(2);
    let mut strides: Vec<isize> = layout.strides.iter().map(|s| s * 2).collect();
    strides.push(1);
    let words = Layout { shape: Shape::new(&dims)?, strides, offset: layout.offset * 2 };
    let mut out_dims = shape.dims().to_vec();
    out_dims.push(2);
    let out = dev.alloc(DType::F64, shape.numel())?;
    let program = Arc::new(Program::identity(DType::U32));
    launch(dev, &program, &[words], &Shape::new(&out_dims)?, &[input], &out)?;
    Ok(out)
}

/// Launches `program` over the views into `out` (of `shape`'s element count).
fn launch(
    dev: &WgpuDevice,
    program: &Arc<Program>,
    layouts: &[Layout],
    shape: &Shape,
    inputs: &[&WgpuBuffer],
    out: &WgpuBuffer,
) -> Result<()> {
    let n = shape.numel();
    if n == 0 {
        return Ok(());
    }
    let ndim = shape.ndim();
    let mut access = Vec::with_capacity(layouts.len());
    let mut strides = Vec::new();
    let mut offsets = Vec::new();
    for (l, b) in layouts.iter().zip(inputs) {
        if l.is_plain(b.len() * words_per(b, program)) && l.numel() == n {
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
    dev.launch(vec![Launch { kernel, buffers, params, groups: groups(threads(n, program.output_dtype()), WG) }])?;
    Ok(())
}

/// How many of the program's input elements one buffer element holds (2 when an f64
/// buffer is read as u32 words).
fn words_per(b: &WgpuBuffer, program: &Program) -> usize {
    if b.dtype() == DType::F64 && program.inputs.first() == Some(&DType::U32) {
        2
    } else {
        1
    }
}
