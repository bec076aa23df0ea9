//! Matmul: cuBLAS when it loads (or on request), else the own tiled kernel; the choice is
//! made here, per call, from [`matmul_impl`].

use polycompute_core::sync::LockUnpoisoned;
use std::sync::atomic::{AtomicU8, Ordering};

use polycompute_core::op::matmul_shape;
use polycompute_core::{DType, Error, MatmulTranspose, Result, Shape};

use crate::buffer::CudaBuffer;
use crate::codegen::{self, matmul, Kernel};
use crate::cublas::{self, CublasHandle};
use crate::device::{CudaDevice, Params};
use crate::launch;

/// Which matmul implementation the CUDA backend uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MatmulImpl {
    /// cuBLAS when it loads, else the own kernel (the default).
    Auto,
    /// Always the own tiled kernel.
    Own,
    /// Always cuBLAS; an error (`Unsupported`) when libcublas cannot be loaded.
    Cublas,
}

/// The environment variable that chooses the matmul implementation at start-up:
/// `auto` (default), `own` or `cublas`.
pub const MATMUL_ENV: &str = "POLYCOMPUTE_CUDA_MATMUL";

static MATMUL_IMPL: AtomicU8 = AtomicU8::new(u8::MAX);

/// Chooses the matmul implementation for every CUDA device of this process (the bench
/// compares `Own` with `Cublas` this way); overrides [`MATMUL_ENV`].
pub fn set_matmul_impl(imp: MatmulImpl) {
    MATMUL_IMPL.store(imp as u8, Ordering::Relaxed);
}

/// The matmul implementation in force.
pub fn matmul_impl() -> MatmulImpl {
    match MATMUL_IMPL.load(Ordering::Relaxed) {
        0 => MatmulImpl::Auto,
        1 => MatmulImpl::Own,
        2 => MatmulImpl::Cublas,
        _ => match std::env::var(MATMUL_ENV).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            Ok("own") => MatmulImpl::Own,
            Ok("cublas") => MatmulImpl::Cublas,
            _ => MatmulImpl::Auto,
        },
    }
}

/// `a·b` for `a` of `lhs` and `b` of `rhs` (2-D, or batched 3-D); a buffer that holds its
/// operand transposed (`transpose`) is read so by cuBLAS (`transa`/`transb`) or by the own
/// kernel's transposed variant, never copied.
pub(super) fn run(
    dev: &CudaDevice,
    a: &CudaBuffer,
    b: &CudaBuffer,
    lhs: &Shape,
    rhs: &Shape,
    transpose: MatmulTranspose,
) -> Result<CudaBuffer> {
    let dtype = a.dtype;
    let (out, (batch, m, k, n)) = output(dev, dtype, lhs, rhs)?;
    if out.len == 0 {
        return Ok(out);
    }
    let imp = match matmul_impl() {
        MatmulImpl::Own => MatmulImpl::Own,
        MatmulImpl::Cublas => MatmulImpl::Cublas,
        // cuBLAS when it is there and the sizes fit its int arguments.
        MatmulImpl::Auto if k > 0 && cublas::fits(batch, m, n, k) && cublas::api().is_ok() => MatmulImpl::Cublas,
        MatmulImpl::Auto => MatmulImpl::Own,
    };
    if imp == MatmulImpl::Cublas {
        if k == 0 || !cublas::fits(batch, m, n, k) {
            return Err(beyond_cublas(dev, dtype, lhs, rhs));
        }
        cublas_gemm(dev, dtype, a, b, &out, (batch, m, n, k), transpose)?;
        return Ok(out);
    }
    let kernel = codegen::matmul_kernel_transposed(dtype, transpose)?;
    let t = matmul::tiles(dtype);
    launch_tiled(dev, &kernel, (t.bm, t.bn, t.threads()), [a, b, &out], (batch, m, k, n))?;
    Ok(out)
}

