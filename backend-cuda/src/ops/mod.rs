//! Launching: each op's host side plans sizes with [`crate::codegen`], allocates the output
//! and launches the kernels on the device's stream (no synchronisation: the caller's next
//! download or `synchronize` waits). One file per op family, as in the wgpu backend.

mod fill;
mod layout;
mod map;
pub(crate) mod matmul;
mod matmul_half;
mod movement;
mod reduce;
mod scan;
mod sort;

use polycompute_core::{DType, Error, Op, Result};

use crate::buffer::CudaBuffer;
use crate::codegen::sort::SortOutput;
use crate::device::CudaDevice;

/// Executes `op` on `inputs`, which core's typed layer has already validated (each is this
/// device's, of the length the op declares, and `Op::output` accepts them), and returns its
/// output. Every op is matched by name: a new `Op` is a compile error here until handled.
pub(crate) fn execute(dev: &CudaDevice, op: &Op, inputs: &[&CudaBuffer]) -> Result<CudaBuffer> {
    let dtypes: Vec<DType> = inputs.iter().map(|b| b.dtype).collect();
    if let Some(dtype) = op.dtypes_used(&dtypes).into_iter().find(|&d| crate::device::not_yet(d)) {
        return Err(Error::Unsupported {
            op: format!("{} (CUDA has no {dtype} kernels yet)", op.name()),
            dtype,
            device: Some(dev.id()),
        });
    }
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
        Op::Matmul { lhs, rhs, transpose }
            if inputs.first().is_some_and(|b| matches!(b.dtype, DType::F16 | DType::BF16)) =>
        {
            matmul_half::run_transposed(dev, input(0)?, input(1)?, lhs, rhs, *transpose)
        }
        Op::Matmul { lhs, rhs, transpose } => matmul::run(dev, input(0)?, input(1)?, lhs, rhs, *transpose),
        Op::MapViews { program, inputs: layouts, shape } => map::run_views(dev, program, layouts, shape, inputs),
        Op::Concat { axis, shapes } => movement::concat(dev, *axis, shapes, inputs),
        Op::Take { axis, shape, indices } => movement::take(dev, input(0)?, input(1)?, *axis, shape, indices, false),
        Op::TakeAlongAxis { axis, shape, indices } => {
            movement::take(dev, input(0)?, input(1)?, *axis, shape, indices, true)
        }
        Op::ScatterAdd { axis, shape, indices } => {
            movement::scatter_add(dev, [input(0)?, input(1)?, input(2)?], *axis, shape, indices)
        }
        Op::Pad { shape, widths, value } => movement::pad(dev, input(0)?, shape, widths, *value),
        Op::Scan { kind, axis, shape } => scan::run(dev, input(0)?, *kind, *axis, shape),
        Op::Sort { axis, shape } => sort::run(dev, input(0)?, *axis, shape, SortOutput::Values, 0),
        Op::Argsort { axis, shape } => sort::run(dev, input(0)?, *axis, shape, SortOutput::Indices, 0),
        Op::TopK { k, axis, shape } => sort::run(dev, input(0)?, *axis, shape, SortOutput::TopK, *k),
    }
}
