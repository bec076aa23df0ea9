//! Reading a broadcast input for a chunk of the output: the input's strides (0 on
//! broadcast axes) walked in output order, in runs along the last axis.

use polycompute_core::plan::coalesce;
use polycompute_core::{Layout, Shape};

/// A strided ([`polycompute_core::plan::Access::Strided`]) input: the output dimensions and
/// the input's strides along them, coalesced for this input alone (so its runs along the
/// last axis are as long as they can be).
///
/// Also a view's input (`Op::MapViews`): then the strides are signed (flips,
/// negative steps) and the walk starts at the view's offset into its buffer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Gather {
    dims: Vec<usize>,
    strides: Vec<isize>,
    offset: isize,
}

impl Gather {
    /// How an input of `input` shape is read for an output of `output` shape (to which it
    /// broadcasts).
    pub(crate) fn new(input: &Shape, output: &Shape) -> Gather {
        let mut c = coalesce(output.dims(), &[input.broadcast_strides(output)]);
        let strides = c.strides.pop().unwrap_or_default().into_iter().map(|s| s as isize).collect();
        Gather { strides, dims: c.dims, offset: 0 }
    }

    /// How the view `layout` (broadcast to `output`, already validated) is read.
    pub(crate) fn from_layout(layout: &Layout, output: &Shape) -> Gather {
        let b = match layout.broadcast_to(output) {
            Ok(b) => b,
            Err(_) => unreachable!("Op::output checked that {} broadcasts to {output}", layout.shape),
        };
        // Size-1 axes dropped; neighbours merged when the outer stride is the inner
        // stride times the inner size (the signed form of `plan::coalesce`).
        let (mut dims, mut strides): (Vec<usize>, Vec<isize>) = (Vec::new(), Vec::new());
        for (&d, &s) in b.shape.dims().iter().zip(&b.strides) {
            if d == 1 {
                continue;
            }
            match (dims.last_mut(), strides.last_mut()) {
                (Some(ld), Some(ls)) if *ls == s * d as isize => {
                    *ld *= d;
                    *ls = s;
                }
                _ => {
                    dims.push(d);
                    strides.push(s);
                }
            }
        }
        if b.shape.numel() == 0 {
            (dims, strides) = (vec![0], vec![0]);
        } else if dims.is_empty() {
            // One element (all axes of size 1): a walk of one step, read at the offset.
            (dims, strides) = (vec![1], vec![0]);
        }
        Gather { dims, strides, offset: b.offset as isize }
    }

    /// Writes output elements `start .. start + out.len()` of the broadcast `src`.
    pub(crate) fn run<T: Copy>(&self, src: &[T], start: usize, out: &mut [T]) {
        let nd = self.dims.len();
        if nd == 0 || out.is_empty() {
            return;
        }
        let last = nd - 1;
        // Unravel `start` into an index and the input offset it reads (the index on the
        // stack for the usual ranks: this runs once per chunk).
        let (mut small, mut big) = ([0usize; 8], Vec::new());
        let idx: &mut [usize] = if nd <= small.len() {
            &mut small[..nd]
        } else {
            big.resize(nd, 0);
            &mut big
        };
        let mut rest = start;
        let mut off = self.offset;
        for ax in (0..nd).rev() {
            idx[ax] = rest % self.dims[ax];
            rest /= self.dims[ax];
            off += idx[ax] as isize * self.strides[ax];
        }
        let (len, stride) = (self.dims[last], self.strides[last]);
        let mut k = 0;
        while k < out.len() {
            let run = (out.len() - k).min(len - idx[last]);
            let dst = &mut out[k..k + run];
            // `off` and every offset of the run are in the buffer: core checked the layout.
            strided_run(src, off as usize, stride, dst);
            k += run;
            idx[last] += run;
            off += run as isize * stride;
            // Carry into the outer axes.
            let mut ax = last;
            while idx[ax] == self.dims[ax] && ax > 0 {
                off -= self.dims[ax] as isize * self.strides[ax];
                idx[ax] = 0;
                ax -= 1;
                idx[ax] += 1;
                off += self.strides[ax];
            }
        }
    }
}

/// `dst[j] = src[at + j * stride]`: one run along the last axis, read with a constant
/// stride. The elements read are cut out as one slice first (one bounds check per run), and
/// the loops below have no index arithmetic: a step-2 read is a pairwise walk that LLVM
/// turns into vector loads and shuffles, other strides an iterator step.
#[inline]
fn strided_run<T: Copy>(src: &[T], at: usize, stride: isize, dst: &mut [T]) {
    let n = dst.len();
    if n == 0 {
        return;
    }
    let step = stride.unsigned_abs();
    let span = (n - 1) * step;
    match stride {
        0 => dst.fill(src[at]),
        1 => dst.copy_from_slice(&src[at..at + n]),
        -1 => {
            for (o, &x) in dst.iter_mut().zip(src[at - span..=at].iter().rev()) {
                *o = x;
            }
        }
        2 => strided_loop::<T, 2, false>(&src[at..=at + span], dst),
        -2 => strided_loop::<T, 2, true>(&src[at - span..=at], dst),
        s if s > 0 => {
            for (o, &x) in dst.iter_mut().zip(src[at..=at + span].iter().step_by(step)) {
                *o = x;
            }
        }
        _ => {
            for (o, &x) in dst.iter_mut().zip(src[at - span..=at].iter().rev().step_by(step)) {
                *o = x;
            }
        }
    }
}

