//! `polycompute cuda-stub [DIR]`: a link stub of libcuda, so that a project depending on
//! polycompute builds and tests `--features cuda` on a machine without an NVIDIA driver or
//! CUDA toolkit (CPU-only CI). It needs no cuda feature to build, and prints the environment
//! to export: `eval "$(polycompute cuda-stub)"`.
//!
//! The entry points are cust_raw's own list (cust's bindings), found through `cargo metadata`
//! of the project in the current directory, else in cargo's registry. On x86-64 the stub is a
//! static archive, `DIR/lib64/libcuda.a`, of forwarders: the first call of any entry point
//! loads the system's `libcuda.so.1` and every call jumps to the real function; without a
//! driver each returns `CUDA_ERROR_STUB_LIBRARY` (34); one the real driver lacks returns
//! `CUDA_ERROR_NOT_FOUND` (500) after a line on stderr naming it; `cuGetErrorString` and
//! `cuGetErrorName` succeed with the stub's own strings. A binary linked against it needs no libcuda to start
//! and uses the real driver where there is one: the stub can never shadow a driver. Elsewhere
//! it is a shared library, `DIR/lib64/libcuda.so` (soname `libcuda.so.1`) whose every entry
//! point returns 34; binaries then need it on `LD_LIBRARY_PATH` where the system has no driver.
//! (`scripts/cuda-stub.sh` builds the same stub for this repository's CI.)

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Options of `cuda-stub`.
#[derive(clap::Args)]
pub struct Args {
    /// Where to write the stub (default: `$CARGO_TARGET_DIR/cuda-stub`, else `target/cuda-stub`).
    dir: Option<PathBuf>,
    /// cust_raw's `src/cuda.rs` (default: found with `cargo metadata` in the current
    /// directory, else the newest cust_raw in cargo's registry).
    #[arg(long)]
    bindings: Option<PathBuf>,
    /// `forward` (a static archive of forwarders; x86-64 only) or `shared`.
    #[arg(long, default_value = default_kind())]
    kind: String,
}

fn default_kind() -> &'static str {
    if cfg!(target_arch = "x86_64") {
        "forward"
    } else {
        "shared"
    }
}

/// What went wrong, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum StubError {
    /// cust_raw's bindings were not found.
    #[error(
        "cannot find cust_raw's bindings (src/cuda.rs): run `cargo fetch` in a project that depends on \
         polycompute with its cuda feature, or pass --bindings PATH"
    )]
    NoBindings,
    /// The bindings list no entry point.
    #[error("{0} lists no `pub fn cu...` entry point: is it cust_raw's src/cuda.rs?")]
    NoEntryPoints(PathBuf),
    /// A kind other than forward or shared.
    #[error("--kind {0:?}: use `forward` (x86-64) or `shared`")]
    Kind(String),
    /// Reading or writing a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The C compiler or the archiver failed.
    #[error("`{command}` failed{detail}: a C compiler (`cc`, or $CC) and `ar` are needed")]
    Tool {
        /// The command line.
        command: String,
        /// Its status or error.
        detail: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StubError + '_ {
    move |source| StubError::Io { path: path.to_path_buf(), source }
}

/// Runs `cuda-stub`: builds the stub in `DIR` and prints the `export` lines.
pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let dir = args.dir.unwrap_or_else(|| {
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from).join("cuda-stub")
    });
    let shared = match args.kind.as_str() {
        "forward" => false,
        "shared" => true,
        other => return Err(StubError::Kind(other.into()).into()),
    };
    let bindings = match args.bindings {
        Some(b) => b,
        None => find_bindings().ok_or(StubError::NoBindings)?,
    };
    let dir = std::path::absolute(&dir).map_err(io(&dir))?;
    build(&dir, &bindings, shared)?;
    print!("{}", env_lines(&dir, shared && !system_has_driver()));
    Ok(ExitCode::SUCCESS)
}

/// The `export` lines for a stub in `dir`, quoted for sh.
fn env_lines(dir: &Path, on_library_path: bool) -> String {
    let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', r"'\''"));
    let mut out = format!("export CUDA_LIBRARY_PATH={}\n", quote(dir));
    if on_library_path {
        let _ = writeln!(
            out,
            "export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}",
            quote(&dir.join("lib64"))
        );
    }
    out
}

