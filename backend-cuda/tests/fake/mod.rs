//! A fake `libcuda.so.1` (one device, "Fake GPU", sm_90, 132 SMs, host memory), a fake NVRTC
//! and a fake cuBLAS (whose GEMMs fault), built here with the C compiler, and the harness that runs a check against them in a
//! child process of the test binary (the loader reads `LD_LIBRARY_PATH` only at start-up).
//! The fake's primary context starts poisoned, as after a sticky fault, and every consistent
//! launch "faults" with 700 (`CUDA_ERROR_ILLEGAL_ADDRESS`): so an error that comes back
//! instead of a fault was raised before any kernel was launched.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use polycompute_core::{registry, Backend, BackendKind};

const CHILD_ENV: &str = "POLYCOMPUTE_FAKE_DRIVER_CHILD";
/// What the child prints when its check returned.
const DONE: &str = "FAKE DRIVER OK";
/// What the child prints when a real driver answered instead of the fake.
const REAL_DRIVER: &str = "SKIPPED (real driver)";

/// A driver with one device ("Fake GPU", sm_90, 132 SMs) whose memory is host memory.
const FAKE_DRIVER: &str = r#"
#include <stdlib.h>
#include <string.h>
typedef unsigned long long u64;
int cuInit(unsigned f) { return f == 0 ? 0 : 1; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuGetErrorName(int e, const char **s) { *s = e == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_FAKE"; return 0; }
int cuGetErrorString(int e, const char **s) { return cuGetErrorName(e, s); }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGet(int *d, int ordinal) { if (ordinal != 0) return 101; *d = 0; return 0; }
int cuDeviceGetName(char *name, int len, int dev) { strncpy(name, "Fake GPU", len); return dev == 0 ? 0 : 101; }
int cuDeviceTotalMem_v2(size_t *bytes, int dev) { *bytes = (size_t)1 << 30; return dev == 0 ? 0 : 101; }
int cuDeviceGetAttribute(int *v, int attr, int dev) {
  switch (attr) { case 75: *v = 9; break; case 76: *v = 0; break; case 16: *v = 132; break; case 115: *v = 1; break; default: *v = 0; }
  return dev == 0 ? 0 : 101;
}
static int ctx_token;
/* The primary context starts poisoned (as after a sticky fault): open must reset it. */
static int poisoned = 1;
int cuCtxSynchronize(void) { return poisoned ? 700 : 0; }
int cuDevicePrimaryCtxReset_v2(int dev) { poisoned = 0; return dev == 0 ? 0 : 101; }
int cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = &ctx_token; return dev == 0 ? 0 : 101; }
int cuDevicePrimaryCtxRelease_v2(int dev) { return dev == 0 ? 0 : 101; }
int cuCtxSetCurrent(void *ctx) { return ctx == &ctx_token ? 0 : 201; }
static int stream_token;
int cuStreamCreateWithPriority(void **s, unsigned flags, int prio) { (void)flags; (void)prio; *s = &stream_token; return 0; }
int cuStreamDestroy_v2(void *s) { return s == &stream_token ? 0 : 400; }
int cuDeviceGetDefaultMemPool(void **p, int dev) { *p = &ctx_token; return dev == 0 ? 0 : 101; }
int cuMemPoolSetAttribute(void *p, int attr, void *v) { (void)p; (void)attr; (void)v; return 0; }
int cuMemAllocAsync(u64 *p, size_t n, void *s) { if (poisoned) return 700; *p = (u64)malloc(n); return s == &stream_token ? 0 : 400; }
int cuMemFreeAsync(u64 p, void *s) { free((void *)p); return s == &stream_token ? 0 : 400; }
int cuMemcpyHtoDAsync_v2(u64 d, const void *h, size_t n, void *s) { memcpy((void *)d, h, n); return s == &stream_token ? 0 : 400; }
int cuMemcpyDtoHAsync_v2(void *h, u64 d, size_t n, void *s) { memcpy(h, (void *)d, n); return s == &stream_token ? 0 : 400; }
int cuMemcpyDtoDAsync_v2(u64 d, u64 src, size_t n, void *s) { memcpy((void *)d, (void *)src, n); return s == &stream_token ? 0 : 400; }
/* Modules are distinct (one per load, kept after unloading so a stale handle is detected);
   a function handle is its module. fake_module_loads and fake_launched_then_unloaded (read by
   the module-cache test) count loads and unloads of a module something launched: with an
   asynchronous launch, such an unload would pull the code from under a running kernel. */
#include <unistd.h>
struct fake_module { int live, launched; };
static int loads, launched_then_unloaded;
int fake_module_loads(void) { return __atomic_load_n(&loads, __ATOMIC_SEQ_CST); }
int fake_launched_then_unloaded(void) { return __atomic_load_n(&launched_then_unloaded, __ATOMIC_SEQ_CST); }
int cuModuleLoadDataEx(void **m, const void *img, unsigned n, void *o, void **v) {
  (void)img; (void)n; (void)o; (void)v;
  usleep(20000); /* loading takes a while: concurrent first uses overlap */
  struct fake_module *mod = calloc(1, sizeof *mod); mod->live = 1; *m = mod;
  __atomic_add_fetch(&loads, 1, __ATOMIC_SEQ_CST);
  return 0;
}
int cuModuleGetFunction(void **f, void *m, const char *name) { *f = m; return m && name ? 0 : 500; }
int cuModuleUnload(void *m) {
  struct fake_module *mod = m;
  if (!mod || !mod->live) return 400;
  if (__atomic_load_n(&mod->launched, __ATOMIC_SEQ_CST)) __atomic_add_fetch(&launched_then_unloaded, 1, __ATOMIC_SEQ_CST);
  mod->live = 0;
  return 0;
}
/* A fault inside a library's kernel (the fake cuBLAS calls this): the stream reports it. */
static int stream_fault;
void fake_poison(void) { stream_fault = 700; }
int cuStreamSynchronize(void *s) { return s == &stream_token ? stream_fault : 400; }
/* Eleven arguments: the last five arrive on the stack. A consistent call "faults" (700). */
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra) {
  struct fake_module *mod = f;
  if (!mod || !mod->live) return 400; /* CUDA_ERROR_INVALID_HANDLE: an unloaded module */
  __atomic_store_n(&mod->launched, 1, __ATOMIC_SEQ_CST);
  int ok = gx >= 1 && gy == 1 && gz == 1 && bx == 256 && by == 1 && bz == 1 && shared == 0
           && stream == &stream_token && params != 0 && params[0] != 0 && extra == 0;
  return ok ? 700 : 1;
}
"#;

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

