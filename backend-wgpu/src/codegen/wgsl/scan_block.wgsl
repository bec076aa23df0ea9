// Exclusive prefix sum, in place, of 1024 consecutive u32 words per workgroup (4 per
// thread, a Hillis-Steele scan of the 256 thread totals in workgroup memory); the chunk's
// total goes to sums[g], which the next level scans and scan_add.wgsl adds back.
// prm: 0 len.
    let len = prm(0u);
    let chunks = (len + 1023u) / 1024u;
    if (g >= chunks) { return; }
    let base = g * 1024u + lid * 4u;
    var v = array<u32, 4>(0u, 0u, 0u, 0u);
    var s = 0u;
    for (var k = 0u; k < 4u; k = k + 1u) {
        if (base + k < len) { v[k] = data[base + k]; }
        s = s + v[k];
    }
    part[lid] = s;
    workgroupBarrier();
    for (var off = 1u; off < 256u; off = off * 2u) {
        var t = 0u;
        if (lid >= off) { t = part[lid - off]; }
        workgroupBarrier();
        part[lid] = part[lid] + t;
        workgroupBarrier();
    }
    var run = part[lid] - s;
    for (var k = 0u; k < 4u; k = k + 1u) {
        if (base + k < len) { data[base + k] = run; }
        run = run + v[k];
    }
    if (lid == 255u) { sums[g] = part[255u]; }
