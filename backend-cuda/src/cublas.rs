//! cuBLAS, loaded at run time, and the one call this crate makes of it: strided batched GEMM
//! on a handle bound to a stream. Row-major `C = A·B` is the column-major `Cᵀ = Bᵀ·Aᵀ`, so
//! the operands are passed swapped; an operand whose buffer holds it transposed (a transposed
//! view, [`MatmulTranspose`]) is passed with `CUBLAS_OP_T` instead of being copied. Which
//! matmul runs (this or the own kernel) is decided in `ops/matmul.rs`.

use std::ffi::{c_int, c_longlong, c_void};
use std::path::PathBuf;
use std::sync::OnceLock;

use polycompute_core::{DType, DeviceId, Error, MatmulTranspose};

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

/// `cublasGemmStridedBatchedEx`: typed pointers are `void`, with a `cudaDataType_t` each, a
/// `cublasComputeType_t` and a `cublasGemmAlgo_t` at the end.
type GemmBatchedEx = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    c_longlong,
    *const c_void,
    c_int,
    c_int,
    c_longlong,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    c_longlong,
    c_int,
    c_int,
    c_int,
) -> c_int;

/// The cuBLAS entry points this crate uses.
pub(crate) struct Api {
    create: unsafe extern "C" fn(*mut Handle) -> c_int,
    destroy: unsafe extern "C" fn(Handle) -> c_int,
    set_stream: unsafe extern "C" fn(Handle, Handle) -> c_int,
    sgemm: GemmBatched<f32>,
    dgemm: GemmBatched<f64>,
    /// The half-precision GEMM (cuBLAS 11 and later); `None` in an older library.
    gemm_ex: Option<GemmBatchedEx>,
    path: String,
}

impl Api {
    /// True when this cuBLAS has the half-precision GEMM (`cublasGemmStridedBatchedEx`).
    pub(crate) fn has_gemm_ex(&self) -> bool {
        self.gemm_ex.is_some()
    }
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
            crate::libraries::candidates(&crate::libraries::search_places(), &names)
        }
    };
    let mut errors = Vec::new();
    for c in &candidates {
        if c.parent().is_some_and(|d| !d.as_os_str().is_empty()) && !c.exists() {
            continue; // not there: no need to ask the loader
        }
        preload_lt(c);
        // SAFETY: loading cuBLAS runs its initialisers only; it stays loaded (leaked) because
        // the function pointers below point into it.
        let lib = match unsafe { libloading::Library::new(c) } {
            Ok(l) => &*Box::leak(Box::new(l)),
            // A file that is there but does not load is worth reporting; a name the loader
            // does not find is just one more place searched.
            Err(e) if c.is_absolute() => {
                errors.push(format!("{}: {e}", c.display()));
                continue;
            }
            Err(_) => continue,
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
            // SAFETY: the symbol has the C signature of `GemmBatchedEx` (cuBLAS 11+, whose
            // compute type is a `cublasComputeType_t`).
            gemm_ex: unsafe { lib.get::<GemmBatchedEx>(b"cublasGemmStridedBatchedEx\0") }.ok().map(|f| *f),
            path: crate::libraries::resolved(c),
        });
    }
    Err(format!(
        "libcublas not found (install the CUDA toolkit's cuBLAS or the nvidia-cublas wheel, or set {CUBLAS_ENV} to \
         a libcublas.so; searched {}{}{})",
        crate::libraries::search_places().iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        if errors.is_empty() { "" } else { "; " },
        errors.join("; ")
    ))
}

/// cuBLAS needs cuBLASLt (`libcublasLt.so.N`) from its own folder, which the loader searches
/// only when that folder is on its path: load it from there first (by full path) so the
/// by-name lookup finds it already loaded.
fn preload_lt(cublas: &std::path::Path) {
    let (Some(dir), Some(name)) = (cublas.parent(), cublas.file_name()) else { return };
    if dir.as_os_str().is_empty() {
        return;
    }
    let lt = dir.join(name.to_string_lossy().replacen("libcublas", "libcublasLt", 1));
    if lt.exists() {
        // SAFETY: cuBLASLt's initialisers have no preconditions; it stays loaded for cuBLAS.
        if let Ok(lib) = unsafe { libloading::Library::new(&lt) } {
            std::mem::forget(lib);
        }
    }
}

