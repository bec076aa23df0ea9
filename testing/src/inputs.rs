//! Deterministic inputs: element `i` of an input depends only on its generator, its seed and
//! `i`, and is computed on the host from core's Philox streams
//! ([`polycompute_core::philox::block`]), so every backend, machine and run sees the same values.
//!
//! The conformance corpus materializes every case's inputs here; its golden snapshots pin
//! the algorithms, so they must not change.
//!
//! ```
//! use polycompute_testing::{inputs, Gen};
//! use polycompute_core::{DType, HostVec};
//!
//! let x: Vec<f64> = inputs::uniform(3, 1000, -2.0, 2.0);
//! assert!(x.iter().all(|v| (-2.0..2.0).contains(v)));
//! assert_eq!(x, Gen::Uniform { lo: -2.0, hi: 2.0 }.values::<f64>(1000, 3));
//! // Whole numbers in any dtype, with NaN overwritten at position 1.
//! let g = Gen::With(Box::new(Gen::Ints { lo: 0, hi: 9 }), vec![(1, f64::NAN)]);
//! let HostVec::F32(v) = g.materialize(DType::F32, 4, 0) else { unreachable!() };
//! assert!(v[1].is_nan() && v[0].fract() == 0.0);
//! ```

use polycompute_core::philox;
use polycompute_core::{DType, Element, HostVec};

use super::specials;

/// How an input's elements are made. Element `i` depends only on the generator, the seed and
/// `i`.
#[derive(Clone, Debug, PartialEq)]
pub enum Gen {
    /// Floats uniform in `[lo, hi)`; integers uniform in `[lo, hi]`.
    Uniform {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
    },
    /// Whole numbers uniform in `[lo, hi]` in any dtype (floats too): ties for comparisons and
    /// argmin/argmax.
    Ints {
        /// Lower end.
        lo: i64,
        /// Upper end.
        hi: i64,
    },
    /// Integers: raw Philox bits (the whole range). Floats: `±m·2^e` with `m` in `[1, 2)` and
    /// `e` uniform in `[-max_exp, max_exp]`, i.e. many magnitudes at once.
    Wide {
        /// Largest binary exponent, for floats.
        max_exp: i32,
    },
    /// The dtype's curated special values ([`specials::of`]), repeated to the input's length.
    Specials,
    /// Another generator with some positions overwritten (NaN, infinities, ...).
    With(Box<Gen>, Vec<(usize, f64)>),
}

impl Gen {
    /// Short description for snapshot headers.
    pub fn describe(&self) -> String {
        match self {
            Gen::Uniform { lo, hi } => format!("uniform[{lo}, {hi}]"),
            Gen::Wide { max_exp } => format!("wide(2^±{max_exp})"),
            Gen::Ints { lo, hi } => format!("integers[{lo}, {hi}]"),
            Gen::Specials => "specials".into(),
            Gen::With(g, at) => format!("{} with {at:?}", g.describe()),
        }
    }

    /// The `len` elements of this generator in `dtype`, from Philox stream `seed`.
    pub fn materialize(&self, dtype: DType, len: usize, seed: u64) -> HostVec {
        match self {
            Gen::Uniform { lo, hi } => uniform_host(dtype, len, seed, *lo, *hi),
            Gen::Wide { max_exp } => wide(dtype, len, seed, *max_exp),
            Gen::Ints { lo, hi } => ints(dtype, len, seed, *lo, *hi),
            Gen::Specials => cycle(specials::of(dtype), len),
            Gen::With(g, at) => {
                let mut v = g.materialize(dtype, len, seed);
                for &(i, x) in at.iter().filter(|(i, _)| *i < len) {
                    match &mut v {
                        HostVec::F32(v) => v[i] = x as f32,
                        HostVec::F64(v) => v[i] = x,
                        HostVec::I32(v) => v[i] = x as i32,
                        HostVec::U32(v) => v[i] = x as u32,
                        HostVec::F16(v) => v[i] = polycompute_core::halves::f16_from_f64(x),
                        HostVec::BF16(v) => v[i] = polycompute_core::halves::bf16_from_f64(x),
                        HostVec::I64(v) => v[i] = x as i64,
                        HostVec::U8(v) => v[i] = x as u8,
                        HostVec::Bool(v) => v[i] = x != 0.0,
                    }
                }
                v
            }
        }
    }

    /// [`materialize`](Gen::materialize) as a typed vector.
    pub fn values<T: Element>(&self, len: usize, seed: u64) -> Vec<T> {
        match T::from_host_vec(self.materialize(T::DTYPE, len, seed)) {
            Some(v) => v,
            // materialize answers in the dtype it is asked for.
            None => unreachable!("a {} input materialized as another dtype", T::DTYPE),
        }
    }
}

