// numpy's pad with a constant, one output word per thread: the output coordinates (axes
// innermost first) either fall inside the input's box, which is read, or take the value.
// prm: 0 output words, 1 words per element, 2 rank, 3..4 the value's words, then per axis
// (outermost first) the output dim, the width before and the input dim.
    let n = prm(0u);
    if (n == 0u || g > (n - 1u) / 256u) { return; }
    let t = g * 256u + lid;
    if (t >= n) { return; }
    let words = prm(1u);
    let w = t % words;
    var rem = t / words;
    var src_e = 0u;
    var scale = 1u;
    var inside = true;
    for (var a = prm(2u); a > 0u; a = a - 1u) {
        let at = 5u + 3u * (a - 1u);
        let dim = prm(at);
        let c = rem % dim;
        rem = rem / dim;
        let lo = prm(at + 1u);
        let len = prm(at + 2u);
        inside = inside && c >= lo && c - lo < len;
        src_e = src_e + (c - lo) * scale;
        scale = scale * len;
    }
    if (inside) {
        dst[t] = src[src_e * words + w];
    } else {
        dst[t] = prm(3u + w);
    }
