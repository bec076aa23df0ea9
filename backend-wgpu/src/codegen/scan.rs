//! The inclusive scans (cumsum, cumprod): a workgroup per row segment (`wgsl/scan.wgsl`), or
//! a thread per short row (`wgsl/scan_serial.wgsl`).

use polycompute_core::DType;

use super::shaders::{self, instantiate};
use super::{literal, wgsl_type, Builder, KernelSource, WG};

/// The identity of a scan: -0.0 for float sums (so a leading -0.0 survives), 0, or 1.
pub(crate) fn scan_identity(dtype: DType, product: bool) -> String {
    use polycompute_core::Scalar;
    literal(match (dtype, product) {
        (DType::F32, false) => Scalar::F32(-0.0),
        (DType::F32, true) => Scalar::F32(1.0),
        (DType::F64, false) => Scalar::F64(-0.0),
        (DType::F64, true) => Scalar::F64(1.0),
        (DType::I32, p) => Scalar::I32(i32::from(p)),
        (DType::U32, p) => Scalar::U32(u32::from(p)),
        // Halves scan in f32 (ops/half.rs).
        (DType::F16 | DType::BF16, false) => Scalar::F32(-0.0),
        (DType::F16 | DType::BF16, true) => Scalar::F32(1.0),
        // Never reached (`device::not_yet`).
        (DType::I64 | DType::U8 | DType::Bool, p) => Scalar::U32(u32::from(p)),
    })
}

/// Inclusive scan (`product`: cumprod, else cumsum) of `dtype`: a workgroup per row
/// (`wgsl/scan.wgsl`), or a thread per row for short rows (`serial`, `wgsl/scan_serial.wgsl`).
pub(crate) fn scan(dtype: DType, product: bool, serial: bool) -> KernelSource {
    let t = wgsl_type(dtype);
    let mut b = Builder::new(if serial { 3 } else { 6 });
    b.storage("src", t, false).storage("dst", t, true);
    if !serial {
        b.storage("aux", t, true);
        b.code(&format!("var<workgroup> part: array<{t}, {WG}>;\n"));
    }
    let id = scan_identity(dtype, product);
    let op = if product { "*" } else { "+" };
    let body = if serial { shaders::SCAN_SERIAL } else { shaders::SCAN };
    b.finish((WG, 1), &instantiate(body, &[("OP", op), ("ID", &id)]))
}
