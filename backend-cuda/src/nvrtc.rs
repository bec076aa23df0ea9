//! NVRTC, the CUDA runtime compiler, loaded at run time: generated CUDA C becomes a CUBIN for
//! the device's own `sm_XX` (so a toolkit newer than the driver cannot produce code the driver
//! refuses), or PTX for the newest architecture this NVRTC knows when the device is newer
//! still. A missing library is an error with a reason, never a crash.

use polycompute_core::sync::LockUnpoisoned;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The environment variable naming the NVRTC library to load (a path to `libnvrtc.so.*`).
/// Unset, the folders of [`crate::search_places`] are tried.
pub const NVRTC_ENV: &str = "POLYCOMPUTE_NVRTC_LIB";

type Program = *mut c_void;

/// `NVRTC_SUCCESS`; any other `nvrtcResult` is reported through `nvrtcGetErrorString`.
const NVRTC_SUCCESS: c_int = 0;

/// The NVRTC entry points this crate uses.
struct Api {
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    cubin_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    cubin: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    ptx_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    ptx: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Program) -> c_int,
    error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    version: (i32, i32),
    archs: Vec<u32>,
    path: String,
}

/// A loaded NVRTC.
pub struct Nvrtc {
    api: Api,
    cache: Mutex<HashMap<(String, u32), Arc<Image>>>,
}

/// A compiled kernel image, ready for `cuModuleLoadData`.
#[derive(Debug)]
pub enum Image {
    /// Machine code for exactly the device's architecture.
    Cubin(Vec<u8>),
    /// PTX (NUL-terminated) for the driver to compile, when NVRTC predates the device.
    Ptx(Vec<u8>),
}

/// A failed compile: the compiler's log (the caller adds the source).
#[derive(Debug, Clone)]
pub struct CompileError {
    /// What NVRTC said.
    pub log: String,
}

