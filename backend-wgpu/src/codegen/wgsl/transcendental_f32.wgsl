// f32 transcendentals written out, because WGSL's built-ins are only loosely specified
// (`exp` within 3 + 2|x| ulp, `sin` within 2^-11 absolute on [-pi, pi] and unspecified
// beyond, subnormals possibly flushed) and the shared semantics promise a few ulp
// everywhere. See transcendental.rs for the methods. The constants LN2_HI, LN2_LO, LOG2E,
// IVLN2_*, IVLN10_*, LOG10_2_*, PIO2_1, PIO2_2, PIO2_3, PIO2 and TWO_OVER_PI are declared
// before this text, from their bit patterns, and pow's logarithm table POW_LN_TABLE, LN2_FIX_HI and LN2_FIX_LO before
// them (see transcendental.rs). Needs f32_base.wgsl, copysign_f32 (float.wgsl) and
// mulhilo.wgsl.

// The bits of 2/pi after the binary point, behind one zero word (so a window may start
// left of the point).
var<private> two_over_pi_bits: array<u32, 10> = array<u32, 10>(0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u,
    0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au);

// p * 2^k for p in [0.5, 2) and k in [-152, 128], exact (and a subnormal result is built
// from its bits, never by arithmetic on subnormals, which a device may flush).
fn scale2_f32(p: f32, k: i32) -> f32 {
    if (k > 127) { return p * 2.0 * bitcast<f32>(u32(k + 126) << 23u); }
    // From -126 down the result may be subnormal (p < 1), which arithmetic may flush.
    if (k >= -125) { return p * bitcast<f32>(u32(k + 127) << 23u); }
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

struct LogRed { e: i32, m: f32, }

// x = m 2^e with m in (sqrt2/2, sqrt2], from bits (x finite and > 0, subnormals too): the
// reduction of every logarithm here; m - 1 is exact.
fn log_reduce_f32(x: f32) -> LogRed {
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
    return LogRed(e, m);
}

// ln x = e ln2 + ln(1 + f), as a head and a tail (x finite and > 0).
fn ln2parts_f32(x: f32) -> vec2<f32> {
    let red = log_reduce_f32(x);
    let e = red.e;
    let f = red.m - 1.0;
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
    let m2 = mulhilo(ix, two_over_pi_window(p + 64u));
    let m1 = mulhilo(ix, two_over_pi_window(p + 32u));
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
    // Zeros keep their sign (numpy: tanh(-0.0) = -0.0), which x + x^3 p would lose.
    if (isnan_f32(x) || x == 0.0) { return x; }
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
    let m = mulhilo((ba & 0x7fffffu) | 0x800000u, (bb & 0x7fffffu) | 0x800000u);
    let top = (m.x << 8u) | (m.y >> 24u);
    let low = m.y & 0xffffffu;
    let hi = f32(top) * bitcast<f32>(u32(n + 24 + 127) << 23u);
    let lo = f32(low) * bitcast<f32>(u32(n + 127) << 23u);
    return select(vec2<f32>(hi, lo), vec2<f32>(-hi, -lo), ((ba ^ bb) >> 31u) == 1u);
}

// 64-bit two's complement integers as vec2<u32>(high word, low word).
fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.y + b.y;
    return vec2<u32>(a.x + b.x + select(0u, 1u, lo < a.y), lo);
}

fn neg64(a: vec2<u32>) -> vec2<u32> {
    let lo = ~a.y + 1u;
    return vec2<u32>(~a.x + select(0u, 1u, lo == 0u), lo);
}

// 2^k for -126 <= k <= 127.
fn exp2i_f32(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }

