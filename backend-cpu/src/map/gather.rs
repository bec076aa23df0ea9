//! Reading a broadcast input for a chunk of the output: the input's strides (0 on
//! broadcast axes) walked in output order, in runs along the last axis.

use polycompute_core::plan::coalesce;
use polycompute_core::Shape;

/// A strided ([`polycompute_core::plan::Access::Strided`]) input: the output dimensions and
/// the input's strides along them, coalesced for this input alone (so its runs along the
/// last axis are as long as they can be).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Gather {
    dims: Vec<usize>,
    strides: Vec<usize>,
}

impl Gather {
    /// How an input of `input` shape is read for an output of `output` shape (to which it
    /// broadcasts).
    pub(crate) fn new(input: &Shape, output: &Shape) -> Gather {
        let mut c = coalesce(output.dims(), &[input.broadcast_strides(output)]);
        Gather { strides: c.strides.pop().unwrap_or_default(), dims: c.dims }
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
        let mut off = 0;
        for ax in (0..nd).rev() {
            idx[ax] = rest % self.dims[ax];
            rest /= self.dims[ax];
            off += idx[ax] * self.strides[ax];
        }
        let (len, stride) = (self.dims[last], self.strides[last]);
        let mut k = 0;
        while k < out.len() {
            let run = (out.len() - k).min(len - idx[last]);
            let dst = &mut out[k..k + run];
            match stride {
                0 => dst.fill(src[off]),
                1 => dst.copy_from_slice(&src[off..off + run]),
                s => {
                    for (j, o) in dst.iter_mut().enumerate() {
                        *o = src[off + j * s];
                    }
                }
            }
            k += run;
            idx[last] += run;
            off += run * stride;
            // Carry into the outer axes.
            let mut ax = last;
            while idx[ax] == self.dims[ax] && ax > 0 {
                off -= self.dims[ax] * self.strides[ax];
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
}
