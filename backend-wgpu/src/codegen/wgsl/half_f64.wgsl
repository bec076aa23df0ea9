// An f64 as an f32 rounded to odd (the last bit set when bits were dropped): rounding that
// to a half once more is the correctly rounded half of the f64, with no double rounding.
// Magnitudes beyond f32 are clamped to its largest finite value (odd, so still an
// overflow for every half); NaN stays NaN. Needs f32_base.wgsl and f64_base.wgsl.
fn f64_to_f32_odd(x: f64) -> f32 {
    if (isnan_f64(x)) { return f32(x); }
    let big = 3.4028234663852886e38lf;
    let c = clamp(x, -big, big);
    let f = f32(c);
    if (f64(f) == c) { return f; }
    let b = bitcast<u32>(f);
    if ((b & 1u) == 1u) { return f; }
    // f is the even neighbour: the odd one lies one ulp further towards c.
    return bitcast<f32>(select(b - 1u, b + 1u, abs(c) > abs(f64(f))));
}
