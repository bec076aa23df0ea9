//! The special values of each dtype: the inputs where implementations disagree first.
//!
//! Two sets per dtype. The *curated* set ([`Specials::specials`], [`of`]) is the one the
//! conformance corpus feeds every op: its content and order are part of that suite's golden
//! snapshots, so it only changes together with them. The *extended* set
//! ([`Specials::extended`], [`extended_of`]) is the curated set followed by further values the
//! backends' own tests check (more magnitudes and fractions, values just past the integer
//! ranges), each once.
//!
//! ```
//! use polycompute_testing::specials::{self, Specials};
//!
//! let v = specials::f32();
//! assert!(v.iter().any(|x| x.is_nan()) && v.contains(&f32::NEG_INFINITY));
//! assert!(v.iter().any(|x| *x == 0.0 && x.is_sign_negative()), "-0.0 is there");
//! assert!(specials::i32().contains(&i32::MIN));
//! // The extended set starts with the curated one.
//! assert!(f64::extended().len() > f64::specials().len());
//! // Every ordered pair, as two columns (for binary ops).
//! let (a, b) = specials::pairs(&[1, 2]);
//! assert_eq!((a, b), (vec![1, 1, 2, 2], vec![1, 2, 1, 2]));
//! ```

use polycompute_core::{bf16, f16, DType, Element, HostVec};

/// A float dtype's corners, which every float dtype's curated set starts with in one order.
trait FloatCorners: Element + num_traits::Float {
    /// The smallest positive subnormal.
    const SMALLEST_SUBNORMAL: Self;
    /// The largest subnormal.
    const LARGEST_SUBNORMAL: Self;
    /// π in this dtype.
    const PI: Self;
    /// `v` in this dtype; the callers give only values every float dtype holds exactly.
    fn exact(v: f64) -> Self;
}

impl FloatCorners for f32 {
    const SMALLEST_SUBNORMAL: f32 = f32::from_bits(1);
    const LARGEST_SUBNORMAL: f32 = f32::from_bits(0x007f_ffff);
    const PI: f32 = std::f32::consts::PI;
    fn exact(v: f64) -> f32 {
        v as f32
    }
}

impl FloatCorners for f64 {
    const SMALLEST_SUBNORMAL: f64 = f64::from_bits(1);
    const LARGEST_SUBNORMAL: f64 = f64::from_bits(0x000f_ffff_ffff_ffff);
    const PI: f64 = std::f64::consts::PI;
    fn exact(v: f64) -> f64 {
        v
    }
}

impl FloatCorners for f16 {
    const SMALLEST_SUBNORMAL: f16 = f16::from_bits(0x0001); // 2^-24
    const LARGEST_SUBNORMAL: f16 = f16::from_bits(0x03ff);
    const PI: f16 = f16::PI;
    fn exact(v: f64) -> f16 {
        f16::from_f64(v)
    }
}

impl FloatCorners for bf16 {
    const SMALLEST_SUBNORMAL: bf16 = bf16::from_bits(0x0001); // 2^-133
    const LARGEST_SUBNORMAL: bf16 = bf16::from_bits(0x007f);
    const PI: bf16 = bf16::PI;
    fn exact(v: f64) -> bf16 {
        bf16::from_f64(v)
    }
}

/// A float dtype's curated set: NaN, ±Inf, ±0, ±1, halves (round half to even), 3 and -7.25,
/// the smallest subnormals, the largest subnormal, the smallest normals, the extremes, epsilon,
/// 1 + epsilon and π, then `own`, the dtype's own corners.
fn float_specials<F: FloatCorners>(own: &[F]) -> Vec<F> {
    let mut v = vec![F::nan(), F::infinity(), F::neg_infinity(), F::zero(), F::neg_zero(), F::one(), -F::one()];
    v.extend([0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.25].map(F::exact));
    v.extend([F::SMALLEST_SUBNORMAL, -F::SMALLEST_SUBNORMAL, F::LARGEST_SUBNORMAL]);
    v.extend([F::min_positive_value(), -F::min_positive_value(), F::max_value(), F::min_value()]);
    v.extend([F::epsilon(), F::one() + F::epsilon(), F::PI]);
    v.extend_from_slice(own);
    v
}

/// f32's own curated corners: large values, and the powers of two where f32 stops holding
/// every integer (2^24) or an i32/u32 (2^31, 2^32).
const F32: [f32; 8] =
    [1.0e10, -3.0e9, 2_147_483_520.0, 2_147_483_648.0, 4_294_967_040.0, 4_294_967_296.0, 16_777_216.0, -16_777_215.0];