/// Runs `check` against the fake driver: in the child process when this is it, else builds
/// the fakes and re-runs the test `test` (this test's own name) as that child, and asserts it
/// passed. Skips (with a note) off x86-64 Linux, without a C compiler, or when a real driver
/// shadows the fake.
pub fn run_against_fake_driver(test: &str, check: fn()) {
    run_against(test, check, FAKE_DRIVER);
}

/// [`run_against_fake_driver`] with `cublas` (C source) as the cuBLAS library.
pub fn run_against_fake_driver_with_cublas(test: &str, check: fn(), cublas: &str) {
    run_against_with(test, check, FAKE_DRIVER, cublas);
}

/// [`run_against_fake_driver`] with a driver that lacks the entry point `missing` (its
/// definition renamed): the child's output (stdout and stderr) when it ran, `None` when skipped.
pub fn run_against_driver_without(test: &str, check: fn(), missing: &str) -> Option<String> {
    let source = FAKE_DRIVER.replace(&format!("int {missing}("), &format!("int renamed_{missing}("));
    assert_ne!(source, FAKE_DRIVER, "the fake driver defines no {missing}");
    run_against(test, check, &source)
}

/// Reads one of the fake driver's counters (`fake_module_loads`, ...) in the child, where the
/// fake is the `libcuda.so.1` already loaded.
pub fn fake_counter(name: &str) -> i32 {
    // SAFETY: the fake driver is loaded (the backend loaded it); the counters are
    // `int f(void)` functions of it.
    unsafe {
        let lib = libloading::Library::new("libcuda.so.1").expect("the fake driver");
        let f = lib.get::<unsafe extern "C" fn() -> i32>(format!("{name}\0").as_bytes()).expect(name);
        f()
    }
}

