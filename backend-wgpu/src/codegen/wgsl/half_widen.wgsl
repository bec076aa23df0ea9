// A packed half array (two elements per word) widened to one u32 per element: KEY maps the
// element's 16 bits `h` to the word written (the bits themselves, or a sort key).
// prm: 0 elements.
    let n = prm(0u);
    if (n == 0u || g > (n - 1u) / 256u) { return; }
    let i = g * 256u + lid;
    if (i >= n) { return; }
    let h = half_bits(src[i >> 1u], i);
    dst[i] = {KEY};
