//! `Op::MapViews`: a map whose inputs are views (strided, offset, negative or broadcast
//! strides). Plain inputs are read in place; each other input is gathered into
//! row-major order by [`gather_view`], then the ordinary block-wise map runs.

use polycompute_core::{HostSlice, HostVec, Layout, Program, Result, Shape};
use rayon::prelude::*;

use crate::device::CpuDevice;
use crate::map;
use crate::num::{with_dtype, Num};
use crate::par::{PAR_MIN, TASK};
use crate::storage::host_vec;

/// Runs `program` over inputs read through `layouts`, broadcast to `shape`.
pub(crate) fn map_views(
    device: &CpuDevice,
    program: &Program,
    layouts: &[Layout],
    shape: &Shape,
    data: &[HostSlice<'_>],
) -> Result<HostVec> {
    let _ = device;
    let gathered: Vec<Option<HostVec>> = layouts
        .iter()
        .zip(data)
        .map(|(l, d)| {
            (!l.is_plain(d.len())).then(|| with_dtype!(d.dtype(), T => host_vec(gather_view::<T>(super::typed(*d), l))))
        })
        .collect();
    let inputs: Vec<HostSlice<'_>> =
        gathered.iter().zip(data).map(|(g, d)| g.as_ref().map_or(*d, HostVec::as_slice)).collect();
    let shapes: Vec<Shape> = layouts.iter().map(|l| l.shape.clone()).collect();
    let plan = map::Plan::new(program, &shapes, shape)?;
    Ok(map::run(&plan, &inputs, shape.numel()))
}

/// The elements of the view `l` of `src`, in row-major order.
pub(crate) fn gather_view<T: Num>(src: &[T], l: &Layout) -> Vec<T> {
    let n = l.numel();
    let mut out = vec![T::ZERO; n];
    if n == 0 {
        return out;
    }
    let dims = l.shape.dims();
    let nd = dims.len();
    if nd == 0 {
        out[0] = src[l.offset];
        return out;
    }
    let (len, step) = (dims[nd - 1], l.strides[nd - 1]);
    // Buffer index of the first element of row `r` (a row runs along the last axis).
    let row_start = |mut r: usize| {
        let mut off = l.offset as isize;
        for ax in (0..nd - 1).rev() {
            off += (r % dims[ax]) as isize * l.strides[ax];
            r /= dims[ax];
        }
        off
    };
    let fill = |first_row: usize, dst: &mut [T]| {
        for (k, row) in dst.chunks_mut(len).enumerate() {
            let base = row_start(first_row + k);
            match step {
                1 => row.copy_from_slice(&src[base as usize..base as usize + len]),
                0 => row.fill(src[base as usize]),
                s => {
                    for (j, o) in row.iter_mut().enumerate() {
                        *o = src[(base + j as isize * s) as usize];
                    }
                }
            }
        }
    };
    let rows_per_task = (TASK / len).max(1);
    if n >= PAR_MIN && n / len > 1 {
        out.par_chunks_mut(rows_per_task * len).enumerate().for_each(|(t, d)| fill(t * rows_per_task, d));
    } else {
        fill(0, &mut out);
    }
    out
}
