// One-word sort keys (f32, i32, u32) in `keys`; KEY maps the element's bits `b` to it.
fn sort_key(e: u32) -> u32 {
    let b = src[e];
    {KEY}
}
fn load_key(s: u32) -> u32 { return keys[s]; }
fn store_key(s: u32, k: u32) { keys[s] = k; }
fn slot_before(x: u32, y: u32) -> bool {
    let kx = keys[x];
    let ky = keys[y];
    if (kx != ky) { return kx < ky; }
    return idx[x] < idx[y];
}
