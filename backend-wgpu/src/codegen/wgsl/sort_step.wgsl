// One compare-exchange step (k, j) of the bitonic network on every row's P slots, one
// thread per pair: slots a and a + j, ascending where bit k of a is clear.
// prm: 0 pairs (rows * P / 2), 1 P, 2 k, 3 j.
    let pairs = prm(0u);
    if (pairs == 0u || g > (pairs - 1u) / 256u) { return; }
    let q = g * 256u + lid;
    if (q >= pairs) { return; }
    let p = prm(1u);
    let k = prm(2u);
    let j = prm(3u);
    let half = p / 2u;
    let row = (q / half) * p;
    let w = q % half;
    let a = row + (w / j) * 2u * j + w % j;
    let b = a + j;
    let up = ((a - row) & k) == 0u;
    if (slot_before(b, a) == up) {
        let ka = load_key(a);
        store_key(a, load_key(b));
        store_key(b, ka);
        let ia = idx[a];
        idx[a] = idx[b];
        idx[b] = ia;
    }
