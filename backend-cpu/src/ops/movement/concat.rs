//! `Op::Concat` and `Op::Pad`: row copies. Along axis `a`, each input contributes one
//! contiguous run of `n_i · inner` elements per outer index, so the output is written as
//! a sequence of `memcpy`s, in parallel over outer indices (or over chunks of one run).

use polycompute_core::{HostSlice, Shape};
use rayon::prelude::*;

use crate::buffer::typed;
use crate::num::Num;
use crate::ops::axis::Axis;
use crate::par::{PAR_MIN, TASK};

/// The length of the inputs of `shapes` joined along `axis`.
pub(crate) fn concat_len(shapes: &[Shape], axis: usize) -> usize {
    let outer = shapes.first().map_or(0, |s| Axis::new(s, axis).outer);
    outer * shapes.iter().map(|s| Axis::new(s, axis).n * Axis::new(s, axis).inner).sum::<usize>()
}

/// The inputs joined along `axis`, into `out` ([`concat_len`] elements, every one written:
/// the caller passes a recycled block of the device's caching allocator, so the copy pays
/// no page faults for a fresh output).
pub(crate) fn concat_into<T: Num>(data: &[HostSlice<'_>], shapes: &[Shape], axis: usize, out: &mut [T]) {
    let parts: Vec<(&[T], usize)> = data
        .iter()
        .zip(shapes)
        .map(|(d, s)| (typed::<T>(*d), Axis::new(s, axis).n * Axis::new(s, axis).inner))
        .collect();
    let outer = Axis::new(&shapes[0], axis).outer;
    let row: usize = parts.iter().map(|p| p.1).sum();
    debug_assert_eq!(out.len(), outer * row, "concat output length");
    if row == 0 {
        return;
    }
    let fill_row = |o: usize, dst: &mut [T]| {
        let mut at = 0;
        for (src, len) in &parts {
            copy(&mut dst[at..at + len], &src[o * len..(o + 1) * len]);
            at += len;
        }
    };
    if outer > 1 && out.len() >= PAR_MIN {
        out.par_chunks_mut(row).enumerate().for_each(|(o, dst)| fill_row(o, dst));
    } else {
        out.chunks_mut(row).enumerate().for_each(|(o, dst)| fill_row(o, dst));
    }
}

/// `dst.copy_from_slice(src)`, split across threads when long.
fn copy<T: Num>(dst: &mut [T], src: &[T]) {
    if dst.len() >= PAR_MIN {
        dst.par_chunks_mut(TASK).zip(src.par_chunks(TASK)).for_each(|(d, s)| d.copy_from_slice(s));
    } else {
        dst.copy_from_slice(src);
    }
}

/// `x` of `shape` with `widths[axis]` elements of `value` before and after each axis.
pub(crate) fn pad<T: Num>(x: &[T], shape: &Shape, widths: &[(usize, usize)], value: T) -> Vec<T> {
    let dims = shape.dims();
    let out_dims: Vec<usize> = dims.iter().zip(widths).map(|(&d, &(lo, hi))| d + lo + hi).collect();
    let total: usize = out_dims.iter().product();
    let mut out = vec![value; total];
    if x.is_empty() || dims.is_empty() {
        if dims.is_empty() && !x.is_empty() {
            out[0] = x[0];
        }
        return out;
    }
    let nd = dims.len();
    let out_strides = Shape::from(&out_dims[..]).strides();
    let last = dims[nd - 1];
    // Each input row (along the last axis) lands at one offset of the output.
    let rows = x.len() / last;
    let dest = |r: usize| {
        let (mut rest, mut off) = (r, widths[nd - 1].0);
        for ax in (0..nd - 1).rev() {
            off += (rest % dims[ax] + widths[ax].0) * out_strides[ax];
            rest /= dims[ax];
        }
        off
    };
    for r in 0..rows {
        let at = dest(r);
        out[at..at + last].copy_from_slice(&x[r * last..(r + 1) * last]);
    }
    out
}
