//! The hand-written WGSL under `wgsl/`, pulled in at compile time so it reads (and diffs) as
//! shader code, and the filling of the placeholders of its templates. What depends on a
//! kernel's signature (dtypes, programs, sizes of unrolled loops) stays generated in Rust.

/// f32 predicates and constructors (`isnan_f32`, `inf_f32`, ...).
pub(crate) const F32_BASE: &str = include_str!("wgsl/f32_base.wgsl");
/// f64 predicates and constructors, through f32 conversions.
pub(crate) const F64_BASE: &str = include_str!("wgsl/f64_base.wgsl");
/// Float arithmetic for f32 and f64; placeholders `T` and `SUBNORMAL`.
pub(crate) const FLOAT: &str = include_str!("wgsl/float.wgsl");
/// Integer comparisons and truthiness for i32 and u32; placeholder `T`.
pub(crate) const INT: &str = include_str!("wgsl/int.wgsl");
/// i32 floor division, floored remainder and wrapping power.
pub(crate) const I32: &str = include_str!("wgsl/i32.wgsl");
/// u32 division, remainder and wrapping power.
pub(crate) const U32: &str = include_str!("wgsl/u32.wgsl");
/// The 32x32 -> 64-bit product `mulhilo`, shared by Philox and the transcendentals.
pub(crate) const MULHILO: &str = include_str!("wgsl/mulhilo.wgsl");
/// f32 exp, expm1, ln, log1p, log2, log10, sin, cos, tan, tanh and pow; the constants are
/// declared before it.
pub(crate) const TRANSCENDENTAL_F32: &str = include_str!("wgsl/transcendental_f32.wgsl");
/// f64 sin, cos, tan, tanh, exp, expm1, ln, log1p, log2 and log10; placeholders for
/// polynomials and constants.
pub(crate) const TRANSCENDENTAL_F64: &str = include_str!("wgsl/transcendental_f64.wgsl");
/// Philox4x32-10 and the f32 unit conversion.
pub(crate) const PHILOX: &str = include_str!("wgsl/philox.wgsl");
/// The f64 unit conversion of two Philox words.
pub(crate) const PHILOX_F64: &str = include_str!("wgsl/philox_f64.wgsl");

/// Half precision as bits: f16/bf16 <-> f32 conversions, rounding, integer round-to-odd.
pub(crate) const HALF: &str = include_str!("wgsl/half.wgsl");
/// f64 -> f32 rounded to odd (so f64 -> half rounds once); needs `SHADER_F64`.
pub(crate) const HALF_F64: &str = include_str!("wgsl/half_f64.wgsl");
/// Half <-> f64 conversions on bits and words (no f64 arithmetic).
pub(crate) const HALF_F64_WORDS: &str = include_str!("wgsl/half_f64_words.wgsl");
/// Body of a half -> f64 cast on words; placeholder `FROM`.
pub(crate) const HALF_TO_F64: &str = include_str!("wgsl/half_to_f64.wgsl");
/// Body of an f64 -> half cast on words; placeholder `TO`.
pub(crate) const F64_TO_HALF: &str = include_str!("wgsl/f64_to_half.wgsl");
/// Body of the widening of a packed half array to a word per element; placeholder `KEY`.
pub(crate) const HALF_WIDEN: &str = include_str!("wgsl/half_widen.wgsl");
/// Body of the packing of a word per element back into a half array.
pub(crate) const HALF_NARROW: &str = include_str!("wgsl/half_narrow.wgsl");
/// The sort key of a half's bits.
pub(crate) const HALF_SORT_KEY: &str = include_str!("wgsl/half_sort_key.wgsl");

/// Index normalization (negative i32 indices from the end); placeholder `I`.
pub(crate) const INDEX: &str = include_str!("wgsl/index.wgsl");
/// Body of one input's copy into a concat.
pub(crate) const CONCAT: &str = include_str!("wgsl/concat.wgsl");
/// Body of a constant pad.
pub(crate) const PAD: &str = include_str!("wgsl/pad.wgsl");
/// Body of take and take_along_axis; placeholder `ALONG`.
pub(crate) const TAKE: &str = include_str!("wgsl/take.wgsl");
/// Body of scatter_add.
pub(crate) const SCATTER_ADD: &str = include_str!("wgsl/scatter_add.wgsl");
/// Body of the workgroup-per-row scan; placeholders `OP`, `ID`.
pub(crate) const SCAN: &str = include_str!("wgsl/scan.wgsl");
/// Body of the thread-per-row scan; placeholders `OP`, `ID`.
pub(crate) const SCAN_SERIAL: &str = include_str!("wgsl/scan_serial.wgsl");
/// Body of the sort's key pass; placeholder `KW`.
pub(crate) const SORT_INIT: &str = include_str!("wgsl/sort_init.wgsl");
/// Body of one bitonic compare-exchange step.
pub(crate) const SORT_STEP: &str = include_str!("wgsl/sort_step.wgsl");
/// Body of the bitonic steps with j < 512 in workgroup memory.
pub(crate) const SORT_LOCAL: &str = include_str!("wgsl/sort_local.wgsl");
/// Workgroup slots of one-word keys and their comparison.
pub(crate) const SORT_LOCAL1: &str = include_str!("wgsl/sort_local1.wgsl");
/// Workgroup slots of two-word keys and their comparison.
pub(crate) const SORT_LOCAL2: &str = include_str!("wgsl/sort_local2.wgsl");
/// Body of the sort's output pass.
pub(crate) const SORT_OUT: &str = include_str!("wgsl/sort_out.wgsl");
/// One-word sort keys and their comparison; placeholder `KEY`.
pub(crate) const SORT_KEY1: &str = include_str!("wgsl/sort_key1.wgsl");
/// Two-word (f64) sort keys and their comparison.
pub(crate) const SORT_KEY2: &str = include_str!("wgsl/sort_key2.wgsl");

/// `template` with every `{name}` of `values` replaced by its text.
pub(crate) fn instantiate(template: &str, values: &[(&str, &str)]) -> String {
    values.iter().fold(template.to_string(), |text, (name, value)| text.replace(&format!("{{{name}}}"), value))
}

/// The first `{name}` left in `text` (a placeholder nobody filled), if any.
#[cfg(test)]
pub(crate) fn leftover_placeholder(text: &str) -> Option<&str> {
    text.match_indices('{').find_map(|(i, _)| {
        let rest = &text[i + 1..];
        let end = rest.find('}')?;
        let name = &rest[..end];
        (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_leftovers_found() {
        assert_eq!(instantiate("fn f_{T}(x: {T}) {}", &[("T", "f32")]), "fn f_f32(x: f32) {}");
        assert_eq!(leftover_placeholder("fn f(x: f32) { return x; }"), None);
        assert_eq!(leftover_placeholder("let k = {log2e};"), Some("log2e"));
    }
}
