//! Host side of each op: plan sizes, pick the kernel variant, allocate and launch.

mod fill;
mod layout;
mod map;
mod matmul;
mod reduce;

use std::sync::Arc;

use polycompute_core::{BufferRef, DeviceBuffer, Op, Result};

use crate::buffer::WgpuBuffer;
use crate::device::WgpuDevice;

/// Runs a validated op (see `Op::output`) on `inputs`.
pub(crate) fn execute(dev: &WgpuDevice, op: &Op, inputs: &[&WgpuBuffer]) -> Result<BufferRef> {
    let out = match op {
        Op::Map { program, input_shapes, shape } => map::run(dev, program, input_shapes, shape, inputs)?,
        Op::Reduce { kind, axis, shape } => reduce::run(dev, *kind, *axis, shape, inputs[0])?,
        Op::Matmul { lhs, rhs } => matmul::run(dev, lhs, rhs, inputs[0], inputs[1])?,
        Op::Copy => layout::copy(dev, inputs[0])?,
        Op::Transpose { shape, perm } => layout::transpose(dev, shape, perm, inputs[0])?,
        Op::Cast { to } => map::cast(dev, inputs[0], *to)?,
        Op::Fill { fill, dtype, len } => fill::run(dev, *fill, *dtype, *len)?,
        _ => {
            return Err(polycompute_core::Error::Unsupported {
                op: op.name().into(),
                dtype: inputs.first().map_or(polycompute_core::DType::F32, |b| b.dtype()),
                device: dev.id.clone(),
            })
        }
    };
    Ok(Arc::new(out))
}

/// Workgroups of `per` items each for `n` items.
pub(crate) fn groups(n: usize, per: u32) -> u64 {
    (n as u64).div_ceil(u64::from(per))
}
