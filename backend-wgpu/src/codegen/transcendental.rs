//! f32 transcendentals written out, because WGSL's built-ins are only loosely specified
//! (`exp` within 3 + 2|x| ulp, `sin` within 2^-11 absolute on [-pi, pi] and unspecified
//! beyond, subnormals possibly flushed) and the shared semantics promise a few ulp
//! everywhere:
//!
//! * `exp`: Cody-Waite reduction by ln 2 in two parts, a degree-7 Taylor polynomial on
//!   |r| <= ln2/2, and a scale by 2^k built from bits (subnormal results included).
//! * `ln`: the exponent and mantissa taken from bits (subnormal inputs too), then
//!   ln(1 + f) = f - s (f - R(s^2)) with s = f / (2 + f).
//! * `sin`/`cos`/`tan`: reduction by pi/2 in three parts below 256, and Payne-Hanek (the
//!   bits of 2/pi, multiplied in integers) above, then Taylor polynomials on [-pi/4, pi/4].
//! * `pow`: exp(y ln x) with ln x and the product carried in two floats, so large results
//!   keep their precision.
//!
//! All constants are given as bit patterns, so no decimal conversion can move them.

/// Constants by bit pattern, written as shortest round-trip decimals (naga cannot
/// evaluate `bitcast` in a `const`).
const CONSTANTS: [(&str, u32); 8] = [
    ("LN2_HI", 0x3f317200),
    ("LN2_LO", 0x35bfbe8e),
    ("LOG2E", 0x3fb8aa3b),
    ("PIO2_1", 0x3fc91000),
    ("PIO2_2", 0xb6957700),
    ("PIO2_3", 0xae74b9ee),
    ("PIO2", 0x3fc90fdb),
    ("TWO_OVER_PI", 0x3f22f983),
];

/// The WGSL source; needs the f32 helpers of `semantics`.
pub(crate) fn f32_transcendental() -> String {
    let mut s = String::new();
    for (name, bits) in CONSTANTS {
        s.push_str(&format!("const {name}: f32 = {:e}f;\n", f32::from_bits(bits)));
    }
    s.push_str(BODY);
    s
}

const BODY: &str = r#"
// The bits of 2/pi after the binary point, behind one zero word (so a window may start
// left of the point).
var<private> two_over_pi_bits: array<u32, 10> = array<u32, 10>(0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u,
    0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au);

fn mul_hi_lo(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return vec2<u32>(p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u), a * b);
}

// p * 2^k for p in [0.5, 2) and k in [-152, 128], exact (and a subnormal result is built
// from its bits, never by arithmetic on subnormals, which a device may flush).
fn scale2_f32(p: f32, k: i32) -> f32 {
    if (k > 127) { return p * 2.0 * bitcast<f32>(u32(k + 126) << 23u); }
    if (k >= -126) { return p * bitcast<f32>(u32(k + 127) << 23u); }
    if (k < -151) { return 0.0; }
    return bitcast<f32>(u32(round(p * bitcast<f32>(u32(k + 149 + 127) << 23u))));
}

// exp(h + l), where h + l rounds the sum (the reduction keeps the bits of both).
fn exp2parts_f32(h: f32, l: f32) -> f32 {
    let total = h + l;
    if (total > 89.0) { return inf_f32(false); }
    if (total < -104.0) { return 0.0; }
    let k = round(total * LOG2E);
    let r = ((h - k * LN2_HI) - k * LN2_LO) + l;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (bitcast<f32>(0x3e2aaaabu) + r * (bitcast<f32>(0x3d2aaaabu)
        + r * (bitcast<f32>(0x3c088889u) + r * (bitcast<f32>(0x3ab60b61u) + r * (bitcast<f32>(0x39500d01u)
        + r * bitcast<f32>(0x37d00d01u))))))));
    return scale2_f32(p, i32(k));
}

fn exp_f32(x: f32) -> f32 {
    if (isnan_f32(x)) { return x; }
    return exp2parts_f32(x, 0.0);
}

