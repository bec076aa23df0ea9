//! Sorting (sort, argsort, topk) as a bitonic network over (key, index) slots per row:
//! keys are unsigned integers in numpy's order (see `wgsl/sort_init.wgsl`), built from the
//! element's bits, so every dtype sorts on every device (f64 as two words, without
//! `SHADER_F64`). A pass builds the slots; blocks of 512 slots are sorted in workgroup
//! memory, longer merges take one dispatch per step with j >= 512 and finish each k in
//! workgroup memory; a last pass writes values or indices.

use polycompute_core::DType;

use super::shaders::{self, instantiate};
use super::{Builder, KernelSource, WG};

/// Words of a key of `dtype` (f64: 2).
pub(crate) fn key_words(dtype: DType) -> usize {
    super::movement::words(dtype)
}

/// The key helpers (`sort_key`, `load_key`, `store_key`, `slot_before`) of `dtype`.
pub(crate) fn key_code(dtype: DType) -> String {
    let key = match dtype {
        // Halves are argsorted by u32 keys built from their bits (ops/half.rs).
        DType::U32 | DType::F16 | DType::BF16 => "return b;",
        DType::I32 => "return b ^ 0x80000000u;",
        DType::F32 => {
            "if ((b & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; }\n    \
             if ((b & 0x7fffffffu) == 0u) { return 0x80000000u; }\n    \
             if ((b >> 31u) == 1u) { return ~b; }\n    return b | 0x80000000u;"
        }
        DType::F64 => return shaders::SORT_KEY2.to_string(),
        // Never reached (`device::not_yet`).
        DType::I64 | DType::U8 | DType::Bool => "return b;",
    };
    instantiate(shaders::SORT_KEY1, &[("KEY", key)])
}

/// The slot-building pass for `dtype` (`wgsl/sort_init.wgsl`).
pub(crate) fn init(dtype: DType) -> KernelSource {
    let mut b = Builder::new(5);
    b.storage("src", "u32", false).storage("keys", "u32", true).storage("idx", "u32", true);
    b.code(&key_code(dtype));
    b.finish((WG, 1), &instantiate(shaders::SORT_INIT, &[("KW", &key_words(dtype).to_string())]))
}

/// One bitonic step over keys of `dtype` (`wgsl/sort_step.wgsl`).
pub(crate) fn step(dtype: DType) -> KernelSource {
    let mut b = Builder::new(4);
    // `src` is bound but unused, so the key helpers compile unchanged.
    b.storage("src", "u32", false).storage("keys", "u32", true).storage("idx", "u32", true);
    b.code(&key_code(dtype));
    b.finish((WG, 1), shaders::SORT_STEP)
}

/// Slots sorted together in workgroup memory by [`local`].
pub(crate) const LOCAL_SLOTS: usize = 512;

/// Bitonic steps with j < [`LOCAL_SLOTS`] in workgroup memory (`wgsl/sort_local.wgsl`).
pub(crate) fn local(dtype: DType) -> KernelSource {
    let mut b = Builder::new(5);
    b.storage("src", "u32", false).storage("keys", "u32", true).storage("idx", "u32", true);
    b.code(&key_code(dtype));
    b.code(if key_words(dtype) == 2 { shaders::SORT_LOCAL2 } else { shaders::SORT_LOCAL1 });
    b.finish((WG, 1), shaders::SORT_LOCAL)
}

/// The output pass (`wgsl/sort_out.wgsl`): values or indices of the first kk slots.
pub(crate) fn output() -> KernelSource {
    let mut b = Builder::new(7);
    b.storage("src", "u32", false).storage("idx", "u32", false).storage("dst", "u32", true);
    b.finish((WG, 1), shaders::SORT_OUT)
}
