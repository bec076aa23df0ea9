//! CUDA C++ generated from polycompute's IR. Pure functions of the op (no driver needed), so
//! every kernel can be compiled by NVRTC on a machine without a GPU (see
//! `tests/nvrtc_compile.rs`). Each builder returns the source and the entry point; the device
//! module supplies sizes as kernel parameters, so one compiled kernel serves every shape of
//! the same structure.

pub mod fill;
pub mod layout;
pub mod map;
pub mod matmul;
pub mod reduce;
pub mod semantics;

use polycompute_core::{DType, Error, Op, Result, Scalar};

/// A generated kernel: CUDA C++ source and the name of its `extern "C" __global__` entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Kernel {
    /// The entry point's name.
    pub entry: String,
    /// The complete source (prelude included).
    pub source: String,
}

impl Kernel {
    /// A kernel from its body (which follows the semantics prelude).
    pub(crate) fn new(entry: &str, body: &str) -> Kernel {
        Kernel { entry: entry.to_string(), source: format!("{}\n{body}", semantics::PRELUDE) }
    }
}

/// The CUDA type of a dtype (names from the prelude).
pub fn ctype(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F64 => "double",
        DType::I32 => "i32",
        DType::U32 => "u32",
    }
}

/// An unsigned type of the same size as `d`, for kernels that only move bits.
pub fn bits_type(d: DType) -> &'static str {
    if d.size_bytes() == 8 {
        "u64"
    } else {
        "u32"
    }
}

/// A constant as a CUDA expression with exactly its bits (NaN, infinities and -0.0 included).
pub fn literal(s: Scalar) -> String {
    match s {
        Scalar::F32(v) => format!("__int_as_float(0x{:08x})", v.to_bits()),
        Scalar::F64(v) => format!("__longlong_as_double(0x{:016x}ll)", v.to_bits()),
        Scalar::I32(v) => format!("((i32)0x{:08x}u)", v as u32),
        Scalar::U32(v) => format!("0x{v:08x}u"),
    }
}

/// Every kernel that running `op` on inputs of `inputs` dtypes may launch, for compile
/// checks. The op must be valid (see [`Op::output`]); Copy launches no kernel.
pub fn kernels_for(op: &Op, inputs: &[DType]) -> Result<Vec<Kernel>> {
    Ok(match op {
        Op::Map { program, input_shapes, shape } => vec![map::plan(program, input_shapes, shape)?.kernel],
        Op::Cast { to } => {
            let from = *inputs.first().ok_or_else(|| Error::InvalidShape("cast takes one input".into()))?;
            if from == *to {
                Vec::new()
            } else {
                vec![map::cast_kernel(from, *to)]
            }
        }
        Op::Copy => Vec::new(),
        Op::Fill { fill, dtype, .. } => vec![fill::kernel(*fill, *dtype)],
        Op::Transpose { shape, perm } => {
            let dtype = *inputs.first().ok_or_else(|| Error::InvalidShape("transpose takes one input".into()))?;
            layout::plan_transpose(shape, perm, dtype).kernels()
        }
        Op::Reduce { kind, .. } => {
            let dtype = *inputs.first().ok_or_else(|| Error::InvalidShape("reduce takes one input".into()))?;
            reduce::all_kernels(*kind, dtype)
        }
        Op::Matmul { .. } => {
            let dtype = *inputs.first().ok_or_else(|| Error::InvalidShape("matmul takes two inputs".into()))?;
            vec![matmul::kernel(dtype)?]
        }
        _ => return Err(Error::Unsupported { op: op.name().into(), dtype: DType::F32, device: "cuda".into() }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_keep_their_bits() {
        assert_eq!(literal(Scalar::F32(-0.0)), "__int_as_float(0x80000000)");
        assert_eq!(literal(Scalar::F64(f64::INFINITY)), "__longlong_as_double(0x7ff0000000000000ll)");
        assert_eq!(literal(Scalar::I32(i32::MIN)), "((i32)0x80000000u)");
        assert_eq!(literal(Scalar::U32(7)), "0x00000007u");
    }
}
