//! The elementwise inner loops: one simple loop over slices per (op, dtype, operand kind),
//! monomorphised so that LLVM vectorises each of them. An operand is either a slice of the
//! chunk's length or one value splatted over it (a literal or a one-element input).
//!
//! Each loop runs through `pulp`'s run-time dispatch, so it is compiled for AVX2 (and FMA
//! registers, never contraction: results are the same bits) when the CPU has it, and for
//! the baseline instruction set otherwise; one dispatch per chunk, not per element.

use pulp::{Simd, WithSimd};

use crate::num::{CastTo, Float, Int, Num};

/// One operand of a kernel over a chunk.
#[derive(Copy, Clone)]
pub(crate) enum Src<'a, T> {
    /// One value per element (the slice is at least the chunk's length).
    Slice(&'a [T]),
    /// The same value for every element.
    Splat(T),
}

/// A unary operation on one dtype.
pub(crate) trait UnOp<T>: 'static {
    fn f(a: T) -> T;
}

/// A binary operation on one dtype.
pub(crate) trait BinOp<T>: 'static {
    fn f(a: T, b: T) -> T;
}

macro_rules! ops {
    ($trait:ident<$bound:ident> { $($name:ident($($arg:ident),*) => $body:expr;)* }) => {$(
        pub(crate) struct $name;
        impl<T: $bound> $trait<T> for $name {
            #[inline(always)]
            fn f($($arg: T),*) -> T {
                $body
            }
        }
    )*};
}

pub(crate) mod op {
    use super::*;

    ops!(UnOp<Num> {
        Neg(a) => T::neg(a);
        Abs(a) => T::abs(a);
        Floor(a) => T::floor(a);
        Ceil(a) => T::ceil(a);
        Round(a) => T::round(a);
    });
    ops!(UnOp<Float> {
        Sqrt(a) => T::sqrt(a);
        Recip(a) => T::recip(a);
        Exp(a) => T::exp(a);
        Expm1(a) => T::expm1(a);
        Ln(a) => T::ln(a);
        Log1p(a) => T::log1p(a);
        Log2(a) => T::log2(a);
        Log10(a) => T::log10(a);
        Sin(a) => T::sin(a);
        Cos(a) => T::cos(a);
        Tan(a) => T::tan(a);
        Tanh(a) => T::tanh(a);
    });
    ops!(BinOp<Num> {
        Add(a, b) => T::add(a, b);
        Sub(a, b) => T::sub(a, b);
        Mul(a, b) => T::mul(a, b);
        Div(a, b) => T::div(a, b);
        Rem(a, b) => T::rem(a, b);
        Pow(a, b) => T::pow(a, b);
        Min(a, b) => T::min(a, b);
        Max(a, b) => T::max(a, b);
        Eq(a, b) => T::from_bool(a == b);
        Ne(a, b) => T::from_bool(a != b);
        Lt(a, b) => T::from_bool(a < b);
        Le(a, b) => T::from_bool(a <= b);
        Gt(a, b) => T::from_bool(a > b);
        Ge(a, b) => T::from_bool(a >= b);
    });
    ops!(BinOp<Int> {
        And(a, b) => T::and(a, b);
        Or(a, b) => T::or(a, b);
        Xor(a, b) => T::xor(a, b);
    });
}

/// `out[i] = O(a[i])`.
#[inline(always)]
fn unary_loop<T: Num, O: UnOp<T>>(a: Src<'_, T>, out: &mut [T]) {
    match a {
        Src::Slice(a) => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = O::f(x);
            }
        }
        Src::Splat(x) => out.fill(O::f(x)),
    }
}

/// `out[i] = O(a[i], b[i])`.
#[inline(always)]
fn binary_loop<T: Num, O: BinOp<T>>(a: Src<'_, T>, b: Src<'_, T>, out: &mut [T]) {
    match (a, b) {
        (Src::Slice(a), Src::Slice(b)) => {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = O::f(x, y);
            }
        }
        (Src::Slice(a), Src::Splat(y)) => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = O::f(x, y);
            }
        }
        (Src::Splat(x), Src::Slice(b)) => {
            for (o, &y) in out.iter_mut().zip(b) {
                *o = O::f(x, y);
            }
        }
        (Src::Splat(x), Src::Splat(y)) => out.fill(O::f(x, y)),
    }
}

