//! What the host emulation files share: the host prelude that maps the CUDA intrinsics the generated
//! kernels use to their exact host equivalents, the file helpers of the generated mains, and
//! the Rust helpers that find the C++ compiler and name a dtype's C type.

use std::process::Command;

use polycompute_core::DType;

/// A host prelude, as a string literal (so a test's `SHIM` stays a `const`): the C headers
/// (`<math.h>`, `<stdio.h>`, `<stdlib.h>`, `<string.h>`, or the ones given first), the CUDA
/// qualifiers, `pc_dim3`, the half storage types `pc_f16`/`pc_bf16`, the bit-cast and conversion intrinsics, `__umulhi`, `pc_read` (a whole
/// file into a fresh buffer) and `pc_write` (a buffer into a file), then the test's own `rest`.
macro_rules! cuda_host_shim {
    ($rest:literal) => {
        cuda_host_shim!(
            r#"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
"#,
            $rest
        )
    };
    ($headers:literal, $rest:literal) => {
        concat!(
            $headers,
            r#"
#define __device__
#define __global__
#define __forceinline__ inline
struct pc_dim3 { unsigned x, y, z; };
// The half storage types, defined once here (the prelude skips its own definitions), so one
// pointer type serves every kernel's namespace.
#define PC_HALF_TYPES_DEFINED
struct pc_f16 { unsigned short bits; };
struct pc_bf16 { unsigned short bits; };
static inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
static inline int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }
static inline double __longlong_as_double(long long x) { double f; memcpy(&f, &x, 8); return f; }
static inline long long __double_as_longlong(double x) { long long i; memcpy(&i, &x, 8); return i; }
static inline float __double2float_rn(double x) { return (float)x; }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __uint2double_rn(unsigned x) { return (double)x; }
static inline double __ull2double_rn(unsigned long long x) { return (double)x; }
static inline double __ll2double_rn(long long x) { return (double)x; }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static void *pc_read(const char *path) {
  FILE *f = fopen(path, "rb"); if (!f) { perror(path); exit(2); }
  fseek(f, 0, SEEK_END); size_t len = (size_t)ftell(f); fseek(f, 0, SEEK_SET);
  void *p = malloc(len ? len : 1); if (len && fread(p, 1, len, f) != len) exit(3); fclose(f); return p;
}
static void pc_write(const char *path, const void *p, size_t len) {
  FILE *f = fopen(path, "wb"); if (!f || fwrite(p, 1, len, f) != len) exit(4); fclose(f);
}
"#,
            $rest
        )
    };
}

/// The C++ compiler (`$CXX`, else `c++`), if it runs.
pub fn compiler() -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    Command::new(&cxx).arg("--version").output().ok().filter(|o| o.status.success()).map(|_| cxx)
}

/// Writes `source` to `dir/name.cpp`, compiles it with `cxx` (`flags`, then exact floating
/// point: no contraction) into `dir/name`, and runs that with `args`; panics with the
/// compiler's or the program's stderr when either fails.
pub fn build_and_run(
    cxx: &str,
    dir: &std::path::Path,
    name: &str,
    source: &str,
    flags: &[&str],
    args: &[&std::path::Path],
) {
    let cpp = dir.join(format!("{name}.cpp"));
    std::fs::write(&cpp, source).unwrap();
    let exe = dir.join(name);
    let built = Command::new(cxx)
        .args(flags)
        .args(["-ffp-contract=off", "-w", "-o"])
        .arg(&exe)
        .arg(&cpp)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(built.status.success(), "host compile failed:\n{}", String::from_utf8_lossy(&built.stderr));
    let ran = Command::new(&exe).args(args).output().unwrap();
    assert!(ran.status.success(), "host run failed: {}", String::from_utf8_lossy(&ran.stderr));
}

/// The C type of a dtype outside the kernels' namespaces (where the prelude's typedefs live).
pub fn host_type(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F64 => "double",
        DType::I32 => "int",
        DType::U32 => "unsigned",
        DType::F16 => "pc_f16",
        DType::BF16 => "pc_bf16",
    }
}
