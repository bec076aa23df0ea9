// Radix sort, digit histogram (after radix_segment.wgsl): each thread counts the digits
// ({BINS} of them, at `shift` in key word `kword`) of the keys of its segment and writes count
// (row, digit, segment) to hist[(row * {BINS} + digit) * nb + segment],
// the order in which one exclusive scan over all rows gives every (row, digit, segment)
// its first destination slot: the rows before hold row * n slots.
    var counts = array<u32, {BINS}>();
    for (var i = start; i < end; i = i + 1u) {
        let d = (keys[i * kw + kword] >> shift) & {MASK}u;
        counts[d] = counts[d] + 1u;
    }
    for (var d = 0u; d < {BINS}u; d = d + 1u) { hist[(row * {BINS}u + d) * nb + seg] = counts[d]; }
