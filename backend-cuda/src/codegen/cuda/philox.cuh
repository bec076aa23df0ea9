// Philox4x32-10 as in `polycompute_core::philox` (constants and round layout identical):
// the counter (c0, c1, 0, 0) under key (k0, k1) gives the four words w[0..4].
static __device__ __forceinline__ void pc_philox(u32 c0, u32 c1, u32 k0, u32 k1, u32 w[4]) {
  u32 c2 = 0u, c3 = 0u;
  #pragma unroll
  for (int round = 0; round < 10; ++round) {
    if (round > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    const u32 hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    const u32 hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    const u32 n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
  }
  w[0] = c0; w[1] = c1; w[2] = c2; w[3] = c3;
}
