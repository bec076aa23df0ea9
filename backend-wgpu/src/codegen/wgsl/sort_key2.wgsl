// Two-word sort keys (f64, read as its two u32 words, low word first in memory) as
// vec2(high, low) in `keys`: sign-magnitude made unsigned, -0.0 made +0.0, NaN largest.
fn sort_key(e: u32) -> vec2<u32> {
    let lo = src[2u * e];
    var hi = src[2u * e + 1u];
    let mag = hi & 0x7fffffffu;
    if (mag > 0x7ff00000u || (mag == 0x7ff00000u && lo != 0u)) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
    if (mag == 0u && lo == 0u) { hi = 0u; }
    if ((hi >> 31u) == 1u) { return vec2<u32>(~hi, ~lo); }
    return vec2<u32>(hi | 0x80000000u, lo);
}
fn load_key(s: u32) -> vec2<u32> { return vec2<u32>(keys[2u * s], keys[2u * s + 1u]); }
fn store_key(s: u32, k: vec2<u32>) {
    keys[2u * s] = k.x;
    keys[2u * s + 1u] = k.y;
}
fn slot_before(x: u32, y: u32) -> bool {
    let kx = load_key(x);
    let ky = load_key(y);
    if (kx.x != ky.x) { return kx.x < ky.x; }
    if (kx.y != ky.y) { return kx.y < ky.y; }
    return idx[x] < idx[y];
}
