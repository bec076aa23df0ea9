//! The shared semantics (core/src/expr/mod.rs) written out in WGSL, one helper per rule,
//! because WGSL's built-ins differ from them or leave them to the implementation:
//!
//! * NaN tests look at bits (`isnan_f32`), never `x != x`, which a shader compiler that
//!   assumes no NaNs may fold to `false`. f64 has no 64-bit bitcast without `SHADER_INT64`,
//!   so an f64 is tested through its f32 conversion, which keeps NaN a NaN (and overflows
//!   finite values to infinity, never to NaN).
//! * Infinity and NaN are built from `pz`, a zero read from memory at run time, because a
//!   WGSL constant expression may not produce a non-finite value (naga rejects the shader)
//!   and a driver that sees a constant inf or NaN may fold it as if there were none.
//! * `min`/`max` propagate NaN and order `-0.0` below `0.0`; comparisons with NaN are false.
//! * Float `rem` is numpy's `remainder` on an exact `fmod` (WGSL's `%` is `a - b * trunc(a / b)`,
//!   which rounds); integer `/` and `%` floor, and give 0 for a zero divisor.
//! * Float to integer casts saturate and send NaN to 0; `i32`<->`u32` reinterpret bits.
//! * `pow` follows IEEE's special cases (WGSL's is `exp2(y * log2(x))`, undefined for x < 0);
//!   `tanh` avoids the `inf / inf` of a naive formula; the f32 transcendentals are written
//!   out in `transcendental`.
//!
//! The helpers themselves are WGSL files under `wgsl/` (see `shaders`); this module picks
//! the ones a kernel's dtypes need and generates the casts between them.

use std::collections::BTreeSet;

use polycompute_core::DType;

use super::shaders::{self, instantiate};
use super::transcendental::{f32_transcendental, f64_transcendental};
use super::wgsl_type;

/// The WGSL helpers for kernels over `dtypes` (their arithmetic and the casts between them).
pub(crate) fn library(dtypes: &BTreeSet<DType>) -> String {
    // `pz` (always 0 at run time) is declared by `Builder`.
    let mut out = String::new();
    // Halves are computed on in f32: they need its helpers too.
    let half = dtypes.iter().any(|d| d.is_half());
    if half || dtypes.contains(&DType::F32) || dtypes.contains(&DType::F64) {
        out.push_str(shaders::F32_BASE);
        out.push_str(&float_lib("f32"));
        out.push_str(shaders::MULHILO);
        out.push_str(&f32_transcendental());
    }
    if dtypes.contains(&DType::F64) {
        out.push_str(shaders::F64_BASE);
        out.push_str(&float_lib("f64"));
        out.push_str(&f64_transcendental());
    }
    if half {
        out.push_str(&super::half::library(dtypes.contains(&DType::F64)));
    }
    for d in [DType::I32, DType::U32] {
        if dtypes.contains(&d) {
            out.push_str(&int_lib(d));
        }
    }
    for &from in dtypes {
        for &to in dtypes {
            if from != to {
                out.push_str(&cast_fn(from, to));
            }
        }
    }
    out
}

/// Name of the cast helper from `from` to `to`.
pub(crate) fn cast_name(from: DType, to: DType) -> String {
    format!("cast_{}_{}", from.name(), to.name())
}

fn float_lib(t: &str) -> String {
    // A device may flush subnormal f32 operands to zero; sqrt(m 2^-149) is taken as
    // sqrt(f32(m) 2^-85) 2^-32, from the bits, with no subnormal arithmetic.
    let subnormal = if t == "f32" {
        "    if ((bitcast<u32>(x) & 0x7f800000u) == 0u) {\n        \
         return sqrt(f32(bitcast<u32>(x) & 0x7fffffu) * bitcast<f32>(0x15000000u)) * bitcast<f32>(0x2f800000u);\n    }"
    } else {
        ""
    };
    instantiate(shaders::FLOAT, &[("T", t), ("SUBNORMAL", subnormal)])
}

/// Integer helpers: floor division and floored remainder with a zero divisor giving 0,
/// wrapping powers, comparisons as 1/0 and truthiness.
fn int_lib(d: DType) -> String {
    let arithmetic = if d == DType::I32 { shaders::I32 } else { shaders::U32 };
    instantiate(shaders::INT, &[("T", wgsl_type(d))]) + arithmetic
}

/// One cast helper.
fn cast_fn(from: DType, to: DType) -> String {
    let (f, t) = (wgsl_type(from), wgsl_type(to));
    let name = cast_name(from, to);
    let body = match (from, to) {
        // To a half: one rounding of the exact value. f32 (and a half, as its f32) rounds
        // directly; integers and f64 first go to an f32 rounded to odd, which a second
        // rounding to 8 or 11 bits leaves correctly rounded.
        (_, DType::F16 | DType::BF16) => {
            let exact = match from {
                DType::I32 => "i32_to_f32_odd(x)",
                DType::U32 => "u32_to_f32_odd(x)",
                DType::F64 => "f64_to_f32_odd(x)",
                _ => "x",
            };
            format!("return {}({exact});", super::half::round_fn(to))
        }
        // From a half (an exact f32): as from that f32.
        (DType::F16 | DType::BF16, DType::F32) => "return x;".to_string(),
        (DType::F16 | DType::BF16, DType::I32 | DType::U32 | DType::F64) => {
            return cast_fn(DType::F32, to).replacen(&cast_name(DType::F32, to), &name, 1)
        }
        (DType::I32, DType::U32) | (DType::U32, DType::I32) => format!("return bitcast<{t}>(x);"),
        (_, DType::F32) | (_, DType::F64) => format!("return {t}(x);"),
        (DType::F32 | DType::F64, DType::I32) => format!(
            "if (isnan_{f}(x)) {{ return 0; }}\n    \
             if (x >= {f}(2147483648.0)) {{ return 2147483647; }}\n    \
             if (x <= {f}(-2147483648.0)) {{ return bitcast<i32>(0x80000000u); }}\n    \
             return i32(x);"
        ),
        (DType::F32 | DType::F64, DType::U32) => format!(
            "if (isnan_{f}(x) || x <= {f}(0)) {{ return 0u; }}\n    \
             if (x >= {f}(4294967296.0)) {{ return 4294967295u; }}\n    \
             return u32(x);"
        ),
        _ => format!("return {t}(x);"),
    };
    format!("fn {name}(x: {f}) -> {t} {{\n    {body}\n}}\n")
}
