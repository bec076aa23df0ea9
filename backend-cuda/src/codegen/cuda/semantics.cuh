// polycompute's elementwise semantics (see `polycompute_core::expr`) as CUDA C++ device
// functions, one overload per dtype, so that no result depends on a native instruction's
// corner cases. Every generated kernel starts with this file (after a one-line banner);
// the rest of `codegen/` writes `pc_add(a, b)` and friends, never `a + b`.
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
#define PC_FN static __device__ __forceinline__

// Integer + - * wrap (two's complement): done in unsigned arithmetic, where overflow is defined.
PC_FN i32 pc_add(i32 a, i32 b) { return (i32)((u32)a + (u32)b); }
PC_FN u32 pc_add(u32 a, u32 b) { return a + b; }
PC_FN float pc_add(float a, float b) { return a + b; }
PC_FN double pc_add(double a, double b) { return a + b; }
PC_FN i32 pc_sub(i32 a, i32 b) { return (i32)((u32)a - (u32)b); }
PC_FN u32 pc_sub(u32 a, u32 b) { return a - b; }
PC_FN float pc_sub(float a, float b) { return a - b; }
PC_FN double pc_sub(double a, double b) { return a - b; }
PC_FN i32 pc_mul(i32 a, i32 b) { return (i32)((u32)a * (u32)b); }
PC_FN u32 pc_mul(u32 a, u32 b) { return a * b; }
PC_FN float pc_mul(float a, float b) { return a * b; }
PC_FN double pc_mul(double a, double b) { return a * b; }

// Integer division is floor division; x / 0 == 0; i32::MIN / -1 wraps to i32::MIN.
PC_FN i32 pc_div(i32 a, i32 b) {
  if (b == 0) return 0;
  if (b == -1) return (i32)(0u - (u32)a);
  i32 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
}
PC_FN u32 pc_div(u32 a, u32 b) { return b == 0u ? 0u : a / b; }
PC_FN float pc_div(float a, float b) { return a / b; }
PC_FN double pc_div(double a, double b) { return a / b; }

