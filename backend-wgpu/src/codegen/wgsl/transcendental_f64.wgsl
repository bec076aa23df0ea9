// f64 sin, cos, tan, tanh, exp, expm1 and the logarithms (WGSL has no f64 transcendentals). f64 has no
// 64-bit bitcast without SHADER_INT64, so exponents move through `ldexp` and an f32
// conversion. See transcendental.rs for the methods. Names in braces are placeholders that
// `f64_transcendental` fills in (polynomials and constants as exact decimal literals);
// the P64_* constants are declared before this text. Needs f32_base.wgsl, f64_base.wgsl,
// copysign_f64 (float.wgsl) and mulhilo.wgsl.

// The bits of 2/pi behind two zero words, for f64 arguments up to 2^1024.
var<private> two_over_pi_bits64: array<u32, 42> = array<u32, 42>(0u, 0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au, 0x424DD2E0u, 0x06492EEAu, 0x09D1921Cu, 0xFE1DEB1Cu, 0xB129A73Eu, 0xE88235F5u, 0x2EBB4484u, 0xE99C7026u, 0xB45F7E41u, 0x3991D639u, 0x835339F4u, 0x9C845F8Bu, 0xBDF9283Bu, 0x1FF897FFu, 0xDE05980Fu, 0xEF2F118Bu, 0x5A0A6D1Fu, 0x6D367ECFu, 0x27CB09B7u, 0x4F463F66u, 0x9E5FEA2Du, 0x7527BAC7u, 0xEBE5F17Bu, 0x3D0739F7u, 0x8A5292EAu, 0x6BFB5FB1u, 0x1F8D5D08u, 0x56033046u, 0xFC7B6BABu, 0xF0CFBC20u, 0x9AF4361Du);

fn two_over_pi_window64(p: u32) -> u32 {
    let k = p >> 5u;
    let s = p & 31u;
    if (s == 0u) { return two_over_pi_bits64[k]; }
    return (two_over_pi_bits64[k] << s) | (two_over_pi_bits64[k + 1u] >> (32u - s));
}

// acc += v at limb pos (least significant first), carries rippling up; past limb 5 is dropped.
fn add_at(acc: ptr<function, array<u32, 6>>, pos: u32, v: u32) {
    var i = pos;
    var add = v;
    loop {
        if (i >= 6u || add == 0u) { break; }
        let s = (*acc)[i] + add;
        add = select(0u, 1u, s < add);
        (*acc)[i] = s;
        i = i + 1u;
    }
}

struct TrigRed64 { r: f64, q: u32, }

// x = r + q pi/2 (mod 2 pi), |r| <= pi/4, for finite x: Cody-Waite with pi/2 in three parts
// (33 + 33 + 53 bits, so k P1 and k P2 are exact for |k| < 2^20), Payne-Hanek beyond.
fn trig_reduce_f64(x: f64) -> TrigRed64 {
    let ax = abs(x);
    if (ax < P64_LIMIT) {
        let k = round(x * P64_TWO_OVER_PI);
        let r = ((x - k * P64_1) - k * P64_2) - k * P64_3;
        return TrigRed64(r, u32(i32(k) & 3));
    }
    // ax = m 2^(ex - 52) with m a 53-bit integer, found with ldexp and an f32 conversion.
    var m = ax;
    var ex = 0;
    loop {
        if (m < P64_TWO64) { break; }
        m = ldexp(m, -64);
        ex = ex + 64;
    }
    let fe = i32((bitcast<u32>(f32(m)) >> 23u) & 0xffu) - 127;
    m = ldexp(m, -fe);
    ex = ex + fe;
    if (m >= f64(2)) { m = m * f64(0.5); ex = ex + 1; }
    if (m < f64(1)) { m = m * f64(2); ex = ex - 1; }
    let xm = ldexp(m, 52);
    let hi = floor(xm * P64_TWO_M32);
    let mh = u32(hi);
    let ml = u32(xm - hi * P64_TWO32);
    // x 2/pi mod 4 = 4 frac(m * bits of 2/pi from position ex - 52 - 2). 192 bits of the
    // window keep the product's truncation error near 2^-139, far below the smallest
    // remainder an f64 can leave (about 2^-61 for the worst case known).
    let p = u32(ex - 52 - 2 + 64);
    var acc: array<u32, 6>;
    for (var j = 0u; j < 6u; j = j + 1u) {
        let wj = two_over_pi_window64(p + 32u * j);
        let lo_pos = 5u - j;
        for (var i = 0u; i < 2u; i = i + 1u) {
            let pr = mulhilo(select(ml, mh, i == 1u), wj);
            add_at(&acc, lo_pos + i, pr.y);
            add_at(&acc, lo_pos + i + 1u, pr.x);
        }
    }
    var q = acc[5] >> 30u;
    // The fraction after the quadrant, most significant word first.
    var f: array<u32, 5>;
    for (var k = 0u; k < 5u; k = k + 1u) {
        f[k] = (acc[5u - k] << 2u) | (acc[4u - k] >> 30u);
    }
    var neg = false;
    if ((f[0] >> 31u) == 1u) {
        // Past half a quadrant: the next quadrant and a negative remainder.
        q = q + 1u;
        var carry = 1u;
        for (var k = 0u; k < 5u; k = k + 1u) {
            let i = 4u - k;
            let v = ~f[i] + carry;
            carry = select(0u, 1u, carry == 1u && v == 0u);
            f[i] = v;
        }
        neg = true;
    }
    var first = 0u;
    loop {
        if (first >= 2u || f[first] != 0u) { break; }
        first = first + 1u;
    }
    let lz = countLeadingZeros(f[first]);
    var top = f[first];
    var next = f[first + 1u];
    if (lz > 0u && lz < 32u) {
        top = (f[first] << lz) | (f[first + 1u] >> (32u - lz));
        next = (f[first + 1u] << lz) | (f[first + 2u] >> (32u - lz));
    }
    let shift = 32u * first;
    let frac = ldexp(f64(top) * P64_TWO32 + f64(next), -64 - i32(shift + lz));
    var r = frac * P64_PIO2;
    if (neg) { r = -r; }
    if (x < f64(0)) {
        r = -r;
        q = 4u - (q & 3u);
    }
    return TrigRed64(r, q & 3u);
}

