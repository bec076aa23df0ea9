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

use std::collections::BTreeSet;

use polycompute_core::DType;

use super::transcendental::{f32_transcendental, f64_transcendental};
use super::wgsl_type;

/// The WGSL helpers for kernels over `dtypes` (their arithmetic and the casts between them).
pub(crate) fn library(dtypes: &BTreeSet<DType>) -> String {
    // `pz` (always 0 at run time) is declared by `Builder`.
    let mut out = String::new();
    if dtypes.contains(&DType::F32) || dtypes.contains(&DType::F64) {
        out.push_str(F32_BASE);
        out.push_str(&float_lib("f32"));
        out.push_str(&f32_transcendental());
    }
    if dtypes.contains(&DType::F64) {
        out.push_str(F64_BASE);
        out.push_str(&float_lib("f64"));
        out.push_str(&f64_transcendental());
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

const F32_BASE: &str = r#"
fn isnan_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn isinf_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn signbit_f32(x: f32) -> bool { return (bitcast<u32>(x) >> 31u) == 1u; }
fn nan_f32() -> f32 { return bitcast<f32>(0x7fc00000u | pz); }
fn inf_f32(neg: bool) -> f32 { return bitcast<f32>(select(0x7f800000u, 0xff800000u, neg) | pz); }
fn truthy_f32(c: f32) -> bool { return (bitcast<u32>(c) & 0x7fffffffu) != 0u; }
"#;

const F64_BASE: &str = r#"
fn isnan_f64(x: f64) -> bool { return isnan_f32(f32(x)); }
fn isinf_f64(x: f64) -> bool { return !isnan_f64(x) && abs(x) > 1.7976931348623157e308lf; }
fn signbit_f64(x: f64) -> bool { return signbit_f32(f32(x)); }
fn nan_f64() -> f64 { return f64(nan_f32()); }
fn inf_f64(neg: bool) -> f64 { return f64(inf_f32(neg)); }
fn truthy_f64(c: f64) -> bool { return isnan_f64(c) || c != f64(0); }
"#;

/// Arithmetic shared by f32 and f64 (`{T}` is the type, also the helpers' suffix).
const FLOAT_LIB: &str = r#"
fn copysign_{T}(m: {T}, s: {T}) -> {T} { return select(abs(m), -abs(m), signbit_{T}(s)); }
fn min_{T}(a: {T}, b: {T}) -> {T} {
    if (isnan_{T}(a)) { return a; }
    if (isnan_{T}(b)) { return b; }
    if (a < b) { return a; }
    if (b < a) { return b; }
    return select(b, a, signbit_{T}(a));
}
fn max_{T}(a: {T}, b: {T}) -> {T} {
    if (isnan_{T}(a)) { return a; }
    if (isnan_{T}(b)) { return b; }
    if (a > b) { return a; }
    if (b > a) { return b; }
    return select(a, b, signbit_{T}(a));
}
fn ordered_{T}(a: {T}, b: {T}) -> bool { return !isnan_{T}(a) && !isnan_{T}(b); }
fn eq_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), ordered_{T}(a, b) && a == b); }
fn ne_{T}(a: {T}, b: {T}) -> {T} { return select({T}(1), {T}(0), ordered_{T}(a, b) && a == b); }
fn lt_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), ordered_{T}(a, b) && a < b); }
fn le_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), ordered_{T}(a, b) && a <= b); }
fn gt_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), ordered_{T}(a, b) && a > b); }
fn ge_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), ordered_{T}(a, b) && a >= b); }
fn sqrt_{T}(x: {T}) -> {T} {
    if (isnan_{T}(x) || x == {T}(0)) { return x; }
    if (x < {T}(0)) { return nan_{T}(); }
    if (isinf_{T}(x)) { return x; }
{SUBNORMAL}    return sqrt(x);
}
// Exact fmod: |a| is reduced by |b| * 2^k for falling k; every subtraction r - t has
// t <= r < 2t, so it is exact (Sterbenz), and doubling or halving t is exact too.
fn fmod_{T}(a: {T}, b: {T}) -> {T} {
    if (isnan_{T}(a) || isnan_{T}(b) || isinf_{T}(a) || b == {T}(0)) { return nan_{T}(); }
    let m = abs(b);
    var r = abs(a);
    if (isinf_{T}(m) || r < m) { return a; }
    var t = m;
    loop {
        let t2 = t * {T}(2);
        if (t2 > r) { break; }
        t = t2;
    }
    loop {
        if (r >= t) { r = r - t; }
        if (t == m) { break; }
        t = t * {T}(0.5);
    }
    return copysign_{T}(r, a);
}
// numpy's remainder: the result takes the divisor's sign.
fn rem_{T}(a: {T}, b: {T}) -> {T} {
    let m = fmod_{T}(a, b);
    if (isnan_{T}(m)) { return m; }
    if (m == {T}(0)) { return copysign_{T}({T}(0), b); }
    if (signbit_{T}(m) != signbit_{T}(b)) { return m + b; }
    return m;
}
"#;

