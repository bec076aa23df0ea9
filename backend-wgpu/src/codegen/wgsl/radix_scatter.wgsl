// Radix sort, stable scatter (after radix_segment.wgsl): each thread walks the segment
// radix_hist.wgsl counted, in order, and moves every (key, payload) slot to the next free
// slot of its digit, which starts at the scanned histogram entry of (row, digit, segment):
// equal digits keep their input order. A thread per segment needs no barriers, atomics or
// subgroups, so every adapter runs it, and on CPU adapters (lavapipe, llvmpipe) each thread
// is a plain sequential loop.
// prm: as radix_segment.wgsl, and 7 payload words per slot.
    let pw = prm(7u);
    var next = array<u32, {BINS}>();
    for (var d = 0u; d < {BINS}u; d = d + 1u) { next[d] = hist[(row * {BINS}u + d) * nb + seg]; }
    for (var i = start; i < end; i = i + 1u) {
        let d = (keys_in[i * kw + kword] >> shift) & {MASK}u;
        let to = next[d];
        next[d] = to + 1u;
        for (var w = 0u; w < kw; w = w + 1u) { keys_out[to * kw + w] = keys_in[i * kw + w]; }
        for (var w = 0u; w < pw; w = w + 1u) { idx_out[to * pw + w] = idx_in[i * pw + w]; }
    }
