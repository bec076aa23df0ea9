static void *pc_table[COUNT];
static void *pc_handle;
static int pc_tried;
__attribute__((visibility("hidden"), used)) void *pc_cuda_resolve(long i) {
  void *f = __atomic_load_n(&pc_table[i], __ATOMIC_ACQUIRE);
  if (f) return f;
  if (!__atomic_load_n(&pc_tried, __ATOMIC_ACQUIRE)) {
    /* Racing first calls may both dlopen: harmless, the driver is reference counted. */
    __atomic_store_n(&pc_handle, dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), __ATOMIC_RELEASE);
    __atomic_store_n(&pc_tried, 1, __ATOMIC_RELEASE);
  }
  void *h = __atomic_load_n(&pc_handle, __ATOMIC_ACQUIRE);
  f = h ? dlsym(h, pc_names[i]) : 0;
  if (!f) {
    const char *n = pc_names[i];
    if (__builtin_strcmp(n, "cuGetErrorName") == 0) f = (void *)pc_stub_error_name;
    else if (__builtin_strcmp(n, "cuGetErrorString") == 0) f = (void *)pc_stub_error_string;
    else if (h) { /* a real driver that lacks this entry point: not "no driver" (34) */
      fprintf(stderr, "polycompute cuda stub: the NVIDIA driver (libcuda.so.1) has no %s (returning %d, CUDA_ERROR_NOT_FOUND): update the driver\n", n, MISSING);
      f = (void *)pc_missing_entry;
    } else f = (void *)pc_stub_entry;
  }
  __atomic_store_n(&pc_table[i], f, __ATOMIC_RELEASE);
  return f;
}