/// More f32 values for the extended set: other fractions and magnitudes, a subnormal in the
/// middle of the range, values past the integer ranges.
const F32_MORE: [f32; 16] = [
    3.7,
    -3.7,
    7.0,
    -7.0,
    100.25,
    0.1,
    1e-30,
    1e30,
    -1e30,
    3e9,
    5e9,
    3.4e38,
    -3.4e38,
    f32::MIN_POSITIVE / 4.0,
    -2_147_483_648.0,
    16_777_217.0,
];

/// f64's own curated corners: as f32's, plus values that round differently in f32 (3.4e38,
/// 1e-40) and 2^53 + 1, the first integer f64 does not hold.
const F64: [f64; 9] = [
    1.0e300,
    -3.0e9,
    2_147_483_647.5,
    -2_147_483_648.75,
    4_294_967_295.5,
    4_294_967_296.0,
    9_007_199_254_740_993.0,
    3.4e38,
    1.0e-40,
];

/// More f64 values for the extended set.
const F64_MORE: [f64; 14] =
    [3.7, -3.7, 7.0, -7.0, 100.25, 0.1, 1e-30, 1e30, 3e9, 5e9, 1.7e308, -1.7e308, -2_147_483_648.5, 2_147_483_648.0];

/// The curated i32 specials: 0, ±1 (division by zero, `MIN / -1`), small values, the square
/// root of 2^31 (overflowing squares), 2^16, 2^24 ± 1 (exact in f32 or not) and the extremes.
const I32: [i32; 20] = [
    0,
    1,
    -1,
    2,
    -2,
    3,
    -3,
    7,
    -7,
    100,
    -100,
    46_341,
    65_536,
    16_777_217,
    -16_777_217,
    1 << 30,
    i32::MAX,
    i32::MAX - 1,
    i32::MIN,
    i32::MIN + 1,
];

/// More i32 values for the extended set: shift amounts at the word size.
const I32_MORE: [i32; 2] = [31, 32];

/// The curated i64 specials: 0, ±1, small values, the i32 and u32 limits (where a narrower
/// index would wrap), values past 2^32 and 2^53 (where f64 stops holding every integer),
/// and the i64 extremes with their neighbours.
const I64: [i64; 20] = [
    0,
    1,
    -1,
    2,
    -2,
    7,
    -7,
    i32::MAX as i64,
    i32::MIN as i64,
    u32::MAX as i64,
    1 << 32,
    -(1 << 32),
    (1 << 53) + 1,
    -(1 << 53) - 1,
    i64::MAX,
    i64::MAX - 1,
    i64::MIN,
    i64::MIN + 1,
    1 << 62,
    3_000_000_000,
];

/// More i64 values for the extended set: shift amounts at the word size.
const I64_MORE: [i64; 2] = [63, 64];

/// The curated u8 specials: 0, 1, the wrap-around corners 127/128/255 and small values.
const U8: [u8; 10] = [0, 1, 2, 3, 7, 16, 127, 128, 254, 255];

/// More u8 values for the extended set.
const U8_MORE: [u8; 2] = [8, 200];

/// The curated u32 specials: as [`I32`], and the values around 2^31 and 2^32.
const U32: [u32; 15] = [
    0,
    1,
    2,
    3,
    7,
    100,
    46_341,
    65_536,
    16_777_217,
    (1 << 31) - 1,
    1 << 31,
    (1 << 31) + 1,
    4_294_967_040,
    u32::MAX - 1,
    u32::MAX,
];

/// More u32 values for the extended set.
const U32_MORE: [u32; 3] = [31, 32, 12_345_678];

/// f16's own curated corners (after the shared ones, whose extremes are ±65504, the largest
/// finite: `65504 + 65504` overflows to Inf): 2048 (the last integer before f16 skips odd
/// ones, so `2048 + 1` is a tie that rounds to the even 2048), 2049's neighbours and a value
/// past the i32 range once cast. Pairs of them hit every rounding corner of the binary ops.
const F16: [f16; 4] = [
    f16::from_bits(0x6800), // 2048
    f16::from_bits(0x6801), // 2050
    f16::from_bits(0xe7ff), // -2047
    f16::from_bits(0x7800), // 32768
];

/// More f16 values for the extended set.
const F16_MORE: [f16; 8] = [
    f16::from_bits(0x4366), // 3.7
    f16::from_bits(0xc366), // -3.7
    f16::from_bits(0x4700), // 7.0
    f16::from_bits(0xc700), // -7.0
    f16::from_bits(0x2e66), // 0.1
    f16::from_bits(0x0200), // a subnormal in the middle
    f16::from_bits(0x5640), // 100.0
    f16::from_bits(0x7bfe), // the value below MAX
];

