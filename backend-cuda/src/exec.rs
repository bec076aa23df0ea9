//! Runs one validated [`Op`] on a [`CudaDevice`]: plans it with [`crate::codegen`], allocates
//! the output and launches the kernels on the device's stream (no synchronisation: the
//! caller's next download or `synchronize` waits).

use polycompute_core::op::matmul_shape;
use polycompute_core::{DType, Error, Fill, Op, ReduceKind, Result, Scalar, Shape};

use crate::buffer::CudaBuffer;
use crate::codegen::{self, fill, layout, map, matmul, reduce};
use crate::device::{CudaDevice, Params};
use crate::{cublas, matmul_impl, MatmulImpl};

/// Executes `op` (already validated against `inputs` by the caller) and returns its output.
pub(crate) fn execute(dev: &CudaDevice, op: &Op, inputs: &[&CudaBuffer]) -> Result<CudaBuffer> {
    let input = |i: usize| {
        inputs.get(i).copied().ok_or_else(|| Error::InvalidShape(format!("{} is missing input {i}", op.name())))
    };
    match op {
        Op::Map { program, input_shapes, shape } => {
            if input_shapes.len() != inputs.len() {
                return Err(Error::MissingArgument { index: input_shapes.len(), available: inputs.len() });
            }
            run_map(dev, &map::plan(program, input_shapes, shape)?, program.output_dtype(), shape.numel(), inputs)
        }
        Op::Cast { to } => {
            let src = input(0)?;
            if src.dtype == *to {
                return copy(dev, src);
            }
            let shape = Shape::new(&[src.len])?;
            let program = map::cast_program(src.dtype, *to);
            run_map(dev, &map::plan(&program, std::slice::from_ref(&shape), &shape)?, *to, src.len, inputs)
        }
        Op::Copy => copy(dev, input(0)?),
        Op::Fill { fill, dtype, len } => run_fill(dev, *fill, *dtype, *len),
        Op::Transpose { shape, perm } => run_transpose(dev, input(0)?, shape, perm),
        Op::Reduce { kind, axis, shape } => run_reduce(dev, input(0)?, *kind, *axis, shape),
        Op::Matmul { lhs, rhs } => run_matmul(dev, input(0)?, input(1)?, lhs, rhs),
        _ => Err(Error::Unsupported {
            op: op.name().into(),
            dtype: input(0).map_or(DType::F32, |b| b.dtype),
            device: dev.id().into(),
        }),
    }
}

fn copy(dev: &CudaDevice, src: &CudaBuffer) -> Result<CudaBuffer> {
    let out = dev.new_buffer(src.dtype, src.len)?;
    dev.copy(out.ptr, src.ptr, src.bytes())?;
    Ok(out)
}

fn run_map(
    dev: &CudaDevice,
    plan: &map::MapPlan,
    out_dtype: DType,
    n: usize,
    inputs: &[&CudaBuffer],
) -> Result<CudaBuffer> {
    let out = dev.new_buffer(out_dtype, n)?;
    if n == 0 {
        return Ok(out);
    }
    let mut p = Params::default();
    p.ptr(out.ptr);
    for b in inputs {
        p.ptr(b.ptr);
    }
    p.u32(n as u32);
    if !plan.geometry.is_empty() {
        p.u32s(&plan.geometry);
    }
    dev.launch(&plan.kernel, (dev.grid_1d(n as u64, 256), 1, 1), (256, 1, 1), &mut p)?;
    Ok(out)
}

fn run_fill(dev: &CudaDevice, f: Fill, dtype: DType, len: usize) -> Result<CudaBuffer> {
    let out = dev.new_buffer(dtype, len)?;
    if len == 0 {
        return Ok(out);
    }
    let mut p = Params::default();
    p.ptr(out.ptr).u32(len as u32);
    match f {
        Fill::Constant(v) => {
            match v {
                Scalar::F32(x) => p.bytes(&x.to_le_bytes()),
                Scalar::F64(x) => p.bytes(&x.to_le_bytes()),
                Scalar::I32(x) => p.bytes(&x.to_le_bytes()),
                Scalar::U32(x) => p.bytes(&x.to_le_bytes()),
            };
        }
        Fill::Uniform { seed } | Fill::Normal { seed } => {
            let key = polycompute_core::philox::key(seed);
            p.u32(key[0]).u32(key[1]);
        }
    }
    let blocks = (len as u64).div_ceil(fill::per_block(f, dtype) as u64);
    dev.launch(&codegen::fill_kernel(f, dtype), (dev.grid_1d(blocks, 256), 1, 1), (256, 1, 1), &mut p)?;
    Ok(out)
}

