//! Fill: a constant, or Philox random numbers keyed by the seed; one launch.

use polycompute_core::{DType, Fill, Result, Scalar};

use crate::buffer::CudaBuffer;
use crate::codegen::{self, fill};
use crate::device::{CudaDevice, Params};

/// A new buffer of `len` elements of `dtype` filled with `f`.
pub(super) fn run(dev: &CudaDevice, f: Fill, dtype: DType, len: usize) -> Result<CudaBuffer> {
    let out = dev.new_buffer(dtype, len)?;
    if len == 0 {
        return Ok(out);
    }
    let mut p = Params::default();
    p.ptr(out.ptr).len(len);
    match f {
        Fill::Constant(v) => {
            match v {
                Scalar::F32(x) => p.bytes(&x.to_le_bytes()),
                Scalar::F64(x) => p.bytes(&x.to_le_bytes()),
                Scalar::I32(x) => p.bytes(&x.to_le_bytes()),
                Scalar::U32(x) => p.bytes(&x.to_le_bytes()),
                Scalar::F16(x) => p.bytes(&x.to_bits().to_le_bytes()),
                Scalar::BF16(x) => p.bytes(&x.to_bits().to_le_bytes()),
                // Never reached (`device::not_yet`).
                Scalar::I64(x) => p.bytes(&x.to_le_bytes()),
                Scalar::U8(x) => p.bytes(&[x]),
                Scalar::Bool(x) => p.bytes(&[u8::from(x)]),
            };
        }
        Fill::Uniform { seed } | Fill::Normal { seed } => {
            let key = polycompute_core::philox::key(seed);
            p.u32(key[0]).u32(key[1]);
        }
    }
    // One thread per Philox block (one element for a constant).
    let items = len.div_ceil(fill::per_block(f, dtype) as usize);
    dev.launch(&codegen::fill_kernel(f, dtype), &dev.strided("fill", items, 256)?, &mut p)?;
    Ok(out)
}
