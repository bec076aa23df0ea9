//! CUDA C++ generated from polycompute's IR. Pure functions of the op (no driver needed), so
//! every kernel can be compiled by NVRTC on a machine without a GPU (see
//! `nvrtc/tests.rs`). Each builder returns the source and the entry point; the device
//! module supplies sizes as kernel parameters, so one compiled kernel serves every shape of
//! the same structure.

pub mod fill;
#[cfg(test)]
mod host;
pub mod layout;
pub mod map;
pub mod matmul;
pub mod matmul_half;
pub mod movement;
pub mod reduce;
pub mod scan;
pub mod semantics;
pub mod sort;

use polycompute_core::sync::LockUnpoisoned;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use polycompute_core::plan::MapSignature;
#[cfg(test)]
use polycompute_core::Op;
#[cfg(doc)]
use polycompute_core::Program;
use polycompute_core::{DType, Error, Fill, MatmulTranspose, ReduceKind, Result, Scalar, ScanKind};

/// A generated kernel: CUDA C++ source, the name of its `extern "C" __global__` entry, and
/// the key it was generated for (what a device's module cache keys its loaded copy on).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Kernel {
    /// Everything the source depends on.
    pub key: KernelKey,
    /// The entry point's name.
    pub entry: String,
    /// The complete source (prelude included).
    pub source: String,
}

impl Kernel {
    /// The kernel for `key` from its body (which follows the semantics prelude).
    pub(crate) fn new(key: KernelKey, entry: &str, body: &str) -> Kernel {
        Kernel { key, entry: entry.to_string(), source: format!("{}\n{body}", semantics::PRELUDE) }
    }
}

/// Everything a kernel's source depends on (never sizes, which are parameters): generation is
/// memoized on it, so running an op again costs a small hash, not a code generation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KernelKey {
    /// A map (and a cast, the map of [`Program::cast`]): core's signature of it.
    Map(MapSignature),
    /// A fill: 0 constant, 1 uniform, 2 normal.
    Fill {
        /// Which fill.
        kind: u8,
        /// Element type.
        dtype: DType,
    },
    /// The tiled transpose of elements of `bytes` bytes.
    TransposeTiled {
        /// Element size.
        bytes: usize,
    },
    /// The gather transpose of elements of `bytes` bytes over `ndim` dimensions.
    TransposeGather {
        /// Element size.
        bytes: usize,
        /// Coalesced dimensions.
        ndim: usize,
    },
    /// A reduction kernel.
    Reduce {
        /// The reduction.
        kind: ReduceKind,
        /// Input element type.
        dtype: DType,
        /// Column kernel (else row kernel).
        cols: bool,
        /// What it reads.
        input: reduce::Input,
        /// What it writes.
        output: reduce::Output,
    },
    /// The own matmul kernel.
    Matmul {
        /// Element type.
        dtype: DType,
    },
    /// The own matmul kernel reading a transposed operand ([`matmul::transposed_kernel`]).
    MatmulTransposed {
        /// Element type.
        dtype: DType,
        /// Which operands arrive transposed (at least one).
        transpose: MatmulTranspose,
    },
    /// The own matmul kernel of a half dtype ([`matmul_half::kernel`]).
    MatmulHalf {
        /// Element type (f16 or bf16).
        dtype: DType,
    },
    /// A map over views ([`map::plan_views`]): strided inputs start at their offsets.
    MapViews(MapSignature),
    /// The copy of one concat input ([`movement::concat_kernel`]).
    Concat {
        /// Element size.
        bytes: usize,
    },
    /// Pad ([`movement::pad_kernel`]).
    Pad {
        /// Element size.
        bytes: usize,
        /// Axes (at least 1).
        ndim: usize,
    },
    /// Take or take_along_axis ([`movement::take_kernel`]).
    Take {
        /// Element size.
        bytes: usize,
        /// Index dtype (u32 or i32).
        index: DType,
        /// take_along_axis (else take).
        along: bool,
    },
    /// Scatter-add ([`movement::scatter_add_kernel`]).
    ScatterAdd {
        /// Element type.
        dtype: DType,
        /// Index dtype.
        index: DType,
    },
    /// One pass of a scan ([`scan::kernel`]).
    Scan {
        /// cumsum or cumprod.
        kind: ScanKind,
        /// Element type.
        dtype: DType,
        /// Which pass.
        pass: scan::ScanPass,
    },
    /// The key pass of a sort ([`sort::keys_kernel`]).
    SortKeys {
        /// Element type.
        dtype: DType,
        /// Complemented keys (topk).
        descending: bool,
    },
    /// A merge pass of a sort ([`sort::merge_kernel`]).
    SortMerge {
        /// Key size.
        key_bytes: usize,
    },
    /// Sort's value gather ([`sort::gather_kernel`]).
    SortGather {
        /// Element size.
        bytes: usize,
    },
    /// Argsort's and topk's index pass ([`sort::indices_kernel`]).
    SortIndices,
}

