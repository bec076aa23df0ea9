// Half precision (f16, bf16) as bits, with no SHADER_F16: a half lives in the low or high 16
// bits of a u32 word and is computed on as the f32 of its exact value. Every conversion is
// integer arithmetic on bits, so it is exact (to f32) or rounded to nearest even (to half),
// overflows to infinity, keeps NaN a quiet NaN and never depends on a driver's subnormal or
// out-of-range behaviour (WGSL leaves pack2x16float's overflow indeterminate). NaN payloads
// follow the `half` crate: widening sets the quiet bit, narrowing keeps the top payload bits.

// The 16 bits of element i of a packed half array's word w.
fn half_bits(w: u32, i: u32) -> u32 { return (w >> ((i & 1u) * 16u)) & 0xffffu; }

// f16 bits -> f32, exactly (f16 subnormals are f32 normals).
fn f16_to_f32(h: u32) -> f32 { return bitcast<f32>(f16_to_f32_bits(h) | pz); }
fn f16_to_f32_bits(h: u32) -> u32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0x1fu) {
        // Infinity, or NaN made quiet with its payload kept.
        return sign | 0x7f800000u | select(0u, 0x400000u | (m << 13u), m != 0u);
    }
    if (e == 0u) {
        // m 2^-24, normalised: the leading bit of m becomes the implicit one.
        if (m == 0u) { return sign; }
        let lead = 31u - countLeadingZeros(m);
        let mant = (m << (23u - lead)) & 0x7fffffu;
        return sign | ((lead + 103u) << 23u) | mant;
    }
    return sign | ((e + 112u) << 23u) | (m << 13u);
}

// bf16 bits -> f32: the high half of the f32 (exact, subnormals included; NaN made quiet).
fn bf16_to_f32(h: u32) -> f32 { return bitcast<f32>(bf16_to_f32_bits(h) | pz); }
fn bf16_to_f32_bits(h: u32) -> u32 { return select(h, h | 0x40u, (h & 0x7fffu) > 0x7f80u) << 16u; }

// f32 -> f16 bits, rounded to nearest even; overflow to infinity, NaN quiet.
fn f32_to_f16(x: f32) -> u32 { return f32_bits_to_f16(bitcast<u32>(x)); }
fn f32_bits_to_f16(b: u32) -> u32 {
    let sign = (b >> 16u) & 0x8000u;
    let a = b & 0x7fffffffu;
    if (a > 0x7f800000u) { return sign | 0x7e00u | ((a >> 13u) & 0x3ffu); }
    // 65520 (max finite 65504 plus half an ulp) and above round to infinity.
    if (a >= 0x477ff000u) { return sign | 0x7c00u; }
    if (a >= 0x38800000u) {
        // Normal: rebias the exponent (127 -> 15), round the 13 dropped bits to even.
        let r = a - 0x38000000u;
        return sign | ((r + 0xfffu + ((r >> 13u) & 1u)) >> 13u);
    }
    // 2^-25 and below (half the smallest subnormal, a tie to even zero) round to zero.
    if (a <= 0x33000000u) { return sign; }
    // Subnormal: the 24-bit significand in units of 2^-24, shifted by 14 to 24 bits.
    let m = (a & 0x7fffffu) | 0x800000u;
    let shift = 126u - (a >> 23u);
    var q = m >> shift;
    let rest = m & ((1u << shift) - 1u);
    let halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (q & 1u) == 1u)) { q = q + 1u; }
    return sign | q;
}

// f32 -> bf16 bits, rounded to nearest even; overflow to infinity, NaN quiet.
fn f32_to_bf16(x: f32) -> u32 { return f32_bits_to_bf16(bitcast<u32>(x)); }
fn f32_bits_to_bf16(b: u32) -> u32 {
    if ((b & 0x7fffffffu) > 0x7f800000u) { return (b >> 16u) | 0x40u; }
    return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
}

// The value of f32 x rounded to f16 (resp. bf16), as an f32: what a half-typed result is.
fn rnd_f16(x: f32) -> f32 { return f16_to_f32(f32_to_f16(x)); }
fn rnd_bf16(x: f32) -> f32 { return bf16_to_f32(f32_to_bf16(x)); }

// An unsigned integer as an f32 rounded to odd (24 significant bits, the last one set when
// bits were dropped): rounding that to a half (8 or 11 bits) once more is the correctly
// rounded half of the integer, with no double rounding.
fn u32_to_f32_odd(v: u32) -> f32 {
    if (v < 0x1000000u) { return f32(v); }
    let lead = 31u - countLeadingZeros(v);
    let shift = lead - 23u;
    let sticky = select(0u, 1u, (v & ((1u << shift) - 1u)) != 0u);
    let m = (v >> shift) | sticky;
    return bitcast<f32>(((lead + 127u) << 23u) | (m & 0x7fffffu));
}
fn i32_to_f32_odd(v: i32) -> f32 {
    let mag = select(bitcast<u32>(v), 0u - bitcast<u32>(v), v < 0);
    let f = u32_to_f32_odd(mag);
    return select(f, -f, v < 0);
}
