//! Matrix products: `[m, k] @ [k, n]`, or a batch of them, through the tiled kernel.

use polycompute_core::{DeviceBuffer, Error, MatmulTranspose, Result, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::matmul::{blocking, kernel, kernel_for};
use crate::device::{loop_ranges, Launch, WgpuDevice};
use crate::pipeline_cache::KernelKey;

/// `lhs @ rhs`, 2-D or batched 3-D (shapes validated by `Op::output`); a buffer holding its
/// operand transposed (`transpose`) is read by the kernel variant for it, not copied.
pub(crate) fn run(
    dev: &WgpuDevice,
    lhs: &Shape,
    rhs: &Shape,
    transpose: MatmulTranspose,
    a: &WgpuBuffer,
    b: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    let dtype = a.dtype();
    dev.require(dtype, "matmul")?;
    if !dtype.is_float() {
        return Err(Error::Unsupported { op: "matmul".into(), dtype, device: Some(dev.id) });
    }
    let (l, r) = (lhs.dims(), rhs.dims());
    let (batch, m, k) = if l.len() == 3 { (l[0], l[1], l[2]) } else { (1, l[0], l[1]) };
    let n = r[r.len() - 1];
    let out = dev.alloc(dtype, batch * m * n)?;
    if batch * m * n == 0 {
        return Ok(out);
    }
    let (bm, bk, _) = blocking(dtype);
    let tiles_n = n.div_ceil(bm as usize);
    let tiles_m = m.div_ceil(bm as usize);
    let total = (tiles_n * tiles_m) as u64 * batch as u64;
    let total32 = u32::try_from(total)
        .map_err(|_| Error::TooLarge(format!("matmul {lhs} @ {rhs} needs {total} workgroups, more than u32 counts")))?;
    let word = |v: usize, what: &str| {
        u32::try_from(v).map_err(|_| Error::TooLarge(format!("matmul {lhs} @ {rhs}: {what} {v} exceeds u32 indexing")))
    };
    let (m32, n32, k32) = (word(m, "M")?, word(n, "N")?, word(k, "K")?);
    let buffers = vec![a.raw().clone(), b.raw().clone(), out.raw().clone()];
    let kernel = if transpose.any() {
        dev.kernel(KernelKey::MatmulTransposed(dtype, transpose), || Ok(kernel_for(dtype, transpose)))?
    } else {
        dev.kernel(KernelKey::Matmul(dtype), || Ok(kernel(dtype)))?
    };
    // Long inner dimensions in several launches (see `LOOP_BUDGET`), each resuming the sums.
    let launches = loop_ranges(k, bk as usize)
        .enumerate()
        .map(|(i, ks)| Launch {
            kernel: kernel.clone(),
            buffers: buffers.clone(),
            params: vec![
                m32,
                n32,
                k32,
                tiles_n as u32,
                tiles_m as u32,
                total32,
                ks.start as u32,
                ks.end as u32,
                (i > 0) as u32,
            ],
            groups: total,
        })
        .collect();
    dev.launch(launches)?;
    Ok(out)
}
