// Philox4x32-10, bit for bit the generator of core/src/philox.rs, and its f32 unit
// conversion. Needs mulhilo.wgsl.

fn philox(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = ctr;
    var k = key;
    for (var round = 0u; round < 10u; round = round + 1u) {
        if (round > 0u) { k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u); }
        let p0 = mulhilo(0xD2511F53u, c.x);
        let p1 = mulhilo(0xCD9E8D57u, c.z);
        c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
    }
    return c;
}
// (w >> 8) * 2^-24 and ((hi:lo) >> 11) * 2^-53, exactly as the CPU reference.
fn unit_f32(w: u32) -> f32 { return f32(w >> 8u) * bitcast<f32>(0x33800000u); }