/// Reads argument `i` of the fake cuBLAS's last `cublasGemmStridedBatchedEx` call (see
/// `FAKE_CUBLAS`), in the child, where the fake is the cuBLAS the backend loaded.
pub fn fake_gemm_ex_arg(i: i32) -> i64 {
    let path = std::env::var_os("POLYCOMPUTE_CUBLAS_LIB").expect("the fake cuBLAS");
    // SAFETY: the fake cuBLAS is loaded (the backend loaded it from this path); the function
    // is `long long f(int)`.
    unsafe {
        let lib = libloading::Library::new(path).expect("the fake cuBLAS");
        let f = lib.get::<unsafe extern "C" fn(i32) -> i64>(b"fake_gemm_ex_arg\0").expect("fake_gemm_ex_arg");
        f(i)
    }
}

/// [`run_against_fake_driver`] with a cuBLAS that lacks the entry point `missing` (as an old
/// library would): the child's output when it ran, `None` when skipped.
pub fn run_against_cublas_without(test: &str, check: fn(), missing: &str) -> Option<String> {
    let source = FAKE_CUBLAS.replace(&format!("int {missing}("), &format!("int renamed_{missing}("));
    assert_ne!(source, FAKE_CUBLAS, "the fake cuBLAS defines no {missing}");
    run_against_with(test, check, FAKE_DRIVER, &source)
}

fn run_against(test: &str, check: fn(), driver_source: &str) -> Option<String> {
    run_against_with(test, check, driver_source, FAKE_CUBLAS)
}

fn run_against_with(test: &str, check: fn(), driver_source: &str, cublas_source: &str) -> Option<String> {
    if std::env::var_os(CHILD_ENV).is_some() {
        check();
        println!("{DONE}");
        return None;
    }
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        println!("SKIPPED: the forwarding stub is built for x86-64 Linux only");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("polycompute-fake-driver-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (Some(_driver), Some(nvrtc), Some(cublas)) = (
        compile(&dir, "fake_cuda", "libcuda.so.1", driver_source),
        compile(&dir, "fake_nvrtc", "libnvrtc-fake.so", FAKE_NVRTC),
        compile(&dir, "fake_cublas", "libcublas-fake.so", cublas_source),
    ) else {
        println!("SKIPPED: no C compiler to build the fake driver");
        return None;
    };
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .env("LD_LIBRARY_PATH", &dir)
        .env("POLYCOMPUTE_NVRTC_LIB", &nvrtc)
        .env("POLYCOMPUTE_CUBLAS_LIB", &cublas)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if text.contains(REAL_DRIVER) {
        println!("SKIPPED: a real driver shadows the fake one");
        return None;
    }
    assert!(out.status.success() && text.contains(DONE), "child failed:\n{text}");
    Some(text)
}

/// In the child: the CUDA backend, or `None` (after saying so) when it does not see exactly
/// the fake's one device.
pub fn fake_backend() -> Option<Arc<dyn Backend>> {
    // Referencing the crate links it, and linking registers the backend.
    polycompute_cuda::set_matmul_impl(polycompute_cuda::matmul_impl());
    let backend = registry::backend(BackendKind::Cuda).unwrap();
    let devices = backend.devices().unwrap_or_else(|e| panic!("devices: {e}"));
    if devices.len() != 1 || devices[0].name != "Fake GPU" {
        println!("{REAL_DRIVER}: {devices:?}");
        return None;
    }
    Some(backend)
}
