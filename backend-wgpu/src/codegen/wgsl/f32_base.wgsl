// f32 predicates and constructors of the shared semantics. NaN and infinity are tested on
// bits (a compiler that assumes no NaNs may fold `x != x` to false) and built from `pz`,
// the run-time zero `Builder` declares (a constant inf or NaN is rejected by naga).

fn isnan_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn isinf_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn signbit_f32(x: f32) -> bool { return (bitcast<u32>(x) >> 31u) == 1u; }
fn nan_f32() -> f32 { return bitcast<f32>(0x7fc00000u | pz); }
fn inf_f32(neg: bool) -> f32 { return bitcast<f32>(select(0x7f800000u, 0xff800000u, neg) | pz); }
fn truthy_f32(c: f32) -> bool { return (bitcast<u32>(c) & 0x7fffffffu) != 0u; }
