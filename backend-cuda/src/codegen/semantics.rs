//! The prelude every generated kernel starts with: polycompute's elementwise semantics
//! (see `polycompute_core::expr`) written out as CUDA C++ device functions, one overload per
//! dtype, so that no result depends on a native instruction's corner cases. The functions
//! themselves are CUDA code in `cuda/semantics.cuh`, and the half-precision storage types
//! (`pc_f16`, `pc_bf16`: bits, widened to float for every operation) in `cuda/half.cuh`.

/// CUDA C++ source of the semantics prelude: a one-line banner, then `cuda/semantics.cuh` and `cuda/half.cuh`.
pub const PRELUDE: &str = concat!(
    "// polycompute: generated CUDA C++ (compiled by NVRTC; no headers needed)\n",
    include_str!("cuda/semantics.cuh"),
    include_str!("cuda/half.cuh")
);
