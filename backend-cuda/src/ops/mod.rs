//! Launching: each op's host side plans sizes with [`crate::codegen`], allocates the output
//! and launches the kernels on the device's stream (no synchronisation: the caller's next
//! download or `synchronize` waits). One file per op family, as in the wgpu backend.

mod fill;
mod layout;
mod map;
pub(crate) mod matmul;
mod reduce;

use polycompute_core::{Error, Op, Result};

use crate::buffer::CudaBuffer;
use crate::device::CudaDevice;

/// Executes `op` on `inputs`, which core's typed layer has already validated (each is this
/// device's, of the length the op declares, and `Op::output` accepts them), and returns its
/// output. Every op is matched by name: a new `Op` is a compile error here until handled.
pub(crate) fn execute(dev: &CudaDevice, op: &Op, inputs: &[&CudaBuffer]) -> Result<CudaBuffer> {
    let input = |i: usize| {
        inputs.get(i).copied().ok_or_else(|| Error::InvalidShape(format!("{} is missing input {i}", op.name())))
    };
    match op {
        Op::Map { program, input_shapes, shape } => map::run(dev, program, input_shapes, shape, inputs),
        Op::Cast { to } => map::cast(dev, input(0)?, *to),
        Op::Copy => layout::copy(dev, input(0)?),
        Op::Fill { fill, dtype, len } => fill::run(dev, *fill, *dtype, *len),
        Op::Transpose { shape, perm } => layout::transpose(dev, input(0)?, shape, perm),
        Op::Reduce { kind, axis, shape } => reduce::run(dev, input(0)?, *kind, *axis, shape),
        Op::Matmul { lhs, rhs } => matmul::run(dev, input(0)?, input(1)?, lhs, rhs),
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
fn pending(dev: &CudaDevice, op: &Op, inputs: &[&CudaBuffer]) -> polycompute_core::Error {
    use polycompute_core::{BackendDevice, DeviceBuffer};
    polycompute_core::Error::Unsupported {
        op: format!("{} (issue 14: kernel pending)", op.name()),
        dtype: inputs.first().map_or(polycompute_core::DType::F32, |b| b.dtype()),
        device: Some(dev.info().id()),
    }
}