// ln x as head + tail with about 2^-56 absolute error, for pow (x finite, > 0, != 1): y ln x
// is good to a fraction of an ulp of pow only if ln x carries about 32 + 7 bits, which two
// f32s summed in float arithmetic would (a driver's simplifier may fold compensated sums
// away), so the sum is taken in 64-bit fixed point (scale 2^-56) on integers:
// x = z 2^e with z in [0.695, 1.39), z = c (1 + r) with 1/c from a table of 89 entries (one
// per 2^-7 of z, 1/c with 15 bits so z/c is an exact integer product, |r| <= 2^-7),
// ln x = e ln2 + ln c + r - r^2/2 (all four exact to 2^-56) + r^3/3 - r^4/4 + r^5/5 - r^6/6
// (in f32: below 2^-22 and relatively good to 2^-21). Near x = 1, c = 1, so nothing cancels.
fn ln_fixed_f32(x: f32) -> vec2<f32> {
    let bits = bitcast<u32>(x);
    var e = i32(bits >> 23u) - 127;
    var mant = (bits & 0x7fffffu) | 0x800000u;
    if ((bits >> 23u) == 0u) {
        let shift = countLeadingZeros(bits) - 8u;
        mant = bits << shift;
        e = -126 - i32(shift);
    }
    // z = zi 2^-24.
    var zi = mant << 1u;
    if (mant >= 0xb20000u) {
        zi = mant;
        e = e + 1;
    }
    let entry = POW_LN_TABLE[(zi >> 17u) - 89u];
    // z / c - 1 = (zi * entry.x - 2^38) 2^-38; |r| <= 2^-7, so the low word is r.
    let r_bits = mulhilo(zi, entry.x).y;
    let r = bitcast<i32>(r_bits);
    let ae = u32(abs(e));
    let e_ln2 = mulhilo(ae, LN2_FIX_LO);
    var s = vec2<u32>(ae * LN2_FIX_HI + e_ln2.x, e_ln2.y);
    if (e < 0) { s = neg64(s); }
    s = add64(s, vec2<u32>(entry.y, entry.z));
    s = add64(s, vec2<u32>(bitcast<u32>(r >> 14u), r_bits << 18u));
    let ar = select(r_bits, 0u - r_bits, r < 0);
    let sq = mulhilo(ar, ar);
    s = add64(s, neg64(vec2<u32>(sq.x >> 21u, (sq.y >> 21u) | (sq.x << 11u))));
    let rf = f32(r) * bitcast<f32>(0x2c800000u);
    let q = rf * rf * rf * (bitcast<f32>(0x3eaaaaabu) + rf * (-0.25 + rf * (0.2 - rf * bitcast<f32>(0x3e2aaaabu))));
    // The fixed-point sum as head (its top 24 bits) + tail.
    let neg = (s.x >> 31u) == 1u;
    if (neg) { s = neg64(s); }
    var top: u32;
    var rest = 0u;
    var n: i32;
    if (s.x != 0u) {
        let lz = countLeadingZeros(s.x);
        top = s.x;
        rest = s.y;
        if (lz > 0u) {
            top = (s.x << lz) | (s.y >> (32u - lz));
            rest = s.y << lz;
        }
        n = i32(lz);
    } else {
        if (s.y == 0u) { return vec2<f32>(0.0, q); }
        let lz = countLeadingZeros(s.y);
        top = s.y << lz;
        n = 32 + i32(lz);
    }
    let hi = f32(top & 0xffffff00u) * exp2i_f32(-24 - n);
    let lo = f32(((top & 0xffu) << 24u) | (rest >> 8u)) * exp2i_f32(-48 - n);
    return vec2<f32>(select(hi, -hi, neg), select(lo, -lo, neg) + q);
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
        let l = ln_fixed_f32(ax);
        let pr = two_prod_f32(y, l.x);
        r = exp2parts_f32(pr.x, pr.y + y * l.y);
    }
    if (signbit_f32(x)) {
        if (!y_int && ax != 0.0 && !isinf_f32(ax)) { return nan_f32(); }
        if (y_odd) { r = -r; }
    }
    return r;
}

// exp(x) - 1 without the cancellation of a naive `exp(x) - 1` near 0: x = k ln2 + r (the
// reduction of exp), expm1(r) by its Taylor polynomial (|r| <= ln2/2), then
// (2^k - 1) + 2^k expm1(r), both terms exact up to k = 24 (and 2^k - 1 = 2^k, within half an
// ulp, past it), so the sum rounds once (k = 0 leaves r = x). 2^128 overflows: there, exp - 1.
fn expm1_f32(x: f32) -> f32 {
    if (isnan_f32(x)) { return x; }
    // Below 2^-64 (+-0 and subnormals too) the result is x: returned with no arithmetic,
    // which a device may flush.
    if (abs(x) < bitcast<f32>(0x1f800000u)) { return x; }
    // exp(x) < 2^-25: -1 + exp(x) rounds to -1.
    if (x < -17.5) { return -1.0; }
    let k = round(x * LOG2E);
    if (k > 127.0) { return exp_f32(x) - 1.0; }
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let p = r + r * r * (0.5 + r * (bitcast<f32>(0x3e2aaaabu) + r * (bitcast<f32>(0x3d2aaaabu)
        + r * (bitcast<f32>(0x3c088889u) + r * (bitcast<f32>(0x3ab60b61u) + r * (bitcast<f32>(0x39500d01u)
        + r * bitcast<f32>(0x37d00d01u)))))));
    let t = bitcast<f32>(u32(i32(k) + 127) << 23u);
    return (t - 1.0) + t * p;
}

