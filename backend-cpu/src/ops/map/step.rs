//! What a plan is made of: a [`Step`] (one instruction's typed kernel over a chunk), the
//! [`Ctx`] it reads earlier instructions through, each instruction's [`Loc`], and [`dest`],
//! the typed view of the chunk a step writes. `fuse.rs`, `half.rs` and `plan.rs` build
//! steps from the loops of `kernels.rs`; `plan.rs` strings them together.

use polycompute_core::{HostSlice, HostVec, Scalar};

use super::kernels::Src;
use super::lane::{DestMut, Lane};

/// Where an instruction's value for the current chunk is found.
#[derive(Clone, Debug)]
pub(super) enum Loc {
    /// Input `n`, read in place.
    Input(usize),
    /// Element 0 of input `n`, for every element.
    Splat(usize),
    /// A constant.
    Lit(Scalar),
    /// The instruction's scratch buffer, written by its step.
    Scratch,
}

/// A typed kernel over one chunk, reading earlier instructions through the context.
pub(crate) type Step = Box<dyn Fn(&Ctx<'_>, DestMut<'_>) + Send + Sync>;

/// What a step sees of the current chunk.
pub(crate) struct Ctx<'a> {
    /// Where each instruction's value is found.
    pub(super) locs: &'a [Loc],
    /// The op's inputs, whole.
    pub(super) inputs: &'a [HostSlice<'a>],
    /// Flat output index of the chunk's first element.
    pub(crate) start: usize,
    /// Elements in the chunk.
    pub(super) n: usize,
    /// Scratch of the instructions before the one running.
    pub(super) done: &'a [HostVec],
}

impl<'a> Ctx<'a> {
    /// Instruction `j`'s value over the chunk, as an operand.
    #[inline]
    pub(crate) fn src<T: Lane>(&self, j: usize) -> Src<'a, T> {
        let typed = |s: HostSlice<'a>| match T::of_slice(s) {
            Some(v) => v,
            None => unreachable!("plan typing: {:?} read as {}", s.dtype(), T::DTYPE),
        };
        match &self.locs[j] {
            Loc::Input(a) => Src::Slice(&typed(self.inputs[*a])[self.start..self.start + self.n]),
            Loc::Splat(a) => Src::Splat(typed(self.inputs[*a])[0]),
            Loc::Lit(s) => Src::Splat(T::from_scalar(*s).unwrap_or(T::ZERO)),
            Loc::Scratch => Src::Slice(&typed(self.done[j].as_slice())[..self.n]),
        }
    }

    /// Input `a` as `T`.
    #[inline]
    pub(super) fn input<T: Lane>(&self, a: usize) -> &'a [T] {
        match T::of_slice(self.inputs[a]) {
            Some(v) => v,
            None => unreachable!("plan typing: input {a} read as {}", T::DTYPE),
        }
    }
}

/// The typed slice of a destination (the plan's typing makes the dtype right).
#[inline]
pub(crate) fn dest<T: Lane>(d: DestMut<'_>) -> &mut [T] {
    match T::dest(d) {
        Some(d) => d,
        None => unreachable!("plan typing: destination is not {}", T::DTYPE),
    }
}
