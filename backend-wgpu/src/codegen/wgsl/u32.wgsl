// u32 division, remainder and power of the shared semantics: a zero divisor gives 0, and
// powers wrap.

fn div_u32(a: u32, b: u32) -> u32 { return select(a / max(b, 1u), 0u, b == 0u); }
fn rem_u32(a: u32, b: u32) -> u32 { return select(a % max(b, 1u), 0u, b == 0u); }
fn pow_u32(x: u32, e: u32) -> u32 {
    var base = x;
    var k = e;
    var acc = 1u;
    loop {
        if (k == 0u) { break; }
        if ((k & 1u) == 1u) { acc = acc * base; }
        base = base * base;
        k = k >> 1u;
    }
    return acc;
}
