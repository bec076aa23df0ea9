//! Matmul of half dtypes (f16, bf16): cuBLAS's `GemmEx` (half inputs and output, f32
//! accumulation) when it loads, else the own kernel of [`crate::codegen::matmul_half`]; both
//! round each output once. The choice follows [`matmul_impl`], as for f32 and f64.

use polycompute_core::{Error, MatmulTranspose, Result, Shape};

use super::matmul::{matmul_impl, MatmulImpl};
use crate::buffer::CudaBuffer;
use crate::codegen::{self, matmul_half};
use crate::cublas;
use crate::device::CudaDevice;

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
            return Err(super::matmul::beyond_cublas(dev, dtype, lhs, rhs));
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
    let tiles = (matmul_half::BM, matmul_half::BN, matmul_half::THREADS);
    super::matmul::launch_tiled(dev, &kernel, tiles, [a, b, &out], (batch, m, k, n))?;
    Ok(out)
}