impl Nvrtc {
    /// The process-wide NVRTC, loaded on first use; `Err` says why there is none.
    pub fn get() -> Result<&'static Nvrtc, String> {
        static NVRTC: OnceLock<Result<Nvrtc, String>> = OnceLock::new();
        NVRTC.get_or_init(|| Nvrtc::load(std::env::var_os(NVRTC_ENV).map(PathBuf::from))).as_ref().map_err(Clone::clone)
    }

    /// Loads NVRTC from `path`, or from the usual places when `None`.
    pub fn load(path: Option<PathBuf>) -> Result<Nvrtc, String> {
        let candidates: Vec<PathBuf> = match &path {
            Some(p) => vec![p.clone()],
            None => default_candidates(),
        };
        let mut errors = Vec::new();
        for c in &candidates {
            match open(c) {
                Ok(api) => return Ok(Nvrtc { api, cache: Mutex::new(HashMap::new()) }),
                Err(e) => errors.push(e),
            }
        }
        Err(match path {
            Some(p) => format!("NVRTC not loadable from {NVRTC_ENV}={}: {}", p.display(), errors.join("; ")),
            None => format!(
                "libnvrtc not found (install the CUDA toolkit's NVRTC or the nvidia-cuda-nvrtc wheel, or set \
                 {NVRTC_ENV} to a libnvrtc.so; searched {})",
                crate::libraries::search_places().iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            ),
        })
    }

    /// NVRTC's version, e.g. (13, 0).
    pub fn version(&self) -> (i32, i32) {
        self.api.version
    }

    /// The file it was loaded from (for one the loader found by name, the file it mapped).
    pub fn path(&self) -> &str {
        &self.api.path
    }

    /// The `sm_XX` numbers this NVRTC compiles for (e.g. 75, 80, 86, 89, 90, ...).
    #[cfg(test)]
    pub fn supported_archs(&self) -> &[u32] {
        &self.api.archs
    }

    /// Compiles `source` for `sm_{arch}` (e.g. 90), caching per (source, arch): a CUBIN when
    /// this NVRTC supports the architecture, else PTX for the newest one it does.
    pub fn compile(&self, source: &str, arch: u32) -> Result<Arc<Image>, CompileError> {
        let key = (source.to_string(), arch);
        if let Some(img) = self.cache.lock_unpoisoned().get(&key) {
            return Ok(img.clone());
        }
        let img = Arc::new(self.compile_uncached(source, arch, false)?.0);
        self.cache.lock_unpoisoned().insert(key, img.clone());
        Ok(img)
    }

    /// Compiles `source` for `sm_{arch}` with ptxas reporting resource use, and returns the
    /// compiler's log (registers, shared memory, spills per kernel). Not cached.
    #[cfg(test)]
    pub fn resource_report(&self, source: &str, arch: u32) -> Result<String, CompileError> {
        Ok(self.compile_uncached(source, arch, true)?.1)
    }

    fn compile_uncached(&self, source: &str, arch: u32, verbose: bool) -> Result<(Image, String), CompileError> {
        let err = |log: String| CompileError { log };
        let (target, cubin) = if self.api.archs.is_empty() || self.api.archs.contains(&arch) {
            (format!("--gpu-architecture=sm_{arch}"), true)
        } else {
            let newest = self.api.archs.iter().copied().filter(|&a| a <= arch).max();
            match newest {
                Some(a) => (format!("--gpu-architecture=compute_{a}"), false),
                None => {
                    return Err(err(format!(
                        "NVRTC {}.{} cannot compile for sm_{arch} (it supports {:?})",
                        self.api.version.0, self.api.version.1, self.api.archs
                    )))
                }
            }
        };
        // Contraction of a*b+c into fma is off: every backend must round each operation as
        // written; kernels that want fma (matmul) call fma() explicitly.
        let mut options = vec![target.as_str(), "--fmad=false", "--std=c++17"];
        if verbose {
            options.push("--ptxas-options=-v");
        }
        let options: Vec<CString> = options.iter().map(|o| CString::new(*o).unwrap_or_default()).collect();
        let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let src = CString::new(source).map_err(|_| err("generated source contains a NUL byte".into()))?;
        let name = c"polycompute.cu";
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: NVRTC copies the source; prog receives a handle we destroy below.
        let rc =
            unsafe { (self.api.create)(&mut prog, src.as_ptr(), name.as_ptr(), 0, std::ptr::null(), std::ptr::null()) };
        if rc != NVRTC_SUCCESS {
            return Err(err(format!("nvrtcCreateProgram: {}", self.error_string(rc))));
        }
        let guard = ProgramGuard { api: &self.api, prog };
        // SAFETY: options are valid C strings alive for the call.
        let rc = unsafe { (self.api.compile)(guard.prog, option_ptrs.len() as c_int, option_ptrs.as_ptr()) };
        if rc != NVRTC_SUCCESS {
            let log = self.program_log(guard.prog);
            return Err(err(format!(
                "nvrtcCompileProgram: {} ({})\n{log}",
                self.error_string(rc),
                options_text(&options)
            )));
        }
        let (size_fn, get_fn) =
            if cubin { (self.api.cubin_size, self.api.cubin) } else { (self.api.ptx_size, self.api.ptx) };
        let mut size = 0usize;
        // SAFETY: writes one size_t.
        let rc = unsafe { size_fn(guard.prog, &mut size) };
        if rc != NVRTC_SUCCESS {
            return Err(err(format!("getting the compiled size: {}", self.error_string(rc))));
        }
        let mut bytes = vec![0u8; size];
        // SAFETY: the buffer holds the `size` bytes NVRTC said it would write.
        let rc = unsafe { get_fn(guard.prog, bytes.as_mut_ptr().cast()) };
        if rc != NVRTC_SUCCESS {
            return Err(err(format!("getting the compiled code: {}", self.error_string(rc))));
        }
        let log = if verbose { self.program_log(guard.prog) } else { String::new() };
        Ok((if cubin { Image::Cubin(bytes) } else { Image::Ptx(bytes) }, log))
    }

    fn program_log(&self, prog: Program) -> String {
        let mut size = 0usize;
        // SAFETY: writes one size_t.
        if unsafe { (self.api.log_size)(prog, &mut size) } != NVRTC_SUCCESS || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        // SAFETY: the buffer holds the `size` bytes (log and NUL) NVRTC said it would write.
        if unsafe { (self.api.log)(prog, buf.as_mut_ptr().cast()) } != NVRTC_SUCCESS {
            return String::new();
        }
        String::from_utf8_lossy(&buf).trim_end_matches('\0').to_string()
    }

    fn error_string(&self, rc: c_int) -> String {
        // SAFETY: nvrtcGetErrorString returns a static string for any code.
        let p = unsafe { (self.api.error_string)(rc) };
        if p.is_null() {
            return format!("NVRTC error {rc}");
        }
        // SAFETY: a NUL-terminated static string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn options_text(options: &[CString]) -> String {
    options.iter().map(|o| o.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
}

struct ProgramGuard<'a> {
    api: &'a Api,
    prog: Program,
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from nvrtcCreateProgram and is destroyed once.
        unsafe { (self.api.destroy)(&mut self.prog) };
    }
}