/// The kernel for `key`, made by `make` the first time in this process and shared after.
pub fn cached(key: KernelKey, make: impl FnOnce() -> Kernel) -> Arc<Kernel> {
    static MEMO: OnceLock<Mutex<HashMap<KernelKey, Arc<Kernel>>>> = OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    if let Some(k) = memo.lock_unpoisoned().get(&key) {
        return k.clone();
    }
    let kernel = Arc::new(make());
    memo.lock_unpoisoned().entry(key).or_insert(kernel).clone()
}

/// The fill kernel of `fill` over `dtype`, memoized.
pub fn fill_kernel(fill: Fill, dtype: DType) -> Arc<Kernel> {
    cached(fill::key(fill, dtype), || fill::kernel(fill, dtype))
}

/// A reduction kernel, memoized: rows ([`reduce::rows_kernel`]) or columns ([`reduce::cols_kernel`]).
pub fn reduce_kernel(
    kind: ReduceKind,
    dtype: DType,
    cols: bool,
    input: reduce::Input,
    output: reduce::Output,
) -> Arc<Kernel> {
    cached(KernelKey::Reduce { kind, dtype, cols, input, output }, || {
        if cols {
            reduce::cols_kernel(kind, dtype, output)
        } else {
            reduce::rows_kernel(kind, dtype, input, output)
        }
    })
}

/// The own matmul kernel, memoized.
pub fn matmul_kernel(dtype: DType) -> Result<Arc<Kernel>> {
    if !dtype.is_float() {
        return Err(Error::Unsupported { op: "matmul".into(), dtype, device: None });
    }
    Ok(cached(KernelKey::Matmul { dtype }, || matmul::source(dtype)))
}

/// The own matmul kernel for operands that arrive transposed as `transpose` says, memoized
/// ([`matmul_kernel`] when neither does).
pub fn matmul_kernel_transposed(dtype: DType, transpose: MatmulTranspose) -> Result<Arc<Kernel>> {
    if !transpose.any() {
        return matmul_kernel(dtype);
    }
    if !dtype.is_float() {
        return Err(Error::Unsupported { op: "matmul".into(), dtype, device: None });
    }
    Ok(cached(KernelKey::MatmulTransposed { dtype, transpose }, || matmul::source_for(dtype, transpose)))
}

/// The own matmul kernel of a half dtype, memoized (`Unsupported` for another dtype).
pub fn matmul_half_kernel(dtype: DType) -> Result<Arc<Kernel>> {
    if !matches!(dtype, DType::F16 | DType::BF16) {
        return Err(Error::Unsupported { op: "half matmul kernel".into(), dtype, device: None });
    }
    Ok(cached(KernelKey::MatmulHalf { dtype }, || matmul_half::source(dtype)))
}

/// The CUDA type of a dtype (names from the prelude).
pub fn ctype(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F64 => "double",
        DType::I32 => "i32",
        DType::U32 => "u32",
        DType::F16 => "pc_f16",
        DType::BF16 => "pc_bf16",
        // Never reached (`device::not_yet`): no kernel is generated for them yet.
        DType::I64 => "i64",
        DType::U8 | DType::Bool => "u8",
    }
}

/// An unsigned type of the same size as `d`, for kernels that only move bits.
pub fn bits_type(d: DType) -> &'static str {
    bits_of_size(d.size_bytes())
}

/// The unsigned type of elements of `bytes` bytes (2, 4 or 8; the data-movement kernels are
/// generated per element size).
pub fn bits_of_size(bytes: usize) -> &'static str {
    match bytes {
        8 => "u64",
        2 => "u16",
        // 1-byte elements never reach a kernel yet (`device::not_yet`).
        _ => "u32",
    }
}

/// A constant as a CUDA expression with exactly its bits (NaN, infinities and -0.0 included).
pub fn literal(s: Scalar) -> String {
    match s {
        Scalar::F32(v) => format!("__int_as_float(0x{:08x})", v.to_bits()),
        Scalar::F64(v) => format!("__longlong_as_double(0x{:016x}ll)", v.to_bits()),
        Scalar::I32(v) => format!("((i32)0x{:08x}u)", v as u32),
        Scalar::U32(v) => format!("0x{v:08x}u"),
        Scalar::F16(v) => format!("pc_f16_bits(0x{:04x}u)", v.to_bits()),
        Scalar::BF16(v) => format!("pc_bf16_bits(0x{:04x}u)", v.to_bits()),
        // Never reached (`device::not_yet`).
        Scalar::I64(v) => format!("((i64)0x{:016x}ull)", v as u64),
        Scalar::U8(v) => format!("((u8){v}u)"),
        Scalar::Bool(v) => format!("((u8){}u)", u8::from(v)),
    }
}

