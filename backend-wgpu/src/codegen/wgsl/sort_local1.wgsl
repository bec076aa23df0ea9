// The workgroup copy of 512 slots and its comparison, for sort_local.wgsl.
var<workgroup> lkeys: array<u32, 512>;
var<workgroup> lidx: array<u32, 512>;
fn local_before(x: u32, y: u32) -> bool {
    if (lkeys[x] != lkeys[y]) { return lkeys[x] < lkeys[y]; }
    return lidx[x] < lidx[y];
}
