//! f32 transcendentals written out, because WGSL's built-ins are only loosely specified
//! (`exp` within 3 + 2|x| ulp, `sin` within 2^-11 absolute on [-pi, pi] and unspecified
//! beyond, subnormals possibly flushed) and the shared semantics promise a few ulp
//! everywhere:
//!
//! * `exp`: Cody-Waite reduction by ln 2 in two parts, a degree-7 Taylor polynomial on
//!   |r| <= ln2/2, and a scale by 2^k built from bits (subnormal results included).
//! * `expm1`: the same reduction, expm1(r) by its Taylor polynomial, and
//!   (2^k - 1) + 2^k expm1(r): two exact terms and one rounding, so nothing cancels near 0
//!   (where a naive `exp(x) - 1` loses every bit). No float trick that relies on rounding
//!   errors (Kahan's `(u - 1) x / ln u`), which a driver's algebraic simplifier may undo.
//! * `ln`: the exponent and mantissa taken from bits (subnormal inputs too), then
//!   ln(1 + f) = f - s (f - R(s^2)) with s = f / (2 + f).
//! * `log1p`, `log2`, `log10`: the same reduction and series in fdlibm's split
//!   ln(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)). `log1p` never rounds 1 + x: f is x itself
//!   near 0 and x 2^-e + (2^-e - 1), two exact terms with an exact sum, elsewhere (no
//!   compensation term for the rounding of 1 + x, which a simplifier may fold away).
//!   `log2`/`log10` multiply by log2(e)/log10(e) and e by log10(2) in parts whose large
//!   products are exact (FreeBSD's log2f/log10f), so powers of two (and of ten, for log10)
//!   come out exact.
//! * `sin`/`cos`/`tan`: reduction by pi/2 in three parts below 256, and Payne-Hanek (the
//!   bits of 2/pi, multiplied in integers) above, then Taylor polynomials on [-pi/4, pi/4].
//! * `pow`: exp(y ln x) with ln x summed in 64-bit fixed point on integers (a table of 89
//!   reciprocals makes the reduced argument |r| <= 2^-7 and exact) and carried into the
//!   exact product as two floats, so y ln x is good to a fraction of an ulp of the result
//!   for every finite x and y (2 ulp measured over millions of random pairs).
//!
//! All constants are given as bit patterns, so no decimal conversion can move them.
//!
//! The shader code is `wgsl/transcendental_f32.wgsl` and `wgsl/transcendental_f64.wgsl`;
//! this module declares their constants and generates the f64 polynomials.

use super::shaders::{self, instantiate};

/// Constants by bit pattern, written as shortest round-trip decimals (naga cannot
/// evaluate `bitcast` in a `const`).
const CONSTANTS: [(&str, u32); 14] = [
    ("LN2_HI", 0x3f317200),
    ("LN2_LO", 0x35bfbe8e),
    ("LOG2E", 0x3fb8aa3b),
    // 1/ln 2, 1/ln 10 (12-bit head, rounded tail) and log10(2) (16-bit head), each tail the
    // exact remainder rounded (computed offline).
    ("IVLN2_HI", 0x3fb8b000),
    ("IVLN2_LO", 0xb9389ad4),
    ("IVLN10_HI", 0x3ede6000),
    ("IVLN10_LO", 0xb804ead9),
    ("LOG10_2_HI", 0x3e9a2100),
    ("LOG10_2_LO", 0xb64af608),
    ("PIO2_1", 0x3fc91000),
    ("PIO2_2", 0xb6957700),
    ("PIO2_3", 0xae74b9ee),
    ("PIO2", 0x3fc90fdb),
    ("TWO_OVER_PI", 0x3f22f983),
];