fn run_transpose(dev: &CudaDevice, src: &CudaBuffer, shape: &Shape, perm: &[usize]) -> Result<CudaBuffer> {
    let out = dev.new_buffer(src.dtype, src.len)?;
    if src.len == 0 {
        return Ok(out);
    }
    match layout::plan_transpose(shape, perm, src.dtype) {
        layout::TransposePlan::Copy => dev.copy(out.ptr, src.ptr, src.bytes())?,
        layout::TransposePlan::Tiled { kernel, batch, rows, cols } => {
            let tiles = (batch as u64) * (rows as u64).div_ceil(32) * (cols as u64).div_ceil(32);
            let grid = tiles.min(dev.sms as u64 * 64).min(i32::MAX as u64) as u32;
            let mut p = Params::default();
            p.ptr(out.ptr).ptr(src.ptr).u32(batch as u32).u32(rows as u32).u32(cols as u32);
            dev.launch(&kernel, (grid, 1, 1), (32, 8, 1), &mut p)?;
        }
        layout::TransposePlan::Gather { kernel, geometry } => {
            let mut p = Params::default();
            p.ptr(out.ptr).ptr(src.ptr).u32(src.len as u32).u32s(&geometry);
            dev.launch(&kernel, (dev.grid_1d(src.len as u64, 256), 1, 1), (256, 1, 1), &mut p)?;
        }
    }
    Ok(out)
}

fn run_reduce(
    dev: &CudaDevice,
    src: &CudaBuffer,
    kind: ReduceKind,
    axis: Option<usize>,
    shape: &Shape,
) -> Result<CudaBuffer> {
    let dtype = src.dtype;
    let out_dtype = kind.output_dtype(dtype);
    let plan = reduce::plan(shape.dims(), axis, dev.sms as usize);
    let (outputs, count) = match plan {
        reduce::ReducePlan::Rows { rows, r, .. } => (rows, r),
        reduce::ReducePlan::Cols { outer, r, inner, .. } => (outer * inner, r),
    };
    let out = dev.new_buffer(out_dtype, outputs)?;
    if outputs == 0 {
        return Ok(out);
    }
    let acc = reduce::acc_bytes(kind, dtype);
    let grid_cap = |n: u64| n.clamp(1, 1 << 20) as u32;
    match plan {
        reduce::ReducePlan::Rows { rows, r, segs, seg_len } => {
            let block = reduce::row_block(seg_len);
            if segs == 1 {
                let k = codegen::reduce_kernel(kind, dtype, false, reduce::Input::Elements, reduce::Output::Final);
                let mut p = Params::default();
                p.ptr(out.ptr).ptr(src.ptr).u32(rows as u32).u32(r as u32).u32(1).u32(seg_len as u32).u32(count as u32);
                dev.launch(&k, (grid_cap(rows as u64), 1, 1), (block, 1, 1), &mut p)?;
            } else {
                let partial = dev.ctx.alloc(rows * segs * acc)?;
                let guard = TempBuffer { dev, ptr: partial };
                let k = codegen::reduce_kernel(kind, dtype, false, reduce::Input::Elements, reduce::Output::Partials);
                let mut p = Params::default();
                p.ptr(guard.ptr).ptr(src.ptr).u32(rows as u32).u32(r as u32).u32(segs as u32).u32(seg_len as u32);
                p.u32(count as u32);
                dev.launch(&k, (grid_cap((rows * segs) as u64), 1, 1), (block, 1, 1), &mut p)?;
                second_pass(dev, kind, dtype, &out, guard.ptr, rows, segs, count)?;
            }
        }
        reduce::ReducePlan::Cols { outer, r, inner, segs, seg_len } => {
            let threads = (outputs * segs) as u64;
            let grid = grid_cap(threads.div_ceil(256));
            if segs == 1 {
                let k = codegen::reduce_kernel(kind, dtype, true, reduce::Input::Elements, reduce::Output::Final);
                let mut p = Params::default();
                p.ptr(out.ptr).ptr(src.ptr).u32(outer as u32).u32(r as u32).u32(inner as u32).u32(1);
                p.u32(seg_len as u32).u32(count as u32);
                dev.launch(&k, (grid, 1, 1), (256, 1, 1), &mut p)?;
            } else {
                let partial = dev.ctx.alloc(outputs * segs * acc)?;
                let guard = TempBuffer { dev, ptr: partial };
                let k = codegen::reduce_kernel(kind, dtype, true, reduce::Input::Elements, reduce::Output::Partials);
                let mut p = Params::default();
                p.ptr(guard.ptr).ptr(src.ptr).u32(outer as u32).u32(r as u32).u32(inner as u32).u32(segs as u32);
                p.u32(seg_len as u32).u32(count as u32);
                dev.launch(&k, (grid, 1, 1), (256, 1, 1), &mut p)?;
                second_pass(dev, kind, dtype, &out, guard.ptr, outputs, segs, count)?;
            }
        }
    }
    Ok(out)
}

