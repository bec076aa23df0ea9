//! `Op::MapViews`: a map whose inputs are views (strided, offset, negative or broadcast
//! strides). The block-wise map reads each view chunk by chunk through its strides (a
//! [`super`] gather step into the chunk's scratch), so no input is copied whole.

use std::sync::Arc;

use crate::buffer::Output;
use crate::memory::Pool;
use polycompute_core::{HostSlice, Layout, Program, Result, Shape};

/// Runs `program` over inputs read through `layouts`, broadcast to `shape`. The plan is
/// prepared per call (a view's offset is part of it, so caching it would rarely hit).
pub(crate) fn map_views(
    program: &Program,
    layouts: &[Layout],
    shape: &Shape,
    data: &[HostSlice<'_>],
    pool: &Arc<Pool>,
) -> Result<Output> {
    let shapes: Vec<Shape> = layouts.iter().map(|l| l.shape.clone()).collect();
    let plan = super::Plan::with_views(program, &shapes, Some(layouts), shape)?;
    super::run(&plan, data, shape.numel(), pool)
}
