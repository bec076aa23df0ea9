// numpy's take (ALONG false: output [outer, m, inner] reads index j = the middle
// coordinate) and take_along_axis (ALONG true: the index array has the output's shape),
// one output word per thread. Indices were range-checked by the array layer; `norm_index`
// counts negative ones from the end.
// prm: 0 output words, 1 words per element, 2 inner, 3 m (the output's axis length), 4 n
// (the input's axis length).
    let n = prm(0u);
    if (n == 0u || g > (n - 1u) / 256u) { return; }
    let t = g * 256u + lid;
    if (t >= n) { return; }
    let words = prm(1u);
    let inner = prm(2u);
    let m = prm(3u);
    let e = t / words;
    let i = e % inner;
    let rest = e / inner;
    let o = rest / m;
    var at = rest % m;
    if ({ALONG}) { at = e; }
    let k = norm_index(idx[at], prm(4u));
    dst[t] = src[((o * prm(4u) + k) * inner + i) * words + t % words];
