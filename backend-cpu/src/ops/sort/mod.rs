//! `Op::Sort`, `Op::Argsort` and `Op::TopK` in numpy's order. Each element maps to an
//! unsigned key whose integer order is numpy's order ([`SortKey`]): NaN above +inf, and
//! `-0.0` and `+0.0` the same key. A lane (the elements along the axis for one position of
//! the others) is sorted as `(key, index)` pairs, so equal keys keep their input order: a
//! stable sort whichever algorithm orders the pairs. Pairs of 32-bit dtypes pack into one
//! `u64` and long lanes are radix-sorted ([`radix`]); f64 pairs use the standard library's
//! sort. Lanes run in parallel; one long lane splits by its top digit and sorts the buckets
//! in parallel.
//!
//! The files: `key.rs` (the keys), `lane.rs` (one lane's order and the parallel walk over
//! lanes), `kernels.rs` (sort, argsort, topk), `radix.rs` (the radix sort).

use std::sync::Arc;

use polycompute_core::{DType, HostSlice, Result, Shape};

use super::axis::Axis;
use crate::buffer::{host_vec, typed, Output};
use crate::memory::Pool;
use crate::num::with_dtype;

mod kernels;
mod key;
mod lane;
mod radix;
mod rows;
#[cfg(test)]
mod tests;
mod whole;

use kernels::{argsort_output, sort_output, topk};

/// Lanes at least this long are radix-sorted.
const RADIX_MIN: usize = 1 << 12;

/// `Op::Sort`: the values of each lane in order ([`sort`]).
pub(crate) fn values(axis: usize, shape: &Shape, data: &[HostSlice<'_>], pool: &Arc<Pool>) -> Result<Output> {
    let dtype = data.first().map_or(DType::F32, |d| d.dtype());
    with_dtype!(dtype, T => sort_output::<T>(typed(data[0]), Axis::new(shape, axis), pool))
}

/// `Op::Argsort`: the sorting permutation of each lane ([`argsort`]).
pub(crate) fn indices(axis: usize, shape: &Shape, data: &[HostSlice<'_>], pool: &Arc<Pool>) -> Result<Output> {
    let dtype = data.first().map_or(DType::F32, |d| d.dtype());
    with_dtype!(dtype, T => argsort_output::<T>(typed(data[0]), Axis::new(shape, axis), pool))
}

/// `Op::TopK`: the indices of the `k` largest of each lane ([`topk`]).
pub(crate) fn top_k(k: usize, axis: usize, shape: &Shape, data: &[HostSlice<'_>]) -> Result<Output> {
    let dtype = data.first().map_or(DType::F32, |d| d.dtype());
    Ok(Output::host(with_dtype!(dtype, T => host_vec(topk::<T>(typed(data[0]), k, Axis::new(shape, axis))))))
}