/// Forcing cuBLAS where its int arguments cannot hold the sizes (or `k = 0`, which it refuses).
pub(super) fn beyond_cublas(dev: &CudaDevice, dtype: DType, lhs: &Shape, rhs: &Shape) -> Error {
    Error::Unsupported {
        op: format!("cuBLAS matmul of {lhs} @ {rhs} (sizes beyond its int arguments, or k = 0)"),
        dtype,
        device: Some(dev.id()),
    }
}

/// Launches an own tiled matmul kernel (`bm × bn` output tiles of `threads` threads each) on
/// `[a, b, out]` of sizes `(batch, m, k, n)`, with [`launch::matmul`]'s grid (the kernels
/// loop over row tiles along y and batch entries along z beyond the grid's limits).
pub(super) fn launch_tiled(
    dev: &CudaDevice,
    kernel: &Kernel,
    (bm, bn, threads): (u32, u32, u32),
    [a, b, out]: [&CudaBuffer; 3],
    (batch, m, k, n): (usize, usize, usize, usize),
) -> Result<()> {
    let config = launch::matmul("matmul", (batch, m, k, n), (bm, bn, threads), &dev.limits)?;
    let mut p = Params::default();
    p.ptr(a.ptr).ptr(b.ptr).ptr(out.ptr).len(m).len(n).len(k).len(batch);
    dev.launch(kernel, &config, &mut p)
}

/// cuBLAS's GEMM into `out`, on the device's handle (made at the first call, bound to the
/// device's stream). The device's context must be current.
fn cublas_gemm(
    dev: &CudaDevice,
    dtype: DType,
    a: &CudaBuffer,
    b: &CudaBuffer,
    out: &CudaBuffer,
    (batch, m, n, k): (usize, usize, usize, usize),
    transpose: MatmulTranspose,
) -> Result<()> {
    let unsupported =
        |why: String| Error::Unsupported { op: format!("cuBLAS matmul ({why})"), dtype, device: Some(dev.id()) };
    let api = cublas::api().map_err(unsupported)?;
    with_cublas(dev, api, |handle, failed| {
        match handle.gemm(dtype, a.ptr, b.ptr, out.ptr, cublas::GemmDims { batch, m, n, k, transpose }) {
            Some(result) => result.map_err(failed),
            None => Err(Error::Unsupported { op: "matmul".into(), dtype, device: Some(dev.id()) }),
        }
    })
}

/// The output buffer of `lhs @ rhs` (2-D, or batched 3-D) and the sizes `(batch, m, k, n)`.
pub(super) fn output(
    dev: &CudaDevice,
    dtype: DType,
    lhs: &Shape,
    rhs: &Shape,
) -> Result<(CudaBuffer, (usize, usize, usize, usize))> {
    let out_shape = matmul_shape(lhs, rhs)?;
    let (l, r) = (lhs.dims(), rhs.dims());
    let sizes = if l.len() == 3 { (l[0], l[1], l[2], r[2]) } else { (1, l[0], l[1], r[1]) };
    Ok((dev.new_buffer(dtype, out_shape.numel())?, sizes))
}

/// Runs `call` with the device's cuBLAS handle (made at the first call, bound to the device's
/// stream) and the mapping of cuBLAS errors through the driver's sticky rule.
pub(super) fn with_cublas<R>(
    dev: &CudaDevice,
    api: &'static cublas::Api,
    call: impl FnOnce(&mut CublasHandle, &dyn Fn(cublas::CublasError) -> Error) -> Result<R>,
) -> Result<R> {
    let failed = |e: cublas::CublasError| cublas::into_error(e, dev.id(), dev.ctx.stream());
    let mut guard = dev.cublas.lock_unpoisoned();
    let handle = match guard.take() {
        Some(h) => h,
        None => CublasHandle::new(api, dev.ctx.stream()).map_err(failed)?,
    };
    call(guard.insert(handle), &failed)
}
