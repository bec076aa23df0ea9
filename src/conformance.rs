//! The cross-backend conformance corpus, shared by `tests/conformance.rs` and `polycompute check`.