// ln x = e ln2 + ln(1 + f), as a head and a tail (x finite and > 0).
fn ln2parts_f32(x: f32) -> vec2<f32> {
    let bits = bitcast<u32>(x);
    var e = i32(bits >> 23u) - 127;
    var mant = bits & 0x7fffffu;
    if ((bits >> 23u) == 0u) {
        let shift = countLeadingZeros(mant) - 8u;
        mant = (mant << shift) & 0x7fffffu;
        e = -126 - i32(shift);
    }
    var m = bitcast<f32>(mant | 0x3f800000u);
    if (m > bitcast<f32>(0x3fb504f3u)) {
        m = m * 0.5;
        e = e + 1;
    }
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let rr = z * (bitcast<f32>(0x3f2aaaabu) + z * (bitcast<f32>(0x3ecccccdu) + z * (bitcast<f32>(0x3e924925u)
        + z * (bitcast<f32>(0x3e638e39u) + z * bitcast<f32>(0x3e3a2e8cu)))));
    // ln(1 + f) = f - c. e ln2_hi (a multiple of 2^-15) plus f (a multiple of 2^-24) is
    // summed exactly in integers: compensated float sums are what a driver's algebraic
    // simplifier folds away. The sum splits into a head of at most 23 bits and a tail.
    let c = s * (f - rr);
    let sum = e * 22713 * 512 + i32(f * 16777216.0);
    let head = f32(sum & ~0xff) * bitcast<f32>(0x33800000u);
    let low = f32(sum & 0xff) * bitcast<f32>(0x33800000u);
    return vec2<f32>(head, low + (f32(e) * LN2_LO - c));
}

fn ln_f32(x: f32) -> f32 {
    if (isnan_f32(x)) { return x; }
    if (x == 0.0) { return inf_f32(true); }
    if (x < 0.0) { return nan_f32(); }
    if (isinf_f32(x)) { return x; }
    let l = ln2parts_f32(x);
    return l.x + l.y;
}

fn two_over_pi_window(p: u32) -> u32 {
    let k = p >> 5u;
    let s = p & 31u;
    if (s == 0u) { return two_over_pi_bits[k]; }
    return (two_over_pi_bits[k] << s) | (two_over_pi_bits[k + 1u] >> (32u - s));
}

// x = r + q pi/2 (mod 2 pi) with |r| <= pi/4: returns (r, q) for finite x.
fn trig_reduce_f32(x: f32) -> vec2<f32> {
    let ax = abs(x);
    if (ax < 256.0) {
        let k = round(x * TWO_OVER_PI);
        let r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;
        return vec2<f32>(r, f32(i32(k) & 3));
    }
    // ax = ix 2^e; x 2/pi mod 4 = 4 frac(ix * bits of 2/pi from position e - 2).
    let bits = bitcast<u32>(ax);
    let ix = (bits & 0x7fffffu) | 0x800000u;
    let p = u32(i32(bits >> 23u) - 150 - 2 + 32);
    let m2 = mul_hi_lo(ix, two_over_pi_window(p + 64u));
    let m1 = mul_hi_lo(ix, two_over_pi_window(p + 32u));
    let m0 = ix * two_over_pi_window(p);
    let w0 = m2.y;
    let w1 = m2.x + m1.y;
    let w2 = m1.x + m0 + select(0u, 1u, w1 < m2.x);
    var q = w2 >> 30u;
    var fh = (w2 << 2u) | (w1 >> 30u);
    var fl = (w1 << 2u) | (w0 >> 30u);
    var neg = false;
    if ((fh >> 31u) == 1u) {
        // Past half a quadrant: the next quadrant, and a negative remainder.
        q = q + 1u;
        fl = ~fl + 1u;
        fh = ~fh + select(0u, 1u, fl == 0u);
        neg = true;
    }
    var lz = countLeadingZeros(fh);
    var top: u32;
    if (lz == 0u) {
        top = fh;
    } else if (lz < 32u) {
        top = (fh << lz) | (fl >> (32u - lz));
    } else {
        lz = 32u + countLeadingZeros(fl);
        top = fl << (lz - 32u);
    }
    let mag = f32(top) * bitcast<f32>(u32(127 - 32 - i32(lz)) << 23u) * PIO2;
    var r = select(mag, -mag, neg);
    if (x < 0.0) {
        r = -r;
        q = 4u - (q & 3u);
    }
    return vec2<f32>(r, f32(q & 3u));
}

fn sin_poly_f32(r: f32) -> f32 {
    let z = r * r;
    return r + r * z * (bitcast<f32>(0xbe2aaaabu) + z * (bitcast<f32>(0x3c088889u) + z * (bitcast<f32>(0xb9500d01u)
        + z * bitcast<f32>(0x3638ef1du))));
}

fn cos_poly_f32(r: f32) -> f32 {
    let z = r * r;
    return 1.0 + z * (-0.5 + z * (bitcast<f32>(0x3d2aaaabu) + z * (bitcast<f32>(0xbab60b61u)
        + z * (bitcast<f32>(0x37d00d01u) + z * bitcast<f32>(0xb493f27eu)))));
}

