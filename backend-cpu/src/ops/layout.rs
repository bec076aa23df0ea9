//! Data movement: `Op::Copy`, `Op::Cast` and `Op::Transpose` (any axis permutation; the
//! permutation is first simplified by `polycompute_core::plan`, then either whole rows are
//! copied or the data is moved in square tiles so that reads and writes both stay in cache).
//! Every result is a block of the device's caching allocator, written in full.

use polycompute_core::plan::simplify_permutation;
use std::sync::Arc;

use polycompute_core::{DType, HostSlice, Result, Shape};
use rayon::prelude::*;

use crate::buffer::Output;
use crate::memory::Pool;
use crate::num::{with_dtype, CastTo, Num};
use crate::par::{PAR_MIN, TASK};

/// Side of a transpose tile: a tile of `TILE²` elements of both arrays fits in L1.
const TILE: usize = 64;

/// A new buffer with the same elements (also the upload path).
pub(crate) fn copy(data: HostSlice<'_>, pool: &Arc<Pool>) -> Result<Output> {
    with_dtype!(data.dtype(), T => {
        let x: &[T] = T::of_slice(data).unwrap_or(&[]);
        Output::write::<T>(pool, x.len(), |out| copy_into(x, out))
    })
}

fn copy_into<T: Num>(x: &[T], out: &mut [T]) {
    if x.len() < PAR_MIN {
        out.copy_from_slice(x);
    } else {
        out.par_chunks_mut(TASK).zip(x.par_chunks(TASK)).for_each(|(o, i)| o.copy_from_slice(i));
    }
}

/// Every element converted to `to` with the IR's cast rules.
pub(crate) fn cast(data: HostSlice<'_>, to: DType, pool: &Arc<Pool>) -> Result<Output> {
    with_dtype!(data.dtype(), S => {
        let x: &[S] = S::of_slice(data).unwrap_or(&[]);
        with_dtype!(to, T => Output::write::<T>(pool, x.len(), |out| cast_into::<S, T>(x, out)))
    })
}

fn cast_into<S: Num + CastTo<T>, T: Num>(x: &[S], out: &mut [T]) {
    let run = |(o, i): (&mut [T], &[S])| {
        for (o, &v) in o.iter_mut().zip(i) {
            *o = v.cast();
        }
    };
    if x.len() >= PAR_MIN {
        out.par_chunks_mut(TASK).zip(x.par_chunks(TASK)).for_each(run);
    } else {
        run((out, x));
    }
}

/// Output axis `i` is input axis `perm[i]` (a validated permutation of `shape`'s axes),
/// into a block of `pool`.
pub(crate) fn transpose(data: HostSlice<'_>, shape: &Shape, perm: &[usize], pool: &Arc<Pool>) -> Result<Output> {
    with_dtype!(data.dtype(), T => {
        let x: &[T] = T::of_slice(data).unwrap_or(&[]);
        Output::write::<T>(pool, x.len(), |out| transpose_into(x, shape, perm, out))
    })
}

/// A row-major index over `dims` and the input offset it stands for.
struct Odometer<'a> {
    dims: &'a [usize],
    strides: &'a [usize],
    idx: Vec<usize>,
    offset: usize,
}

impl<'a> Odometer<'a> {
    /// At flat position `flat`.
    fn at(dims: &'a [usize], strides: &'a [usize], mut flat: usize) -> Self {
        let mut idx = vec![0; dims.len()];
        let mut offset = 0;
        for ax in (0..dims.len()).rev() {
            idx[ax] = flat % dims[ax];
            flat /= dims[ax];
            offset += idx[ax] * strides[ax];
        }
        Odometer { dims, strides, idx, offset }
    }

    /// One position on, in row-major order.
    fn step(&mut self) {
        for ax in (0..self.dims.len()).rev() {
            self.idx[ax] += 1;
            self.offset += self.strides[ax];
            if self.idx[ax] < self.dims[ax] {
                return;
            }
            self.offset -= self.dims[ax] * self.strides[ax];
            self.idx[ax] = 0;
        }
    }
}