/// `cublasStatus_t` values this crate names (the rest are reported by number).
mod status {
    use std::ffi::c_int;

    pub(super) const SUCCESS: c_int = 0;
    pub(super) const NOT_INITIALIZED: c_int = 1;
    pub(super) const ALLOC_FAILED: c_int = 3;
    pub(super) const INVALID_VALUE: c_int = 7;
    pub(super) const ARCH_MISMATCH: c_int = 8;
    pub(super) const MAPPING_ERROR: c_int = 11;
    pub(super) const EXECUTION_FAILED: c_int = 13;
    pub(super) const INTERNAL_ERROR: c_int = 14;
    pub(super) const NOT_SUPPORTED: c_int = 15;
    pub(super) const LICENSE_ERROR: c_int = 16;
}

/// `CUBLAS_OP_N`: the operand as stored (no transposition).
const OP_N: c_int = 0;
/// `CUBLAS_OP_T`: the operand transposed.
const OP_T: c_int = 1;

/// A failed cuBLAS call: which call, and the `cublasStatus_t` it returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CublasError {
    /// The call that failed.
    pub(crate) call: &'static str,
    /// Its status.
    pub(crate) status: c_int,
}

impl std::fmt::Display for CublasError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed with {} ({})", self.call, status_name(self.status), self.status)
    }
}

/// cuBLAS's name for a status (`CUBLAS_STATUS_EXECUTION_FAILED`).
fn status_name(rc: c_int) -> &'static str {
    match rc {
        status::SUCCESS => "CUBLAS_STATUS_SUCCESS",
        status::NOT_INITIALIZED => "CUBLAS_STATUS_NOT_INITIALIZED",
        status::ALLOC_FAILED => "CUBLAS_STATUS_ALLOC_FAILED",
        status::INVALID_VALUE => "CUBLAS_STATUS_INVALID_VALUE",
        status::ARCH_MISMATCH => "CUBLAS_STATUS_ARCH_MISMATCH",
        status::MAPPING_ERROR => "CUBLAS_STATUS_MAPPING_ERROR",
        status::EXECUTION_FAILED => "CUBLAS_STATUS_EXECUTION_FAILED",
        status::INTERNAL_ERROR => "CUBLAS_STATUS_INTERNAL_ERROR",
        status::NOT_SUPPORTED => "CUBLAS_STATUS_NOT_SUPPORTED",
        status::LICENSE_ERROR => "CUBLAS_STATUS_LICENSE_ERROR",
        _ => "an unknown cuBLAS status",
    }
}

/// The typed error of a failed cuBLAS call whose work went to `stream` (of `device`, whose
/// context is current): cuBLAS reports only its own status, so the stream is synchronised to
/// learn whether the context holds a CUDA error (a fault inside the GEMM, or one the launch
/// met), which is then mapped with the driver's sticky rule ([`crate::errors::library_fault`]).
pub(crate) fn into_error(e: CublasError, device: DeviceId, stream: Handle) -> Error {
    // SAFETY: the stream belongs to the device's context, which the caller made current.
    let context_code = unsafe { crate::driver::cuStreamSynchronize(stream) };
    crate::errors::library_fault(&e.to_string(), context_code, device)
}

fn check(rc: c_int, call: &'static str) -> Result<(), CublasError> {
    if rc == status::SUCCESS {
        Ok(())
    } else {
        Err(CublasError { call, status: rc })
    }
}