/// Combines `segs` partials per output (laid out `[outputs, segs]`) into the final values.
#[allow(clippy::too_many_arguments)]
fn second_pass(
    dev: &CudaDevice,
    kind: ReduceKind,
    dtype: DType,
    out: &CudaBuffer,
    partial: u64,
    outputs: usize,
    segs: usize,
    count: usize,
) -> Result<()> {
    let k = codegen::reduce_kernel(kind, dtype, false, reduce::Input::Partials, reduce::Output::Final);
    let mut p = Params::default();
    p.ptr(out.ptr).ptr(partial).u32(outputs as u32).u32(segs as u32).u32(1).u32(segs as u32).u32(count as u32);
    dev.launch(&k, ((outputs as u64).clamp(1, 1 << 20) as u32, 1, 1), (reduce::row_block(segs), 1, 1), &mut p)
}

/// A scratch allocation freed (stream-ordered) when it goes out of scope.
struct TempBuffer<'a> {
    dev: &'a CudaDevice,
    ptr: u64,
}

impl Drop for TempBuffer<'_> {
    fn drop(&mut self) {
        self.dev.ctx.free(self.ptr);
    }
}

fn run_matmul(dev: &CudaDevice, a: &CudaBuffer, b: &CudaBuffer, lhs: &Shape, rhs: &Shape) -> Result<CudaBuffer> {
    let dtype = a.dtype;
    let out_shape = matmul_shape(lhs, rhs)?;
    let (l, r) = (lhs.dims(), rhs.dims());
    let (batch, m, k, n) = if l.len() == 3 { (l[0], l[1], l[2], r[2]) } else { (1, l[0], l[1], r[1]) };
    let out = dev.new_buffer(dtype, out_shape.numel())?;
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
            return Err(Error::Unsupported {
                op: format!("cuBLAS matmul of {lhs} @ {rhs} (sizes beyond its int arguments, or k = 0)"),
                dtype,
                device: dev.id().into(),
            });
        }
        cublas::gemm(dev, dtype, a.ptr, b.ptr, out.ptr, batch, m, n, k)?;
        return Ok(out);
    }
    let kernel = codegen::matmul_kernel(dtype)?;
    let t = matmul::tiles(dtype);
    let grid = (
        (n as u64).div_ceil(t.bn as u64).min(i32::MAX as u64) as u32,
        (m as u64).div_ceil(t.bm as u64).min(65535) as u32,
        (batch as u64).min(65535) as u32,
    );
    let mut p = Params::default();
    p.ptr(a.ptr).ptr(b.ptr).ptr(out.ptr).u32(m as u32).u32(n as u32).u32(k as u32).u32(batch as u32);
    dev.launch(&kernel, grid, (t.threads(), 1, 1), &mut p)?;
    Ok(out)
}
