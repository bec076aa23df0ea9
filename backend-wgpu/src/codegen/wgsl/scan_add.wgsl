// Adds each 1024-word chunk's scanned offset (sums, one per chunk) to its words.
// prm: 0 len.
    let len = prm(0u);
    if (len == 0u || g > (len - 1u) / 256u) { return; }
    let i = g * 256u + lid;
    if (i >= len) { return; }
    data[i] = data[i] + sums[i / 1024u];
