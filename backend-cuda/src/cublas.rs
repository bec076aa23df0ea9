//! cuBLAS, loaded at run time: GEMM on the device's own stream. Row-major `C = A·B` is the
//! column-major `Cᵀ = Bᵀ·Aᵀ`, so the operands are passed swapped and nothing is transposed.

use std::ffi::{c_int, c_longlong};
use std::path::PathBuf;
use std::sync::OnceLock;

use polycompute_core::{DType, Error, Result};

use crate::device::CudaDevice;
use crate::driver::{DevPtr, Handle};

/// The environment variable naming the cuBLAS library to load (a path to `libcublas.so.*`).
pub const CUBLAS_ENV: &str = "POLYCOMPUTE_CUBLAS_LIB";

type GemmBatched<T> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    c_longlong,
    *const T,
    c_int,
    c_longlong,
    *const T,
    *mut T,
    c_int,
    c_longlong,
    c_int,
) -> c_int;

/// The cuBLAS entry points this crate uses.
pub(crate) struct Api {
    create: unsafe extern "C" fn(*mut Handle) -> c_int,
    destroy: unsafe extern "C" fn(Handle) -> c_int,
    set_stream: unsafe extern "C" fn(Handle, Handle) -> c_int,
    sgemm: GemmBatched<f32>,
    dgemm: GemmBatched<f64>,
    path: String,
}

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// The process-wide cuBLAS, loaded on first use; `Err` says why there is none.
pub(crate) fn api() -> Result<&'static Api, String> {
    API.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// What is known about cuBLAS without loading it (it is large: it loads at the first matmul).
pub(crate) fn status_if_loaded() -> String {
    match API.get() {
        Some(Ok(a)) => a.path.clone(),
        Some(Err(e)) => e.clone(),
        None => "not loaded yet (loads at the first matmul)".into(),
    }
}

/// Where cuBLAS was loaded from, or why it could not be (loads it if needed).
pub fn cublas_status() -> Result<String, String> {
    api().map(|a| a.path.clone())
}

fn load() -> Result<Api, String> {
    let candidates: Vec<PathBuf> = match std::env::var_os(CUBLAS_ENV) {
        Some(p) => vec![PathBuf::from(p)],
        None if cfg!(windows) => {
            ["cublas64_13.dll", "cublas64_12.dll", "cublas64_11.dll"].iter().map(PathBuf::from).collect()
        }
        None => {
            let names = ["libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"];
            let mut v: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
            v.extend(names.iter().map(|n| PathBuf::from("/usr/local/cuda/lib64").join(n)));
            v
        }
    };
    let mut errors = Vec::new();
    for c in &candidates {
        // SAFETY: loading cuBLAS runs its initialisers only; it stays loaded (leaked) because
        // the function pointers below point into it.
        let lib = match unsafe { libloading::Library::new(c) } {
            Ok(l) => &*Box::leak(Box::new(l)),
            Err(e) => {
                errors.push(format!("{}: {e}", c.display()));
                continue;
            }
        };
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: each symbol has the C signature of the field it is stored in
                // (cuBLAS v2 API, unchanged since CUDA 8).
                match unsafe { lib.get(concat!($name, "\0").as_bytes()) } {
                    Ok(f) => *f,
                    Err(e) => {
                        errors.push(format!("{}: {e}", c.display()));
                        continue;
                    }
                }
            };
        }
        return Ok(Api {
            create: sym!("cublasCreate_v2"),
            destroy: sym!("cublasDestroy_v2"),
            set_stream: sym!("cublasSetStream_v2"),
            sgemm: sym!("cublasSgemmStridedBatched"),
            dgemm: sym!("cublasDgemmStridedBatched"),
            path: c.display().to_string(),
        });
    }
    Err(format!("libcublas not found ({})", errors.join("; ")))
}

/// A cuBLAS handle bound to one device's context and stream.
pub(crate) struct CublasHandle {
    raw: Handle,
    api: &'static Api,
}

