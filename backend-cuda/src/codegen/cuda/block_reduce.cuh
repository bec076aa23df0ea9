// Combines one `Acc` per thread of the block into the block's total (valid in warp 0):
// a warp-shuffle tree within each warp, then the warps' partials through shared memory.
// Needs `Acc`, `pc_combine`, `pc_shfl` and `pc_identity` from the reduction's generated part.
PC_FN Acc pc_block_reduce(Acc a) {
  __shared__ Acc sh[32];
  const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  for (int d = 16; d > 0; d >>= 1) a = pc_combine(a, pc_shfl(a, d));
  if (lane == 0u) sh[warp] = a;
  __syncthreads();
  if (warp == 0u) {
    a = lane < ((blockDim.x + 31u) >> 5) ? sh[lane] : pc_identity();
    for (int d = 16; d > 0; d >>= 1) a = pc_combine(a, pc_shfl(a, d));
  }
  __syncthreads();
  return a;
}
