// A packed half array cast to f64 words, one element per thread; FROM is the half's
// conversion of its bits to f32 bits (exact), which the f64 then carries exactly.
// prm: 0 elements.
    let n = prm(0u);
    if (n == 0u || g > (n - 1u) / 256u) { return; }
    let i = g * 256u + lid;
    if (i >= n) { return; }
    let v = f32_bits_to_f64_words({FROM}(half_bits(src[i >> 1u], i)));
    dst[2u * i] = v.x;
    dst[2u * i + 1u] = v.y;
