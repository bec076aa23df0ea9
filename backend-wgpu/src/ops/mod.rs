//! Host side of each op: plan sizes, pick the kernel variant, allocate and launch.

mod fill;
mod layout;
mod map;
mod matmul;
mod reduce;

use polycompute_core::{Op, Result};

use crate::buffer::WgpuBuffer;
use crate::device::WgpuDevice;

/// Runs a validated op (core's blanket `DeviceBackend` checked it and the inputs' dtypes,
/// lengths and owner) on `inputs`. Every op has its arm, so a new op is a compile error
/// here; what a device cannot do (f64 without `SHADER_F64`, integer matmul) is decided in
/// the runners, as `Unsupported`.
pub(crate) fn execute(dev: &WgpuDevice, op: &Op, inputs: &[&WgpuBuffer]) -> Result<WgpuBuffer> {
    match op {
        Op::Map { program, input_shapes, shape } => map::run(dev, program, input_shapes, shape, inputs),
        Op::Reduce { kind, axis, shape } => reduce::run(dev, *kind, *axis, shape, inputs[0]),
        Op::Matmul { lhs, rhs } => matmul::run(dev, lhs, rhs, inputs[0], inputs[1]),
        Op::Copy => layout::copy(dev, inputs[0]),
        Op::Transpose { shape, perm } => layout::transpose(dev, shape, perm, inputs[0]),
        Op::Cast { to } => map::cast(dev, inputs[0], *to),
        Op::Fill { fill, dtype, len } => fill::run(dev, *fill, *dtype, *len),
        // issue 14: kernel pending
        Op::MapViews { .. }
        | Op::Concat { .. }
        | Op::Take { .. }
        | Op::TakeAlongAxis { .. }
        | Op::ScatterAdd { .. }
        | Op::Pad { .. }
        | Op::Scan { .. }
        | Op::Sort { .. }
        | Op::Argsort { .. }
        | Op::TopK { .. } => Err(pending(dev, op, inputs)),
    }
}

/// `Unsupported` for an op of issue 14 whose kernel is not written yet.
// issue 14: kernel pending
fn pending(dev: &WgpuDevice, op: &Op, inputs: &[&WgpuBuffer]) -> polycompute_core::Error {
    use polycompute_core::{BackendDevice, DeviceBuffer};
    polycompute_core::Error::Unsupported {
        op: format!("{} (issue 14: kernel pending)", op.name()),
        dtype: inputs.first().map_or(polycompute_core::DType::F32, |b| b.dtype()),
        device: Some(dev.info().id()),
    }
}

/// Workgroups of `per` items each for `n` items.
pub(crate) fn groups(n: usize, per: u32) -> u64 {
    (n as u64).div_ceil(u64::from(per))
}
