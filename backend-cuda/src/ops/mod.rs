//! Launching: each op's host side plans sizes with [`crate::codegen`], allocates the output
//! and launches the kernels on the device's stream (no synchronisation: the caller's next
//! download or `synchronize` waits). One file per op family, as in the wgpu backend.

mod fill;
mod layout;
mod map;
pub(crate) mod matmul;
mod reduce;

use polycompute_core::{DType, Error, Op, Result};

use crate::buffer::CudaBuffer;
use crate::device::CudaDevice;

/// Executes `op` (already validated against `inputs` by the caller) and returns its output.
pub(crate) fn execute(dev: &CudaDevice, op: &Op, inputs: &[&CudaBuffer]) -> Result<CudaBuffer> {
    let input = |i: usize| {
        inputs.get(i).copied().ok_or_else(|| Error::InvalidShape(format!("{} is missing input {i}", op.name())))
    };
    match op {
        Op::Map { program, input_shapes, shape } => {
            if input_shapes.len() != inputs.len() {
                return Err(Error::MissingArgument { index: input_shapes.len(), available: inputs.len() });
            }
            map::run(dev, program, input_shapes, shape, inputs)
        }
        Op::Cast { to } => map::cast(dev, input(0)?, *to),
        Op::Copy => layout::copy(dev, input(0)?),
        Op::Fill { fill, dtype, len } => fill::run(dev, *fill, *dtype, *len),
        Op::Transpose { shape, perm } => layout::transpose(dev, input(0)?, shape, perm),
        Op::Reduce { kind, axis, shape } => reduce::run(dev, input(0)?, *kind, *axis, shape),
        Op::Matmul { lhs, rhs } => matmul::run(dev, input(0)?, input(1)?, lhs, rhs),
        _ => Err(Error::Unsupported {
            op: op.name().into(),
            dtype: input(0).map_or(DType::F32, |b| b.dtype),
            device: dev.id().into(),
        }),
    }
}
