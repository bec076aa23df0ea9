// f64 words cast to a packed half array, one output word (two elements) per thread; TO is
// the half's rounding of f32 bits (here rounded to odd, so the result is rounded once).
// prm: 0 elements.
    let n = prm(0u);
    let words = n / 2u + (n & 1u);
    if (words == 0u || g > (words - 1u) / 256u) { return; }
    let w = g * 256u + lid;
    if (w >= words) { return; }
    let e = 2u * w;
    let lo = {TO}(f64_words_to_f32_odd_bits(vec2<u32>(src[2u * e], src[2u * e + 1u])));
    var hi = 0u;
    if (e + 1u < n) { hi = {TO}(f64_words_to_f32_odd_bits(vec2<u32>(src[2u * e + 2u], src[2u * e + 3u]))); }
    dst[w] = lo | (hi << 16u);
