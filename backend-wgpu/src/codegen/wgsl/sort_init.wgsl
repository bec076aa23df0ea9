// Sort, first pass: each row (an (outer, inner) pair, its axis padded to the power of two
// P) becomes P (key, index) slots. The key is an unsigned integer (KW words, most
// significant first) ordered as numpy sorts: -0.0 made +0.0, every NaN the largest key
// after +inf; descending (topk) complements it so NaN comes first. Padding slots take the
// all-ones key and indices from n up, so they sort after every element. Keys and indices
// together are distinct, which makes the (unstable) bitonic network a stable sort.
// prm: 0 slots (rows * P), 1 P, 2 n, 3 inner, 4 descending.
    let slots = prm(0u);
    if (slots == 0u || g > (slots - 1u) / 256u) { return; }
    let t = g * 256u + lid;
    if (t >= slots) { return; }
    let p = prm(1u);
    let n = prm(2u);
    let inner = prm(3u);
    let r = t / p;
    let pos = t % p;
    idx[t] = pos;
    if (pos >= n) {
        for (var w = 0u; w < {KW}u; w = w + 1u) { keys[t * {KW}u + w] = 0xffffffffu; }
        return;
    }
    let e = ((r / inner) * n + pos) * inner + r % inner;
    var key = sort_key(e);
    if (prm(4u) == 1u) { key = ~key; }
    store_key(t, key);