fn sin_poly_f64(r: f64) -> f64 {
    let z = r * r;
{sin_poly}
    return r + r * z * p;
}

fn cos_poly_f64(r: f64) -> f64 {
    let z = r * r;
{cos_poly}
    return f64(1) + z * (f64(-0.5) + z * p);
}

fn sin_f64(x: f64) -> f64 {
    if (isnan_f64(x) || isinf_f64(x)) { return select(x, nan_f64(), isinf_f64(x)); }
    if (x == f64(0)) { return x; }
    let t = trig_reduce_f64(x);
    let v = select(sin_poly_f64(t.r), cos_poly_f64(t.r), (t.q & 1u) == 1u);
    return select(v, -v, t.q >= 2u);
}

fn cos_f64(x: f64) -> f64 {
    if (isnan_f64(x) || isinf_f64(x)) { return select(x, nan_f64(), isinf_f64(x)); }
    let t = trig_reduce_f64(x);
    let v = select(cos_poly_f64(t.r), sin_poly_f64(t.r), (t.q & 1u) == 1u);
    return select(v, -v, t.q == 1u || t.q == 2u);
}

fn tan_f64(x: f64) -> f64 {
    if (isnan_f64(x) || isinf_f64(x)) { return select(x, nan_f64(), isinf_f64(x)); }
    if (x == f64(0)) { return x; }
    let t = trig_reduce_f64(x);
    let s = sin_poly_f64(t.r);
    let c = cos_poly_f64(t.r);
    return select(s / c, -c / s, (t.q & 1u) == 1u);
}

// Taylor near 0; (1 - e) / (1 + e) with e = exp(-2|x|) beyond, where neither part cancels.
fn tanh_f64(x: f64) -> f64 {
    if (isnan_f64(x)) { return x; }
    let a = abs(x);
    if (a > f64(22)) { return copysign_f64(f64(1), x); }
    if (a < f64(0.55)) {
        let z = x * x;
{tanh_poly}
        return x * p;
    }
    let e = exp_f64(-2.0 * a);
    return copysign_f64((f64(1) - e) / (f64(1) + e), x);
}

fn exp_f64(x: f64) -> f64 {
    if (isnan_f64(x)) { return x; }
    if (x > {max_log}) { return inf_f64(false); }
    if (x < -{min_log}) { return f64(0); }
    let k = round(x * {log2e});
    let r = (x - k * {ln2_hi}) - k * {ln2_lo};
{exp_poly}
    return ldexp(p, i32(k));
}

struct LogRed64 { e: i32, m: f64, }

// x = m 2^e with m in (sqrt2/2, sqrt2] (x finite and > 0, subnormals too): the reduction of
// every logarithm here; m - 1 is exact.
fn log_reduce_f64(x: f64) -> LogRed64 {
    var m = x;
    var e = 0;
    if (m < {min_normal}) {
        m = m * {two54};
        e = -54;
    }
    loop {
        if (m < {two64}) { break; }
        m = ldexp(m, -64);
        e = e + 64;
    }
    loop {
        if (m >= {two_m64}) { break; }
        m = ldexp(m, 64);
        e = e - 64;
    }
    // In f32's range now: its exponent field, corrected for the conversion's rounding.
    let fe = i32((bitcast<u32>(f32(m)) >> 23u) & 0xffu) - 127;
    m = ldexp(m, -fe);
    e = e + fe;
    if (m >= f64(2)) {
        m = m * f64(0.5);
        e = e + 1;
    }
    if (m < f64(1)) {
        m = m * f64(2);
        e = e - 1;
    }
    if (m > {sqrt2}) {
        m = m * f64(0.5);
        e = e + 1;
    }
    return LogRed64(e, m);
}