/// True when the sizes fit cuBLAS's `int` dimensions.
pub(crate) fn fits(batch: usize, m: usize, n: usize, k: usize) -> bool {
    [batch, m, n, k].iter().all(|&x| x <= i32::MAX as usize)
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

impl CublasHandle {
    /// A handle in the current context whose work goes to `stream` (which must outlive it).
    pub(crate) fn new(api: &'static Api, stream: Handle) -> Result<CublasHandle, CublasError> {
        let mut raw: Handle = std::ptr::null_mut();
        // SAFETY: creates a handle in the current context.
        check(unsafe { (api.create)(&mut raw) }, "cublasCreate")?;
        let handle = CublasHandle { raw, api };
        // SAFETY: binds the live handle to a stream of the same context.
        check(unsafe { (api.set_stream)(handle.raw, stream) }, "cublasSetStream")?;
        Ok(handle)
    }

    /// `C[b] = A[b]·B[b]` (row-major, `[m, k]·[k, n]`, float `dtype`; A stored as `[k, m]`
    /// and B as `[n, k]` where `dims.transpose` says) on the handle's stream; `None` for a
    /// dtype cuBLAS is not used for. `a`, `b` and `c` must be live allocations of `batch·m·k`,
    /// `batch·k·n` and `batch·m·n` elements of `dtype`, the sizes must [`fits`], and the
    /// handle's context must be current.
    pub(crate) fn gemm(
        &self,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        c: DevPtr,
        dims: GemmDims,
    ) -> Option<Result<(), CublasError>> {
        let rc = match dtype {
            DType::F32 => self.strided_batched(self.api.sgemm, 1.0f32, 0.0, [a, b, c], dims),
            DType::F64 => self.strided_batched(self.api.dgemm, 1.0f64, 0.0, [a, b, c], dims),
            // Integers have no cuBLAS GEMM; halves go through `gemm_half` (GemmEx).
            DType::I32 | DType::U32 | DType::F16 | DType::BF16 | DType::I64 | DType::U8 | DType::Bool => return None,
        };
        Some(check(rc, "cuBLAS gemm"))
    }

    /// One `cublas?gemmStridedBatched` call of `gemm` over elements of `T` (with the
    /// preconditions of [`CublasHandle::gemm`]); returns its status.
    fn strided_batched<T>(
        &self,
        gemm: GemmBatched<T>,
        one: T,
        zero: T,
        [a, b, c]: [DevPtr; 3],
        dims: GemmDims,
    ) -> c_int {
        let GemmArgs { trans_b, trans_a, ldb, lda } = dims.args();
        let GemmDims { batch, m, n, k, .. } = dims;
        let (m, n, k, batch) = (m as c_int, n as c_int, k as c_int, batch as c_int);
        let (sa, sb, sc) =
            (m as c_longlong * k as c_longlong, k as c_longlong * n as c_longlong, m as c_longlong * n as c_longlong);
        // Column-major view: C' (n x m) = B' (n x k) * A' (k x m) ([`GemmDims::args`]).
        // SAFETY: `gemm` is the entry point for `T` (the caller pairs sgemm with f32 and dgemm
        // with f64); a, b, c are live device allocations of batch*m*k, batch*k*n and batch*m*n
        // `T`s in the handle's (current) context; `one` and `zero` are host scalars, alive for
        // the call (the default pointer mode).
        unsafe {
            gemm(
                self.raw,
                trans_b,
                trans_a,
                n,
                m,
                k,
                &one,
                b as usize as *const T,
                ldb,
                sb,
                a as usize as *const T,
                lda,
                sa,
                &zero,
                c as usize as *mut T,
                n,
                sc,
                batch,
            )
        }
    }
}

/// The sizes of a batched GEMM, and which operands arrive transposed.
#[derive(Copy, Clone, Debug)]
pub(crate) struct GemmDims {
    pub(crate) batch: usize,
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) transpose: MatmulTranspose,
}

/// The operand arguments of the column-major call `C' = op(B')·op(A')`, in call order.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct GemmArgs {
    /// `transa` of the call (it applies to our B).
    trans_b: c_int,
    /// `transb` of the call (our A).
    trans_a: c_int,
    /// Leading dimension of our B's buffer.
    ldb: c_int,
    /// Leading dimension of our A's buffer.
    lda: c_int,
}

impl GemmDims {
    /// A row-major `[r, c]` buffer is the column-major `[c, r]` matrix with leading
    /// dimension `c`. So B's buffer (`[k, n]`) is B' (n x k, ld n) as the call wants it; stored
    /// transposed (`[n, k]`) it is B (k x n, ld k), which `CUBLAS_OP_T` turns into B'. A
    /// likewise: `[m, k]` is A' (ld k); `[k, m]` is A (ld m) with `CUBLAS_OP_T`.
    fn args(&self) -> GemmArgs {
        let (m, n, k) = (self.m as c_int, self.n as c_int, self.k as c_int);
        let (trans_b, ldb) = if self.transpose.rhs { (OP_T, k) } else { (OP_N, n) };
        let (trans_a, lda) = if self.transpose.lhs { (OP_T, m) } else { (OP_N, k) };
        GemmArgs { trans_b, trans_a, ldb, lda }
    }
}

