//! The sort keys: an unsigned integer per element whose order is numpy's sort order.

use crate::num::Num;

/// A key whose unsigned order is numpy's sort order for the element type.
pub(crate) trait SortKey: Num {
    /// True when the key needs 64 bits (f64).
    const WIDE: bool;
    /// True for floats, whose key merges the two zeros and every NaN.
    const FLOAT: bool;
    /// The key.
    fn key(self) -> u64;
    /// The value of a key (for floats: `+0.0` for the zeros' key, a NaN for NaN's).
    fn from_key(k: u64) -> Self;
}

impl SortKey for f32 {
    const WIDE: bool = false;
    const FLOAT: bool = true;
    #[inline]
    fn from_key(k: u64) -> f32 {
        let k = k as u32;
        f32::from_bits(if k >> 31 == 1 { k ^ 0x8000_0000 } else { !k })
    }
    #[inline]
    fn key(self) -> u64 {
        if self.is_nan() {
            return u64::from(u32::MAX);
        }
        // +0.0 for both zeros, so they tie.
        let bits = (self + 0.0).to_bits();
        u64::from(if bits >> 31 == 1 { !bits } else { bits | 0x8000_0000 })
    }
}

impl SortKey for f64 {
    const WIDE: bool = true;
    const FLOAT: bool = true;
    #[inline]
    fn from_key(k: u64) -> f64 {
        f64::from_bits(if k >> 63 == 1 { k ^ (1 << 63) } else { !k })
    }
    #[inline]
    fn key(self) -> u64 {
        if self.is_nan() {
            return u64::MAX;
        }
        let bits = (self + 0.0).to_bits();
        if bits >> 63 == 1 {
            !bits
        } else {
            bits | (1 << 63)
        }
    }
}

impl SortKey for i32 {
    const WIDE: bool = false;
    const FLOAT: bool = false;
    #[inline]
    fn from_key(k: u64) -> i32 {
        ((k as u32) ^ 0x8000_0000) as i32
    }
    #[inline]
    fn key(self) -> u64 {
        u64::from((self as u32) ^ 0x8000_0000)
    }
}

impl SortKey for u32 {
    const WIDE: bool = false;
    const FLOAT: bool = false;
    #[inline]
    fn from_key(k: u64) -> u32 {
        k as u32
    }
    #[inline]
    fn key(self) -> u64 {
        u64::from(self)
    }
}

/// The halves sort by the key of their value widened to f32 (exact, order-preserving; the
/// key of a NaN is f32's, so every NaN sorts last as for f32).
macro_rules! half_sort_key {
    ($t:ty) => {
        impl SortKey for $t {
            const WIDE: bool = false;
            const FLOAT: bool = true;
            #[inline]
            fn from_key(k: u64) -> $t {
                <$t>::from_f32(f32::from_key(k))
            }
            #[inline]
            fn key(self) -> u64 {
                self.to_f32().key()
            }
        }
    };
}

half_sort_key!(polycompute_core::f16);
half_sort_key!(polycompute_core::bf16);