// SAFETY: the handle is only used under the device's mutex, with its context current.
unsafe impl Send for CublasHandle {}

impl Drop for CublasHandle {
    fn drop(&mut self) {
        // SAFETY: created by cublasCreate and destroyed once (the owner makes the context current).
        unsafe { (self.api.destroy)(self.raw) };
    }
}

/// True when the sizes fit cuBLAS's `int` dimensions.
pub(crate) fn fits(batch: usize, m: usize, n: usize, k: usize) -> bool {
    [batch, m, n, k].iter().all(|&x| x <= i32::MAX as usize)
}

fn status(rc: c_int, dev: &CudaDevice, what: &str) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    Err(Error::Backend { device: dev.id().into(), message: format!("{what} failed with cuBLAS status {rc}") })
}

/// `C[b] = A[b]·B[b]` (row-major, `[m, k]·[k, n]`) on the device's stream. The device's
/// context must be current.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm(
    dev: &CudaDevice,
    dtype: DType,
    a: DevPtr,
    b: DevPtr,
    c: DevPtr,
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
) -> Result<()> {
    let api = api().map_err(|reason| Error::Unsupported {
        op: format!("cuBLAS matmul ({reason})"),
        dtype,
        device: dev.id().into(),
    })?;
    let mut guard = dev.cublas.lock().unwrap_or_else(|p| p.into_inner());
    if guard.is_none() {
        let mut raw: Handle = std::ptr::null_mut();
        // SAFETY: creates a handle in the current context.
        status(unsafe { (api.create)(&mut raw) }, dev, "cublasCreate")?;
        let handle = CublasHandle { raw, api };
        // SAFETY: binds the handle to the device's stream, which outlives it.
        status(unsafe { (api.set_stream)(handle.raw, dev.ctx.stream()) }, dev, "cublasSetStream")?;
        *guard = Some(handle);
    }
    let Some(handle) = guard.as_ref() else {
        return Err(Error::Backend { device: dev.id().into(), message: "cuBLAS handle missing".into() });
    };
    let (m, n, k, batch) = (m as c_int, n as c_int, k as c_int, batch as c_int);
    let (sa, sb, sc) =
        (m as c_longlong * k as c_longlong, k as c_longlong * n as c_longlong, m as c_longlong * n as c_longlong);
    const OP_N: c_int = 0;
    // Column-major view: C' (n x m) = B' (n x k) * A' (k x m), leading dimensions n, k, n.
    let rc = match dtype {
        DType::F32 => {
            let (alpha, beta) = (1.0f32, 0.0f32);
            // SAFETY: a, b, c are live device allocations of batch*m*k, batch*k*n and
            // batch*m*n f32s; alpha and beta are host scalars (the default pointer mode).
            unsafe {
                (api.sgemm)(
                    handle.raw,
                    OP_N,
                    OP_N,
                    n,
                    m,
                    k,
                    &alpha,
                    b as usize as *const f32,
                    n,
                    sb,
                    a as usize as *const f32,
                    k,
                    sa,
                    &beta,
                    c as usize as *mut f32,
                    n,
                    sc,
                    batch,
                )
            }
        }
        DType::F64 => {
            let (alpha, beta) = (1.0f64, 0.0f64);
            // SAFETY: as above, with f64 elements.
            unsafe {
                (api.dgemm)(
                    handle.raw,
                    OP_N,
                    OP_N,
                    n,
                    m,
                    k,
                    &alpha,
                    b as usize as *const f64,
                    n,
                    sb,
                    a as usize as *const f64,
                    k,
                    sa,
                    &beta,
                    c as usize as *mut f64,
                    n,
                    sc,
                    batch,
                )
            }
        }
        _ => return Err(Error::Unsupported { op: "matmul".into(), dtype, device: dev.id().into() }),
    };
    status(rc, dev, "cuBLAS gemm")
}
