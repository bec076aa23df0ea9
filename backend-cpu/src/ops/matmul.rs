//! `Op::Matmul`, row-major, 2-D and batched 3-D, through the `gemm` crate.
//!
//! `gemm` (rayon) and `matrixmultiply` (its own threads) were measured side by side on the
//! 2-core development machine (`examples/gemm_compare.rs`, f32, shared with other builds):
//! they came out within the noise of each other (gemm/matrixmultiply 0.84–1.17 at 1024³,
//! 0.84–1.05 at 2048³ over four sessions). `gemm` is kept: it schedules on the same rayon
//! pool as every other op (no second thread pool competing for the cores), has an f64
//! kernel of the same family, and led at 1024³ in most sessions.
//!
//! Against numpy/OpenBLAS (`benches/numpy_bench.sh`): the output used to be a fresh zeroed
//! `Vec` of 4–16 MiB, paid in page faults and a zeroing pass on every call; it now goes into
//! a block of the device's caching allocator, written once by `gemm` (`read_dst = false`).
//! Since then polycompute measured 1.3–1.9× numpy at 1024³ and 2048³ (an earlier measurement had 0.91 at
//! 2048³; a loaded machine, and not isolated from other changes). `gemm`'s AVX-512 kernels (feature
//! `x86-v4`) measured no better than its AVX2 ones on this Zen 4 host (single-threaded
//! 42–52 against 49–56 GFLOP/s at 1024³, noisy), so they stay off.

use std::sync::Arc;

use gemm::Parallelism;
use polycompute_core::{DeviceId, Error, HostSlice, MatmulTranspose, Result, Shape};
use rayon::prelude::*;

use crate::buffer::Output;
use crate::memory::Pool;
use crate::num::Num;
use crate::num_half::{narrow, widen, HalfNum};

/// Below this many multiply-adds per matrix, a batch is spread over threads one matrix
/// each rather than splitting every matrix.
const SMALL_GEMM: usize = 64 * 64 * 64;

/// `lhs @ rhs` for validated shapes (`[m, k] @ [k, n]` or `[b, m, k] @ [b, k, n]`); a
/// transposed operand (`transpose`) is read through `gemm`'s strides, not copied.
pub(crate) fn matmul(
    lhs_shape: &Shape,
    rhs_shape: &Shape,
    transpose: MatmulTranspose,
    lhs: HostSlice<'_>,
    rhs: HostSlice<'_>,
    device: DeviceId,
    pool: &Arc<Pool>,
) -> Result<Output> {
    let (l, r) = (lhs_shape.dims(), rhs_shape.dims());
    let (batch, m, k, n) = match (l, r) {
        ([m, k], [_, n]) => (1, *m, *k, *n),
        ([b, m, k], [_, _, n]) => (*b, *m, *k, *n),
        _ => {
            return Err(Error::MatmulShape {
                lhs: l.to_vec(),
                rhs: r.to_vec(),
                why: "both operands must be 2-D, or both 3-D (batched)".into(),
            })
        }
    };
    let dims = Dims { batch, m, k, n, transpose };
    if lhs.len() != batch * m * k || rhs.len() != batch * k * n {
        return Err(Error::Backend {
            device,
            message: format!(
                "matmul buffers of {} and {} elements do not match {lhs_shape} @ {rhs_shape}",
                lhs.len(),
                rhs.len()
            ),
        });
    }
    match (lhs, rhs) {
        (HostSlice::F32(a), HostSlice::F32(b)) => Output::write(pool, batch * m * n, |c| batched(a, b, c, dims)),
        (HostSlice::F64(a), HostSlice::F64(b)) => Output::write(pool, batch * m * n, |c| batched(a, b, c, dims)),
        (HostSlice::F16(a), HostSlice::F16(b)) => half_matmul(a, b, dims, pool),
        (HostSlice::BF16(a), HostSlice::BF16(b)) => half_matmul(a, b, dims, pool),
        (a, b) if a.dtype() != b.dtype() => {
            Err(Error::DTypeMismatch { context: "matmul rhs".into(), expected: a.dtype(), found: b.dtype() })
        }
        (a, _) => Err(Error::Unsupported { op: "matmul".into(), dtype: a.dtype(), device: Some(device) }),
    }
}

