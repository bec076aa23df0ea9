// Radix sort, digit histogram: each workgroup counts the 8-bit digit (`kword`, `shift`) of
// the keys of one block of one row (a row's n slots are contiguous; blocks never cross
// rows) and writes count (row, digit, block) to hist[(row * 256 + digit) * nb + block],
// the order in which one exclusive scan over all rows gives every (row, digit, block) its
// first destination slot: rows before hold row * n slots.
// prm: 0 n, 1 nb (blocks per row), 2 blocks (rows * nb), 3 words per key, 4 kword,
// 5 shift, 6 slots per block.
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
    // Workgroup memory starts undefined (kernels are compiled without zero-initialization).
    atomicStore(&counts[lid], 0u);
    workgroupBarrier();
    for (var i = start + lid; i < end; i = i + 256u) {
        atomicAdd(&counts[(keys[i * kw + kword] >> shift) & 255u], 1u);
    }
    workgroupBarrier();
    hist[(row * 256u + lid) * nb + blk] = atomicLoad(&counts[lid]);