/// The f32 transcendentals (`wgsl/transcendental_f32.wgsl`) behind their constants; needs
/// the f32 helpers of `semantics` and `mulhilo`.
pub(crate) fn f32_transcendental() -> String {
    let mut s = String::new();
    for (name, bits) in CONSTANTS {
        s.push_str(&format!("const {name}: f32 = {:e}f;\n", f32::from_bits(bits)));
    }
    s.push_str(&pow_ln_table());
    s.push_str(shaders::TRANSCENDENTAL_F32);
    s
}

/// Scale of pow's fixed-point logarithm: values are integers times 2^-56 (|ln x| < 104 fits).
const FIX_SCALE: f64 = (1u64 << 56) as f64;

/// C = 2^14 / c for the interval [i, i + 1) 2^-7 of z: the middle's reciprocal, 128 / (i + 1/2),
/// rounded to 15 bits (so z C stays within 64 bits and z / c - 1 within 2^-7).
fn pow_ln_reciprocal(i: u32) -> u32 {
    if i == 127 || i == 128 {
        1 << 14
    } else {
        ((1u64 << 22) as f64 / f64::from(2 * i + 1)).round() as u32
    }
}

/// The table of pow's logarithm (`ln_fixed_f32`), one entry per 2^-7 of the reduced
/// argument z in [89, 178) * 2^-7: `vec3(C, ln c as fixed-point high word, low word)`, where
/// 1/c = C 2^-14 is the 15-bit reciprocal of the interval's middle (exactly 1 around z = 1,
/// so ln x loses nothing to cancellation there), and `LN2_FIX_HI`/`LN2_FIX_LO`, ln 2 in the
/// same fixed point (from the f64 pair ln2_hi + ln2_lo, good to 2^-57).
fn pow_ln_table() -> String {
    let mut entries = Vec::new();
    for i in 89u32..178 {
        let c_inv = pow_ln_reciprocal(i);
        // ln c = -ln(1/c) = -ln_1p((C - 2^14) 2^-14), the argument exact.
        let ln_c = -(f64::from(c_inv as i32 - (1 << 14)) / 16384.0).ln_1p();
        let fixed = (ln_c * FIX_SCALE).round() as i64;
        entries.push(format!("vec3<u32>({c_inv}u, {:#x}u, {:#x}u)", (fixed >> 32) as u32, fixed as u32));
    }
    let ln2 = (f64::from_bits(0x3FE6_2E42_FEFA_3800) * FIX_SCALE) as u64
        + (f64::from_bits(LN2_LO64_BITS) * FIX_SCALE).round() as u64;
    format!(
        "const LN2_FIX_HI: u32 = {:#x}u;\nconst LN2_FIX_LO: u32 = {:#x}u;\nvar<private> POW_LN_TABLE: array<vec3<u32>, {}> = array<vec3<u32>, {}>({});\n",
        (ln2 >> 32) as u32,
        ln2 as u32,
        entries.len(),
        entries.len(),
        entries.join(", ")
    )
}

/// Taylor coefficients of tanh (x, x^3, ..., x^37), 2^2n (2^2n - 1) B_2n / (2n)!, rounded
/// from exact fractions: 19 terms reach f64 precision for |x| < 0.55.
const TANH_TAYLOR: [f64; 19] = [
    1.0,
    -0.3333333333333333,
    0.13333333333333333,
    -0.05396825396825397,
    0.021869488536155203,
    -0.008863235529902197,
    0.003592128036572481,
    -0.0014558343870513183,
    0.000590027440945586,
    -0.00023912911424355248,
    9.691537956929451e-05,
    -3.927832388331683e-05,
    1.5918905069328964e-05,
    -6.451689215655431e-06,
    2.6147711512907546e-06,
    -1.0597268320104654e-06,
    4.294911078273806e-07,
    -1.7406618963571648e-07,
    7.054636946400968e-08,
];

/// The f64 closest to ln 2 - 0x3FE62E42FEFA3800 (computed exactly, offline).
const LN2_LO64_BITS: u64 = 0x3D2E_F357_93C7_6730;