/// `dst[j] = src[j * S]` (or, `REV`, `src[src.len() - 1 - j * S]`) for a constant stride
/// `S`, `src` of `(dst.len() - 1) * S + 1` elements; run under the kernels' run-time
/// dispatch so that the groups of `S` are read with the widest vectors the CPU has.
fn strided_loop<T: Copy, const S: usize, const REV: bool>(src: &[T], dst: &mut [T]) {
    super::kernels::dispatch(
        #[inline(always)]
        || {
            // The last element (first, reversed) stands alone: no full group holds it.
            let (body, tail) = dst.split_at_mut(src.len() / S);
            if REV {
                for (o, c) in body.iter_mut().zip(src.rchunks_exact(S)) {
                    *o = c[S - 1];
                }
                if let (Some(o), Some(&x)) = (tail.first_mut(), src.first()) {
                    *o = x;
                }
            } else {
                for (o, c) in body.iter_mut().zip(src.chunks_exact(S)) {
                    *o = c[0];
                }
                if let (Some(o), Some(&x)) = (tail.first_mut(), src.last()) {
                    *o = x;
                }
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(input: &Shape, output: &Shape, src: &[i32]) -> Vec<i32> {
        let strides = input.broadcast_strides(output);
        (0..output.numel())
            .map(|mut i| {
                let mut off = 0;
                for ax in (0..output.ndim()).rev() {
                    off += (i % output.dims()[ax]) * strides[ax];
                    i /= output.dims()[ax];
                }
                src[off]
            })
            .collect()
    }

    #[test]
    fn gather_matches_naive_indexing_for_any_chunking() {
        let s = |d: &[usize]| Shape::new(d).unwrap();
        for (input, output) in [
            (s(&[3, 1, 4]), s(&[2, 3, 5, 4])),
            (s(&[5, 1]), s(&[5, 7])),
            (s(&[7]), s(&[3, 7])),
            (s(&[2, 1, 3]), s(&[2, 4, 3])),
            (s(&[1, 6]), s(&[4, 6])),
        ] {
            let src: Vec<i32> = (0..input.numel() as i32).collect();
            let want = naive(&input, &output, &src);
            let g = Gather::new(&input, &output);
            for chunk in [1, 2, 3, 5, 16, 1000] {
                let mut got = vec![-1; output.numel()];
                for (c, out) in got.chunks_mut(chunk).enumerate() {
                    g.run(&src, c * chunk, out);
                }
                assert_eq!(got, want, "{input} -> {output}, chunk {chunk}");
            }
        }
    }

    #[test]
    fn views_with_offsets_and_negative_strides_read_like_naive_indexing() {
        let s = |d: &[usize]| Shape::new(d).unwrap();
        let src: Vec<i32> = (0..120).collect();
        let base = Layout::contiguous(s(&[4, 5, 6]));
        let views = [
            base.flip(2).unwrap(),
            // x[::-2, 1:4, ::3]
            Layout { shape: s(&[2, 3, 2]), strides: vec![-60, 6, 3], offset: 96 },
            base.permute(&[2, 0, 1]).unwrap().flip(0).unwrap(),
            // x[1:2, :, 2:3]
            Layout { shape: s(&[1, 5, 1]), strides: vec![30, 6, 1], offset: 32 },
            // x[:, :, ::2], x[:, :, ::-2], x[:, :, 1::2], x[::-1, 1:, 5::-1]: the step-2 loops and
            // their lone last element, forwards and backwards.
            Layout { shape: s(&[4, 5, 3]), strides: vec![30, 6, 2], offset: 0 },
            Layout { shape: s(&[4, 5, 3]), strides: vec![30, 6, -2], offset: 5 },
            Layout { shape: s(&[4, 5, 3]), strides: vec![30, 6, 2], offset: 1 },
            Layout { shape: s(&[4, 4, 6]), strides: vec![-30, 6, -1], offset: 101 },
            // A flat step-2 and step-(-2) walk of many elements (the vector body).
            Layout { shape: s(&[60]), strides: vec![2], offset: 0 },
            Layout { shape: s(&[59]), strides: vec![-2], offset: 119 },
            Layout { shape: s(&[29]), strides: vec![-4], offset: 117 },
        ];
        for v in views {
            let out = v.shape.clone();
            let want: Vec<i32> = (0..out.numel())
                .map(|mut i| {
                    let mut off = v.offset as isize;
                    for ax in (0..out.ndim()).rev() {
                        off += (i % out.dims()[ax]) as isize * v.strides[ax];
                        i /= out.dims()[ax];
                    }
                    src[off as usize]
                })
                .collect();
            let g = Gather::from_layout(&v, &out);
            for chunk in [1, 3, 7, 1000] {
                let mut got = vec![-1; out.numel()];
                for (c, o) in got.chunks_mut(chunk).enumerate() {
                    g.run(&src, c * chunk, o);
                }
                assert_eq!(got, want, "{v:?}, chunk {chunk}");
            }
        }
    }
}
