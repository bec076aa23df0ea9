// Inclusive scan of one row per workgroup (rows along `inner`-strided axes): each of the
// 256 threads folds a contiguous chunk, the chunk totals are scanned in workgroup memory
// (Hillis-Steele), then each thread rescans its chunk from its prefix. OP is + or *,
// ID its identity (-0.0 for float sums, so cumsum keeps a leading -0.0).
// prm: 0 rows, 1 n (the axis length), 2 inner.
    let rows = prm(0u);
    if (g >= rows) { return; }
    let n = prm(1u);
    let inner = prm(2u);
    let base = (g / inner) * n * inner + g % inner;
    let chunk = (n + 255u) / 256u;
    let start = min(lid * chunk, n);
    let end = min(start + chunk, n);
    var acc = {ID};
    for (var t = start; t < end; t = t + 1u) { acc = acc {OP} src[base + t * inner]; }
    part[lid] = acc;
    workgroupBarrier();
    for (var s = 1u; s < 256u; s = s * 2u) {
        var v = part[lid];
        if (lid >= s) { v = part[lid - s] {OP} v; }
        workgroupBarrier();
        part[lid] = v;
        workgroupBarrier();
    }
    var run = {ID};
    if (lid > 0u) { run = part[lid - 1u]; }
    for (var t = start; t < end; t = t + 1u) {
        run = run {OP} src[base + t * inner];
        dst[base + t * inner] = run;
    }
