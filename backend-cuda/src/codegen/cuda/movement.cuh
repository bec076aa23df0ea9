// Index arrays and atomics of the data-movement kernels (concat, pad, take, take_along_axis,
// scatter_add, scans, sorts).

// An index into an axis of n elements: negative i32 counts from the end (numpy's take). The
// array layer has checked every index is in -n..n; clamping keeps a bad one from faulting.
PC_FN u32 pc_axis_index(i32 v, u32 n) {
  const i64 w = v < 0 ? (i64)v + (i64)n : (i64)v;
  return w < 0 ? 0u : (w >= (i64)n ? (n == 0u ? 0u : n - 1u) : (u32)w);
}
PC_FN u32 pc_axis_index(u32 v, u32 n) { return v >= n ? (n == 0u ? 0u : n - 1u) : v; }

// Accumulating adds for scatter_add: integers wrap (two's complement, done unsigned).
PC_FN void pc_atomic_add(float* p, float v) { atomicAdd(p, v); }
PC_FN void pc_atomic_add(double* p, double v) { atomicAdd(p, v); }
PC_FN void pc_atomic_add(u32* p, u32 v) { atomicAdd(p, v); }
PC_FN void pc_atomic_add(i32* p, i32 v) { atomicAdd((u32*)p, (u32)v); }
// Halves: a compare-and-swap loop on the aligned 32-bit word that holds the element (device
// allocations are whole words), each add computed in float and rounded once (`pc_add`).
template <class H> PC_FN void pc_atomic_add_half(H* p, H v) {
  u32* w = (u32*)((u64)p & ~3ull);
  const u32 shift = ((u64)p & 2ull) ? 16u : 0u;
  u32 old = *w, assumed;
  do {
    assumed = old;
    H cur;
    cur.bits = (u16)(assumed >> shift);
    const u32 sum = pc_add(cur, v).bits;
    old = atomicCAS(w, assumed, (assumed & ~(0xffffu << shift)) | (sum << shift));
  } while (old != assumed);
}
PC_FN void pc_atomic_add(pc_f16* p, pc_f16 v) { pc_atomic_add_half(p, v); }
PC_FN void pc_atomic_add(pc_bf16* p, pc_bf16 v) { pc_atomic_add_half(p, v); }
