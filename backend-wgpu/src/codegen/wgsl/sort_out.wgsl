// Sort, last pass: the first kk sorted slots of each row, as the source element's words
// (sort), as its index (argsort, topk) or as the value words the slots carry (the radix
// sort's sort), one output word per thread.
// prm: 0 output words, 1 P, 2 n, 3 inner, 4 kk (the output's axis length), 5 words per
// output element, 6 values gathered through the index (0), indices (1), carried values (2).
    let total = prm(0u);
    if (total == 0u || g > (total - 1u) / 256u) { return; }
    let t = g * 256u + lid;
    if (t >= total) { return; }
    let n = prm(2u);
    let inner = prm(3u);
    let kk = prm(4u);
    let words = prm(5u);
    let e = t / words;
    let i = e % inner;
    let rest = e / inner;
    let o = rest / kk;
    let slot = (o * inner + i) * prm(1u) + rest % kk;
    if (prm(6u) == 2u) {
        dst[t] = idx[slot * words + t % words];
        return;
    }
    let s = idx[slot];
    if (prm(6u) == 1u) {
        dst[t] = s;
    } else {
        dst[t] = src[((o * n + s) * inner + i) * words + t % words];
    }