/// bf16's own curated corners (after the shared ones, whose extremes are ±3.39e38): 256 (the
/// last integer before bf16 skips odd ones: `256 + 1` is a tie that rounds to 256), 258, and
/// 2^31 and 2^32 (past the i32 and u32 ranges once cast).
const BF16: [bf16; 5] = [
    bf16::from_bits(0x4380), // 256
    bf16::from_bits(0x4381), // 258
    bf16::from_bits(0xc37f), // -255
    bf16::from_bits(0x4f00), // 2^31
    bf16::from_bits(0x4f80), // 2^32
];

/// More bf16 values for the extended set.
const BF16_MORE: [bf16; 8] = [
    bf16::from_bits(0x406d), // 3.703125
    bf16::from_bits(0xc06d),
    bf16::from_bits(0x40e0), // 7.0
    bf16::from_bits(0xc0e0), // -7.0
    bf16::from_bits(0x3dcd), // 0.1
    bf16::from_bits(0x0040), // a subnormal in the middle
    bf16::from_bits(0x42c8), // 100.0
    bf16::from_bits(0x7f7e), // the value below MAX
];

/// An element type with special values.
pub trait Specials: Element {
    /// The curated special values (see the [module docs](self)); their order is part of the
    /// conformance suite's golden snapshots.
    fn specials() -> Vec<Self>;

    /// The curated values followed by more, each value once (NaN included once).
    fn extended() -> Vec<Self>;
}

/// `first` followed by every value of `more` not already there, compared by bits.
fn union<T: Element>(first: &[T], more: &[T]) -> Vec<T> {
    let mut out = first.to_vec();
    for &x in more {
        if !out.iter().any(|o| o.to_scalar().to_bits() == x.to_scalar().to_bits()) {
            out.push(x);
        }
    }
    out
}

macro_rules! specials {
    ($t:ty, $curated:expr, $more:ident) => {
        impl Specials for $t {
            fn specials() -> Vec<$t> {
                $curated
            }
            fn extended() -> Vec<$t> {
                union(&Self::specials(), &$more)
            }
        }
    };
}

specials!(f32, float_specials(&F32), F32_MORE);
specials!(f64, float_specials(&F64), F64_MORE);
specials!(f16, float_specials(&F16), F16_MORE);
specials!(bf16, float_specials(&BF16), BF16_MORE);
specials!(i32, I32.to_vec(), I32_MORE);
specials!(u32, U32.to_vec(), U32_MORE);
specials!(i64, I64.to_vec(), I64_MORE);
specials!(u8, U8.to_vec(), U8_MORE);

/// Both truth values; the extended set adds nothing, there is nothing else.
impl Specials for bool {
    fn specials() -> Vec<bool> {
        vec![false, true]
    }
    fn extended() -> Vec<bool> {
        vec![false, true]
    }
}

/// The curated f32 specials.
pub fn f32() -> Vec<f32> {
    <f32 as Specials>::specials()
}

/// The curated f64 specials.
pub fn f64() -> Vec<f64> {
    <f64 as Specials>::specials()
}

/// The curated i32 specials.
pub fn i32() -> Vec<i32> {
    <i32 as Specials>::specials()
}

/// The curated u32 specials.
pub fn u32() -> Vec<u32> {
    <u32 as Specials>::specials()
}

/// The curated specials of `dtype`.
///
/// ```
/// use polycompute_testing::specials;
/// use polycompute_core::DType;
/// assert_eq!(specials::of(DType::U32).len(), specials::u32().len());
/// ```
pub fn of(dtype: DType) -> HostVec {
    match dtype {
        DType::F32 => HostVec::F32(f32()),
        DType::F64 => HostVec::F64(f64()),
        DType::I32 => HostVec::I32(i32()),
        DType::U32 => HostVec::U32(u32()),
        DType::F16 => HostVec::F16(<f16 as Specials>::specials()),
        DType::BF16 => HostVec::BF16(<bf16 as Specials>::specials()),
        DType::I64 => HostVec::I64(<i64 as Specials>::specials()),
        DType::U8 => HostVec::U8(<u8 as Specials>::specials()),
        DType::Bool => HostVec::Bool(<bool as Specials>::specials()),
    }
}

/// The extended specials of `dtype`.
pub fn extended_of(dtype: DType) -> HostVec {
    match dtype {
        DType::F32 => HostVec::F32(<f32 as Specials>::extended()),
        DType::F64 => HostVec::F64(<f64 as Specials>::extended()),
        DType::I32 => HostVec::I32(<i32 as Specials>::extended()),
        DType::U32 => HostVec::U32(<u32 as Specials>::extended()),
        DType::F16 => HostVec::F16(<f16 as Specials>::extended()),
        DType::BF16 => HostVec::BF16(<bf16 as Specials>::extended()),
        DType::I64 => HostVec::I64(<i64 as Specials>::extended()),
        DType::U8 => HostVec::U8(<u8 as Specials>::extended()),
        DType::Bool => HostVec::Bool(<bool as Specials>::extended()),
    }
}