fn ln_f64(x: f64) -> f64 {
    if (isnan_f64(x)) { return x; }
    if (x == f64(0)) { return inf_f64(true); }
    if (x < f64(0)) { return nan_f64(); }
    if (isinf_f64(x)) { return x; }
    let red = log_reduce_f64(x);
    let e = red.e;
    let f = red.m - f64(1);
    let s = f / (f64(2) + f);
    let z = s * s;
{ln_poly}
    rr = rr * z;
    let lnm = f - s * (f - rr);
    let fe64 = f64(e);
    return fe64 * {ln2_hi} + (fe64 * {ln2_lo} + lnm);
}

// exp(x) - 1, as expm1_f32 (transcendental_f32.wgsl): (2^k - 1) + 2^k expm1(r), r = x - k ln2,
// expm1(r) = r + r^2 P(r) by its Taylor polynomial to r^17. Below ln 2, k = 0: with k = +-1
// the two terms would cancel (1 + 2 expm1(r) for r near -ln2/2), costing f64 an ulp.
fn expm1_f64(x: f64) -> f64 {
    if (isnan_f64(x)) { return x; }
    if (abs(x) < {two_m64}) { return x; }
    // exp(x) < 2^-54: -1 + exp(x) rounds to -1.
    if (x < f64(-40)) { return f64(-1); }
    let k = select(round(x * {log2e}), f64(0), abs(x) < f64(0.693));
    if (k > f64(53)) { return exp_f64(x) - f64(1); }
    let r = (x - k * {ln2_hi}) - k * {ln2_lo};
{expm1_poly}
    let t = ldexp(f64(1), i32(k));
    return (t - f64(1)) + t * (r + r * r * p);
}

// s (hfsq + R(s^2)), s = f / (2 + f), hfsq = f^2 / 2, as log1p_rest_f32
// (transcendental_f32.wgsl), the series to s^23 (for f up to 0.5, s^2 <= 0.04).
fn log1p_rest_f64(f: f64, hfsq: f64) -> f64 {
    let s = f / (f64(2) + f);
    let z = s * s;
{log_poly}
    return s * (hfsq + rr * z);
}

// ln(1 + x) without rounding 1 + x, as log1p_f32 (transcendental_f32.wgsl): f = x for
// 1 + x in [sqrt2/2, 1.5), else f = x 2^-e + (2^-e - 1), exact for |e| <= 53; past e = 52
// the rounded 1 + x.
fn log1p_f64(x: f64) -> f64 {
    if (isnan_f64(x)) { return x; }
    if (x == f64(-1)) { return inf_f64(true); }
    if (x < f64(-1)) { return nan_f64(); }
    if (isinf_f64(x)) { return x; }
    if (abs(x) < {two_m64}) { return x; }
    var f = x;
    var e = 0;
    if (x <= {sqrt_half_m1} || x >= f64(0.5)) {
        let red = log_reduce_f64(f64(1) + x);
        e = red.e;
        if (e > 52) {
            f = red.m - f64(1);
        } else {
            let t = ldexp(f64(1), -e);
            f = x * t + (t - f64(1));
        }
    }
    let hfsq = f64(0.5) * f * f;
    let rest = log1p_rest_f64(f, hfsq);
    let fe = f64(e);
    return fe * {ln2_hi} - ((hfsq - (rest + fe * {ln2_lo})) - f);
}

// ln(1 + f) as hi + lo, hi rounded to f32 (24 bits: f64 has no bitcast to cut bits with), so
// that hi times a constant of 28 bits is exact.
fn log_hi_lo_f64(f: f64) -> vec2<f64> {
    let hfsq = f64(0.5) * f * f;
    let rest = log1p_rest_f64(f, hfsq);
    let hi = f64(f32(f - hfsq));
    return vec2<f64>(hi, ((f - hi) - hfsq) + rest);
}

// As log2_f32 (transcendental_f32.wgsl).
fn log2_f64(x: f64) -> f64 {
    if (isnan_f64(x)) { return x; }
    if (x == f64(0)) { return inf_f64(true); }
    if (x < f64(0)) { return nan_f64(); }
    if (isinf_f64(x)) { return x; }
    let red = log_reduce_f64(x);
    let l = log_hi_lo_f64(red.m - f64(1));
    return (l.x + l.y) * {ivln2_lo} + l.y * {ivln2_hi} + l.x * {ivln2_hi} + f64(red.e);
}

// As log10_f32 (transcendental_f32.wgsl); e log10_2_hi is exact (42 bits times at most 11).
fn log10_f64(x: f64) -> f64 {
    if (isnan_f64(x)) { return x; }
    if (x == f64(0)) { return inf_f64(true); }
    if (x < f64(0)) { return nan_f64(); }
    if (isinf_f64(x)) { return x; }
    let red = log_reduce_f64(x);
    let l = log_hi_lo_f64(red.m - f64(1));
    let fe = f64(red.e);
    return fe * {log10_2_lo} + (l.x + l.y) * {ivln10_lo} + l.y * {ivln10_hi} + l.x * {ivln10_hi} + fe * {log10_2_hi};
}
