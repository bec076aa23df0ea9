//! Backend-neutral planning: how an op's shapes turn into the few numbers a kernel loops
//! over. Every backend needs the same answers — which dimensions of a broadcast can be
//! walked as one, which axes of a transpose really move, how each map input is read, what
//! a compiled map kernel depends on — so they are computed once here, tested once against
//! naive index arithmetic, and backends keep only what is theirs (source text, launches,
//! loops).
//!
//! - [`coalesce`]: merges the dimensions of a strided walk (broadcast or permuted reads).
//! - [`simplify_permutation`]: the smallest transpose equivalent to a given one.
//! - [`Access`]: how one map input is read (same index, one element, or strided).
//! - [`MapLayout`] and [`MapSignature`]: a map's access classes and coalesced geometry,
//!   and the part of it a compiled kernel depends on (what GPU kernel caches key on).
//!
//! Empty arrays have one canonical form throughout: when any dimension is 0, the
//! coalesced walk is the single axis `[0]` (every stride 0) and the simplified
//! permutation is `[0]` over `[0]` — nothing is read, and no loop bound can overflow.

mod access;
mod coalesce;
mod map;
mod permute;

pub use access::Access;
pub use coalesce::{coalesce, Coalesced};
pub use map::{MapLayout, MapSignature};
pub use permute::{simplify_permutation, Permutation};

#[cfg(test)]
mod tests;
