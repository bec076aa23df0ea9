// numpy's sort order as an unsigned key: ascending keys are ascending values, every NaN is
// the largest key (NaN last, after +inf), and -0.0 has the key of +0.0 (equal: a stable sort
// keeps their input order). Ties between equal keys are broken by the element's index.
PC_FN u32 pc_sort_key(float x) {
  if (x != x) return 0xffffffffu;
  const u32 b = x == 0.0f ? 0u : (u32)__float_as_int(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
PC_FN u64 pc_sort_key(double x) {
  if (x != x) return 0xffffffffffffffffull;
  const u64 b = x == 0.0 ? 0ull : (u64)__double_as_longlong(x);
  return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}
PC_FN u32 pc_sort_key(i32 x) { return (u32)x ^ 0x80000000u; }
PC_FN u32 pc_sort_key(u32 x) { return x; }
// Half values sort by their (exact) f32 widening.
PC_FN u32 pc_sort_key(pc_f16 x) { return pc_sort_key(pc_f16_to_float(x)); }
PC_FN u32 pc_sort_key(pc_bf16 x) { return pc_sort_key(pc_bf16_to_float(x)); }
