//! Reductions: view the input as `[outer, r, inner]` and run tree passes until `r` is 1.

use polycompute_core::{DType, DeviceBuffer, Error, Fill, ReduceKind, Result, Scalar, Shape};

use crate::buffer::WgpuBuffer;
use crate::codegen::reduce::{kernel, Pass, ITEMS, LONG_ITEMS, LONG_R, THREADS};
use crate::codegen::reduce_rows::{self, RowPass, MAX_WIDTH, ROWS_PER_GROUP};
use crate::device::{Launch, WgpuDevice};
use crate::pipeline_cache::KernelKey;

/// Contiguous rows at most this long (and longer than `MAX_WIDTH`) are reduced 16 to a
/// workgroup (16 threads of 8 elements each along the row).
const MEDIUM_ROW: usize = 256;

/// Reduces `input` (of `shape`) over all elements or one axis. A half input gives its f32
/// result (argmin/argmax: u32), for the caller to round once.
pub(crate) fn run(
    dev: &WgpuDevice,
    kind: ReduceKind,
    axis: Option<usize>,
    shape: &Shape,
    input: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    let dtype = input.dtype();
    let is_arg = matches!(kind, ReduceKind::ArgMin | ReduceKind::ArgMax);
    // Integers are averaged in f64 (summed exactly, as the CPU does). Halves are read as they
    // are and reduced in f32, which is also the output here: ops/half.rs rounds it once.
    let (out_dtype, acc) = if dtype.is_half() {
        (if is_arg { DType::U32 } else { DType::F32 }, DType::F32)
    } else {
        let out_dtype = kind.output_dtype(dtype);
        (out_dtype, if kind == ReduceKind::Mean { out_dtype } else { dtype })
    };
    dev.require(dtype, kind.name())?;
    dev.require(acc, kind.name())?;
    let dims = shape.dims();
    let (outer, r, inner) = match axis {
        None => (1, shape.numel(), 1),
        Some(a) => (dims[..a].iter().product::<usize>(), dims[a], dims[a + 1..].iter().product::<usize>()),
    };
    let out_len = outer * inner;
    if out_len == 0 {
        return dev.alloc(out_dtype, 0);
    }
    if r == 0 {
        // Validation let only sum, prod and mean through: 0, 1 and NaN, as numpy.
        let value = match (kind, out_dtype) {
            (ReduceKind::Prod, d) => one(d),
            (ReduceKind::Mean, DType::F32) => Scalar::F32(f32::NAN),
            (ReduceKind::Mean, _) => Scalar::F64(f64::NAN),
            (_, d) => Scalar::zero(d),
        };
        return super::fill::run(dev, Fill::Constant(value), out_dtype, out_len);
    }
    // Short contiguous rows: one invocation per row (a tree pass would give each a column
    // of a 256-thread workgroup, mostly idle).
    if inner == 1 && r <= MAX_WIDTH && outer > 1 {
        let pass = RowPass { kind, input: dtype, acc, width: r.next_power_of_two() as u32 };
        return short_rows(dev, pass, out_dtype, outer, r, input);
    }
    // Element strides of the first pass's [outer, r, inner] view. Rows too long for one
    // per invocation but short of a workgroup's 2,048 elements are read as one
    // [1, r, outer] problem instead, so one workgroup serves 16 rows.
    let (outer, inner, first_strides) = if inner == 1 && r <= MEDIUM_ROW && outer > 1 {
        (1, outer, [0, 1, r])
    } else {
        (outer, inner, [r * inner, inner, 1])
    };
    let tj = if inner == 1 { 1 } else { inner.next_power_of_two().min(16) as u32 };
    let njb = inner.div_ceil(tj as usize);
    // The subgroup stage serves workgroups along r alone; the barrier tree the rest.
    let subgroup_slots = match dev.subgroup_min_size() {
        Some(min) if tj == 1 => THREADS / min.min(THREADS),
        _ => 0,
    };

    let mut launches = Vec::new();
    // Partial buffers live until the submission is encoded; the queue orders their reuse.
    let mut temps: Vec<WgpuBuffer> = Vec::new();
    let mut cur_r = r;
    let mut first = true;
    let final_out = dev.alloc(out_dtype, out_len)?;
    loop {
        let items = if cur_r >= LONG_R { LONG_ITEMS } else { ITEMS };
        let per_block = (items * (THREADS / tj)) as usize;
        let nkb = cur_r.div_ceil(per_block);
        let last = nkb == 1;
        let pass = Pass { kind, input: dtype, acc, first, last, tj, items, subgroup_slots };
        let mut buffers = Vec::new();
        if first {
            buffers.push(input.raw().clone());
        } else {
            let n = temps.len();
            if is_arg {
                buffers.push(temps[n - 2].raw().clone());
                buffers.push(temps[n - 1].raw().clone());
            } else {
                buffers.push(temps[n - 1].raw().clone());
            }
        }
        if last {
            buffers.push(final_out.raw().clone());
        } else {
            let len = outer * nkb * inner;
            let v = dev.alloc(acc, len)?;
            buffers.push(v.raw().clone());
            temps.push(v);
            if is_arg {
                let i = dev.alloc(DType::U32, len)?;
                buffers.push(i.raw().clone());
                temps.push(i);
            }
        }
        let total = (outer as u64) * (nkb as u64) * (njb as u64);
        let total32 = u32::try_from(total).map_err(|_| {
            Error::TooLarge(format!("{} over {shape} needs {total} workgroups, more than u32 counts", kind.name()))
        })?;
        let strides = if first { first_strides } else { [cur_r * inner, inner, 1] };
        let mut params = vec![outer as u32, cur_r as u32, inner as u32, nkb as u32, njb as u32, total32, r as u32];
        params.extend(strides.iter().map(|&s| s as u32));
        let kernel = dev.kernel(KernelKey::Reduce(pass), || Ok(kernel(&pass)))?;
        launches.push(Launch { kernel, buffers, params, groups: total });
        if last {
            break;
        }
        cur_r = nkb;
        first = false;
    }
    dev.launch(launches)?;
    drop(temps);
    Ok(final_out)
}

/// `rows` contiguous rows of `r` (at most `MAX_WIDTH`) elements, one invocation per row.
fn short_rows(
    dev: &WgpuDevice,
    pass: RowPass,
    out_dtype: DType,
    rows: usize,
    r: usize,
    input: &WgpuBuffer,
) -> Result<WgpuBuffer> {
    let rows32 = u32::try_from(rows)
        .map_err(|_| Error::TooLarge(format!("{} over {rows} rows: more rows than u32 counts", pass.kind.name())))?;
    let out = dev.alloc(out_dtype, rows)?;
    let kernel = dev.kernel(KernelKey::ReduceRows(pass), || Ok(reduce_rows::kernel(&pass)))?;
    let groups = rows.div_ceil(ROWS_PER_GROUP as usize) as u64;
    let buffers = vec![input.raw().clone(), out.raw().clone()];
    dev.launch(vec![Launch { kernel, buffers, params: vec![rows32, r as u32, r as u32], groups }])?;
    Ok(out)
}

fn one(d: DType) -> Scalar {
    match d {
        DType::F32 => Scalar::F32(1.0),
        DType::F64 => Scalar::F64(1.0),
        DType::I32 => Scalar::I32(1),
        DType::U32 => Scalar::U32(1),
        DType::F16 => Scalar::F16(polycompute_core::f16::ONE),
        DType::BF16 => Scalar::BF16(polycompute_core::bf16::ONE),
        DType::I64 => Scalar::I64(1),
        DType::U8 => Scalar::U8(1),
        DType::Bool => Scalar::Bool(true),
    }
}
