// One input of a concat, copied as 32-bit words into its place in every output row: input
// word t of row t / row_in goes to that row's output words from `at`. Words, not elements,
// so f64 moves as bits on devices without SHADER_F64 too.
// prm: 0 words of the input, 1 words per input row, 2 words per output row, 3 first word.
    let n = prm(0u);
    if (n == 0u || g > (n - 1u) / 256u) { return; }
    let t = g * 256u + lid;
    if (t >= n) { return; }
    let row_in = prm(1u);
    dst[(t / row_in) * prm(2u) + prm(3u) + t % row_in] = src[t];