fn sin_f32(x: f32) -> f32 {
    if (isnan_f32(x) || isinf_f32(x)) { return select(x, nan_f32(), isinf_f32(x)); }
    if (x == 0.0) { return x; }
    let rq = trig_reduce_f32(x);
    let q = u32(rq.y);
    let v = select(sin_poly_f32(rq.x), cos_poly_f32(rq.x), (q & 1u) == 1u);
    return select(v, -v, q >= 2u);
}

fn cos_f32(x: f32) -> f32 {
    if (isnan_f32(x) || isinf_f32(x)) { return select(x, nan_f32(), isinf_f32(x)); }
    let rq = trig_reduce_f32(x);
    let q = u32(rq.y);
    let v = select(cos_poly_f32(rq.x), sin_poly_f32(rq.x), (q & 1u) == 1u);
    return select(v, -v, q == 1u || q == 2u);
}

fn tan_f32(x: f32) -> f32 {
    if (isnan_f32(x) || isinf_f32(x)) { return select(x, nan_f32(), isinf_f32(x)); }
    if (x == 0.0) { return x; }
    let rq = trig_reduce_f32(x);
    let s = sin_poly_f32(rq.x);
    let c = cos_poly_f32(rq.x);
    return select(s / c, -c / s, (u32(rq.y) & 1u) == 1u);
}

// Odd Taylor series near 0 (where 1 - 2 / (e^2x + 1) cancels), saturation far out (where
// e^2x overflows), and the exponential form in between.
fn tanh_f32(x: f32) -> f32 {
    if (isnan_f32(x)) { return x; }
    let a = abs(x);
    if (a > 9.0) { return copysign_f32(1.0, x); }
    if (a < 0.5) {
        let x2 = x * x;
        var p = -0.0014558344;
        p = p * x2 + 0.0035921280;
        p = p * x2 - 0.0088632355;
        p = p * x2 + 0.021869488;
        p = p * x2 - 0.053968254;
        p = p * x2 + 0.13333334;
        p = p * x2 - 0.33333334;
        return x + x * x2 * p;
    }
    let r = 1.0 - 2.0 / (exp_f32(2.0 * a) + 1.0);
    return copysign_f32(r, x);
}

// a * b = hi + lo exactly, from the 48-bit integer product of the mantissas (fma is not
// fused on every device). Falls back to (a * b, 0) when an operand is not normal or the
// parts would leave the normal range.
fn two_prod_f32(a: f32, b: f32) -> vec2<f32> {
    let p = a * b;
    let ba = bitcast<u32>(a);
    let bb = bitcast<u32>(b);
    let xa = (ba >> 23u) & 0xffu;
    let xb = (bb >> 23u) & 0xffu;
    // a = ma 2^(xa - 150), b = mb 2^(xb - 150): the product's last bit is worth 2^n.
    let n = i32(xa) + i32(xb) - 300;
    if (xa == 0u || xb == 0u || xa == 255u || xb == 255u || n < -126 || n + 24 > 127) {
        return vec2<f32>(p, 0.0);
    }
    let m = mul_hi_lo((ba & 0x7fffffu) | 0x800000u, (bb & 0x7fffffu) | 0x800000u);
    let top = (m.x << 8u) | (m.y >> 24u);
    let low = m.y & 0xffffffu;
    let hi = f32(top) * bitcast<f32>(u32(n + 24 + 127) << 23u);
    let lo = f32(low) * bitcast<f32>(u32(n + 127) << 23u);
    return select(vec2<f32>(hi, lo), vec2<f32>(-hi, -lo), ((ba ^ bb) >> 31u) == 1u);
}

fn pow_f32(x: f32, y: f32) -> f32 {
    if (y == 0.0 || x == 1.0) { return 1.0; }
    if (isnan_f32(x) || isnan_f32(y)) { return nan_f32(); }
    let ax = abs(x);
    let ay = abs(y);
    let y_int = floor(y) == y;
    let y_odd = y_int && ay < 16777216.0 && floor(ay * 0.5) * 2.0 != ay;
    var r: f32;
    if (ax == 0.0) {
        r = select(0.0, inf_f32(false), y < 0.0);
    } else if (isinf_f32(ax)) {
        r = select(inf_f32(false), 0.0, y < 0.0);
    } else if (isinf_f32(y)) {
        if (ax == 1.0) { return 1.0; }
        r = select(0.0, inf_f32(false), (ax > 1.0) == (y > 0.0));
    } else {
        // y ln|x| as head + tail, the product made exact in integers.
        let l = ln2parts_f32(ax);
        let pr = two_prod_f32(y, l.x);
        r = exp2parts_f32(pr.x, pr.y + y * l.y);
    }
    if (signbit_f32(x)) {
        if (!y_int && ax != 0.0 && !isinf_f32(ax)) { return nan_f32(); }
        if (y_odd) { r = -r; }
    }
    return r;
}
"#;

