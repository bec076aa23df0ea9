// Radix sort, the segment kernels' common start (radix_hist.wgsl, radix_scatter.wgsl): thread
// t takes segment seg of row row, slots start..end (a row's n slots are contiguous; segments
// never cross rows).
// prm: 0 n, 1 nb (segments per row), 2 segments (rows * nb), 3 words per key, 4 kword,
// 5 shift, 6 slots per segment.
    let t = g * {WG}u + lid;
    if (t >= prm(2u)) { return; }
    let n = prm(0u);
    let nb = prm(1u);
    let kw = prm(3u);
    let kword = prm(4u);
    let shift = prm(5u);
    let size = prm(6u);
    let row = t / nb;
    let seg = t % nb;
    let start = row * n + seg * size;
    let end = row * n + min(n, (seg + 1u) * size);