/// 1/ln 2, 1/ln 10 (28-bit heads, so a head times an f32 is exact) and log10(2) (a 42-bit
/// head, exact times any f64 exponent) as head and tail, the tail the exact remainder rounded
/// (computed offline).
const LOG_SPLITS64: [(&str, u64); 6] = [
    ("ivln2_hi", 0x3FF7_1547_6600_0000),
    ("ivln2_lo", 0xBE2A_8FA0_3D11_05E0),
    ("ivln10_hi", 0x3FDB_CB7B_1600_0000),
    ("ivln10_lo", 0xBE0B_235E_39AB_2A91),
    ("log10_2_hi", 0x3FD3_4413_509F_7800),
    ("log10_2_lo", 0x3D1F_EF31_1F12_B358),
];

/// f64 `exp`, `ln` and `tanh` (f64 has no 64-bit bitcast without `SHADER_INT64`, so exponents move
/// through `ldexp` and an f32 conversion): Cody-Waite reduction by ln 2 (the high part has 42
/// bits, so k ln2_hi is exact) and a degree-13 Taylor polynomial for `exp`; the exponent found
/// by scaling into f32's range, then ln(1 + f) = f - s (f - R(s^2)) to s^21 for `ln`.
/// `tanh` and `expm1` build on `exp`'s reduction; `log1p`, `log2` and `log10` on `ln`'s, with
/// the series to s^23 (their f reaches 0.5).
pub(crate) fn f64_transcendental() -> String {
    let lit = |v: f64| format!("{v:e}lf");
    let lit_signed = |v: f64| if v < 0.0 { format!("(-{})", lit(-v)) } else { lit(v) };
    // Horner's scheme: `var p = c_first;` then `p = p * x + c;` for the rest, one per line.
    let horner = |indent: &str, var: &str, x: &str, coeffs: &[f64]| -> String {
        let mut lines = vec![format!("{indent}var {var} = {};", lit_signed(coeffs[0]))];
        lines.extend(coeffs[1..].iter().map(|&c| format!("{indent}{var} = {var} * {x} + {};", lit_signed(c))));
        lines.join("\n")
    };
    let ln2_hi = lit(f64::from_bits(0x3FE6_2E42_FEFA_3800));
    // ln 2 - ln2_hi, rounded from the exact value (not from ln 2 rounded to f64).
    let ln2_lo = lit(f64::from_bits(LN2_LO64_BITS));
    // 1/n! for n = 13 down to 0.
    let mut inverse_factorials = vec![1.0f64];
    let mut fact = 1.0f64;
    for n in 1..=13 {
        fact *= n as f64;
        inverse_factorials.push(1.0 / fact);
    }
    inverse_factorials.reverse();
    // 1/n! for n = 17 down to 2: expm1(r) = r + r^2 (1/2 + r/6 + ...), for |r| < ln 2.
    let expm1_coeffs: Vec<f64> = (2..=17u32).rev().map(|n| 1.0 / (1..=n).map(f64::from).product::<f64>()).collect();
    // 2 / (2k + 1) for k = 10 down to 1.
    let ln_coeffs: Vec<f64> = (1..=10).rev().map(|k| 2.0 / (2 * k + 1) as f64).collect();
    // 2 / (2k + 1) for k = 11 down to 1.
    let log_coeffs: Vec<f64> = (1..=11).rev().map(|k| 2.0 / (2 * k + 1) as f64).collect();
    let tanh_coeffs: Vec<f64> = TANH_TAYLOR.iter().rev().copied().collect();
    // sin: r + r z (S1 + z (S2 + ...)), cos: 1 + z (-1/2 + z (C2 + ...)), to r^19 and r^20.
    let sin_coeffs = [
        -8.22063524662433e-18,
        2.8114572543455206e-15,
        -7.647163731819816e-13,
        1.6059043836821613e-10,
        -2.505210838544172e-08,
        2.7557319223985893e-06,
        -0.0001984126984126984,
        0.008333333333333333,
        -0.16666666666666666,
    ];
    let cos_coeffs = [
        4.110317623312165e-19,
        -1.5619206968586225e-16,
        4.779477332387385e-14,
        -1.1470745597729725e-11,
        2.08767569878681e-09,
        -2.755731922398589e-07,
        2.48015873015873e-05,
        -0.001388888888888889,
        0.041666666666666664,
    ];
    let consts = [
        ("P64_1", f64::from_bits(0x3FF9_21FB_5440_0000)),
        ("P64_2", f64::from_bits(0x3DD0_B461_1A60_0000)),
        ("P64_3", f64::from_bits(0x3BA3_198A_2E03_7073)),
        ("P64_PIO2", f64::from_bits(0x3FF9_21FB_5444_2D18)),
        ("P64_TWO_OVER_PI", f64::from_bits(0x3FE4_5F30_6DC9_C883)),
        ("P64_LIMIT", 1.6e6),
        ("P64_TWO64", 2f64.powi(64)),
        ("P64_TWO32", 2f64.powi(32)),
        ("P64_TWO_M32", 2f64.powi(-32)),
    ];
    let mut out = String::new();
    for (name, v) in consts {
        out.push_str(&format!("const {name}: f64 = {};\n", lit(v)));
    }
    let values = [
        ("sin_poly", horner("    ", "p", "z", &sin_coeffs)),
        ("cos_poly", horner("    ", "p", "z", &cos_coeffs)),
        ("tanh_poly", horner("        ", "p", "z", &tanh_coeffs)),
        ("exp_poly", horner("    ", "p", "r", &inverse_factorials)),
        ("expm1_poly", horner("    ", "p", "r", &expm1_coeffs)),
        ("ln_poly", horner("    ", "rr", "z", &ln_coeffs)),
        ("log_poly", horner("    ", "rr", "z", &log_coeffs)),
        ("ln2_hi", ln2_hi),
        ("ln2_lo", ln2_lo),
        ("max_log", lit(709.782712893384)),
        ("min_log", lit(745.1332191019412)),
        ("log2e", lit(std::f64::consts::LOG2_E)),
        ("min_normal", lit(f64::MIN_POSITIVE)),
        ("two54", lit(2f64.powi(54))),
        ("two64", lit(2f64.powi(64))),
        ("two_m64", lit(2f64.powi(-64))),
        ("sqrt2", lit(std::f64::consts::SQRT_2)),
        ("sqrt_half_m1", lit_signed(std::f64::consts::FRAC_1_SQRT_2 - 1.0)),
    ];
    let splits = LOG_SPLITS64.map(|(k, bits)| (k, lit_signed(f64::from_bits(bits))));
    let values: Vec<(&str, &str)> = values.iter().chain(splits.iter()).map(|(k, v)| (*k, v.as_str())).collect();
    out + &instantiate(shaders::TRANSCENDENTAL_F64, &values)
}

#[cfg(test)]
mod tests {
    use super::shaders::leftover_placeholder;
    use super::*;

    #[test]
    fn pow_ln_table_reduces_to_small_exact_arguments() {
        // Every z of every interval: z C 2^-38 - 1 within 2^-7 (so it fits one i32 at
        // scale 2^-38) and the fixed-point ln c within 2^-55 of the f64 logarithm.
        for i in 89u32..178 {
            let c_inv = u64::from(pow_ln_reciprocal(i));
            for zi in [u64::from(i) << 17, (u64::from(i + 1) << 17) - 1] {
                let r = (zi * c_inv) as i64 - (1i64 << 38);
                assert!((-(1i64 << 31)..(1i64 << 31)).contains(&r), "interval {i}: r = {r}");
            }
        }
        let text = pow_ln_table();
        assert_eq!(text.matches("vec3<u32>(").count(), 89);
    }

    #[test]
    fn every_placeholder_is_filled() {
        for text in [f32_transcendental(), f64_transcendental()] {
            assert_eq!(leftover_placeholder(&text), None);
        }
    }
}
