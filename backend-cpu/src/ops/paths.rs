//! Which kernel paths this machine takes, named for `polycompute probe` (the device's
//! `details`): the instruction set found at run time, and what the matrix product runs on.
//! The names are read from the same detection the kernels dispatch on, so the probe cannot
//! claim a path the kernels do not take.

/// The widest instruction set the CPU kernels dispatch to on this machine.
pub(crate) fn simd_level() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        // The `pulp` dispatch of the hand-vectorised kernels (argmin along short rows) and
        // `gemm`'s own both test these bits at run time.
        let v3 = std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
        if v3 && std::arch::is_x86_feature_detected!("avx512f") {
            // Present, but no kernel here is compiled for it (gemm's `x86-v4` feature is off):
            // saying so keeps a figure from being read as an AVX-512 one.
            "x86-64-v3 (AVX2, FMA); AVX-512 present but unused"
        } else if v3 {
            "x86-64-v3 (AVX2, FMA)"
        } else {
            "x86-64 baseline (SSE2)"
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        "aarch64 NEON"
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        "portable (no hand-vectorised kernels)"
    }
}

/// What `Op::Matmul` runs on: the `gemm` crate's kernels at [`simd_level`] (its AVX-512
/// kernels are not compiled in; see `matmul.rs` for the measurement), f16 and bf16 widened
/// to f32 with one rounding of each output.
pub(crate) fn matmul_path() -> &'static str {
    "gemm crate (f32/f64 kernels at the simd level above; f16/bf16 widened to f32, accumulated in f32, rounded once)"
}

/// What `Op::Sort`/`Op::Argsort` run on (`sort/kernels.rs` picks one of the three by shape).
pub(crate) fn sort_path() -> &'static str {
    "radix on order-preserving keys: one long lane by a parallel most-significant-digit pass, then in-cache LSD passes; rows of <= 32 ranked on the stack; other lanes each radix-sorted when long, comparison-sorted when short"
}