// s (hfsq + R(s^2)) with s = f / (2 + f) and hfsq = f^2 / 2, so that ln(1 + f) =
// f - hfsq + this (fdlibm's split of ln(1 + f) = 2 atanh(s)): the large correction hfsq is one
// product and this remainder, below |f|^3 / 3, carries the polynomial's rounding. For f in
// about [-0.3, 0.5] (s^2 <= 0.04, where the series to s^11 is far below an ulp).
fn log1p_rest_f32(f: f32, hfsq: f32) -> f32 {
    let s = f / (2.0 + f);
    let z = s * s;
    let rr = z * (bitcast<f32>(0x3f2aaaabu) + z * (bitcast<f32>(0x3ecccccdu) + z * (bitcast<f32>(0x3e924925u)
        + z * (bitcast<f32>(0x3e638e39u) + z * bitcast<f32>(0x3e3a2e8cu)))));
    return s * (hfsq + rr);
}

// ln(1 + x) without rounding 1 + x. For 1 + x in [sqrt2/2, 1.5), f = x itself; elsewhere
// 1 + x = 2^e (1 + f) (e from the bits of the rounded 1 + x) with f = x 2^-e + (2^-e - 1):
// both terms exact for |e| <= 24 and their sum too (x 2^-e's last place is f's, or the sum
// is exact by Sterbenz; 1.5 bounds the first range so that f = x/2 - 1/2 is), so fdlibm's
// correction c / (1 + x) for the rounding of 1 + x, a compensation a driver's simplifier may
// fold away, is not needed. Past e = 23 (x > 2^23 sqrt2), ln of the rounded 1 + x is within
// 2^-24 of it, a thirtieth of an ulp.
// Then e ln2 + f - hfsq + rest summed as fdlibm's log1p.
fn log1p_f32(x: f32) -> f32 {
    if (isnan_f32(x)) { return x; }
    if (x == -1.0) { return inf_f32(true); }
    if (x < -1.0) { return nan_f32(); }
    if (isinf_f32(x)) { return x; }
    // Below 2^-64 (+-0 and subnormals too) the result is x: returned with no arithmetic,
    // which a device may flush.
    if (abs(x) < bitcast<f32>(0x1f800000u)) { return x; }
    var f = x;
    var e = 0;
    if (x <= bitcast<f32>(0xbe95f61au) || x >= 0.5) {
        let red = log_reduce_f32(1.0 + x);
        e = red.e;
        if (e > 23) {
            f = red.m - 1.0;
        } else {
            let t = exp2i_f32(-e);
            f = x * t + (t - 1.0);
        }
    }
    let hfsq = 0.5 * f * f;
    let rest = log1p_rest_f32(f, hfsq);
    let fe = f32(e);
    return fe * LN2_HI - ((hfsq - (rest + fe * LN2_LO)) - f);
}

// ln(1 + f) as hi + lo, hi with 12 significant bits (cut from its bits, so no simplifier can
// fold the split), for the base-2 and base-10 logarithms: hi times a 12-bit constant is exact.
fn log_hi_lo_f32(f: f32) -> vec2<f32> {
    let hfsq = 0.5 * f * f;
    let rest = log1p_rest_f32(f, hfsq);
    let hi = bitcast<f32>(bitcast<u32>(f - hfsq) & 0xfffff000u);
    return vec2<f32>(hi, ((f - hi) - hfsq) + rest);
}

// log2 x = e + ln(1 + f) log2(e) for x = 2^e (1 + f), the product as hi IVLN2_HI (exact)
// plus the small terms (FreeBSD's log2f): within an ulp, and exact at powers of two.
fn log2_f32(x: f32) -> f32 {
    if (isnan_f32(x)) { return x; }
    if (x == 0.0) { return inf_f32(true); }
    if (x < 0.0) { return nan_f32(); }
    if (isinf_f32(x)) { return x; }
    let red = log_reduce_f32(x);
    let l = log_hi_lo_f32(red.m - 1.0);
    return (l.x + l.y) * IVLN2_LO + l.y * IVLN2_HI + l.x * IVLN2_HI + f32(red.e);
}

// log10 x = e log10(2) + ln(1 + f) log10(e), both products split so that the large parts
// e LOG10_2_HI (16 bits times at most 8) and hi IVLN10_HI are exact and added last (FreeBSD's
// log10f): the error before the last rounding is far below half an ulp, so exact powers of
// ten (up to 1e10, the last exact in f32) give their exponent exactly.
fn log10_f32(x: f32) -> f32 {
    if (isnan_f32(x)) { return x; }
    if (x == 0.0) { return inf_f32(true); }
    if (x < 0.0) { return nan_f32(); }
    if (isinf_f32(x)) { return x; }
    let red = log_reduce_f32(x);
    let l = log_hi_lo_f32(red.m - 1.0);
    let fe = f32(red.e);
    return fe * LOG10_2_LO + (l.x + l.y) * IVLN10_LO + l.y * IVLN10_HI + l.x * IVLN10_HI + fe * LOG10_2_HI;
}
