// Radix sort, first pass: slot t of row r = t / n (an (outer, inner) pair; rows are
// contiguous, no padding) gets the key of element pos = t % n of the row (see
// sort_init.wgsl for the key's order; descending, for topk, complements it) and a payload:
// the index pos (argsort, topk) or the element's own {VW} word(s) (sort, so the last pass
// reads its values in order instead of gathering them from the source).
// prm: 0 slots (rows * n), 1 n, 2 inner, 3 descending, 4 payload is the value.
    let slots = prm(0u);
    if (slots == 0u || g > (slots - 1u) / 256u) { return; }
    let t = g * 256u + lid;
    if (t >= slots) { return; }
    let n = prm(1u);
    let inner = prm(2u);
    let r = t / n;
    let pos = t % n;
    let e = ((r / inner) * n + pos) * inner + r % inner;
    var key = sort_key(e);
    if (prm(3u) == 1u) { key = ~key; }
    store_key(t, key);
    if (prm(4u) == 1u) {
        for (var w = 0u; w < {VW}u; w = w + 1u) { idx[t * {VW}u + w] = src[e * {VW}u + w]; }
    } else {
        idx[t] = pos;
    }
