// Inclusive scan of short rows, one row per thread (a workgroup per row would idle).
// prm: 0 rows, 1 n (the axis length), 2 inner.
    let rows = prm(0u);
    if (rows == 0u || g > (rows - 1u) / 256u) { return; }
    let r = g * 256u + lid;
    if (r >= rows) { return; }
    let n = prm(1u);
    let inner = prm(2u);
    let base = (r / inner) * n * inner + r % inner;
    var run = {ID};
    for (var t = 0u; t < n; t = t + 1u) {
        run = run {OP} src[base + t * inner];
        dst[base + t * inner] = run;
    }