/// The places NVRTC usually is: every folder of [`crate::libraries::search_places`] (the
/// loader's path, the toolkits, the CUDA wheels), newest soname first in each.
fn default_candidates() -> Vec<PathBuf> {
    if cfg!(windows) {
        return ["nvrtc64_130_0.dll", "nvrtc64_120_0.dll", "nvrtc64_112_0.dll"].iter().map(PathBuf::from).collect();
    }
    let names = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"];
    crate::libraries::candidates(&crate::libraries::search_places(), &names)
}

/// Opens one candidate and resolves the API.
fn open(path: &Path) -> Result<Api, String> {
    // NVRTC loads its builtins library (libnvrtc-builtins.so.X.Y) by name; when NVRTC comes
    // from a folder off the library path (a pip wheel), load the builtins from that folder
    // first so the by-name lookup finds them already loaded.
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        preload_builtins(dir);
    }
    // SAFETY: loading NVRTC runs no code of ours; the library stays loaded (leaked below)
    // because the function pointers in `Api` point into it.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("{}: {e}", path.display()))?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the symbol has the C signature of the field it is stored in (NVRTC's
            // documented API, stable since CUDA 11.1).
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| format!("{}: {e}", path.display()))?
        };
    }
    let version_fn: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int = sym!("nvrtcVersion");
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints.
    unsafe { version_fn(&mut major, &mut minor) };
    let archs = supported_archs(lib);
    Ok(Api {
        create: sym!("nvrtcCreateProgram"),
        compile: sym!("nvrtcCompileProgram"),
        log_size: sym!("nvrtcGetProgramLogSize"),
        log: sym!("nvrtcGetProgramLog"),
        cubin_size: sym!("nvrtcGetCUBINSize"),
        cubin: sym!("nvrtcGetCUBIN"),
        ptx_size: sym!("nvrtcGetPTXSize"),
        ptx: sym!("nvrtcGetPTX"),
        destroy: sym!("nvrtcDestroyProgram"),
        error_string: sym!("nvrtcGetErrorString"),
        version: (major, minor),
        archs,
        path: crate::libraries::resolved(path),
    })
}

/// The architectures NVRTC supports (empty when it cannot say; CUBIN is then tried anyway).
fn supported_archs(lib: &libloading::Library) -> Vec<u32> {
    type CountFn = unsafe extern "C" fn(*mut c_int) -> c_int;
    type ListFn = unsafe extern "C" fn(*mut c_int) -> c_int;
    // SAFETY: documented signatures (CUDA 11.2+); absent in older NVRTC, then we return empty.
    let (count_fn, list_fn) = unsafe {
        match (lib.get::<CountFn>(b"nvrtcGetNumSupportedArchs\0"), lib.get::<ListFn>(b"nvrtcGetSupportedArchs\0")) {
            (Ok(c), Ok(l)) => (*c, *l),
            _ => return Vec::new(),
        }
    };
    let mut n: c_int = 0;
    // SAFETY: writes one int.
    if unsafe { count_fn(&mut n) } != NVRTC_SUCCESS || n <= 0 {
        return Vec::new();
    }
    let mut archs = vec![0 as c_int; n as usize];
    // SAFETY: the buffer has room for the `n` ints NVRTC reported.
    if unsafe { list_fn(archs.as_mut_ptr()) } != NVRTC_SUCCESS {
        return Vec::new();
    }
    archs.into_iter().filter_map(|a| u32::try_from(a).ok()).collect()
}

fn preload_builtins(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("libnvrtc-builtins.so") || name.starts_with("nvrtc-builtins") {
            // SAFETY: the builtins library has no initialisers with preconditions; it stays
            // loaded for NVRTC to use.
            if let Ok(lib) = unsafe { libloading::Library::new(entry.path()) } {
                std::mem::forget(lib);
            }
        }
    }
}

// Every generated kernel compiled by NVRTC (no GPU needed).

/// Where NVRTC was loaded from, with its version, or why it could not be (loads it if
/// needed): what `polycompute probe` prints.
///
/// ```
/// // Without the library (or with it), this answers rather than panics.
/// let status = polycompute_cuda::nvrtc_status();
/// assert!(status.is_ok() || !status.unwrap_err().is_empty());
/// ```
pub fn nvrtc_status() -> Result<String, String> {
    Nvrtc::get().map(|n| format!("{} (NVRTC {}.{})", n.path(), n.version().0, n.version().1))
}

#[cfg(test)]
mod tests;
