// One u32 per element (the low 16 bits a half's bits) packed back two to a word: one thread
// per output word, so no two threads share a word. An odd count leaves the last word's high
// half zero.
// prm: 0 elements.
    let n = prm(0u);
    let words = n / 2u + (n & 1u);
    if (words == 0u || g > (words - 1u) / 256u) { return; }
    let w = g * 256u + lid;
    if (w >= words) { return; }
    let lo = src[2u * w] & 0xffffu;
    var hi = 0u;
    if (2u * w + 1u < n) { hi = src[2u * w + 1u] & 0xffffu; }
    dst[w] = lo | (hi << 16u);