fn system_has_driver() -> bool {
    Command::new("ldconfig")
        .arg("-p")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("libcuda.so.1 "))
}

/// cust_raw's `src/cuda.rs`: as cargo resolved it for the project here, else the newest in
/// cargo's registry.
fn find_bindings() -> Option<PathBuf> {
    let from_metadata = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--all-features"])
        .output()
        .ok()
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
        .and_then(|meta| {
            meta["packages"].as_array()?.iter().find(|p| p["name"] == "cust_raw")?["manifest_path"]
                .as_str()
                .map(PathBuf::from)
        })
        .and_then(|manifest| Some(manifest.parent()?.join("src/cuda.rs")));
    from_metadata.filter(|p| p.is_file()).or_else(newest_in_registry)
}

fn newest_in_registry() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let mut found: Vec<(Vec<u64>, PathBuf)> = Vec::new();
    for index in std::fs::read_dir(home.join("registry/src")).ok()?.flatten() {
        for krate in std::fs::read_dir(index.path()).into_iter().flatten().flatten() {
            let name = krate.file_name().to_string_lossy().into_owned();
            if let Some(version) = name.strip_prefix("cust_raw-") {
                let key = version.split(['.', '-']).map(|n| n.parse().unwrap_or(0)).collect();
                let bindings = krate.path().join("src/cuda.rs");
                if bindings.is_file() {
                    found.push((key, bindings));
                }
            }
        }
    }
    found.into_iter().max_by(|a, b| a.0.cmp(&b.0)).map(|(_, p)| p)
}

