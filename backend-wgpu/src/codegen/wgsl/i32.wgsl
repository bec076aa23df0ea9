// i32 division, remainder and power of the shared semantics: `/` and `%` floor, a zero
// divisor gives 0, and powers wrap.

// Signed `/` and `%` go through unsigned magnitudes: GLSL leaves `%` with a negative
// operand undefined, and the unsigned forms are defined on every backend.
fn abs_u32(x: i32) -> u32 { return select(bitcast<u32>(x), 0u - bitcast<u32>(x), x < 0); }
fn div_i32(a: i32, b: i32) -> i32 {
    if (b == 0) { return 0; }
    let ua = abs_u32(a);
    let ub = abs_u32(b);
    let q = ua / ub;
    // Same signs: a non-negative quotient (i32::MIN / -1 wraps to i32::MIN through the bitcast).
    if ((a < 0) == (b < 0)) { return bitcast<i32>(q); }
    // Opposite signs: floor, i.e. one further from zero when the division is inexact.
    return bitcast<i32>(0u - (q + select(0u, 1u, q * ub != ua)));
}
fn rem_i32(a: i32, b: i32) -> i32 {
    if (b == 0) { return 0; }
    let r = abs_u32(a) % abs_u32(b);
    if (r == 0u) { return 0; }
    // r < |b| <= 2^31, so it fits; the truncated remainder has a's sign, the floored one b's.
    var m = select(bitcast<i32>(r), 0 - bitcast<i32>(r), a < 0);
    if ((a < 0) != (b < 0)) { m = m + b; }
    return m;
}
fn pow_i32(x: i32, e: i32) -> i32 {
    if (e < 0) {
        if (x == 1) { return 1; }
        if (x == -1) { return select(1, -1, (e & 1) != 0); }
        return 0;
    }
    var base = x;
    var k = u32(e);
    var acc = 1;
    loop {
        if (k == 0u) { break; }
        if ((k & 1u) == 1u) { acc = acc * base; }
        base = base * base;
        k = k >> 1u;
    }
    return acc;
}
