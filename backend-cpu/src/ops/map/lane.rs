//! Type erasure between the typed kernels and the plan's untyped storage: a chunk's
//! destination of any dtype, and typed views of per-instruction scratch.

use polycompute_core::HostVec;

use crate::num::Num;

/// A mutable chunk of any dtype, handed to a step.
pub(crate) enum DestMut<'a> {
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
    I32(&'a mut [i32]),
    U32(&'a mut [u32]),
    F16(&'a mut [polycompute_core::f16]),
    BF16(&'a mut [polycompute_core::bf16]),
    I64(&'a mut [i64]),
    U8(&'a mut [u8]),
    Bool(&'a mut [bool]),
}

/// A [`Num`] that can be found in and put into the erased containers.
pub(crate) trait Lane: Num {
    /// The typed slice of a destination of this dtype.
    fn dest(d: DestMut<'_>) -> Option<&mut [Self]>;
    /// Erases a typed slice.
    fn erase(s: &mut [Self]) -> DestMut<'_>;
    /// A zeroed scratch buffer of `len` elements.
    fn new_scratch(len: usize) -> HostVec {
        Self::into_host_vec(vec![Self::ZERO; len])
    }
}

macro_rules! lane {
    ($t:ty, $variant:ident) => {
        impl Lane for $t {
            #[inline]
            fn dest(d: DestMut<'_>) -> Option<&mut [Self]> {
                match d {
                    DestMut::$variant(s) => Some(s),
                    _ => None,
                }
            }
            #[inline]
            fn erase(s: &mut [Self]) -> DestMut<'_> {
                DestMut::$variant(s)
            }
        }
    };
}

lane!(f32, F32);
lane!(f64, F64);
lane!(i32, I32);
lane!(u32, U32);
lane!(polycompute_core::f16, F16);
lane!(polycompute_core::bf16, BF16);
lane!(i64, I64);
lane!(u8, U8);
lane!(bool, Bool);

/// A destination of `len` elements inside a scratch buffer.
pub(crate) fn scratch_dest(v: &mut HostVec, len: usize) -> DestMut<'_> {
    match v {
        HostVec::F32(v) => DestMut::F32(&mut v[..len]),
        HostVec::F64(v) => DestMut::F64(&mut v[..len]),
        HostVec::I32(v) => DestMut::I32(&mut v[..len]),
        HostVec::U32(v) => DestMut::U32(&mut v[..len]),
        HostVec::F16(v) => DestMut::F16(&mut v[..len]),
        HostVec::BF16(v) => DestMut::BF16(&mut v[..len]),
        HostVec::I64(v) => DestMut::I64(&mut v[..len]),
        HostVec::U8(v) => DestMut::U8(&mut v[..len]),
        HostVec::Bool(v) => DestMut::Bool(&mut v[..len]),
    }
}