/// `len` values uniform in `[lo, hi)` (integers: `[lo, hi]`) from Philox stream `seed`.
pub fn uniform<T: Element>(seed: u64, len: usize, lo: f64, hi: f64) -> Vec<T> {
    Gen::Uniform { lo, hi }.values(len, seed)
}

/// `len` raw 32-bit words of Philox stream `seed`, in order.
pub fn bits(seed: u64, len: usize) -> Vec<u32> {
    Gen::Wide { max_exp: 0 }.values(len, seed)
}

/// The words of a Philox stream in order, computing each block once.
struct Words {
    seed: u64,
    block: u64,
    words: [u32; 4],
    used: usize,
}

impl Words {
    fn new(seed: u64) -> Words {
        Words { seed, block: 0, words: philox::block(seed, 0), used: 0 }
    }

    fn next(&mut self) -> u32 {
        if self.used == 4 {
            self.block += 1;
            self.words = philox::block(self.seed, self.block);
            self.used = 0;
        }
        self.used += 1;
        self.words[self.used - 1]
    }

    /// 53 random bits as a float in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        let w = ((self.next() as u64) << 32) | self.next() as u64;
        (w >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }
}

fn uniform_host(dtype: DType, len: usize, seed: u64, lo: f64, hi: f64) -> HostVec {
    let mut w = Words::new(seed);
    match dtype {
        // 24 bits are all an f32 can hold, and one word per element keeps huge inputs quick.
        DType::F32 => {
            HostVec::F32((0..len).map(|_| (lo + (hi - lo) * ((w.next() >> 8) as f64 / 16_777_216.0)) as f32).collect())
        }
        DType::F64 => HostVec::F64((0..len).map(|_| lo + (hi - lo) * w.unit()).collect()),
        DType::I32 => HostVec::I32((0..len).map(|_| (lo + ((hi - lo + 1.0) * w.unit()).floor()) as i32).collect()),
        DType::U32 => HostVec::U32((0..len).map(|_| (lo + ((hi - lo + 1.0) * w.unit()).floor()) as u32).collect()),
        DType::I64 => HostVec::I64((0..len).map(|_| (lo + ((hi - lo + 1.0) * w.unit()).floor()) as i64).collect()),
        DType::U8 => HostVec::U8((0..len).map(|_| (lo + ((hi - lo + 1.0) * w.unit()).floor()) as u8).collect()),
        // A fair coin whatever the range.
        DType::Bool => HostVec::Bool((0..len).map(|_| w.next() & 1 == 1).collect()),
        // One word per element, 24 bits, rounded once to the half type.
        DType::F16 => HostVec::F16(
            (0..len)
                .map(|_| {
                    polycompute_core::halves::f16_from_f64(lo + (hi - lo) * ((w.next() >> 8) as f64 / 16_777_216.0))
                })
                .collect(),
        ),
        DType::BF16 => HostVec::BF16(
            (0..len)
                .map(|_| {
                    polycompute_core::halves::bf16_from_f64(lo + (hi - lo) * ((w.next() >> 8) as f64 / 16_777_216.0))
                })
                .collect(),
        ),
    }
}

fn ints(dtype: DType, len: usize, seed: u64, lo: i64, hi: i64) -> HostVec {
    let mut w = Words::new(seed);
    let span = (hi - lo + 1).max(1) as u64;
    let mut next = || lo + ((w.next() as u64 * span) >> 32) as i64;
    match dtype {
        DType::F32 => HostVec::F32((0..len).map(|_| next() as f32).collect()),
        DType::F64 => HostVec::F64((0..len).map(|_| next() as f64).collect()),
        DType::I32 => HostVec::I32((0..len).map(|_| next() as i32).collect()),
        DType::U32 => HostVec::U32((0..len).map(|_| next() as u32).collect()),
        DType::I64 => HostVec::I64((0..len).map(|_| next()).collect()),
        DType::U8 => HostVec::U8((0..len).map(|_| next() as u8).collect()),
        DType::Bool => HostVec::Bool((0..len).map(|_| next() != 0).collect()),
        DType::F16 => HostVec::F16((0..len).map(|_| polycompute_core::halves::f16_from_f64(next() as f64)).collect()),
        DType::BF16 => {
            HostVec::BF16((0..len).map(|_| polycompute_core::halves::bf16_from_f64(next() as f64)).collect())
        }
    }
}

