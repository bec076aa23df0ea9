// Half precision (f16: IEEE binary16; bf16: bfloat16) as 16-bit storage types. Values are
// kept as their bits (no cuda_fp16.h: NVRTC compiles this without headers, and the host
// emulation runs it unchanged); every operation widens to float (exact), computes in float
// and rounds once to the storage type, to nearest even. NaN keeps its sign and the top
// mantissa bits and is made quiet (the `half` crate's rule); overflow gives +-Inf; subnormals
// are kept. f64 and 32-bit integers are rounded from their exact double value in one step
// (never through float, which would round twice).
typedef unsigned short u16;
// (A host test harness that shares one definition between kernels defines them first.)
#ifndef PC_HALF_TYPES_DEFINED
struct pc_f16 { u16 bits; };
struct pc_bf16 { u16 bits; };
#endif
PC_FN pc_f16 pc_f16_bits(u32 b) { pc_f16 h; h.bits = (u16)b; return h; }
PC_FN pc_bf16 pc_bf16_bits(u32 b) { pc_bf16 h; h.bits = (u16)b; return h; }

// Widening: exact.
PC_FN float pc_f16_to_float(pc_f16 h) {
  const u32 b = h.bits, sign = (b & 0x8000u) << 16, e = (b >> 10) & 0x1fu, m = b & 0x3ffu;
  if (e == 0x1fu) return __int_as_float((i32)(sign | (m ? 0x7fc00000u : 0x7f800000u) | (m << 13)));
  if (e == 0u) {
    // Zero or subnormal: m * 2^-24, exact in float.
    const float v = __uint2float_rn(m) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return __int_as_float((i32)(sign | ((e + 112u) << 23) | (m << 13)));
}
PC_FN float pc_bf16_to_float(pc_bf16 h) {
  const u32 b = h.bits;
  return __int_as_float((i32)(((b & 0x7fffu) > 0x7f80u ? (b | 0x40u) : b) << 16));
}

// Rounds the significand `s` (an integer) times 2^`shift` away, to nearest even.
PC_FN u64 pc_rne_shift(u64 s, u32 shift) {
  if (shift == 0u) return s;
  if (shift > 63u) return 0ull;
  const u64 q = s >> shift, rem = s & ((1ull << shift) - 1ull), half = 1ull << (shift - 1u);
  return q + ((rem > half || (rem == half && (q & 1ull))) ? 1ull : 0ull);
}

// A finite or infinite double's magnitude `ax` (its bits without the sign) rounded to a
// format of `mbits` mantissa bits and exponent bias `bias` whose all-ones exponent `emax`
// is Inf: the format's bits, without the sign (NaN is handled by the callers).
PC_FN u32 pc_round_double(u64 ax, u32 mbits, i32 bias, u32 emax) {
  const u32 inf = emax << mbits;
  const i32 e = (i32)(ax >> 52);
  if (e == 0x7ff) return inf;
  // Double subnormals (< 2^-1022) are far below either format's smallest subnormal.
  if (e == 0) return 0u;
  const u64 s = (ax & 0xfffffffffffffull) | (1ull << 52);
  const i32 exp = e - 1023 + bias;  // the target's exponent field if normal
  if (exp >= (i32)emax) return inf;
  if (exp >= 1) {
    // q holds the implicit bit at 1 << mbits: (exp - 1) << mbits plus q is the result, and a
    // carry out of the mantissa moves into the exponent (up to exactly Inf).
    const u64 q = pc_rne_shift(s, 52u - mbits);
    const u64 r = ((u64)(exp - 1) << mbits) + q;
    return r >= inf ? inf : (u32)r;
  }
  // Subnormal (or zero) in the target: a rounding up to 1 << mbits is the smallest normal.
  return (u32)pc_rne_shift(s, 52u - mbits + (u32)(1 - exp));
}

// NaN: the sign, a quiet bit and the top mantissa bits of the double.
PC_FN u32 pc_half_nan(u64 x, u32 mbits, u32 emax) {
  const u32 top = (u32)((x >> (52u - mbits)) & ((1u << mbits) - 1u));
  return (u32)((x >> 48) & 0x8000u) | (emax << mbits) | (1u << (mbits - 1u)) | top;
}
PC_FN pc_f16 pc_double_to_f16(double v) {
  const u64 x = (u64)__double_as_longlong(v), ax = x & 0x7fffffffffffffffull;
  if (ax > 0x7ff0000000000000ull) return pc_f16_bits(pc_half_nan(x, 10u, 31u));
  return pc_f16_bits((u32)((x >> 48) & 0x8000u) | pc_round_double(ax, 10u, 15, 31u));
}
PC_FN pc_bf16 pc_double_to_bf16(double v) {
  const u64 x = (u64)__double_as_longlong(v), ax = x & 0x7fffffffffffffffull;
  if (ax > 0x7ff0000000000000ull) return pc_bf16_bits(pc_half_nan(x, 7u, 255u));
  return pc_bf16_bits((u32)((x >> 48) & 0x8000u) | pc_round_double(ax, 7u, 127, 255u));
}

// From float, in 32-bit integer arithmetic (the hot path of every half map).
PC_FN pc_f16 pc_float_to_f16(float f) {
  const u32 x = (u32)__float_as_int(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return pc_f16_bits(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return pc_f16_bits(sign | 0x7c00u);  // >= 65520 (and Inf): Inf
  if (ax < 0x38800000u) {
    // Below 2^-14: a subnormal (or zero); 2^-25 is a tie that goes to the even zero.
    if (ax <= 0x33000000u) return pc_f16_bits(sign);
    const u32 s = (ax & 0x7fffffu) | 0x800000u, shift = 126u - (ax >> 23);
    return pc_f16_bits(sign | (u32)pc_rne_shift(s, shift));
  }
  const u32 h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu), rem = ax & 0x1fffu;
  return pc_f16_bits(sign | (h + ((rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ? 1u : 0u)));
}
PC_FN pc_bf16 pc_float_to_bf16(float f) {
  const u32 x = (u32)__float_as_int(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return pc_bf16_bits((x >> 16) | 0x40u);
  // Round to nearest even on the low 16 bits; a carry moves into the exponent (up to Inf).
  const u32 rem = x & 0xffffu, q = x >> 16;
  return pc_bf16_bits(q + ((rem > 0x8000u || (rem == 0x8000u && (q & 1u))) ? 1u : 0u));
}

// Casts (the map's `pc_to_<dtype>`): to and from every dtype.
PC_FN float pc_to_f32(pc_f16 x) { return pc_f16_to_float(x); }
PC_FN float pc_to_f32(pc_bf16 x) { return pc_bf16_to_float(x); }
PC_FN double pc_to_f64(pc_f16 x) { return (double)pc_f16_to_float(x); }
PC_FN double pc_to_f64(pc_bf16 x) { return (double)pc_bf16_to_float(x); }
PC_FN i32 pc_to_i32(pc_f16 x) { return pc_f2i((double)pc_f16_to_float(x)); }
PC_FN i32 pc_to_i32(pc_bf16 x) { return pc_f2i((double)pc_bf16_to_float(x)); }
PC_FN u32 pc_to_u32(pc_f16 x) { return pc_f2u((double)pc_f16_to_float(x)); }
PC_FN u32 pc_to_u32(pc_bf16 x) { return pc_f2u((double)pc_bf16_to_float(x)); }
PC_FN pc_f16 pc_to_f16(pc_f16 x) { return x; }
PC_FN pc_f16 pc_to_f16(pc_bf16 x) { return pc_float_to_f16(pc_bf16_to_float(x)); }
PC_FN pc_f16 pc_to_f16(float x) { return pc_float_to_f16(x); }
PC_FN pc_f16 pc_to_f16(double x) { return pc_double_to_f16(x); }
PC_FN pc_f16 pc_to_f16(i32 x) { return pc_double_to_f16(__int2double_rn(x)); }
PC_FN pc_f16 pc_to_f16(u32 x) { return pc_double_to_f16(__uint2double_rn(x)); }
PC_FN pc_bf16 pc_to_bf16(pc_bf16 x) { return x; }
PC_FN pc_bf16 pc_to_bf16(pc_f16 x) { return pc_float_to_bf16(pc_f16_to_float(x)); }
PC_FN pc_bf16 pc_to_bf16(float x) { return pc_float_to_bf16(x); }
PC_FN pc_bf16 pc_to_bf16(double x) { return pc_double_to_bf16(x); }
PC_FN pc_bf16 pc_to_bf16(i32 x) { return pc_double_to_bf16(__int2double_rn(x)); }
PC_FN pc_bf16 pc_to_bf16(u32 x) { return pc_double_to_bf16(__uint2double_rn(x)); }

// Every other float operation of the prelude, computed in float and rounded once.
#define PC_HALF_BINARY(name) \
  PC_FN pc_f16 name(pc_f16 a, pc_f16 b) { return pc_float_to_f16(name(pc_f16_to_float(a), pc_f16_to_float(b))); } \
  PC_FN pc_bf16 name(pc_bf16 a, pc_bf16 b) { return pc_float_to_bf16(name(pc_bf16_to_float(a), pc_bf16_to_float(b))); }
#define PC_HALF_UNARY(name) \
  PC_FN pc_f16 name(pc_f16 a) { return pc_float_to_f16(name(pc_f16_to_float(a))); } \
  PC_FN pc_bf16 name(pc_bf16 a) { return pc_float_to_bf16(name(pc_bf16_to_float(a))); }
PC_HALF_BINARY(pc_add)
PC_HALF_BINARY(pc_sub)
PC_HALF_BINARY(pc_mul)
PC_HALF_BINARY(pc_div)
PC_HALF_BINARY(pc_rem)
PC_HALF_BINARY(pc_pow)
PC_HALF_BINARY(pc_min)
PC_HALF_BINARY(pc_max)
PC_HALF_BINARY(pc_eq)
PC_HALF_BINARY(pc_ne)
PC_HALF_BINARY(pc_lt)
PC_HALF_BINARY(pc_le)
PC_HALF_BINARY(pc_gt)
PC_HALF_BINARY(pc_ge)
PC_HALF_UNARY(pc_sqrt)
PC_HALF_UNARY(pc_recip)
PC_HALF_UNARY(pc_exp)
PC_HALF_UNARY(pc_expm1)
PC_HALF_UNARY(pc_ln)
PC_HALF_UNARY(pc_log1p)
PC_HALF_UNARY(pc_log2)
PC_HALF_UNARY(pc_log10)
PC_HALF_UNARY(pc_sin)
PC_HALF_UNARY(pc_cos)
PC_HALF_UNARY(pc_tan)
PC_HALF_UNARY(pc_tanh)
PC_HALF_UNARY(pc_floor)
PC_HALF_UNARY(pc_ceil)
PC_HALF_UNARY(pc_round)
// neg and abs flip or clear the sign bit (exact, NaN payloads kept).
PC_FN pc_f16 pc_neg(pc_f16 a) { return pc_f16_bits(a.bits ^ 0x8000u); }
PC_FN pc_bf16 pc_neg(pc_bf16 a) { return pc_bf16_bits(a.bits ^ 0x8000u); }
PC_FN pc_f16 pc_abs(pc_f16 a) { return pc_f16_bits(a.bits & 0x7fffu); }
PC_FN pc_bf16 pc_abs(pc_bf16 a) { return pc_bf16_bits(a.bits & 0x7fffu); }
PC_FN bool pc_truthy(pc_f16 c) { return (c.bits & 0x7fffu) != 0u; }
PC_FN bool pc_truthy(pc_bf16 c) { return (c.bits & 0x7fffu) != 0u; }
