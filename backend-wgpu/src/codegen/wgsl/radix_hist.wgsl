// Radix sort, digit histogram: each thread counts the digits ({BINS} of them, at `shift` in
// key word `kword`) of the keys of one segment of one row (a row's n slots are contiguous;
// segments never cross rows) and writes count (row, digit, segment) to
// hist[(row * {BINS} + digit) * nb + segment],
// the order in which one exclusive scan over all rows gives every (row, digit, segment)
// its first destination slot: the rows before hold row * n slots.
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
    var counts = array<u32, {BINS}>();
    for (var i = start; i < end; i = i + 1u) {
        let d = (keys[i * kw + kword] >> shift) & {MASK}u;
        counts[d] = counts[d] + 1u;
    }
    for (var d = 0u; d < {BINS}u; d = d + 1u) { hist[(row * {BINS}u + d) * nb + seg] = counts[d]; }
