//! The sort keys of `i64`, `u8` and `bool` (issue 29's dtypes), kept apart from `key.rs` so
//! that the sort rewrite and the dtypes land without touching each other's lines.

use super::key::SortKey;

impl SortKey for i64 {
    const WIDE: bool = true;
    const FLOAT: bool = false;
    #[inline]
    fn from_key(k: u64) -> i64 {
        (k ^ (1 << 63)) as i64
    }
    #[inline]
    fn key(self) -> u64 {
        // Flipping the sign bit maps i64's order onto u64's.
        (self as u64) ^ (1 << 63)
    }
}

impl SortKey for u8 {
    const WIDE: bool = false;
    const FLOAT: bool = false;
    #[inline]
    fn from_key(k: u64) -> u8 {
        k as u8
    }
    #[inline]
    fn key(self) -> u64 {
        u64::from(self)
    }
}

/// `false` before `true`, as numpy.
impl SortKey for bool {
    const WIDE: bool = false;
    const FLOAT: bool = false;
    #[inline]
    fn from_key(k: u64) -> bool {
        k != 0
    }
    #[inline]
    fn key(self) -> u64 {
        u64::from(self)
    }
}
