// Casts between halves and f64 on the bits, with no f64 arithmetic (so no SHADER_F64): an
// f64 is two u32 words, low word first. Needs half.wgsl.

// The f32 bits `b` (any f32: subnormals, NaN, infinity) as the words of the same f64.
fn f32_bits_to_f64_words(b: u32) -> vec2<u32> {
    let sign = b & 0x80000000u;
    let e = (b >> 23u) & 0xffu;
    let m = b & 0x7fffffu;
    if (e == 0xffu) { return vec2<u32>(m << 29u, sign | 0x7ff00000u | (m >> 3u)); }
    if (e != 0u) { return vec2<u32>(m << 29u, sign | ((e + 896u) << 20u) | (m >> 3u)); }
    if (m == 0u) { return vec2<u32>(0u, sign); }
    // Subnormal: m 2^-149 with its leading bit at `lead`, normal in f64.
    let lead = 31u - countLeadingZeros(m);
    let f = m ^ (1u << lead);
    let s = 52u - lead;
    if (s >= 32u) { return vec2<u32>(0u, sign | ((lead + 874u) << 20u) | (f << (s - 32u))); }
    return vec2<u32>(f << s, sign | ((lead + 874u) << 20u) | (f >> (32u - s)));
}

// The f64 of words `w` as the bits of an f32 rounded to odd (truncated, the last bit set
// when bits were dropped): rounding those once more to a half is the correctly rounded half.
fn f64_words_to_f32_odd_bits(w: vec2<u32>) -> u32 {
    let lo = w.x;
    let hi = w.y;
    let sign = hi & 0x80000000u;
    let e11 = (hi >> 20u) & 0x7ffu;
    let mhi = hi & 0xfffffu;
    if (e11 == 0x7ffu) {
        if ((mhi | lo) == 0u) { return sign | 0x7f800000u; }
        return sign | 0x7fc00000u | (mhi << 3u) | (lo >> 29u);
    }
    if (e11 >= 1151u) { return sign | 0x7f7fffffu; }
    if (e11 >= 897u) {
        let sticky = select(0u, 1u, (lo & 0x1fffffffu) != 0u);
        return sign | ((e11 - 896u) << 23u) | (mhi << 3u) | (lo >> 29u) | sticky;
    }
    // An f32 subnormal (or less): the significand shifted right by s >= 30.
    let top = select(mhi, mhi | 0x100000u, e11 != 0u);
    let s = 926u - e11;
    if (s >= 53u) { return sign | select(0u, 1u, (top | lo) != 0u); }
    if (s < 32u) {
        let q = (top << (32u - s)) | (lo >> s);
        return sign | q | select(0u, 1u, (lo & ((1u << s) - 1u)) != 0u);
    }
    let q = top >> (s - 32u);
    return sign | q | select(0u, 1u, lo != 0u || (top & ((1u << (s - 32u)) - 1u)) != 0u);
}