// Integer remainder is floored (sign of the divisor); x % 0 == 0.
PC_FN i32 pc_rem(i32 a, i32 b) {
  if (b == 0 || b == -1) return 0;
  i32 r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
PC_FN u32 pc_rem(u32 a, u32 b) { return b == 0u ? 0u : a % b; }
// Float remainder is numpy's: fmod, moved into the divisor's sign; a zero takes b's sign.
PC_FN float pc_rem(float a, float b) {
  float r = fmodf(a, b);
  if (r != 0.0f) { if ((b < 0.0f) != (r < 0.0f)) r += b; } else { r = copysignf(0.0f, b); }
  return r;
}
PC_FN double pc_rem(double a, double b) {
  double r = fmod(a, b);
  if (r != 0.0) { if ((b < 0.0) != (r < 0.0)) r += b; } else { r = copysign(0.0, b); }
  return r;
}

// Integer pow wraps; a negative exponent gives the truncated 1 / x^-e.
PC_FN u32 pc_upow(u32 base, u32 e) {
  u32 r = 1u;
  while (e != 0u) { if (e & 1u) r *= base; base *= base; e >>= 1; }
  return r;
}
PC_FN i32 pc_pow(i32 a, i32 e) {
  if (e < 0) { if (a == 1) return 1; if (a == -1) return (e & 1) ? -1 : 1; return 0; }
  return (i32)pc_upow((u32)a, (u32)e);
}
PC_FN u32 pc_pow(u32 a, u32 e) { return pc_upow(a, e); }
PC_FN float pc_pow(float a, float b) { return powf(a, b); }
PC_FN double pc_pow(double a, double b) { return pow(a, b); }

// min/max propagate NaN; -0.0 is below +0.0.
PC_FN float pc_min(float a, float b) {
  if (a != a) return a; if (b != b) return b; if (a < b) return a; if (b < a) return b;
  return __float_as_int(a) < 0 ? a : b;
}
PC_FN double pc_min(double a, double b) {
  if (a != a) return a; if (b != b) return b; if (a < b) return a; if (b < a) return b;
  return __double_as_longlong(a) < 0 ? a : b;
}
PC_FN float pc_max(float a, float b) {
  if (a != a) return a; if (b != b) return b; if (a > b) return a; if (b > a) return b;
  return __float_as_int(a) < 0 ? b : a;
}
PC_FN double pc_max(double a, double b) {
  if (a != a) return a; if (b != b) return b; if (a > b) return a; if (b > a) return b;
  return __double_as_longlong(a) < 0 ? b : a;
}
PC_FN i32 pc_min(i32 a, i32 b) { return a < b ? a : b; }
PC_FN u32 pc_min(u32 a, u32 b) { return a < b ? a : b; }
PC_FN i32 pc_max(i32 a, i32 b) { return a > b ? a : b; }
PC_FN u32 pc_max(u32 a, u32 b) { return a > b ? a : b; }

// Comparisons give 1 or 0 in the operands' dtype; any comparison with NaN is false, != true.
#define PC_CMP(name, op) \
  PC_FN i32 name(i32 a, i32 b) { return (a op b) ? 1 : 0; } \
  PC_FN u32 name(u32 a, u32 b) { return (a op b) ? 1u : 0u; } \
  PC_FN float name(float a, float b) { return (a op b) ? 1.0f : 0.0f; } \
  PC_FN double name(double a, double b) { return (a op b) ? 1.0 : 0.0; }
PC_CMP(pc_eq, ==)
PC_CMP(pc_ne, !=)
PC_CMP(pc_lt, <)
PC_CMP(pc_le, <=)
PC_CMP(pc_gt, >)
PC_CMP(pc_ge, >=)

// Bitwise ops are defined on integers only.
PC_FN i32 pc_and(i32 a, i32 b) { return a & b; }
PC_FN u32 pc_and(u32 a, u32 b) { return a & b; }
PC_FN i32 pc_or(i32 a, i32 b) { return a | b; }
PC_FN u32 pc_or(u32 a, u32 b) { return a | b; }
PC_FN i32 pc_xor(i32 a, i32 b) { return a ^ b; }
PC_FN u32 pc_xor(u32 a, u32 b) { return a ^ b; }

// neg and abs wrap on integers (abs(i32::MIN) == i32::MIN).
PC_FN i32 pc_neg(i32 a) { return (i32)(0u - (u32)a); }
PC_FN u32 pc_neg(u32 a) { return 0u - a; }
PC_FN float pc_neg(float a) { return -a; }
PC_FN double pc_neg(double a) { return -a; }
PC_FN i32 pc_abs(i32 a) { return a < 0 ? (i32)(0u - (u32)a) : a; }
PC_FN u32 pc_abs(u32 a) { return a; }
PC_FN float pc_abs(float a) { return fabsf(a); }
PC_FN double pc_abs(double a) { return fabs(a); }

// Float-only functions (correctly rounded sqrt and division: NVRTC's default -prec-sqrt/-prec-div).
PC_FN float pc_sqrt(float a) { return sqrtf(a); }
PC_FN double pc_sqrt(double a) { return sqrt(a); }
PC_FN float pc_recip(float a) { return 1.0f / a; }
PC_FN double pc_recip(double a) { return 1.0 / a; }
PC_FN float pc_exp(float a) { return expf(a); }
PC_FN double pc_exp(double a) { return exp(a); }
PC_FN float pc_expm1(float a) { return expm1f(a); }
PC_FN double pc_expm1(double a) { return expm1(a); }
PC_FN float pc_ln(float a) { return logf(a); }
PC_FN double pc_ln(double a) { return log(a); }
PC_FN float pc_log1p(float a) { return log1pf(a); }
PC_FN double pc_log1p(double a) { return log1p(a); }
PC_FN float pc_log2(float a) { return log2f(a); }
PC_FN double pc_log2(double a) { return log2(a); }
PC_FN float pc_log10(float a) { return log10f(a); }
PC_FN double pc_log10(double a) { return log10(a); }
PC_FN float pc_sin(float a) { return sinf(a); }
PC_FN double pc_sin(double a) { return sin(a); }
PC_FN float pc_cos(float a) { return cosf(a); }
PC_FN double pc_cos(double a) { return cos(a); }
PC_FN float pc_tan(float a) { return tanf(a); }
PC_FN double pc_tan(double a) { return tan(a); }
PC_FN float pc_tanh(float a) { return tanhf(a); }
PC_FN double pc_tanh(double a) { return tanh(a); }

// floor, ceil and round (half to even) are the identity on integers.
PC_FN float pc_floor(float a) { return floorf(a); }
PC_FN double pc_floor(double a) { return floor(a); }
PC_FN float pc_ceil(float a) { return ceilf(a); }
PC_FN double pc_ceil(double a) { return ceil(a); }
PC_FN float pc_round(float a) { return rintf(a); }
PC_FN double pc_round(double a) { return rint(a); }
#define PC_INT_IDENTITY(name) PC_FN i32 name(i32 a) { return a; } PC_FN u32 name(u32 a) { return a; }
PC_INT_IDENTITY(pc_floor)
PC_INT_IDENTITY(pc_ceil)
PC_INT_IDENTITY(pc_round)

// Float -> int casts truncate toward zero and saturate; NaN gives 0 (Rust's `as`). Every f32
// is exact in double, so both float types go through these.
PC_FN i32 pc_f2i(double x) {
  if (x != x) return 0;
  if (x <= -2147483648.0) return (i32)0x80000000u;
  if (x >= 2147483647.0) return 2147483647;
  return (i32)x;
}
PC_FN u32 pc_f2u(double x) {
  if (x != x || x <= 0.0) return 0u;
  if (x >= 4294967295.0) return 0xffffffffu;
  return (u32)x;
}
// Conversions to floats round to nearest even; i32 <-> u32 reinterpret the bits.
PC_FN float pc_to_f32(float x) { return x; }
PC_FN float pc_to_f32(double x) { return __double2float_rn(x); }
PC_FN float pc_to_f32(i32 x) { return __int2float_rn(x); }
PC_FN float pc_to_f32(u32 x) { return __uint2float_rn(x); }
PC_FN double pc_to_f64(float x) { return (double)x; }
PC_FN double pc_to_f64(double x) { return x; }
PC_FN double pc_to_f64(i32 x) { return __int2double_rn(x); }
PC_FN double pc_to_f64(u32 x) { return __uint2double_rn(x); }
PC_FN i32 pc_to_i32(float x) { return pc_f2i((double)x); }
PC_FN i32 pc_to_i32(double x) { return pc_f2i(x); }
PC_FN i32 pc_to_i32(i32 x) { return x; }
PC_FN i32 pc_to_i32(u32 x) { return (i32)x; }
PC_FN u32 pc_to_u32(float x) { return pc_f2u((double)x); }
PC_FN u32 pc_to_u32(double x) { return pc_f2u(x); }
PC_FN u32 pc_to_u32(i32 x) { return (u32)x; }
PC_FN u32 pc_to_u32(u32 x) { return x; }

// select's condition: true when != 0 (NaN is != 0, so true).
PC_FN bool pc_truthy(i32 c) { return c != 0; }
PC_FN bool pc_truthy(u32 c) { return c != 0u; }
PC_FN bool pc_truthy(float c) { return c != 0.0f; }
PC_FN bool pc_truthy(double c) { return c != 0.0; }