/// Every kernel that running `op` on inputs of `inputs` dtypes may launch, for compile
/// checks. The op must be valid (see [`Op::output`]); Copy launches no kernel.
#[cfg(test)]
pub fn kernels_for(op: &Op, inputs: &[DType]) -> Result<Vec<Kernel>> {
    Ok(match op {
        Op::Map { program, input_shapes, shape } => vec![(*map::plan(program, input_shapes, shape).kernel).clone()],
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
        Op::Matmul { .. } if inputs.first().is_some_and(|d| matches!(d, DType::F16 | DType::BF16)) => {
            vec![matmul_half::kernel(first(op, inputs)?)?]
        }
        Op::Matmul { transpose, .. } => {
            let dtype = *inputs.first().ok_or_else(|| Error::InvalidShape("matmul takes two inputs".into()))?;
            vec![matmul::transposed_kernel(dtype, *transpose)?]
        }
        Op::MapViews { program, inputs: layouts, shape } => {
            vec![(*map::plan_views(program, layouts, shape).kernel).clone()]
        }
        Op::Concat { .. } => vec![(*movement::concat_kernel(first(op, inputs)?.size_bytes())).clone()],
        Op::Pad { shape, .. } => {
            vec![(*movement::pad_kernel(first(op, inputs)?.size_bytes(), shape.dims().len())).clone()]
        }
        Op::Take { .. } | Op::TakeAlongAxis { .. } => {
            let along = matches!(op, Op::TakeAlongAxis { .. });
            let index = *inputs.get(1).ok_or_else(|| missing(op))?;
            vec![(*movement::take_kernel(first(op, inputs)?.size_bytes(), index, along)).clone()]
        }
        Op::ScatterAdd { .. } => {
            let index = *inputs.get(1).ok_or_else(|| missing(op))?;
            vec![(*movement::scatter_add_kernel(first(op, inputs)?, index)).clone()]
        }
        Op::Scan { kind, .. } => scan::all_kernels(*kind, first(op, inputs)?),
        Op::Sort { .. } => sort::all_kernels(first(op, inputs)?, sort::SortOutput::Values),
        Op::Argsort { .. } => sort::all_kernels(first(op, inputs)?, sort::SortOutput::Indices),
        Op::TopK { .. } => sort::all_kernels(first(op, inputs)?, sort::SortOutput::TopK),
    })
}

/// The dtype of `op`'s first input.
#[cfg(test)]
fn first(op: &Op, inputs: &[DType]) -> Result<DType> {
    inputs.first().copied().ok_or_else(|| missing(op))
}

#[cfg(test)]
fn missing(op: &Op) -> Error {
    Error::InvalidShape(format!("{} is missing an input dtype", op.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_generated_once_per_structure() {
        use polycompute_core::{Expr, Program, Shape};
        let p = Arc::new(Program::compile(&(Expr::arg(0) * 2.0 + Expr::arg(1)), &[DType::F32, DType::F32]).unwrap());
        let s = |d: &[usize]| Shape::new(d).unwrap();
        let a = map::plan(&p, &[s(&[4, 5]), s(&[5])], &s(&[4, 5]));
        // Other sizes, same structure (same-shape input, strided input, 2 coalesced dims): one kernel.
        let b = map::plan(&p, &[s(&[7, 9]), s(&[9])], &s(&[7, 9]));
        assert!(Arc::ptr_eq(&a.kernel, &b.kernel));
        assert_ne!(a.geometry, b.geometry);
        let c = map::plan(&p, &[s(&[7, 9]), s(&[7, 9])], &s(&[7, 9]));
        assert!(!Arc::ptr_eq(&a.kernel, &c.kernel));
        let f1 = fill_kernel(Fill::Uniform { seed: 1 }, DType::F32);
        let f2 = fill_kernel(Fill::Uniform { seed: 2 }, DType::F32);
        assert!(Arc::ptr_eq(&f1, &f2));
        assert!(matmul_kernel(DType::I32).is_err());
    }

    #[test]
    fn literals_keep_their_bits() {
        assert_eq!(literal(Scalar::F32(-0.0)), "__int_as_float(0x80000000)");
        assert_eq!(literal(Scalar::F64(f64::INFINITY)), "__longlong_as_double(0x7ff0000000000000ll)");
        assert_eq!(literal(Scalar::I32(i32::MIN)), "((i32)0x80000000u)");
        assert_eq!(literal(Scalar::U32(7)), "0x00000007u");
    }
}
