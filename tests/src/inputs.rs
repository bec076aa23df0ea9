//! Input generators of the corpus: the test kit's Philox generator ([`Gen`], computed on the
//! host so every backend sees the same inputs) and its curated special values ([`specials`]).
//! The corpus's golden snapshots pin both.

use polycompute::DType;

pub use polycompute_testing::inputs::Gen;
pub use polycompute_testing::specials::of as specials;

/// Number of special values of a dtype.
pub fn specials_len(dtype: DType) -> usize {
    specials(dtype).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_counts_of_specials_hold() {
        // Case names carry these counts (`cast_u32_to_f32_15_specials`).
        assert_eq!(DType::ALL.map(specials_len), [32, 33, 20, 15, 28, 29, 20, 10, 2]);
    }
}
