// Radix sort, stable scatter: each workgroup moves the (key, index) slots of the block that
// radix_hist.wgsl counted to their slots in the digit's order, equal digits in input order.
// `next[d]` starts at the scanned histogram entry of (row, d, block) and advances as the
// block is walked 256 slots at a time. Within a chunk, a slot's rank among the chunk's
// slots of the same digit comes from a bit mask per digit (256 bits: one per thread), set
// with atomicOr in workgroup memory: the bits below the thread's own, counted. No
// subgroup operations, so every adapter runs it.
// prm: as radix_hist.wgsl.
    let blocks = prm(2u);
    if (g >= blocks) { return; }
    let n = prm(0u);
    let nb = prm(1u);
    let kw = prm(3u);
    let kword = prm(4u);
    let shift = prm(5u);
    let size = prm(6u);
    let row = g / nb;
    let blk = g % nb;
    let start = row * n + blk * size;
    let end = row * n + min(n, (blk + 1u) * size);
    next[lid] = hist[(row * 256u + lid) * nb + blk];
    // Workgroup memory starts undefined (kernels are compiled without zero-initialization).
    for (var w = 0u; w < 8u; w = w + 1u) { atomicStore(&masks[lid * 8u + w], 0u); }
    let own = lid >> 5u;
    let bit = 1u << (lid & 31u);
    workgroupBarrier();
    for (var c = start; c < end; c = c + 256u) {
        let i = c + lid;
        let live = i < end;
        var d = 0u;
        if (live) {
            d = (keys_in[i * kw + kword] >> shift) & 255u;
            atomicOr(&masks[d * 8u + own], bit);
        }
        workgroupBarrier();
        var rank = 0u;
        var total = 0u;
        if (live) {
            for (var w = 0u; w < 8u; w = w + 1u) {
                let m = atomicLoad(&masks[d * 8u + w]);
                total = total + countOneBits(m);
                if (w < own) { rank = rank + countOneBits(m); }
                if (w == own) { rank = rank + countOneBits(m & (bit - 1u)); }
            }
            let to = next[d] + rank;
            for (var w = 0u; w < kw; w = w + 1u) { keys_out[to * kw + w] = keys_in[i * kw + w]; }
            idx_out[to] = idx_in[i];
        }
        workgroupBarrier();
        // The digit's last slot in the chunk advances its destination and clears its mask.
        if (live && rank + 1u == total) {
            next[d] = next[d] + total;
            for (var w = 0u; w < 8u; w = w + 1u) { atomicStore(&masks[d * 8u + w], 0u); }
        }
        workgroupBarrier();
    }