/// Taylor coefficients of tanh (x, x^3, ..., x^37), 2^2n (2^2n - 1) B_2n / (2n)!, rounded
/// from exact fractions: 19 terms reach f64 precision for |x| < 0.55.
const TANH_TAYLOR: [f64; 19] = [
    1.0,
    -0.3333333333333333,
    0.13333333333333333,
    -0.05396825396825397,
    0.021869488536155203,
    -0.008863235529902197,
    0.003592128036572481,
    -0.0014558343870513183,
    0.000590027440945586,
    -0.00023912911424355248,
    9.691537956929451e-05,
    -3.927832388331683e-05,
    1.5918905069328964e-05,
    -6.451689215655431e-06,
    2.6147711512907546e-06,
    -1.0597268320104654e-06,
    4.294911078273806e-07,
    -1.7406618963571648e-07,
    7.054636946400968e-08,
];

/// f64 sin, cos and tan; `SINPOLY`/`COSPOLY` are filled in by `f64_transcendental`.
const TRIG64: &str = r#"
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
            let pr = mul_hi_lo(select(ml, mh, i == 1u), wj);
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
SINPOLY    return r + r * z * p;
}

fn cos_poly_f64(r: f64) -> f64 {
    let z = r * r;
COSPOLY    return f64(1) + z * (f64(-0.5) + z * p);
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
"#;

/// The f64 closest to ln 2 - 0x3FE62E42FEFA3800 (computed exactly, offline).
const LN2_LO64_BITS: u64 = 0x3D2E_F357_93C7_6730;

/// f64 `exp`, `ln` and `tanh` (f64 has no 64-bit bitcast without `SHADER_INT64`, so exponents move
/// through `ldexp` and an f32 conversion): Cody-Waite reduction by ln 2 (the high part has 42
/// bits, so k ln2_hi is exact) and a degree-13 Taylor polynomial for `exp`; the exponent found
/// by scaling into f32's range, then ln(1 + f) = f - s (f - R(s^2)) to s^21 for `ln`.
/// `tanh` builds on `exp`. The other f64 transcendentals stay `Unsupported`.
pub(crate) fn f64_transcendental() -> String {
    let lit = |v: f64| format!("{v:e}lf");
    let ln2_hi = lit(f64::from_bits(0x3FE6_2E42_FEFA_3800));
    // ln 2 - ln2_hi, rounded from the exact value (not from ln 2 rounded to f64).
    let ln2_lo = lit(f64::from_bits(LN2_LO64_BITS));
    let mut exp_poly = String::new();
    let mut fact = 1.0f64;
    let mut coeffs = vec![1.0f64];
    for n in 1..=13 {
        fact *= n as f64;
        coeffs.push(1.0 / fact);
    }
    exp_poly.push_str(&format!("    var p = {};\n", lit(coeffs[13])));
    for c in coeffs[..13].iter().rev() {
        exp_poly.push_str(&format!("    p = p * r + {};\n", lit(*c)));
    }
    let mut ln_poly = format!("    var rr = {};\n", lit(2.0 / 21.0));
    for k in (1..10).rev() {
        ln_poly.push_str(&format!("    rr = rr * z + {};\n", lit(2.0 / (2 * k + 1) as f64)));
    }
    let lit_signed = |v: f64| if v < 0.0 { format!("(-{})", lit(-v)) } else { lit(v) };
    let mut tanh_poly = format!("        var p = {};\n", lit_signed(TANH_TAYLOR[18]));
    for c in TANH_TAYLOR[..18].iter().rev() {
        tanh_poly.push_str(&format!("        p = p * z + {};\n", lit_signed(*c)));
    }
    // sin: r + r z (S1 + z (S2 + ...)), cos: 1 + z (-1/2 + z (C2 + ...)), to r^19 and r^20.
    let mut sin_poly = format!("    var p = {};\n", lit_signed(-8.22063524662433e-18));
    for c in [
        2.8114572543455206e-15,
        -7.647163731819816e-13,
        1.6059043836821613e-10,
        -2.505210838544172e-08,
        2.7557319223985893e-06,
        -0.0001984126984126984,
        0.008333333333333333,
        -0.16666666666666666,
    ] {
        sin_poly.push_str(&format!("    p = p * z + {};\n", lit_signed(c)));
    }
    let mut cos_poly = format!("    var p = {};\n", lit_signed(4.110317623312165e-19));
    for c in [
        -1.5619206968586225e-16,
        4.779477332387385e-14,
        -1.1470745597729725e-11,
        2.08767569878681e-09,
        -2.755731922398589e-07,
        2.48015873015873e-05,
        -0.001388888888888889,
        0.041666666666666664,
    ] {
        cos_poly.push_str(&format!("    p = p * z + {};\n", lit_signed(c)));
    }
    let consts = [
        ("P64_1", f64::from_bits(0x3FF9_21FB_5440_0000)),
        ("P64_2", f64::from_bits(0x3DD0_B461_1A60_0000)),
        ("P64_3", f64::from_bits(0x3BA3_198A_2E03_7073)),
        ("P64_PIO2", f64::from_bits(0x3FF9_21FB_5444_2D18)),
        ("P64_TWO_OVER_PI", f64::from_bits(0x3FE4_5F30_6DC9_C883)),
        ("P64_LIMIT", 1.6e6),
        ("P64_TWO64", 2f64.powi(64)),
        ("P64_TWO32", 2f64.powi(32)),
        ("P64_TWO_M32", 2f64.powi(-32)),
    ];
    let mut out = String::new();
    for (name, v) in consts {
        out.push_str(&format!("const {name}: f64 = {};\n", lit(v)));
    }
    out.push_str(&TRIG64.replace("SINPOLY", &sin_poly).replace("COSPOLY", &cos_poly));
    out + &format!(
        r#"
// Taylor near 0; (1 - e) / (1 + e) with e = exp(-2|x|) beyond, where neither part cancels.
fn tanh_f64(x: f64) -> f64 {{
    if (isnan_f64(x)) {{ return x; }}
    let a = abs(x);
    if (a > f64(22)) {{ return copysign_f64(f64(1), x); }}
    if (a < f64(0.55)) {{
        let z = x * x;
{tanh_poly}        return x * p;
    }}
    let e = exp_f64(-2.0 * a);
    return copysign_f64((f64(1) - e) / (f64(1) + e), x);
}}

fn exp_f64(x: f64) -> f64 {{
    if (isnan_f64(x)) {{ return x; }}
    if (x > {max_log}) {{ return inf_f64(false); }}
    if (x < -{min_log}) {{ return f64(0); }}
    let k = round(x * {log2e});
    let r = (x - k * {ln2_hi}) - k * {ln2_lo};
{exp_poly}    return ldexp(p, i32(k));
}}

fn ln_f64(x: f64) -> f64 {{
    if (isnan_f64(x)) {{ return x; }}
    if (x == f64(0)) {{ return inf_f64(true); }}
    if (x < f64(0)) {{ return nan_f64(); }}
    if (isinf_f64(x)) {{ return x; }}
    var m = x;
    var e = 0;
    if (m < {min_normal}) {{
        m = m * {two54};
        e = -54;
    }}
    loop {{
        if (m < {two64}) {{ break; }}
        m = ldexp(m, -64);
        e = e + 64;
    }}
    loop {{
        if (m >= {two_m64}) {{ break; }}
        m = ldexp(m, 64);
        e = e - 64;
    }}
    // In f32's range now: its exponent field, corrected for the conversion's rounding.
    let fe = i32((bitcast<u32>(f32(m)) >> 23u) & 0xffu) - 127;
    m = ldexp(m, -fe);
    e = e + fe;
    if (m >= f64(2)) {{
        m = m * f64(0.5);
        e = e + 1;
    }}
    if (m < f64(1)) {{
        m = m * f64(2);
        e = e - 1;
    }}
    if (m > {sqrt2}) {{
        m = m * f64(0.5);
        e = e + 1;
    }}
    let f = m - f64(1);
    let s = f / (f64(2) + f);
    let z = s * s;
{ln_poly}    rr = rr * z;
    let lnm = f - s * (f - rr);
    let fe64 = f64(e);
    return fe64 * {ln2_hi} + (fe64 * {ln2_lo} + lnm);
}}
"#,
        max_log = lit(709.782712893384),
        min_log = lit(745.1332191019412),
        log2e = lit(std::f64::consts::LOG2_E),
        min_normal = lit(f64::MIN_POSITIVE),
        two54 = lit(2f64.powi(54)),
        two64 = lit(2f64.powi(64)),
        two_m64 = lit(2f64.powi(-64)),
        sqrt2 = lit(std::f64::consts::SQRT_2),
    )
}
