//! `Op::Sort`, `Op::Argsort` and `Op::TopK` in numpy's order. Each element maps to an
//! unsigned key whose integer order is numpy's order ([`SortKey`]): NaN above +inf, and
//! `-0.0` and `+0.0` the same key. Argsort sorts `(key << 32) | index` words (`u128` for
//! f64's 64-bit keys), so equal keys keep their input order: a stable sort whichever
//! algorithm orders the words. Sort sorts the keys alone and turns them back into values,
//! refilling the runs of zeros and NaNs from the input when a `-0.0` or an odd NaN is there.
//!
//! Three paths: one long contiguous lane (`whole.rs`: the parallel radix sort of `radix.rs`,
//! in the device pool's blocks), many short contiguous rows (`rows.rs`: insertion sort on
//! the stack, rows in parallel), and the general walk over lanes (`lane.rs`: lanes in
//! parallel, each radix-sorted on one thread when long). `kernels.rs` picks the path;
//! `key.rs` holds the keys.

use std::sync::Arc;

use polycompute_core::{DType, HostSlice, Result, Shape};

use super::axis::Axis;
use crate::buffer::{host_vec, typed, Output};
use crate::memory::Pool;
use crate::num::with_dtype;

mod kernels;
mod key;
mod key_dtypes;
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
