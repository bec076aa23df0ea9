// Float arithmetic of the shared semantics, one template for f32 and f64: the placeholder
// T in braces is the type (also the helpers' suffix), SUBNORMAL the f32-only subnormal
// path of sqrt (empty for f64). min/max propagate NaN and order -0.0 below 0.0;
// comparisons with NaN are false; `rem` is numpy's remainder on an exact fmod. Needs the
// base helpers of the type.

fn copysign_{T}(m: {T}, s: {T}) -> {T} { return select(abs(m), -abs(m), signbit_{T}(s)); }
fn min_{T}(a: {T}, b: {T}) -> {T} {
    if (isnan_{T}(a)) { return a; }
    if (isnan_{T}(b)) { return b; }
    if (a < b) { return a; }
    if (b < a) { return b; }
    return select(b, a, signbit_{T}(a));
}
fn max_{T}(a: {T}, b: {T}) -> {T} {
    if (isnan_{T}(a)) { return a; }
    if (isnan_{T}(b)) { return b; }
    if (a > b) { return a; }
    if (b > a) { return b; }
    return select(a, b, signbit_{T}(a));
}
fn ordered_{T}(a: {T}, b: {T}) -> bool { return !isnan_{T}(a) && !isnan_{T}(b); }
fn eq_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), ordered_{T}(a, b) && a == b); }
fn ne_{T}(a: {T}, b: {T}) -> {T} { return select({T}(1), {T}(0), ordered_{T}(a, b) && a == b); }
fn lt_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), ordered_{T}(a, b) && a < b); }
fn le_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), ordered_{T}(a, b) && a <= b); }
fn gt_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), ordered_{T}(a, b) && a > b); }
fn ge_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), ordered_{T}(a, b) && a >= b); }
// Round half to even, written out instead of WGSL's round() (SPIR-V RoundEven): lavapipe
// (Mesa 22.3 on an AMD EPYC host) gets f64 ties and the sign of a zero result wrong there.
// x - floor(x) is exact, and so is the parity test; a zero result keeps x's sign
// (round(-0.4) is -0.0, as numpy's); NaN and the infinities come through unchanged.
fn round_{T}(x: {T}) -> {T} {
    let f = floor(x);
    let d = x - f;
    let odd = (f - {T}(2) * floor(f * {T}(0.5))) != {T}(0);
    let r = select(f, f + {T}(1), d > {T}(0.5) || (d == {T}(0.5) && odd));
    return select(r, copysign_{T}(r, x), r == {T}(0));
}
fn sqrt_{T}(x: {T}) -> {T} {
    if (isnan_{T}(x) || x == {T}(0)) { return x; }
    if (x < {T}(0)) { return nan_{T}(); }
    if (isinf_{T}(x)) { return x; }
{SUBNORMAL}
    return sqrt(x);
}
// Exact fmod: |a| is reduced by |b| * 2^k for falling k; every subtraction r - t has
// t <= r < 2t, so it is exact (Sterbenz), and doubling or halving t is exact too.
fn fmod_{T}(a: {T}, b: {T}) -> {T} {
    if (isnan_{T}(a) || isnan_{T}(b) || isinf_{T}(a) || b == {T}(0)) { return nan_{T}(); }
    let m = abs(b);
    var r = abs(a);
    if (isinf_{T}(m) || r < m) { return a; }
    var t = m;
    loop {
        let t2 = t * {T}(2);
        if (t2 > r) { break; }
        t = t2;
    }
    loop {
        if (r >= t) { r = r - t; }
        if (t == m) { break; }
        t = t * {T}(0.5);
    }
    return copysign_{T}(r, a);
}
// numpy's remainder: the result takes the divisor's sign.
fn rem_{T}(a: {T}, b: {T}) -> {T} {
    let m = fmod_{T}(a, b);
    if (isnan_{T}(m)) { return m; }
    if (m == {T}(0)) { return copysign_{T}({T}(0), b); }
    if (signbit_{T}(m) != signbit_{T}(b)) { return m + b; }
    return m;
}