fn wide(dtype: DType, len: usize, seed: u64, max_exp: i32) -> HostVec {
    let mut w = Words::new(seed);
    let span = (2 * max_exp.max(0) + 1) as u32;
    let mut float = || {
        let e = (w.next() % span) as i32 - max_exp;
        let m = 1.0 + w.unit();
        let sign = if w.next() & 1 == 1 { -1.0 } else { 1.0 };
        sign * m * 2f64.powi(e)
    };
    match dtype {
        DType::F32 => HostVec::F32((0..len).map(|_| float() as f32).collect()),
        DType::F64 => HostVec::F64((0..len).map(|_| float()).collect()),
        DType::I32 => HostVec::I32((0..len).map(|_| w.next() as i32).collect()),
        DType::U32 => HostVec::U32((0..len).map(|_| w.next()).collect()),
        DType::I64 => HostVec::I64((0..len).map(|_| ((w.next() as u64) << 32 | w.next() as u64) as i64).collect()),
        DType::U8 => HostVec::U8((0..len).map(|_| w.next() as u8).collect()),
        DType::Bool => HostVec::Bool((0..len).map(|_| w.next() & 1 == 1).collect()),
        DType::F16 => HostVec::F16((0..len).map(|_| polycompute_core::halves::f16_from_f64(float())).collect()),
        DType::BF16 => HostVec::BF16((0..len).map(|_| polycompute_core::halves::bf16_from_f64(float())).collect()),
    }
}

fn cycle(values: HostVec, len: usize) -> HostVec {
    fn rep<T: Copy>(v: &[T], len: usize) -> Vec<T> {
        v.iter().copied().cycle().take(if v.is_empty() { 0 } else { len }).collect()
    }
    match values {
        HostVec::F32(v) => HostVec::F32(rep(&v, len)),
        HostVec::F64(v) => HostVec::F64(rep(&v, len)),
        HostVec::I32(v) => HostVec::I32(rep(&v, len)),
        HostVec::U32(v) => HostVec::U32(rep(&v, len)),
        HostVec::F16(v) => HostVec::F16(rep(&v, len)),
        HostVec::BF16(v) => HostVec::BF16(rep(&v, len)),
        HostVec::I64(v) => HostVec::I64(rep(&v, len)),
        HostVec::U8(v) => HostVec::U8(rep(&v, len)),
        HostVec::Bool(v) => HostVec::Bool(rep(&v, len)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic_and_in_range() {
        let a = Gen::Uniform { lo: -2.0, hi: 3.0 }.materialize(DType::F64, 1000, 9);
        assert_eq!(a, Gen::Uniform { lo: -2.0, hi: 3.0 }.materialize(DType::F64, 1000, 9));
        let HostVec::F64(a) = a else { unreachable!() };
        assert!(a.iter().all(|x| (-2.0..3.0).contains(x)));
        let b: Vec<i32> = uniform(1, 1000, -3.0, 3.0);
        assert!(b.iter().all(|x| (-3..=3).contains(x)) && b.contains(&-3) && b.contains(&3));
        let w = bits(0, 6);
        // Random123's known answer for key 0, counter 0, then block 1.
        assert_eq!(&w[..4], &[0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
        assert_eq!(w[4], philox::uniform_u32(0, 4));
    }

    #[test]
    fn a_prefix_is_the_same_stream() {
        let long: Vec<f32> = uniform(5, 100, -1.0, 1.0);
        let short: Vec<f32> = uniform(5, 10, -1.0, 1.0);
        assert_eq!(long[..10], short[..]);
        assert_ne!(long, uniform::<f32>(6, 100, -1.0, 1.0));
    }

    #[test]
    fn whole_numbers_tie_in_every_dtype() {
        let v: Vec<f32> = Gen::Ints { lo: -2, hi: 2 }.values(500, 4);
        assert!(v.iter().all(|x| x.fract() == 0.0 && (-2.0..=2.0).contains(x)));
        assert!((-2..=2).all(|k| v.contains(&(k as f32))));
    }

    #[test]
    fn wide_floats_span_magnitudes() {
        let v: Vec<f64> = Gen::Wide { max_exp: 20 }.values(2000, 1);
        assert!(v.iter().any(|x| x.abs() < 1e-5) && v.iter().any(|x| x.abs() > 1e5));
        assert!(v.iter().any(|x| *x < 0.0) && v.iter().all(|x| x.abs() < 2f64.powi(21)));
    }

    #[test]
    fn overwrites_land_where_asked_and_specials_repeat() {
        let g = Gen::With(Box::new(Gen::Uniform { lo: 0.0, hi: 1.0 }), vec![(2, f64::NAN), (99, 1.0)]);
        let HostVec::F32(v) = g.materialize(DType::F32, 4, 3) else { unreachable!() };
        assert!(v[2].is_nan() && !v[1].is_nan());
        let s: Vec<u32> = Gen::Specials.values(17, 0);
        assert_eq!(s[..15], specials::u32()[..]);
        assert_eq!(s[15..], specials::u32()[..2]);
        assert_eq!(Gen::Specials.describe(), "specials");
    }
}
