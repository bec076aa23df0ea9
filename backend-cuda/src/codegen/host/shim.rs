//! What the host emulation files share: the host prelude that maps the CUDA intrinsics the generated
//! kernels use to their exact host equivalents, the file helpers of the generated mains, and
//! the Rust helpers that find the C++ compiler and name a dtype's C type, and [`Harness`], the
//! translation unit the launch-planning emulations (`kernels.rs`, `views.rs`) build.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use crate::codegen::Kernel;
use crate::launch::Limits;
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
        _ => unreachable!("CUDA runs no i64, u8 or bool kernels yet (device::not_yet)"),
    }
}

/// A translation unit of kernels (each in its own namespace) and a `main` that runs the cases,
/// with the launch plan's limits and counts of what was launched. Each emulation adds its own
/// `launch` (`kernels.rs` and `views.rs` plan their grids differently).
pub struct Harness {
    /// The folder of the sources, the inputs and the outputs.
    pub dir: PathBuf,
    /// The prelude and the kernels' namespaces.
    pub src: String,
    /// The body of `main`.
    pub main: String,
    /// Each kernel source's namespace.
    namespaces: HashMap<String, String>,
    /// The limits the launches are planned with.
    pub limits: Limits,
    /// Launches emitted, the most blocks of one, and those whose grid-stride loop wraps.
    pub launches: usize,
    pub max_grid: u32,
    pub wrapped: usize,
}

impl Harness {
    /// An empty unit in a fresh folder `polycompute-{name}-{pid}` under the temporary
    /// directory, starting with the prelude `shim`, planned with CUDA's limits.
    pub fn new(name: &str, shim: &str) -> Harness {
        let dir = std::env::temp_dir().join(format!("polycompute-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Harness {
            dir,
            src: shim.to_string(),
            main: String::from("int main() {\n"),
            namespaces: HashMap::new(),
            limits: Limits::CUDA,
            launches: 0,
            max_grid: 0,
            wrapped: 0,
        }
    }

    /// The namespace of `k`'s source (added the first time it is asked for).
    pub fn kernel(&mut self, k: &Kernel) -> String {
        if let Some(ns) = self.namespaces.get(&k.source) {
            return ns.clone();
        }
        let ns = format!("k{}", self.namespaces.len());
        let _ = writeln!(self.src, "namespace {ns} {{\n{}\n}}", k.source.replace("extern \"C\" ", ""));
        self.namespaces.insert(k.source.clone(), ns.clone());
        ns
    }

    /// Counts a launch of `grid` blocks; `wraps`: its grid-stride loop takes several trips.
    pub fn count_launch(&mut self, grid: u32, wraps: bool) {
        self.launches += 1;
        self.max_grid = self.max_grid.max(grid);
        if wraps {
            self.wrapped += 1;
        }
    }

    /// A file in the unit's folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Closes `main`, builds the unit as `name` (at -O1) and runs it; the folder, where the
    /// outputs are.
    pub fn run(mut self, cxx: &str, name: &str) -> PathBuf {
        self.main.push_str("  return 0;\n}\n");
        let source = format!("{}{}", self.src, self.main);
        build_and_run(cxx, &self.dir, name, &source, &["-O1"], &[]);
        self.dir
    }
}