/// `out[i] = if c[i] != 0 { a[i] } else { b[i] }`.
#[inline(always)]
fn select_loop<C: Num, T: Num>(c: Src<'_, C>, a: Src<'_, T>, b: Src<'_, T>, out: &mut [T]) {
    let c = match c {
        Src::Splat(c) => return copy(if c.nonzero() { a } else { b }, out),
        Src::Slice(c) => c,
    };
    match (a, b) {
        (Src::Slice(a), Src::Slice(b)) => {
            for (((o, &c), &x), &y) in out.iter_mut().zip(c).zip(a).zip(b) {
                *o = if c.nonzero() { x } else { y };
            }
        }
        (Src::Slice(a), Src::Splat(y)) => {
            for ((o, &c), &x) in out.iter_mut().zip(c).zip(a) {
                *o = if c.nonzero() { x } else { y };
            }
        }
        (Src::Splat(x), Src::Slice(b)) => {
            for ((o, &c), &y) in out.iter_mut().zip(c).zip(b) {
                *o = if c.nonzero() { x } else { y };
            }
        }
        (Src::Splat(x), Src::Splat(y)) => {
            for (o, &c) in out.iter_mut().zip(c) {
                *o = if c.nonzero() { x } else { y };
            }
        }
    }
}

/// `out[i] = a[i] as T` with the IR's cast rules.
#[inline(always)]
fn cast_loop<S: Num + CastTo<T>, T: Num>(a: Src<'_, S>, out: &mut [T]) {
    match a {
        Src::Slice(a) => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = x.cast();
            }
        }
        Src::Splat(x) => out.fill(x.cast()),
    }
}

/// `out[i] = a[i]`.
#[inline(always)]
pub(crate) fn copy<T: Num>(a: Src<'_, T>, out: &mut [T]) {
    match a {
        Src::Slice(a) => {
            let n = out.len();
            out.copy_from_slice(&a[..n]);
        }
        Src::Splat(x) => out.fill(x),
    }
}

/// `out[i] = start + i` (the flat output index).
#[inline]
pub(crate) fn index(start: usize, out: &mut [u32]) {
    // Arrays hold at most u32::MAX elements (checked by `Op::output`), so this fits.
    let base = start as u32;
    for (i, o) in out.iter_mut().enumerate() {
        *o = base.wrapping_add(i as u32);
    }
}

/// A kernel call, run under the best instruction set found at run time.
struct Kernel<F>(F);

impl<F: FnOnce()> WithSimd for Kernel<F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        (self.0)()
    }
}

/// Runs `f` under run-time dispatch. `f` must be a closure whose body is made of
/// `#[inline(always)]` calls, so that it is compiled inside the dispatched function.
#[inline(always)]
pub(crate) fn dispatch(f: impl FnOnce()) {
    pulp::Arch::new().dispatch(Kernel(f));
}

/// `out[i] = O(a[i])`.
pub(crate) fn unary<T: Num, O: UnOp<T>>(a: Src<'_, T>, out: &mut [T]) {
    dispatch(
        #[inline(always)]
        || unary_loop::<T, O>(a, out),
    );
}

/// `out[i] = O(a[i], b[i])`.
pub(crate) fn binary<T: Num, O: BinOp<T>>(a: Src<'_, T>, b: Src<'_, T>, out: &mut [T]) {
    dispatch(
        #[inline(always)]
        || binary_loop::<T, O>(a, b, out),
    );
}

/// `out[i] = if c[i] != 0 { a[i] } else { b[i] }`.
pub(crate) fn select<C: Num, T: Num>(c: Src<'_, C>, a: Src<'_, T>, b: Src<'_, T>, out: &mut [T]) {
    dispatch(
        #[inline(always)]
        || select_loop::<C, T>(c, a, b, out),
    );
}

/// `out[i] = a[i] as T` with the IR's cast rules.
pub(crate) fn cast<S: Num + CastTo<T>, T: Num>(a: Src<'_, S>, out: &mut [T]) {
    dispatch(
        #[inline(always)]
        || cast_loop::<S, T>(a, out),
    );
}

/// `out[i] = O2(O1(x[i], s), y[i])`, operands of either op swapped as asked.
#[inline(always)]
fn fused_loop<T: Num, O1: BinOp<T>, O2: BinOp<T>>(x: &[T], s: T, y: &[T], out: &mut [T], sw1: bool, sw2: bool) {
    let it = out.iter_mut().zip(x).zip(y);
    match (sw1, sw2) {
        (false, false) => it.for_each(|((o, &x), &y)| *o = O2::f(O1::f(x, s), y)),
        (true, false) => it.for_each(|((o, &x), &y)| *o = O2::f(O1::f(s, x), y)),
        (false, true) => it.for_each(|((o, &x), &y)| *o = O2::f(y, O1::f(x, s))),
        (true, true) => it.for_each(|((o, &x), &y)| *o = O2::f(y, O1::f(s, x))),
    }
}

/// `out[i] = O2(O1(x[i], s), y[i])` in one pass (see `fuse.rs`).
pub(crate) fn fused<T: Num, O1: BinOp<T>, O2: BinOp<T>>(
    x: &[T],
    s: T,
    y: &[T],
    out: &mut [T],
    inner_swapped: bool,
    outer_swapped: bool,
) {
    dispatch(
        #[inline(always)]
        || fused_loop::<T, O1, O2>(x, s, y, out, inner_swapped, outer_swapped),
    );
}
