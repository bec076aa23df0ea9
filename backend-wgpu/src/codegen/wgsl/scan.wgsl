// Inclusive scan of one segment of a row per workgroup (rows along `inner`-strided axes):
// each of the 256 threads folds a contiguous chunk, the chunk totals are scanned in
// workgroup memory (Hillis-Steele), then each thread rescans its chunk from its prefix.
// OP is + or *, ID its identity (-0.0 for float sums, so cumsum keeps a leading -0.0).
// Long rows take three passes over segments of L: mode 1 writes each segment's total to
// aux[g], those totals are scanned (this kernel again), and mode 2 rescans each segment
// from the scanned total before it (aux[g - 1]); mode 0 scans a whole row (L >= n).
// prm: 0 workgroups (rows * segments), 1 n (the axis length), 2 inner, 3 L, 4 segments
// per row, 5 mode.
    let groups = prm(0u);
    if (g >= groups) { return; }
    let n = prm(1u);
    let inner = prm(2u);
    let seg_len = prm(3u);
    let segs = prm(4u);
    let mode = prm(5u);
    let row = g / segs;
    let seg = g % segs;
    let base = (row / inner) * n * inner + row % inner;
    let seg_start = seg * seg_len;
    let seg_n = min(seg_len, n - seg_start);
    let chunk = (seg_n + 255u) / 256u;
    let start = seg_start + min(lid * chunk, seg_n);
    let end = min(start + chunk, seg_start + seg_n);
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
    if (mode == 1u) {
        if (lid == 255u) { aux[g] = part[255u]; }
        return;
    }
    var run = {ID};
    if (mode == 2u && seg > 0u) { run = aux[g - 1u]; }
    if (lid > 0u) { run = run {OP} part[lid - 1u]; }
    for (var t = start; t < end; t = t + 1u) {
        run = run {OP} src[base + t * inner];
        dst[base + t * inner] = run;
    }
