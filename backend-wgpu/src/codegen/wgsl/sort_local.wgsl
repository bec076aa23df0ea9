// Bitonic steps with j < 512, in workgroup memory: a workgroup loads 512 consecutive slots
// (a block never splits a pair: j < 512, and rows of P < 512 slots tile it), runs steps
// (k, j) for k from k_first to k_last (j from j_first at k_first, from k / 2 after), one
// pair per thread per step, and stores the block back. Slots past the end (when rows * P
// is not a multiple of 512) belong to no row and are left alone.
// prm: 0 slots, 1 P, 2 k_first, 3 k_last, 4 j_first.
    let slots = prm(0u);
    let blocks = (slots + 511u) / 512u;
    if (g >= blocks) { return; }
    let p = prm(1u);
    let base = g * 512u;
    for (var h = 0u; h < 2u; h = h + 1u) {
        let l = lid + h * 256u;
        if (base + l < slots) {
            lkeys[l] = load_key(base + l);
            lidx[l] = idx[base + l];
        }
    }
    workgroupBarrier();
    var k = prm(2u);
    var j = prm(4u);
    loop {
        if (k > prm(3u)) { break; }
        loop {
            if (j == 0u) { break; }
            let a = (lid / j) * 2u * j + lid % j;
            let b = a + j;
            if (base + b < slots) {
                let up = (((base + a) % p) & k) == 0u;
                if (local_before(b, a) == up) {
                    let ka = lkeys[a];
                    lkeys[a] = lkeys[b];
                    lkeys[b] = ka;
                    let ia = lidx[a];
                    lidx[a] = lidx[b];
                    lidx[b] = ia;
                }
            }
            workgroupBarrier();
            j = j / 2u;
        }
        k = k * 2u;
        j = k / 2u;
    }
    for (var h = 0u; h < 2u; h = h + 1u) {
        let l = lid + h * 256u;
        if (base + l < slots) {
            store_key(base + l, lkeys[l]);
            idx[base + l] = lidx[l];
        }
    }
