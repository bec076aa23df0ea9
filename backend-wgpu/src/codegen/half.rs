//! Half precision (f16, bf16) without `SHADER_F16`: a half array is a `u32` array holding
//! two elements per word (element `i` in the low half of word `i / 2` when `i` is even), so
//! storing halves needs no feature; kernels read a half as the f32 of its exact value, compute
//! in f32, and round each half-typed result once to the storage type (`wgsl/half.wgsl`:
//! conversions written out in integer bit operations, round to nearest even, overflow to
//! infinity, NaN kept quiet, subnormals exact). A kernel that writes halves writes whole
//! words (two elements per thread), so neighbouring threads never race on a shared word.
//!
//! Ops that move bits (take, pad, concat, sort) run on a widened copy (one `u32` per
//! element, [`widen`]) through the 32-bit kernels and are packed back by [`narrow`].

use polycompute_core::DType;

use super::shaders::{self, instantiate};
use super::{Builder, KernelSource, WG};

/// The bit conversions and roundings of `wgsl/half.wgsl` (and, with f64 in the kernel, the
/// round-to-odd f64 conversion that makes f64 -> half a single rounding).
pub(crate) fn library(with_f64: bool) -> String {
    let mut s = shaders::HALF.to_string();
    if with_f64 {
        s.push_str(shaders::HALF_F64);
    }
    s
}

/// The WGSL function that rounds an f32 to the half `d` (the value as an f32).
pub(crate) fn round_fn(d: DType) -> &'static str {
    if d == DType::BF16 {
        "rnd_bf16"
    } else {
        "rnd_f16"
    }
}

/// The WGSL function from an f32 to the bits of the half `d` (rounded).
pub(crate) fn to_bits_fn(d: DType) -> &'static str {
    if d == DType::BF16 {
        "f32_to_bf16"
    } else {
        "f32_to_f16"
    }
}

/// The WGSL function from the bits of the half `d` to its f32 value (exact).
pub(crate) fn from_bits_fn(d: DType) -> &'static str {
    if d == DType::BF16 {
        "bf16_to_f32"
    } else {
        "f16_to_f32"
    }
}

/// `fn {name}(i: u32) -> f32`: element `i` of the packed half array `array` of dtype `d`.
pub(crate) fn load_fn(name: &str, array: &str, d: DType) -> String {
    format!("fn {name}(i: u32) -> f32 {{ return {}(half_bits({array}[i >> 1u], i)); }}\n", from_bits_fn(d))
}

/// Words of a packed half array of `n` elements.
pub(crate) fn words_of(n: usize) -> usize {
    n.div_ceil(2)
}

/// A packed half array widened to one `u32` per element: its bits, or (`key` a half dtype)
/// the sort key of `wgsl/half_sort_key.wgsl`, so an argsort of the keys as u32 is numpy's
/// order of the halves. Params: the element count.
pub(crate) fn widen(key: Option<DType>) -> KernelSource {
    let mut b = Builder::new(1);
    b.storage("src", "u32", false).storage("dst", "u32", true);
    b.code(shaders::HALF);
    let key = match key {
        Some(d) => {
            b.code(shaders::HALF_SORT_KEY);
            // The half's infinity moved to the top 16 bits of a word (sign cleared).
            let inf = if d == DType::BF16 { "0x7f800000u" } else { "0x7c000000u" };
            format!("half_sort_key(h, {inf})")
        }
        None => "h".to_string(),
    };
    b.finish((WG, 1), &instantiate(shaders::HALF_WIDEN, &[("KEY", &key)]))
}

/// One `u32` per element (the low 16 bits) packed back into a half array. Params: the
/// element count.
pub(crate) fn narrow() -> KernelSource {
    let mut b = Builder::new(1);
    b.storage("src", "u32", false).storage("dst", "u32", true);
    b.finish((WG, 1), shaders::HALF_NARROW)
}

/// A cast between the half `half` and f64 (`to_f64`: half -> f64, else f64 -> half) on bits
/// and the f64's two words, with no f64 arithmetic, so it runs without `SHADER_F64`: exact
/// to f64; to the half through an f32 rounded to odd, so rounded once. Params: the count.
pub(crate) fn f64_cast(half: DType, to_f64: bool) -> KernelSource {
    let mut b = Builder::new(1);
    b.storage("src", "u32", false).storage("dst", "u32", true);
    b.code(shaders::HALF).code(shaders::HALF_F64_WORDS);
    let bf = half == DType::BF16;
    let body = if to_f64 {
        instantiate(shaders::HALF_TO_F64, &[("FROM", if bf { "bf16_to_f32_bits" } else { "f16_to_f32_bits" })])
    } else {
        instantiate(shaders::F64_TO_HALF, &[("TO", if bf { "f32_bits_to_bf16" } else { "f32_bits_to_f16" })])
    };
    b.finish((WG, 1), &body)
}