/// Halves: both operands widened to f32 (exact), the f32 product (f32
/// accumulation), each output rounded once. The widening is O(n²) beside the O(n³) product.
fn half_matmul<H: HalfNum>(a: &[H], b: &[H], d: Dims, pool: &Arc<Pool>) -> Result<Output> {
    let mut c = vec![0.0f32; d.batch * d.m * d.n];
    batched(&widen(a), &widen(b), &mut c, d);
    Output::write(pool, c.len(), |out: &mut [H]| narrow(&c, out))
}

#[derive(Copy, Clone)]
struct Dims {
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
    /// Which operands' slices hold the operand transposed.
    transpose: MatmulTranspose,
}

impl Dims {
    /// `(row stride, column stride)` of the lhs `[m, k]` in its slice: `[k, m]` row-major
    /// when transposed.
    fn lhs_strides(&self) -> (isize, isize) {
        if self.transpose.lhs {
            (1, self.m as isize)
        } else {
            (self.k as isize, 1)
        }
    }

    /// `(row stride, column stride)` of the rhs `[k, n]` in its slice: `[n, k]` row-major
    /// when transposed.
    fn rhs_strides(&self) -> (isize, isize) {
        if self.transpose.rhs {
            (1, self.k as isize)
        } else {
            (self.n as isize, 1)
        }
    }
}

/// The GEMM element types (f32, f64).
trait GemmElem: Num {}
impl GemmElem for f32 {}
impl GemmElem for f64 {}

/// Writes every element of `out` (`batch·m·n` of them).
fn batched<T: GemmElem>(a: &[T], b: &[T], out: &mut [T], d: Dims) {
    let Dims { batch, m, k, n, .. } = d;
    if m == 0 || n == 0 || k == 0 {
        // An empty inner dimension sums nothing: zeros are the answer (written, since a
        // recycled block holds old data).
        out.fill(T::ZERO);
        return;
    }
    let one = |(i, c): (usize, &mut [T]), par: Parallelism| {
        gemm_one(&a[i * m * k..(i + 1) * m * k], &b[i * k * n..(i + 1) * k * n], c, d, par)
    };
    if batch > 1 && m * n * k < SMALL_GEMM {
        out.par_chunks_mut(m * n).enumerate().for_each(|x| one(x, Parallelism::None));
    } else {
        out.chunks_mut(m * n).enumerate().for_each(|x| one(x, Parallelism::Rayon(0)));
    }
}

/// `c = a @ b` for one `[m, k] @ [k, n]` (each operand row-major, or its transpose
/// row-major as `d.transpose` says); `c` row-major.
fn gemm_one<T: GemmElem>(a: &[T], b: &[T], c: &mut [T], d: Dims, par: Parallelism) {
    let Dims { m, k, n, .. } = d;
    assert!(a.len() == m * k && b.len() == k * n && c.len() == m * n, "matmul operand sizes");
    let ((a_rs, a_cs), (b_rs, b_cs)) = (d.lhs_strides(), d.rhs_strides());
    // SAFETY: the three slices hold exactly m·k, k·n and m·n elements (asserted above), and
    // the strides given (row-major [m, k] / [k, n], or the transposed [k, m] / [n, k] seen
    // through swapped strides; [m, n] row-major for c) keep every access inside them. `c` is a unique borrow, so
    // the destination aliases neither operand. `read_dst = false` means `c` is only
    // written (alpha is ignored) and `beta = 1` makes it the plain product. T is f32 or
    // f64, which gemm supports (it panics only for other types).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            a_cs,
            a_rs,
            b.as_ptr(),
            b_cs,
            b_rs,
            T::ZERO,
            T::ONE,
            false,
            false,
            false,
            par,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute_core::DType;

    #[test]
    fn ints_are_unsupported_not_wrong() {
        let s = Shape::new(&[1, 1]).unwrap();
        let x = [1i32];
        let e = matmul(
            &s,
            &s,
            MatmulTranspose::NONE,
            HostSlice::I32(&x),
            HostSlice::I32(&x),
            DeviceId::new(polycompute_core::BackendKind::Cpu, 0),
            &Arc::new(Pool::new(DeviceId::new(polycompute_core::BackendKind::Cpu, 0), 0)),
        )
        .err();
        assert!(matches!(e, Some(Error::Unsupported { dtype: DType::I32, .. })), "{e:?}");
    }
}
