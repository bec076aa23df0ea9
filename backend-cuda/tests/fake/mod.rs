//! A fake `libcuda.so.1` (one device, "Fake GPU", sm_90, 132 SMs, host memory), a fake NVRTC
//! and a fake cuBLAS (whose GEMMs fault), built here with the C compiler, and the harness that runs a check against them in a
//! child process of the test binary (the loader reads `LD_LIBRARY_PATH` only at start-up).
//! The fake's primary context starts poisoned, as after a sticky fault, and every consistent
//! launch "faults" with 700 (`CUDA_ERROR_ILLEGAL_ADDRESS`): so an error that comes back
//! instead of a fault was raised before any kernel was launched. A launch beyond CUDA's
//! limits (grid x ≤ 2^31−1, y and z ≤ 65,535; block x, y ≤ 1,024, z ≤ 64, 1,024 threads in
//! all; 48 KiB of dynamic shared memory) is refused with 1 (`CUDA_ERROR_INVALID_VALUE`), as
//! the real driver refuses it, and every launch is logged ([`fake_launches`]: grid, block,
//! shared bytes, entry point, result, the first parameters). [`fake_launches_succeed`] makes
//! consistent launches succeed without running anything (device memory keeps what it held),
//! so a test can follow every launch of an op; [`driver_with_limits`] is a fake that reports
//! and enforces other limits.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::process::Command;
use std::sync::Arc;

use polycompute_core::{registry, Backend, BackendKind};

mod libraries;
// Each test binary uses part of them.
#[allow(unused_imports)]
pub use libraries::{compile, FAKE_CUBLAS, FAKE_CUBLAS_COMPUTING, FAKE_NVRTC};

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
int cuGetErrorName(int e, const char **s) {
  *s = e == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : e == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_FAKE"; return 0;
}
/* Launch limits in attribute order: grid x, y, z; block x, y, z; threads per block; shared
   bytes per block. `reported` answers cuDeviceGetAttribute, `enforced` bounds cuLaunchKernel. */
static const unsigned reported[8] = {2147483647u, 65535u, 65535u, 1024u, 1024u, 64u, 1024u, 49152u};
static const unsigned enforced[8] = {2147483647u, 65535u, 65535u, 1024u, 1024u, 64u, 1024u, 49152u};
int cuGetErrorString(int e, const char **s) { return cuGetErrorName(e, s); }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGet(int *d, int ordinal) { if (ordinal != 0) return 101; *d = 0; return 0; }
int cuDeviceGetName(char *name, int len, int dev) { strncpy(name, "Fake GPU", len); return dev == 0 ? 0 : 101; }
int cuDeviceTotalMem_v2(size_t *bytes, int dev) { *bytes = (size_t)1 << 30; return dev == 0 ? 0 : 101; }
int cuDeviceGetAttribute(int *v, int attr, int dev) {
  /* MAX_THREADS_PER_BLOCK (1), MAX_BLOCK_DIM_X/Y/Z (2-4), MAX_GRID_DIM_X/Y/Z (5-7), MAX_SHARED_MEMORY_PER_BLOCK (8) */
  static const int limit_at[9] = {-1, 6, 3, 4, 5, 0, 1, 2, 7};
  switch (attr) { case 75: *v = 9; break; case 76: *v = 0; break; case 16: *v = 132; break; case 115: *v = 1; break;
                  default: *v = attr >= 1 && attr <= 8 ? (int)reported[limit_at[attr]] : 0; }
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
struct fake_module { int live, launched; char name[64]; };
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
int cuModuleGetFunction(void **f, void *m, const char *name) {
  if (!m || !name) return 500;
  strncpy(((struct fake_module *)m)->name, name, 63);
  *f = m; return 0;
}
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
/* The launch log (read with fake_launch_count, fake_launch_field, fake_launch_name): the first
   LOG launches since fake_launch_reset, each with its grid, block, shared bytes, result and the
   first 8 bytes of its first `record_params` parameters (set with fake_record_params; every
   slot of this backend's parameters holds at least 8 bytes). */
#define LOG 65536
#define PARAMS 8
struct fake_launch { unsigned long long v[8 + PARAMS]; char name[64]; };
static struct fake_launch launch_log[LOG];
static int launches, record_params, succeed;
void fake_launch_reset(void) { __atomic_store_n(&launches, 0, __ATOMIC_SEQ_CST); }
void fake_record_params(int n) { record_params = n < 0 ? 0 : n > PARAMS ? PARAMS : n; }
void fake_launches_succeed(int on) { succeed = on; }
int fake_launch_count(void) { return __atomic_load_n(&launches, __ATOMIC_SEQ_CST); }
/* Fields: 0-2 grid, 3-5 block, 6 shared bytes, 7 result, 8.. parameters. */
unsigned long long fake_launch_field(int i, int field) { return i < LOG && field < 8 + PARAMS ? launch_log[i].v[field] : 0; }
const char *fake_launch_name(int i) { return i < LOG ? launch_log[i].name : ""; }
/* Eleven arguments: the last five arrive on the stack. A consistent call "faults" (700), or
   succeeds without running anything after fake_launches_succeed(1); one beyond the limits is
   refused with CUDA_ERROR_INVALID_VALUE (1), as the real driver refuses it. */
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra) {
  struct fake_module *mod = f;
  if (!mod || !mod->live) return 400; /* CUDA_ERROR_INVALID_HANDLE: an unloaded module */
  __atomic_store_n(&mod->launched, 1, __ATOMIC_SEQ_CST);
  const unsigned long long threads = (unsigned long long)bx * by * bz;
  int within = gx >= 1 && gy >= 1 && gz >= 1 && bx >= 1 && by >= 1 && bz >= 1
               && gx <= enforced[0] && gy <= enforced[1] && gz <= enforced[2]
               && bx <= enforced[3] && by <= enforced[4] && bz <= enforced[5] && threads <= enforced[6]
               && shared <= enforced[7];
  int consistent = stream == &stream_token && params != 0 && params[0] != 0 && extra == 0;
  int rc = !within || !consistent ? 1 : succeed ? 0 : 700;
  int i = __atomic_fetch_add(&launches, 1, __ATOMIC_SEQ_CST);
  if (i < LOG) {
    struct fake_launch *l = &launch_log[i];
    unsigned long long v[8] = {gx, gy, gz, bx, by, bz, shared, (unsigned long long)rc};
    for (int k = 0; k < 8; ++k) l->v[k] = v[k];
    for (int k = 0; k < record_params && params; ++k) memcpy(&l->v[8 + k], params[k], 8);
    memcpy(l->name, mod->name, 64);
  }
  return rc;
}
"#;

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

