// Box-Muller, f64: both elements of a block use the same pair; even `j` takes the cosine.
static __device__ __forceinline__ double pc_normal_f64(const u32 w[4], u32 j) {
  const u64 w01 = ((u64)w[1] << 32) | (u64)w[0];
  const u64 w23 = ((u64)w[3] << 32) | (u64)w[2];
  const double u1 = __ull2double_rn((w01 >> 11) + 1ull) * (1.0 / 9007199254740992.0);
  const double u2 = __ull2double_rn(w23 >> 11) * (1.0 / 9007199254740992.0);
  const double r = sqrt(-2.0 * log(u1));
  const double theta = (2.0 * 3.14159265358979323846) * u2;
  return (j % 2u == 0u) ? r * cos(theta) : r * sin(theta);
}
