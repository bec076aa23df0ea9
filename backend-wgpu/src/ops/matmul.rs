//! Matrix products: `[m, k] @ [k, n]`, or a batch of them, through the tiled kernel.

use polycompute_core::{DeviceBuffer, Error, MatmulTranspose, Result, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::matmul::{blocking, kernel, kernel_for};
use crate::codegen::matmul_skinny::{self, MAX_N, ROWS_PER_GROUP};
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
    if n <= MAX_N && !transpose.any() {
        return skinny(dev, (batch, m, n, k), a, b, out, (lhs, rhs));
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

/// `[batch, m, k] @ [batch, k, n]` for `n` at most `MAX_N`: a row of C per invocation.
fn skinny(
    dev: &WgpuDevice,
    (batch, m, n, k): (usize, usize, usize, usize),
    a: &WgpuBuffer,
    b: &WgpuBuffer,
    out: WgpuBuffer,
    (lhs, rhs): (&Shape, &Shape),
) -> Result<WgpuBuffer> {
    let dtype = a.dtype();
    let rows = batch * m;
    let word = |v: usize, what: &str| {
        u32::try_from(v).map_err(|_| Error::TooLarge(format!("matmul {lhs} @ {rhs}: {what} {v} exceeds u32 indexing")))
    };
    // Every index the kernel forms (a row's start in A, C) must fit a u32.
    word(rows * k.max(n), "the elements of A")?;
    let (rows32, m32, k32) = (word(rows, "the rows of C")?, word(m, "M")?, word(k, "K")?);
    let batched = batch > 1;
    let kernel = dev.kernel(KernelKey::MatmulSkinny(dtype, n as u32, batched), || {
        Ok(matmul_skinny::kernel(dtype, n as u32, batched))
    })?;
    let buffers = vec![a.raw().clone(), b.raw().clone(), out.raw().clone()];
    let groups = rows.div_ceil(ROWS_PER_GROUP as usize) as u64;
    // A zero K still runs one (empty) launch, which writes the zeros of C.
    let launches = loop_ranges(k, 1)
        .enumerate()
        .map(|(i, ks)| Launch {
            kernel: kernel.clone(),
            buffers: buffers.clone(),
            params: vec![rows32, m32, k32, ks.start as u32, ks.end as u32, (i > 0) as u32],
            groups,
        })
        .collect();
    dev.launch(launches)?;
    Ok(out)
}
