// The workgroup copy of 512 slots and its comparison, for sort_local.wgsl.
var<workgroup> lkeys: array<vec2<u32>, 512>;
var<workgroup> lidx: array<u32, 512>;
fn local_before(x: u32, y: u32) -> bool {
    let kx = lkeys[x];
    let ky = lkeys[y];
    if (kx.x != ky.x) { return kx.x < ky.x; }
    if (kx.y != ky.y) { return kx.y < ky.y; }
    return lidx[x] < lidx[y];
}
