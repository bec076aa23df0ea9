//! Host side of each op: plan sizes, pick the kernel variant, allocate and launch.

mod fill;
mod half;
mod layout;
mod map;
mod matmul;
mod movement;
mod reduce;
mod scan;
mod sort;

use polycompute_core::{DType, DeviceBuffer, Error, Op, Result, ScanKind};

use crate::buffer::WgpuBuffer;
use crate::device::WgpuDevice;

/// Runs a validated op (core's blanket `DeviceBackend` checked it and the inputs' dtypes,
/// lengths and owner) on `inputs`. Every op has its arm, so a new op is a compile error
/// here; what a device cannot do (f64 without `SHADER_F64`, integer matmul) is decided in
/// the runners, as `Unsupported`.
pub(crate) fn execute(dev: &WgpuDevice, op: &Op, inputs: &[&WgpuBuffer]) -> Result<WgpuBuffer> {
    let dtypes: Vec<DType> = inputs.iter().map(|b| b.dtype()).collect();
    if let Some(dtype) = op.dtypes_used(&dtypes).into_iter().find(|&d| crate::device::not_yet(d)) {
        return Err(Error::Unsupported {
            op: format!("{} (wgpu has no {dtype} kernels yet)", op.name()),
            dtype,
            device: Some(dev.id),
        });
    }
    if let Some(result) = half::execute(dev, op, inputs) {
        return result;
    }
    match op {
        Op::Map { program, input_shapes, shape } => map::run(dev, program, input_shapes, shape, inputs),
        Op::Reduce { kind, axis, shape } => reduce::run(dev, *kind, *axis, shape, inputs[0]),
        Op::Matmul { lhs, rhs, transpose } => matmul::run(dev, lhs, rhs, *transpose, inputs[0], inputs[1]),
        Op::Copy => layout::copy(dev, inputs[0]),
        Op::Transpose { shape, perm } => layout::transpose(dev, shape, perm, inputs[0]),
        Op::Cast { to } => map::cast(dev, inputs[0], *to),
        Op::Fill { fill, dtype, len } => fill::run(dev, *fill, *dtype, *len),
        Op::MapViews { program, inputs: layouts, shape } => map::run_views(dev, program, layouts, shape, inputs),
        Op::Concat { axis, shapes } => movement::concat(dev, *axis, shapes, inputs),
        Op::Take { axis, shape, indices } => movement::take(dev, *axis, shape, indices, false, inputs[0], inputs[1]),
        Op::TakeAlongAxis { axis, shape, indices } => {
            movement::take(dev, *axis, shape, indices, true, inputs[0], inputs[1])
        }
        Op::ScatterAdd { axis, shape, indices } => movement::scatter_add(dev, *axis, shape, indices, inputs),
        Op::Pad { shape, widths, value } => movement::pad(dev, shape, widths, *value, inputs[0]),
        Op::Scan { kind, axis, shape } => scan::scan(dev, *kind == ScanKind::Prod, *axis, shape, inputs[0]),
        Op::Sort { axis, shape } => sort::run(dev, *axis, shape, sort::Output::Values, inputs[0]),
        Op::Argsort { axis, shape } => sort::run(dev, *axis, shape, sort::Output::Indices, inputs[0]),
        Op::TopK { k, axis, shape } => sort::run(dev, *axis, shape, sort::Output::Top(*k), inputs[0]),
    }
}

/// Workgroups of `per` items each for `n` items.
pub(crate) fn groups(n: usize, per: u32) -> u64 {
    (n as u64).div_ceil(u64::from(per))
}