/// One launch the fake driver logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeLaunch {
    /// The kernel's entry point.
    pub name: String,
    /// Blocks along x, y, z.
    pub grid: [u32; 3],
    /// Threads of a block along x, y, z.
    pub block: [u32; 3],
    /// Dynamic shared memory, in bytes.
    pub shared: u32,
    /// What the fake returned (0, 700, or 1 when beyond the limits).
    pub rc: i32,
    /// The first 8 bytes of the first parameters ([`fake_record_params`] of them).
    pub params: Vec<u64>,
}

impl FakeLaunch {
    /// Parameter `i` as the u32 the kernel reads.
    pub fn u32_param(&self, i: usize) -> u32 {
        self.params[i] as u32
    }
}

/// The fake driver's `libcuda.so.1`, already loaded in the child (the backend loaded it).
fn fake_lib() -> libloading::Library {
    // SAFETY: loading an already loaded library runs no initialisers again.
    unsafe { libloading::Library::new("libcuda.so.1").expect("the fake driver") }
}

/// Clears the fake driver's launch log, in the child.
pub fn fake_launch_reset() {
    // SAFETY: `void f(void)` of the fake.
    unsafe { fake_lib().get::<unsafe extern "C" fn()>(b"fake_launch_reset\0").unwrap()() }
}

/// Makes the fake driver record the first `n` (at most 8) parameters of each launch.
pub fn fake_record_params(n: i32) {
    // SAFETY: `void f(int)` of the fake.
    unsafe { fake_lib().get::<unsafe extern "C" fn(i32)>(b"fake_record_params\0").unwrap()(n) }
}

/// Makes consistent launches succeed (without running) instead of faulting, or fault again.
pub fn fake_launches_succeed(on: bool) {
    // SAFETY: `void f(int)` of the fake.
    unsafe { fake_lib().get::<unsafe extern "C" fn(i32)>(b"fake_launches_succeed\0").unwrap()(on as i32) }
}

/// Every launch the fake driver logged since the last [`fake_launch_reset`].
pub fn fake_launches() -> Vec<FakeLaunch> {
    let lib = fake_lib();
    // SAFETY: the fake's log readers: `int f(void)`, `unsigned long long f(int, int)` and
    // `const char *f(int)` returning a NUL-terminated name inside the log.
    unsafe {
        let count = lib.get::<unsafe extern "C" fn() -> i32>(b"fake_launch_count\0").unwrap()();
        assert!(count <= 65536, "the fake's launch log overflowed ({count} launches)");
        let field = lib.get::<unsafe extern "C" fn(i32, i32) -> u64>(b"fake_launch_field\0").unwrap();
        let name = lib.get::<unsafe extern "C" fn(i32) -> *const std::ffi::c_char>(b"fake_launch_name\0").unwrap();
        (0..count)
            .map(|i| {
                let f = |k: i32| field(i, k);
                FakeLaunch {
                    name: std::ffi::CStr::from_ptr(name(i)).to_string_lossy().into_owned(),
                    grid: [f(0) as u32, f(1) as u32, f(2) as u32],
                    block: [f(3) as u32, f(4) as u32, f(5) as u32],
                    shared: f(6) as u32,
                    rc: f(7) as i32,
                    params: (8..16).map(f).collect(),
                }
            })
            .collect()
    }
}

/// The fake driver's source with other launch limits (in attribute order: grid x, y, z;
/// block x, y, z; threads per block; shared bytes): `reported` by `cuDeviceGetAttribute`,
/// `enforced` by `cuLaunchKernel`.
pub fn driver_with_limits(reported: [u32; 8], enforced: [u32; 8]) -> String {
    const CUDA: &str = "{2147483647u, 65535u, 65535u, 1024u, 1024u, 64u, 1024u, 49152u};";
    let list = |l: [u32; 8]| format!("{{{}}};", l.map(|v| format!("{v}u")).join(", "));
    let source = FAKE_DRIVER
        .replace(&format!("reported[8] = {CUDA}"), &format!("reported[8] = {}", list(reported)))
        .replace(&format!("enforced[8] = {CUDA}"), &format!("enforced[8] = {}", list(enforced)));
    for (name, l) in [("reported", reported), ("enforced", enforced)] {
        assert!(source.contains(&format!("{name}[8] = {}", list(l))), "the fake driver has no {name} limits");
    }
    source
}

/// [`run_against_fake_driver`] with the driver built from `source` (see [`driver_with_limits`]).
pub fn run_against_driver_source(test: &str, check: fn(), source: &str) {
    run_against(test, check, source);
}

/// CUDA's launch limits, in the fake's attribute order.
pub const CUDA_LIMITS: [u32; 8] = [2147483647, 65535, 65535, 1024, 1024, 64, 1024, 49152];

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
