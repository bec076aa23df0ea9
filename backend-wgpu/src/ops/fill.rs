//! Fill: a constant (as raw words) or a Philox stream.

use polycompute_core::{DType, Fill, Result, Scalar};

use crate::buffer::WgpuBuffer;
use crate::codegen::{fill, WG};
use crate::device::{Launch, WgpuDevice};
use crate::ops::groups;
use crate::pipeline_cache::KernelKey;

/// A new buffer of `len` elements of `dtype`, filled as `how` says.
pub(crate) fn run(dev: &WgpuDevice, how: Fill, dtype: DType, len: usize) -> Result<WgpuBuffer> {
    let out = dev.alloc(dtype, len)?;
    if len == 0 {
        return Ok(out);
    }
    let launch = match how {
        Fill::Constant(value) => {
            let (words, lo, hi) = match value {
                Scalar::F64(v) => (2, v.to_bits() as u32, (v.to_bits() >> 32) as u32),
                s => (1, s.to_bits() as u32, 0),
            };
            let kernel = dev.kernel(KernelKey::FillConstant(words), || Ok(fill::constant(words)))?;
            Launch {
                kernel,
                buffers: vec![out.raw().clone()],
                params: vec![len as u32, lo, hi],
                groups: groups(len, WG),
            }
        }
        Fill::Uniform { seed } | Fill::Normal { seed } => {
            dev.require(dtype, "random fill")?;
            let normal = matches!(how, Fill::Normal { .. });
            let kernel = dev.kernel(KernelKey::FillRandom { dtype, normal }, || fill::random(dtype, normal, dev.id))?;
            let per = if dtype == DType::F64 { 2 } else { 4 };
            let blocks = len.div_ceil(per);
            Launch {
                kernel,
                buffers: vec![out.raw().clone()],
                params: vec![len as u32, seed as u32, (seed >> 32) as u32],
                groups: groups(blocks, WG),
            }
        }
    };
    dev.launch(vec![launch])?;
    Ok(out)
}
