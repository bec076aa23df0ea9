// f64 predicates and constructors. f64 has no 64-bit bitcast without SHADER_INT64, so an
// f64 is tested through its f32 conversion, which keeps NaN a NaN and sends large finite
// values to infinity, never to NaN. Needs f32_base.wgsl.

fn isnan_f64(x: f64) -> bool { return isnan_f32(f32(x)); }
fn isinf_f64(x: f64) -> bool { return !isnan_f64(x) && abs(x) > 1.7976931348623157e308lf; }
fn signbit_f64(x: f64) -> bool { return signbit_f32(f32(x)); }
fn nan_f64() -> f64 { return f64(nan_f32()); }
fn inf_f64(neg: bool) -> f64 { return f64(inf_f32(neg)); }
fn truthy_f64(c: f64) -> bool { return isnan_f64(c) || c != f64(0); }
