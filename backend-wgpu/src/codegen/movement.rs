//! Data movement kernels: concat, constant pad, take and take_along_axis move 32-bit words
//! (an f64 is two), so they run on devices without `SHADER_F64` too; scatter_add adds in
//! the dtype. All read plain (row-major) inputs; sizes travel in the uniform block.

use polycompute_core::DType;

use super::shaders::{self, instantiate};
use super::{wgsl_type, Builder, KernelSource, WG};

/// Words of one element of `dtype` (f64: 2).
pub(crate) fn words(dtype: DType) -> usize {
    // Every dtype listed: a new one (an 8-byte integer, a 1-byte mask) must say.
    match dtype {
        DType::F64 | DType::I64 => 2,
        DType::F32 | DType::I32 | DType::U32 | DType::F16 | DType::BF16 => 1,
        // Never reached (`device::not_yet`): a u32 word per element when they come.
        DType::U8 | DType::Bool => 1,
    }
}

/// One input's copy into its place in a concat's output rows (`wgsl/concat.wgsl`).
pub(crate) fn concat() -> KernelSource {
    let mut b = Builder::new(4);
    b.storage("src", "u32", false).storage("dst", "u32", true);
    b.finish((WG, 1), shaders::CONCAT)
}

/// Uniform words of [`pad`] for a rank.
pub(crate) fn pad_params(rank: usize) -> usize {
    5 + 3 * rank
}

/// Constant pad of any rank (the rank is a uniform word; `wgsl/pad.wgsl`).
pub(crate) fn pad() -> KernelSource {
    // The uniform block is sized for the widest rank a kernel is launched with; WGSL needs
    // a fixed array length, so it is sized generously and the launch fills what it uses.
    let mut b = Builder::new(pad_params(MAX_PAD_RANK));
    b.storage("src", "u32", false).storage("dst", "u32", true);
    b.finish((WG, 1), shaders::PAD)
}

/// The largest rank [`pad`] handles (the uniform block's size; core caps ranks far lower).
pub(crate) const MAX_PAD_RANK: usize = 32;

/// take (`along` false) or take_along_axis (`along` true) with `index` (u32 or i32) indices.
pub(crate) fn take(index: DType, along: bool) -> KernelSource {
    let mut b = Builder::new(5);
    b.storage("src", "u32", false).storage("idx", wgsl_type(index), false).storage("dst", "u32", true);
    b.code(&instantiate(shaders::INDEX, &[("I", wgsl_type(index))]));
    let along = if along { "true" } else { "false" };
    b.finish((WG, 1), &instantiate(shaders::TAKE, &[("ALONG", along)]))
}

/// scatter_add of `dtype` values at `index` indices (`wgsl/scatter_add.wgsl`). Halves are
/// added widened to f32 (the buffers are f32), each sum rounded to the half.
pub(crate) fn scatter_add(dtype: DType, index: DType) -> KernelSource {
    let t = wgsl_type(dtype);
    let mut b = Builder::new(6);
    b.storage("idx", wgsl_type(index), false).storage("vals", t, false).storage("dst", t, true);
    b.code(&instantiate(shaders::INDEX, &[("I", wgsl_type(index))]));
    b.code(&half_rounding(dtype));
    b.finish((WG, 1), &instantiate(shaders::SCATTER_ADD, &[("ROUND", half_round_fn(dtype))]))
}

/// The half helpers a kernel rounding to `dtype` needs (none for other dtypes).
fn half_rounding(dtype: DType) -> String {
    if dtype.is_half() {
        super::half::library(false)
    } else {
        String::new()
    }
}

/// The rounding applied to each result of `dtype`: a half's, or none.
fn half_round_fn(dtype: DType) -> &'static str {
    if dtype.is_half() {
        super::half::round_fn(dtype)
    } else {
        ""
    }
}
