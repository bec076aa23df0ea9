//! The CPU backend's op dispatch: one exhaustive `match` on [`Op`], so a new op is a compile
//! error here, and one module per op family below it (maps, reductions, matmul, layout,
//! data movement, scans, sorting, fills).

mod axis;
mod fill;
mod layout;
pub(crate) mod map;
mod matmul;
mod movement;
mod paths;
mod reduce;
mod scan;
mod sort;

/// The upload path copies host data into the device like `Op::Copy`.
pub(crate) use layout::copy;
/// The kernel paths `polycompute probe` names.
pub(crate) use paths::{matmul_path, simd_level, sort_path};

use polycompute_core::{BackendDevice, HostSlice, Op, Result};

use crate::buffer::Output;
use crate::device::CpuDevice;

/// Runs a validated op (core's blanket `DeviceBackend` checked it and the inputs' dtypes,
/// lengths and owner) on the inputs' elements, into a new [`Output`].
pub(crate) fn execute(dev: &CpuDevice, op: &Op, data: &[HostSlice<'_>]) -> Result<Output> {
    let device = dev.info().id();
    let pool = dev.pool();
    match op {
        Op::Map { program, input_shapes, shape } => {
            let plan = dev.plans().get(op, program, input_shapes, shape)?;
            map::run(&plan, data, shape.numel(), pool)
        }
        Op::MapViews { program, inputs, shape } => map::views::map_views(program, inputs, shape, data, pool),
        Op::Reduce { kind, axis, shape } => reduce::reduce(*kind, *axis, shape, data[0], pool),
        Op::Matmul { lhs, rhs, transpose } => matmul::matmul(lhs, rhs, *transpose, data[0], data[1], device, pool),
        Op::Copy => layout::copy(data[0], pool),
        Op::Transpose { shape, perm } => layout::transpose(data[0], shape, perm, pool),
        Op::Cast { to } => layout::cast(data[0], *to, pool),
        Op::Fill { fill, dtype, len } => fill::fill(*fill, *dtype, *len, device, pool),
        Op::Concat { axis, shapes } => movement::concat(*axis, shapes, data, pool),
        Op::Take { axis, shape, indices } => movement::take(*axis, shape, indices, data, pool),
        Op::TakeAlongAxis { axis, shape, indices } => movement::take_along_axis(*axis, shape, indices, data),
        Op::ScatterAdd { axis, shape, indices } => movement::scatter_add(*axis, shape, indices, data),
        Op::Pad { shape, widths, value } => movement::pad(shape, widths, *value, data),
        Op::Scan { kind, axis, shape } => scan::run(*kind, *axis, shape, data),
        Op::Sort { axis, shape } => sort::values(*axis, shape, data, pool),
        Op::Argsort { axis, shape } => sort::indices(*axis, shape, data, pool),
        Op::TopK { k, axis, shape } => sort::top_k(*k, *axis, shape, data),
    }
}

/// A validated map→reduce pair run as one pass ([`reduce::map_reduce`]), or `None` when the
/// CPU does not fuse this pair.
pub(crate) fn map_reduce(dev: &CpuDevice, map: &Op, reduce: &Op, data: &[HostSlice<'_>]) -> Result<Option<Output>> {
    reduce::map_reduce(dev.plans(), map, reduce, data, dev.pool())
}
