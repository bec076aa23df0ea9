//! Reading a broadcast input for a chunk of the output: the input's strides (0 on
//! broadcast axes) walked in output order, in runs along the last axis.

use polycompute_core::plan::coalesce;
use polycompute_core::{Layout, Shape};

/// A strided ([`polycompute_core::plan::Access::Strided`]) input: the output dimensions and
/// the input's strides along them, coalesced for this input alone (so its runs along the
/// last axis are as long as they can be).
///
/// Also a view's input (`Op::MapViews`, issue 14): then the strides are signed (flips,
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
        // Unravel `start` into an index and the input offset it reads.
        let mut idx = vec![0usize; nd];
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
            // `off` and every offset below are in the buffer: core checked the layout.
            let at = off as usize;
            match stride {
                0 => dst.fill(src[at]),
                1 => dst.copy_from_slice(&src[at..at + run]),
                s => {
                    for (j, o) in dst.iter_mut().enumerate() {
                        *o = src[(off + j as isize * s) as usize];
                    }
                }
            }
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
