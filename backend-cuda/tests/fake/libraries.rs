//! The fake NVRTC and cuBLAS libraries (C sources) and the helper that builds a C source into
//! a shared library with the system's C compiler. They use nothing of the backend, so the
//! crate's own unit tests (the library search in `src/libraries/tests.rs`) build them too.

// Each test binary uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// cuBLAS whose f32/f64 GEMMs fail with `CUBLAS_STATUS_EXECUTION_FAILED` (13) after poisoning
/// the fake driver's stream with 700, as a fault inside a GEMM kernel would; its half GEMM
/// (`cublasGemmStridedBatchedEx`) succeeds and records its arguments.
pub const FAKE_CUBLAS: &str = r#"
#include <dlfcn.h>
static int handle;
int cublasCreate_v2(void **h) { *h = &handle; return 0; }
int cublasDestroy_v2(void *h) { return h == &handle ? 0 : 1; }
int cublasSetStream_v2(void *h, void *s) { return h == &handle && s ? 0 : 1; }
static int fault(void) {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void (*poison)(void) = cuda ? (void (*)(void))dlsym(cuda, "fake_poison") : 0;
  if (poison) poison();
  return 13;
}
int cublasSgemmStridedBatched(void) { return fault(); }
int cublasDgemmStridedBatched(void) { return fault(); }
/* The half GEMM succeeds and records its arguments (read back with fake_gemm_ex_arg):
   0-1 transa/b, 2-4 m n k, 5-7 A type, lda, strideA, 8-10 B's, 11-13 C's, 14 batch,
   15 compute type, 16 algo, 17 alpha == 1.0f and beta == 0.0f, 18-19 A's and B's first
   element bits (which operand went where), 20 calls. */
static long long ex[21];
long long fake_gemm_ex_arg(int i) { return ex[i]; }
int cublasGemmStridedBatchedEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha,
    const void *a, int at, int lda, long long sa, const void *b, int bt, int ldb, long long sb,
    const void *beta, void *c, int ct, int ldc, long long sc, int batch, int compute, int algo) {
  if (h != &handle || !c) return 7;
  long long v[20] = {ta, tb, m, n, k, at, lda, sa, bt, ldb, sb, ct, ldc, sc, batch, compute, algo,
                     *(const float *)alpha == 1.0f && *(const float *)beta == 0.0f,
                     *(const unsigned short *)a, *(const unsigned short *)b};
  for (int i = 0; i < 20; ++i) ex[i] = v[i];
  ex[20] += 1;
  return 0;
}
"#;

/// cuBLAS whose strided batched GEMMs compute on the host (the fake driver's device memory is
/// host memory), column-major as cuBLAS defines them, and refuse leading dimensions smaller
/// than the stored matrix's rows with `CUBLAS_STATUS_INVALID_VALUE` (7), as cuBLAS does: so
/// a result is right only when every argument of the call is.
pub const FAKE_CUBLAS_COMPUTING: &str = r#"
static int handle;
int cublasCreate_v2(void **h) { *h = &handle; return 0; }
int cublasDestroy_v2(void *h) { return h == &handle ? 0 : 1; }
int cublasSetStream_v2(void *h, void *s) { return h == &handle && s ? 0 : 1; }
#define GEMM(NAME, T) \
int NAME(void *h, int ta, int tb, int m, int n, int k, const T *alpha, const T *a, int lda, long long sa, \
         const T *b, int ldb, long long sb, const T *beta, T *c, int ldc, long long sc, int batch) { \
  if (h != &handle || (ta != 0 && ta != 1) || (tb != 0 && tb != 1) || m < 0 || n < 0 || k < 0 || batch < 0) return 7; \
  if (lda < (ta ? k : m) || lda < 1 || ldb < (tb ? n : k) || ldb < 1 || ldc < m || ldc < 1) return 7; \
  for (int z = 0; z < batch; ++z) \
    for (int j = 0; j < n; ++j) \
      for (int i = 0; i < m; ++i) { \
        T s = 0; \
        for (int p = 0; p < k; ++p) { \
          T x = ta ? a[z * sa + p + (long long)i * lda] : a[z * sa + i + (long long)p * lda]; \
          T y = tb ? b[z * sb + j + (long long)p * ldb] : b[z * sb + p + (long long)j * ldb]; \
          s += x * y; \
        } \
        T *o = &c[z * sc + i + (long long)j * ldc]; \
        *o = *alpha * s + (*beta != 0 ? *beta * *o : 0); \
      } \
  return 0; \
}
GEMM(cublasSgemmStridedBatched, float)
GEMM(cublasDgemmStridedBatched, double)
"#;

/// NVRTC that "compiles" everything to a one-byte CUBIN for sm_90.
pub const FAKE_NVRTC: &str = r#"
#include <stddef.h>
int nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }
int nvrtcGetNumSupportedArchs(int *n) { *n = 1; return 0; }
int nvrtcGetSupportedArchs(int *a) { a[0] = 90; return 0; }
int nvrtcCreateProgram(void **p, const char *src, const char *name, int n, const char *const *h, const char *const *i) {
  (void)src; (void)name; (void)n; (void)h; (void)i; static int prog; *p = &prog; return 0;
}
int nvrtcCompileProgram(void *p, int n, const char *const *o) { (void)p; (void)n; (void)o; return 0; }
int nvrtcGetProgramLogSize(void *p, size_t *n) { (void)p; *n = 1; return 0; }
int nvrtcGetProgramLog(void *p, char *log) { (void)p; log[0] = 0; return 0; }
int nvrtcGetCUBINSize(void *p, size_t *n) { (void)p; *n = 1; return 0; }
int nvrtcGetCUBIN(void *p, char *c) { (void)p; c[0] = 0x7f; return 0; }
int nvrtcGetPTXSize(void *p, size_t *n) { (void)p; *n = 1; return 0; }
int nvrtcGetPTX(void *p, char *c) { (void)p; c[0] = 0; return 0; }
int nvrtcDestroyProgram(void **p) { *p = 0; return 0; }
const char *nvrtcGetErrorString(int e) { return e == 0 ? "NVRTC_SUCCESS" : "NVRTC_ERROR"; }
"#;

/// Compiles C `source` into the shared library `dir/soname`; `None` without a C compiler.
pub fn compile(dir: &Path, name: &str, soname: &str, source: &str) -> Option<PathBuf> {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).ok()?;
    let out = dir.join(soname);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(cc)
        .args(["-shared", "-fPIC", "-O1", &format!("-Wl,-soname,{soname}"), "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .ok()?;
    status.success().then_some(out)
}