/// Writes every element of `out` (a bijection of the input's positions).
fn transpose_into<T: Num>(x: &[T], shape: &Shape, perm: &[usize], out: &mut [T]) {
    let simple = simplify_permutation(shape.dims(), perm);
    if simple.dims.len() <= 1 || simple.is_identity() {
        // Only size-1 axes moved (or nothing is there): the flat order is unchanged.
        copy_into(x, out);
        return;
    }
    // The output's dimensions and the input's strides along them.
    let (dims, strides) = (simple.out_dims(), simple.in_strides());
    let last = dims.len() - 1;
    if strides[last] == 1 {
        rows(x, out, &dims, &strides);
    } else {
        // The output axis the input walks fastest pairs with the output's last axis in tiles.
        let q = (0..last).min_by_key(|&a| strides[a]).unwrap_or(0);
        tiles(x, out, &dims, &strides, q);
    }
}

/// The output's last axis is contiguous in the input: copy whole rows.
fn rows<T: Num>(x: &[T], out: &mut [T], dims: &[usize], strides: &[usize]) {
    let last = dims.len() - 1;
    let len = dims[last];
    let rows_per_task = (TASK / len).max(1);
    let task = |(t, part): (usize, &mut [T])| {
        let mut odo = Odometer::at(&dims[..last], &strides[..last], t * rows_per_task);
        for row in part.chunks_mut(len) {
            row.copy_from_slice(&x[odo.offset..odo.offset + len]);
            odo.step();
        }
    };
    if out.len() >= PAR_MIN {
        out.par_chunks_mut(len * rows_per_task).enumerate().for_each(task);
    } else {
        out.chunks_mut(len * rows_per_task).enumerate().for_each(task);
    }
}

/// The output seen as `[P, Q, M, L]` with `Q` the axis `q` and `L` the last axis: tiles of
/// `TILE` × `TILE` over (`Q`, `L`) for each outer and middle position.
fn tiles<T: Num>(x: &[T], out: &mut [T], dims: &[usize], strides: &[usize], q: usize) {
    let last = dims.len() - 1;
    let (len_q, len_l) = (dims[q], dims[last]);
    let (sq, sl) = (strides[q], strides[last]);
    let mid_dims = &dims[q + 1..last];
    let mid_strides = &strides[q + 1..last];
    let m: usize = mid_dims.iter().product();
    let slab = len_q * m * len_l;
    // One unit: output rows a0 .. a0 + TILE along Q, for one outer position p.
    let unit = |p: usize, a_block: usize, part: &mut [T]| {
        let outer = Odometer::at(&dims[..q], &strides[..q], p).offset;
        let a0 = a_block * TILE;
        let rows_here = part.len() / (m * len_l);
        let mut mid = Odometer::at(mid_dims, mid_strides, 0);
        // A tile goes through a small buffer: read as runs along Q (contiguous in the
        // input when sq == 1), written as runs along L (contiguous in the output). Neither
        // side then needs cache lines to survive between rows, which matters when the
        // strides are powers of two and every line of a tile maps to one cache set.
        let mut buf = [T::ZERO; TILE * TILE];
        for mi in 0..m {
            let base = outer + mid.offset + a0 * sq;
            for b0 in (0..len_l).step_by(TILE) {
                let cols = (b0 + TILE).min(len_l) - b0;
                for b in 0..cols {
                    let src = base + (b0 + b) * sl;
                    let dst = &mut buf[b * TILE..b * TILE + rows_here];
                    if sq == 1 {
                        dst.copy_from_slice(&x[src..src + rows_here]);
                    } else {
                        for (a, y) in dst.iter_mut().enumerate() {
                            *y = x[src + a * sq];
                        }
                    }
                }
                for a in 0..rows_here {
                    let o = (a * m + mi) * len_l + b0;
                    for (b, y) in part[o..o + cols].iter_mut().enumerate() {
                        *y = buf[b * TILE + a];
                    }
                }
            }
            mid.step();
        }
    };
    let per_slab = |(p, s): (usize, &mut [T])| {
        if slab >= PAR_MIN {
            s.par_chunks_mut(TILE * m * len_l).enumerate().for_each(|(b, part)| unit(p, b, part));
        } else {
            s.chunks_mut(TILE * m * len_l).enumerate().for_each(|(b, part)| unit(p, b, part));
        }
    };
    if out.len() >= PAR_MIN {
        out.par_chunks_mut(slab).enumerate().for_each(per_slab);
    } else {
        out.chunks_mut(slab).enumerate().for_each(per_slab);
    }
}
