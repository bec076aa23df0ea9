// Box-Muller, f32: pair `j / 2` uses words `2p, 2p+1`; even `j` takes the cosine.
static __device__ __forceinline__ float pc_normal_f32(const u32 w[4], u32 j) {
  const u32 p = 2u * (j / 2u);
  const float u1 = __uint2float_rn((w[p] >> 8) + 1u) * (1.0f / 16777216.0f);
  const float u2 = __uint2float_rn(w[p + 1] >> 8) * (1.0f / 16777216.0f);
  const float r = sqrtf(-2.0f * logf(u1));
  const float theta = (2.0f * 3.14159265358979323846f) * u2;
  return (j % 2u == 0u) ? r * cosf(theta) : r * sinf(theta);
}
