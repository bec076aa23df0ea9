// Two Philox words as an f64 in [0, 1): ((hi:lo) >> 11) * 2^-53, exactly as the CPU
// reference (the 53 bits split as hi * 2^-32 + (lo >> 11) * 2^-53, both exact).

fn unit_f64(lo: u32, hi: u32) -> f64 {
    return f64(hi) * 2.3283064365386963e-10lf + f64(lo >> 11u) * 1.1102230246251565e-16lf;
}
