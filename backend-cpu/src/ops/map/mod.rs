//! `Op::Map`: block-wise evaluation of a fused elementwise program (numexpr's idea). The
//! output is cut into chunks of [`plan::CHUNK`] elements ([`plan::VIEW_CHUNK`] when a view
//! is gathered); each instruction runs over a whole chunk into a small scratch buffer, so
//! dispatch costs one indirect call per instruction per chunk and every inner loop is a
//! plain loop over slices. Chunks run in parallel when
//! the array is big enough. Prepared plans are cached per (program, shapes).
//!
//! Read bottom-up: `lane.rs` (type erasure of chunks), `kernels.rs` (the SIMD loops),
//! `step.rs` (a step, what it reads, where it writes), `gather.rs`, `fuse.rs` and `half.rs`
//! (the steps of strided inputs, fused pairs and halves), `plan.rs` (a program as steps),
//! this file (the plan cache and the parallel run), `views.rs` (`Op::MapViews`).

mod fuse;
mod gather;
mod half;
mod kernels;
mod lane;
mod plan;
mod step;
pub(super) mod views;

use std::sync::{Arc, Mutex};

use polycompute_core::sync::LockUnpoisoned;
use polycompute_core::{HostSlice, Op, Program, Result, Shape};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::buffer::Output;
use crate::memory::Pool;
use crate::num::with_dtype;
use crate::par::{stream_task, PAR_MIN};
pub(crate) use lane::Lane;
pub(crate) use plan::Plan;

/// Plans kept per device before the cache is emptied (a guard against programs generated
/// without end; a real workload reuses a handful).
const CACHE_CAPACITY: usize = 4096;

/// Prepared plans, keyed by the whole `Op::Map` (program, input shapes, output shape).
#[derive(Default)]
pub(crate) struct PlanCache {
    plans: Mutex<Plans>,
}

#[derive(Default)]
struct Plans {
    /// The plan used last: a loop that repeats one op finds it by one comparison, without
    /// hashing the program.
    last: Option<(Op, Arc<Plan>)>,
    /// Every plan, under a fast non-cryptographic hash (the keys are our own ops).
    all: FxHashMap<Op, Arc<Plan>>,
}

impl PlanCache {
    /// The plan of `op`, prepared on first use.
    pub(crate) fn get(&self, op: &Op, program: &Program, input_shapes: &[Shape], shape: &Shape) -> Result<Arc<Plan>> {
        {
            let mut plans = self.plans.lock_unpoisoned();
            if let Some((last, plan)) = &plans.last {
                if last == op {
                    return Ok(plan.clone());
                }
            }
            if let Some(plan) = plans.all.get(op).cloned() {
                plans.last = Some((op.clone(), plan.clone()));
                return Ok(plan);
            }
        }
        // Prepared outside the lock: another thread may race us to it, which is harmless.
        let plan = Arc::new(Plan::new(program, input_shapes, shape)?);
        let mut plans = self.plans.lock_unpoisoned();
        if plans.all.len() >= CACHE_CAPACITY {
            plans.all.clear();
        }
        plans.all.insert(op.clone(), plan.clone());
        plans.last = Some((op.clone(), plan.clone()));
        Ok(plan)
    }
}

/// Evaluates output elements `start..start + out.len()` of `plan` into `out`: the element
/// source of a fused map→reduce (`ops/reduce/fused.rs`), a block at a time.
pub(crate) fn eval_into<T: Lane>(plan: &Plan, inputs: &[HostSlice<'_>], start: usize, out: &mut [T]) {
    let mut scratch = plan.new_scratch(out.len());
    for (c, chunk) in out.chunks_mut(plan.chunk).enumerate() {
        plan.run_chunk(inputs, start + c * plan.chunk, T::erase(chunk), &mut scratch);
    }
}

/// Runs a prepared plan over `inputs` into a new buffer of `len` elements.
pub(crate) fn run(plan: &Plan, inputs: &[HostSlice<'_>], len: usize, pool: &Arc<Pool>) -> Result<Output> {
    with_dtype!(plan.out_dtype, T => Output::write::<T>(pool, len, |out| run_typed::<T>(plan, inputs, out)))
}

fn run_typed<T: Lane>(plan: &Plan, inputs: &[HostSlice<'_>], out: &mut [T]) {
    let len = out.len();
    let task_len = stream_task(len, plan::CHUNK);
    let chunk_len = plan.chunk;
    let task = |(t, part): (usize, &mut [T])| {
        let mut scratch = plan.new_scratch(part.len());
        for (c, chunk) in part.chunks_mut(chunk_len).enumerate() {
            plan.run_chunk(inputs, t * task_len + c * chunk_len, T::erase(chunk), &mut scratch);
        }
    };
    if len >= PAR_MIN {
        out.par_chunks_mut(task_len).enumerate().for_each(task);
    } else {
        out.chunks_mut(task_len).enumerate().for_each(task);
    }
}