fn float_lib(t: &str) -> String {
    // A device may flush subnormal f32 operands to zero; sqrt(m 2^-149) is taken as
    // sqrt(f32(m) 2^-85) 2^-32, from the bits, with no subnormal arithmetic.
    let subnormal = if t == "f32" {
        "    if ((bitcast<u32>(x) & 0x7f800000u) == 0u) {\n        \
         return sqrt(f32(bitcast<u32>(x) & 0x7fffffu) * bitcast<f32>(0x15000000u)) * bitcast<f32>(0x2f800000u);\n    }\n"
    } else {
        ""
    };
    FLOAT_LIB.replace("{T}", t).replace("{SUBNORMAL}", subnormal)
}

/// Integer helpers: floor division and floored remainder with a zero divisor giving 0,
/// wrapping powers, comparisons as 1/0 and truthiness.
fn int_lib(d: DType) -> String {
    let t = wgsl_type(d);
    let mut s = format!(
        r#"
fn eq_{t}(a: {t}, b: {t}) -> {t} {{ return select({t}(0), {t}(1), a == b); }}
fn ne_{t}(a: {t}, b: {t}) -> {t} {{ return select({t}(0), {t}(1), a != b); }}
fn lt_{t}(a: {t}, b: {t}) -> {t} {{ return select({t}(0), {t}(1), a < b); }}
fn le_{t}(a: {t}, b: {t}) -> {t} {{ return select({t}(0), {t}(1), a <= b); }}
fn gt_{t}(a: {t}, b: {t}) -> {t} {{ return select({t}(0), {t}(1), a > b); }}
fn ge_{t}(a: {t}, b: {t}) -> {t} {{ return select({t}(0), {t}(1), a >= b); }}
fn truthy_{t}(c: {t}) -> bool {{ return c != {t}(0); }}
"#
    );
    s.push_str(match d {
        DType::I32 => {
            r#"
// Signed `/` and `%` go through unsigned magnitudes: GLSL leaves `%` with a negative
// operand undefined, and the unsigned forms are defined on every backend.
fn abs_u32(x: i32) -> u32 { return select(bitcast<u32>(x), 0u - bitcast<u32>(x), x < 0); }
fn div_i32(a: i32, b: i32) -> i32 {
    if (b == 0) { return 0; }
    let ua = abs_u32(a);
    let ub = abs_u32(b);
    let q = ua / ub;
    // Same signs: a non-negative quotient (i32::MIN / -1 wraps to i32::MIN through the bitcast).
    if ((a < 0) == (b < 0)) { return bitcast<i32>(q); }
    // Opposite signs: floor, i.e. one further from zero when the division is inexact.
    return bitcast<i32>(0u - (q + select(0u, 1u, q * ub != ua)));
}
fn rem_i32(a: i32, b: i32) -> i32 {
    if (b == 0) { return 0; }
    let r = abs_u32(a) % abs_u32(b);
    if (r == 0u) { return 0; }
    // r < |b| <= 2^31, so it fits; the truncated remainder has a's sign, the floored one b's.
    var m = select(bitcast<i32>(r), 0 - bitcast<i32>(r), a < 0);
    if ((a < 0) != (b < 0)) { m = m + b; }
    return m;
}
fn pow_i32(x: i32, e: i32) -> i32 {
    if (e < 0) {
        if (x == 1) { return 1; }
        if (x == -1) { return select(1, -1, (e & 1) != 0); }
        return 0;
    }
    var base = x;
    var k = u32(e);
    var acc = 1;
    loop {
        if (k == 0u) { break; }
        if ((k & 1u) == 1u) { acc = acc * base; }
        base = base * base;
        k = k >> 1u;
    }
    return acc;
}
"#
        }
        _ => {
            r#"
fn div_u32(a: u32, b: u32) -> u32 { return select(a / max(b, 1u), 0u, b == 0u); }
fn rem_u32(a: u32, b: u32) -> u32 { return select(a % max(b, 1u), 0u, b == 0u); }
fn pow_u32(x: u32, e: u32) -> u32 {
    var base = x;
    var k = e;
    var acc = 1u;
    loop {
        if (k == 0u) { break; }
        if ((k & 1u) == 1u) { acc = acc * base; }
        base = base * base;
        k = k >> 1u;
    }
    return acc;
}
"#
        }
    });
    s
}

/// One cast helper.
fn cast_fn(from: DType, to: DType) -> String {
    let (f, t) = (wgsl_type(from), wgsl_type(to));
    let name = cast_name(from, to);
    let body = match (from, to) {
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