/// The entry points the bindings declare (`pub fn cuInit`, ...), sorted and deduplicated.
fn entry_points(bindings: &str) -> Vec<String> {
    let mut names: Vec<String> = bindings
        .match_indices("pub fn cu")
        .map(|(at, _)| {
            let name = &bindings[at + "pub fn ".len()..];
            name.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The C source of the x86-64 forwarders (SysV: each entry point saves the argument
/// registers, asks the resolver for its target, restores them and jumps, so arguments and the
/// result pass through untouched whatever the signature).
fn forwarder_c(names: &[String]) -> String {
    let mut c = String::from(include_str!("cuda_stub/common.c"));
    c.push_str("#include <dlfcn.h>\n#include <stdio.h>\n");
    c.push_str("#define MISSING 500 /* CUDA_ERROR_NOT_FOUND: the real driver lacks this entry point */\n");
    c.push_str("static int pc_missing_entry(void) { return MISSING; }\n");
    let _ = writeln!(c, "#define COUNT {}\nstatic const char *const pc_names[COUNT] = {{", names.len());
    for n in names {
        let _ = writeln!(c, "  \"{n}\",");
    }
    c.push_str("};\n");
    c.push_str(include_str!("cuda_stub/resolve.c"));
    c.push_str("__asm__(\n  \".text\\n\"\n");
    for (i, n) in names.iter().enumerate() {
        let _ = write!(
            c,
            concat!(
                "  \".globl {n}\\n.type {n},@function\\n{n}:\\n\"\n",
                "  \"  pushq %rdi\\n  pushq %rsi\\n  pushq %rdx\\n  pushq %rcx\\n  pushq %r8\\n  pushq %r9\\n\"\n",
                "  \"  subq $136, %rsp\\n\"\n",
                "  \"  movdqu %xmm0, 0(%rsp)\\n  movdqu %xmm1, 16(%rsp)\\n  movdqu %xmm2, 32(%rsp)\\n  movdqu %xmm3, 48(%rsp)\\n\"\n",
                "  \"  movdqu %xmm4, 64(%rsp)\\n  movdqu %xmm5, 80(%rsp)\\n  movdqu %xmm6, 96(%rsp)\\n  movdqu %xmm7, 112(%rsp)\\n\"\n",
                "  \"  movq ${i}, %rdi\\n  call pc_cuda_resolve\\n\"\n",
                "  \"  movdqu 0(%rsp), %xmm0\\n  movdqu 16(%rsp), %xmm1\\n  movdqu 32(%rsp), %xmm2\\n  movdqu 48(%rsp), %xmm3\\n\"\n",
                "  \"  movdqu 64(%rsp), %xmm4\\n  movdqu 80(%rsp), %xmm5\\n  movdqu 96(%rsp), %xmm6\\n  movdqu 112(%rsp), %xmm7\\n\"\n",
                "  \"  addq $136, %rsp\\n\"\n",
                "  \"  popq %r9\\n  popq %r8\\n  popq %rcx\\n  popq %rdx\\n  popq %rsi\\n  popq %rdi\\n\"\n",
                "  \"  jmp *%rax\\n.size {n}, .-{n}\\n\"\n"
            ),
            n = n,
            i = i
        );
    }
    c.push_str(");\n");
    c
}

/// The C source of the shared stub: every entry point returns 34.
fn shared_c(names: &[String]) -> String {
    let mut c = String::from(include_str!("cuda_stub/common.c"));
    c.push_str("int cuGetErrorName(int e, const char **s) { return pc_stub_error_name(e, s); }\n");
    c.push_str("int cuGetErrorString(int e, const char **s) { return pc_stub_error_string(e, s); }\n");
    for n in names.iter().filter(|n| *n != "cuGetErrorName" && *n != "cuGetErrorString") {
        let _ = writeln!(c, "int {n}(void) {{ return pc_stub_entry(); }}");
    }
    c
}

fn tool(cmd: &mut Command) -> Result<(), StubError> {
    let command = format!("{cmd:?}");
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(StubError::Tool { command, detail: format!(" ({s})") }),
        Err(e) => Err(StubError::Tool { command, detail: format!(": {e}") }),
    }
}

/// Writes and compiles the stub under `dir` (again only when its source changed).
fn build(dir: &Path, bindings: &Path, shared: bool) -> Result<(), StubError> {
    let text = std::fs::read_to_string(bindings).map_err(io(bindings))?;
    let names = entry_points(&text);
    if names.is_empty() {
        return Err(StubError::NoEntryPoints(bindings.to_path_buf()));
    }
    let source = if shared { shared_c(&names) } else { forwarder_c(&names) };
    let lib = dir.join("lib64");
    let product = lib.join(if shared { "libcuda.so" } else { "libcuda.a" });
    let c = dir.join(if shared { "stub-shared.c" } else { "stub.c" });
    if product.is_file() && std::fs::read_to_string(&c).is_ok_and(|old| old == source) {
        return Ok(());
    }
    std::fs::create_dir_all(&lib).map_err(io(&lib))?;
    std::fs::write(&c, &source).map_err(io(&c))?;
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let tmp = product.with_extension("tmp");
    if shared {
        tool(Command::new(&cc).args(["-shared", "-fPIC", "-O1", "-Wl,-soname,libcuda.so.1", "-o"]).arg(&tmp).arg(&c))?;
        let link = lib.join("libcuda.so.1");
        let _ = std::fs::remove_file(&link);
        #[cfg(unix)]
        std::os::unix::fs::symlink("libcuda.so", &link).map_err(io(&link))?;
    } else {
        let obj = dir.join("stub.o");
        tool(Command::new(&cc).args(["-c", "-fPIC", "-O1", "-o"]).arg(&obj).arg(&c))?;
        let _ = std::fs::remove_file(&tmp);
        tool(Command::new("ar").arg("rcs").arg(&tmp).arg(&obj))?;
    }
    std::fs::rename(&tmp, &product).map_err(io(&product))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_points_come_from_the_bindings() {
        let text =
            "extern \"C\" {\n    pub fn cuInit(Flags: u32) -> CUresult;\n    pub fn cuCtxCreate_v2(x: i32);\n    \
                    pub fn cuInit(Flags: u32) -> CUresult;\n    pub fn other();\n}";
        assert_eq!(entry_points(text), vec!["cuCtxCreate_v2", "cuInit"]);
        let c = forwarder_c(&entry_points(text));
        assert!(c.contains(".globl cuInit\\n") && c.contains("movq $1, %rdi") && c.contains("#define COUNT 2"));
        assert!(shared_c(&["cuInit".into()]).contains("int cuInit(void) { return pc_stub_entry(); }"));
    }

    #[test]
    fn the_environment_lines_are_quoted_for_sh() {
        let lines = env_lines(Path::new("/tmp/it's here"), true);
        assert_eq!(
            lines,
            "export CUDA_LIBRARY_PATH='/tmp/it'\\''s here'\n\
             export LD_LIBRARY_PATH='/tmp/it'\\''s here/lib64'${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n"
        );
    }
}