/// Every ordered pair `(x, y)` of `values`, as two columns: `x` runs slowly, `y` fast.
pub fn pairs<T: Copy>(values: &[T]) -> (Vec<T>, Vec<T>) {
    let a = values.iter().flat_map(|&x| values.iter().map(move |_| x)).collect();
    let b = values.iter().flat_map(|_| values.iter().copied()).collect();
    (a, b)
}

/// [`pairs`] of a host vector of any dtype.
pub fn host_pairs(values: &HostVec) -> (HostVec, HostVec) {
    match values {
        HostVec::F32(v) => {
            let (a, b) = pairs(v);
            (HostVec::F32(a), HostVec::F32(b))
        }
        HostVec::F64(v) => {
            let (a, b) = pairs(v);
            (HostVec::F64(a), HostVec::F64(b))
        }
        HostVec::I32(v) => {
            let (a, b) = pairs(v);
            (HostVec::I32(a), HostVec::I32(b))
        }
        HostVec::U32(v) => {
            let (a, b) = pairs(v);
            (HostVec::U32(a), HostVec::U32(b))
        }
        HostVec::F16(v) => {
            let (a, b) = pairs(v);
            (HostVec::F16(a), HostVec::F16(b))
        }
        HostVec::BF16(v) => {
            let (a, b) = pairs(v);
            (HostVec::BF16(a), HostVec::BF16(b))
        }
        HostVec::I64(v) => {
            let (a, b) = pairs(v);
            (HostVec::I64(a), HostVec::I64(b))
        }
        HostVec::U8(v) => {
            let (a, b) = pairs(v);
            (HostVec::U8(a), HostVec::U8(b))
        }
        HostVec::Bool(v) => {
            let (a, b) = pairs(v);
            (HostVec::Bool(a), HostVec::Bool(b))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits<T: Element>(v: &[T]) -> Vec<u64> {
        v.iter().map(|x| x.to_scalar().to_bits()).collect()
    }

    #[test]
    fn curated_sets_hold_the_corner_cases_once_each() {
        let (i64s, u8s) = (<i64 as Specials>::specials(), <u8 as Specials>::specials());
        for set in [bits(&f32()), bits(&f64()), bits(&i32()), bits(&u32()), bits(&i64s), bits(&u8s)] {
            let mut unique = set.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), set.len(), "a duplicate in {set:x?}");
        }
        let f = f32();
        assert!(f.iter().any(|x| x.is_nan()) && f.contains(&f32::INFINITY) && f.contains(&f32::NEG_INFINITY));
        assert!(f.iter().any(|x| x.is_subnormal()) && f.contains(&f32::MAX) && f.contains(&f32::MIN));
        assert!(f64().iter().any(|x| x.is_subnormal() && x.is_sign_negative()));
        assert!(i32().contains(&i32::MIN) && i32().contains(&-1) && u32().contains(&u32::MAX));
    }

    #[test]
    fn the_conformance_corpus_sizes_hold() {
        // The corpus names its specials cases by these counts (`add_f32_32x32_specials`).
        assert_eq!([f32().len(), f64().len(), i32().len(), u32().len()], [32, 33, 20, 15]);
    }

    #[test]
    fn extended_sets_start_with_the_curated_ones_and_add_only_new_values() {
        fn check<T: Specials>() {
            let (c, e) = (T::specials(), T::extended());
            assert_eq!(bits(&e[..c.len()]), bits(&c));
            let mut unique = bits(&e);
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), e.len());
            assert!(e.len() > c.len());
        }
        check::<f32>();
        check::<f64>();
        check::<i32>();
        check::<u32>();
        check::<i64>();
        check::<u8>();
        // 16_777_217 rounds to 2^24 in f32, which the curated set has already.
        assert_eq!(<f32 as Specials>::extended().len(), 32 + 15);
    }

    #[test]
    fn pairs_cover_every_ordered_pair() {
        let (a, b) = host_pairs(&HostVec::I32(vec![1, 2, 3]));
        assert_eq!(a, HostVec::I32(vec![1, 1, 1, 2, 2, 2, 3, 3, 3]));
        assert_eq!(b, HostVec::I32(vec![1, 2, 3, 1, 2, 3, 1, 2, 3]));
        assert_eq!(of(DType::F64).len(), 33);
        assert_eq!(extended_of(DType::U32).len(), 18);
    }
}
