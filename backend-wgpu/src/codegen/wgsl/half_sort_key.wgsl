// The sort key of a half's bits `h` as an unsigned integer in numpy's order (the f32 key of
// sort_init.wgsl on the bits moved to the top): -0.0 made +0.0, every NaN (magnitude above
// `nan`, the infinity moved to the top) the largest key.
fn half_sort_key(h: u32, nan: u32) -> u32 {
    let b = h << 16u;
    let a = b & 0x7fffffffu;
    if (a > nan) { return 0xffffffffu; }
    if (a == 0u) { return 0x80000000u; }
    if ((b >> 31u) == 1u) { return ~b; }
    return b | 0x80000000u;
}
