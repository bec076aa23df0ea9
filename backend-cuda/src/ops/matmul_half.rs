//! Matmul of half dtypes (f16, bf16): cuBLAS's `GemmEx` (half inputs and output, f32
//! accumulation) when it loads, else the own kernel of [`crate::codegen::matmul_half`]; both
//! round each output once. The choice follows [`matmul_impl`], as for f32 and f64.

use polycompute_core::{Error, MatmulTranspose, Result, Shape};

use super::matmul::{matmul_impl, MatmulImpl};
use crate::buffer::CudaBuffer;
use crate::codegen::{self, matmul_half};
use crate::cublas;
use crate::device::{CudaDevice, Params};

/// `a·b` where a buffer may hold its operand transposed (`transpose`): such an operand is
/// first made row-major on the device (one transpose of its last two axes), then [`run`].
pub(super) fn run_transposed(
    dev: &CudaDevice,
    a: &CudaBuffer,
    b: &CudaBuffer,
    lhs: &Shape,
    rhs: &Shape,
    transpose: MatmulTranspose,
) -> Result<CudaBuffer> {
    let a_plain = if transpose.lhs { Some(row_major(dev, a, lhs)?) } else { None };
    let b_plain = if transpose.rhs { Some(row_major(dev, b, rhs)?) } else { None };
    run(dev, a_plain.as_ref().unwrap_or(a), b_plain.as_ref().unwrap_or(b), lhs, rhs)
}

/// The row-major operand of shape `operand` from a buffer holding it with its last two axes
/// swapped.
fn row_major(dev: &CudaDevice, stored: &CudaBuffer, operand: &Shape) -> Result<CudaBuffer> {
    let mut dims = operand.dims().to_vec();
    let r = dims.len();
    dims.swap(r - 2, r - 1);
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    super::layout::transpose(dev, stored, &Shape::new(&dims)?, &perm)
}

/// `a·b` for half `a` of `lhs` and `b` of `rhs` (2-D, or batched 3-D).
pub(super) fn run(dev: &CudaDevice, a: &CudaBuffer, b: &CudaBuffer, lhs: &Shape, rhs: &Shape) -> Result<CudaBuffer> {
    let dtype = a.dtype;
    let (out, (batch, m, k, n)) = super::matmul::output(dev, dtype, lhs, rhs)?;
    if out.len == 0 {
        return Ok(out);
    }
    let cublas_ok = k > 0 && cublas::fits(batch, m, n, k);
    let use_cublas = match matmul_impl() {
        MatmulImpl::Own => false,
        MatmulImpl::Cublas => true,
        MatmulImpl::Auto => cublas_ok && cublas::api().is_ok_and(|api| api.has_gemm_ex()),
    };
    if use_cublas {
        if !cublas_ok {
            return Err(Error::Unsupported {
                op: format!("cuBLAS matmul of {lhs} @ {rhs} (sizes beyond its int arguments, or k = 0)"),
                dtype,
                device: Some(dev.id()),
            });
        }
        let missing = |why: String| Error::missing_capability("cuBLAS matmul", dtype, Some(dev.id()), &why);
        let api = cublas::api().map_err(missing)?;
        return super::matmul::with_cublas(dev, api, |handle, failed| {
            match handle.gemm_half(dtype, a.ptr, b.ptr, out.ptr, batch, m, n, k) {
                Some(result) => result.map_err(failed),
                None => Err(missing("cublasGemmStridedBatchedEx (cuBLAS 11 or later)".into())),
            }
        })
        .map(|()| out);
    }
    let kernel = codegen::matmul_half_kernel(dtype)?;
    let grid = (
        (n as u64).div_ceil(matmul_half::BN as u64).min(i32::MAX as u64) as u32,
        (m as u64).div_ceil(matmul_half::BM as u64).min(65535) as u32,
        (batch as u64).min(65535) as u32,
    );
    let mut p = Params::default();
    p.ptr(a.ptr).ptr(b.ptr).ptr(out.ptr).u32(m as u32).u32(n as u32).u32(k as u32).u32(batch as u32);
    dev.launch(&kernel, grid, (matmul_half::THREADS, 1, 1), &mut p)?;
    Ok(out)
}