/// The `cudaDataType_t`, `cublasComputeType_t` and `cublasGemmAlgo_t` values of the half GEMM.
pub(crate) mod ex {
    use std::ffi::c_int;

    /// `CUDA_R_16F`: IEEE binary16.
    pub(crate) const CUDA_R_16F: c_int = 2;
    /// `CUDA_R_16BF`: bfloat16.
    pub(crate) const CUDA_R_16BF: c_int = 14;
    /// `CUBLAS_COMPUTE_32F`: products accumulated in f32 (no down-conversion to half or TF32).
    pub(crate) const COMPUTE_32F: c_int = 68;
    /// `CUBLAS_GEMM_DEFAULT`: cuBLAS's heuristic picks the algorithm (tensor cores included).
    pub(crate) const GEMM_DEFAULT: c_int = -1;
}

impl CublasHandle {
    /// `C[b] = A[b]·B[b]` over a half `dtype` (f16 or bf16: inputs and output in that type,
    /// accumulated in f32 with f32 `alpha = 1`, `beta = 0`, so each output is rounded once),
    /// with the preconditions of [`CublasHandle::gemm`]. `None` for another dtype or when
    /// this cuBLAS has no `cublasGemmStridedBatchedEx`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn gemm_half(
        &self,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        c: DevPtr,
        batch: usize,
        m: usize,
        n: usize,
        k: usize,
    ) -> Option<Result<(), CublasError>> {
        let ty = match dtype {
            DType::F16 => ex::CUDA_R_16F,
            DType::BF16 => ex::CUDA_R_16BF,
            _ => return None,
        };
        let gemm = self.api.gemm_ex?;
        let (m, n, k, batch) = (m as c_int, n as c_int, k as c_int, batch as c_int);
        let (sa, sb, sc) =
            (m as c_longlong * k as c_longlong, k as c_longlong * n as c_longlong, m as c_longlong * n as c_longlong);
        let (one, zero) = (1.0f32, 0.0f32);
        // Column-major view, as in `strided_batched`: C' (n x m) = B' (n x k) * A' (k x m).
        // SAFETY: `gemm` is cublasGemmStridedBatchedEx; a, b, c are live device allocations of
        // batch*m*k, batch*k*n and batch*m*n 2-byte elements of `dtype` in the handle's
        // (current) context; with CUBLAS_COMPUTE_32F, alpha and beta are host f32s, alive for
        // the call.
        let rc = unsafe {
            gemm(
                self.raw,
                OP_N,
                OP_N,
                n,
                m,
                k,
                (&one as *const f32).cast(),
                b as usize as *const c_void,
                ty,
                n,
                sb,
                a as usize as *const c_void,
                ty,
                k,
                sa,
                (&zero as *const f32).cast(),
                c as usize as *mut c_void,
                ty,
                n,
                sc,
                batch,
                ex::COMPUTE_32F,
                ex::GEMM_DEFAULT,
            )
        };
        Some(check(rc, "cuBLAS GemmEx"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_reported_by_name() {
        let e = CublasError { call: "cuBLAS gemm", status: 13 };
        assert_eq!(e.to_string(), "cuBLAS gemm failed with CUBLAS_STATUS_EXECUTION_FAILED (13)");
        assert!(check(0, "x").is_ok());
        assert_eq!(status_name(99), "an unknown cuBLAS status");
    }

    #[test]
    fn transposed_operands_become_op_t_with_their_stored_leading_dimension() {
        let dims = |lhs, rhs| GemmDims { batch: 2, m: 3, n: 5, k: 7, transpose: MatmulTranspose { lhs, rhs } };
        let args = |trans_b, trans_a, ldb, lda| GemmArgs { trans_b, trans_a, ldb, lda };
        assert_eq!(dims(false, false).args(), args(OP_N, OP_N, 5, 7));
        assert_eq!(dims(true, false).args(), args(OP_N, OP_T, 5, 3));
        assert_eq!(dims(false, true).args(), args(OP_T, OP_N, 7, 7));
        assert_eq!(dims(true, true).args(), args(OP_T, OP_T, 7, 3));
    }
}
