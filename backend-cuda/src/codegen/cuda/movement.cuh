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
