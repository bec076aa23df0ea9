//! Fill kernels: a constant (written as raw words, so f64 needs no 64-bit bitcast), and the
//! Philox4x32-10 streams of core/src/philox.rs, bit for bit: one thread per Philox block.

use polycompute_core::DeviceId;
use std::collections::BTreeSet;
use std::fmt::Write;

use polycompute_core::{DType, Error, Result};

use super::semantics::library;
use super::shaders;
use super::{Builder, KernelSource, WG};

/// Writes the element `(prm(1), prm(2))` (one or two words) to each of `prm(0)` elements.
pub(crate) fn constant(words: u32) -> KernelSource {
    let mut b = Builder::new(3);
    let (elem, value) = if words == 2 { ("vec2<u32>", "vec2<u32>(prm(1u), prm(2u))") } else { ("u32", "prm(1u)") };
    b.storage("out", elem, true);
    let body = format!(
        "    let n = prm(0u);\n    if (n == 0u || g > (n - 1u) / {WG}u) {{ return; }}\n    \
         let i = g * {WG}u + lid;\n    if (i < n) {{ out[i] = {value}; }}\n"
    );
    b.finish((WG, 1), &body)
}

/// Random fills: `normal` false for uniform (floats in [0, 1), raw bits for integers), true
/// for Box-Muller normals (through the accurate `ln`, `sin`, `cos` of `transcendental`, so
/// they stay within a few ulp of the CPU's). Params: `n`, seed low word, seed high word.
pub(crate) fn random(dtype: DType, normal: bool, device: DeviceId) -> Result<KernelSource> {
    if normal && dtype.is_int() {
        return Err(Error::Unsupported { op: "normal fill".into(), dtype, device: Some(device) });
    }
    let mut b = Builder::new(3);
    let elem = match dtype {
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::I32 | DType::U32 => "u32",
        // Drawn as f32 and rounded by ops/half.rs.
        DType::F16 | DType::BF16 => {
            return Err(Error::Unsupported { op: "random fill of halves as such".into(), dtype, device: Some(device) })
        }
        DType::I64 | DType::U8 | DType::Bool => {
            return Err(Error::Unsupported { op: "random fill".into(), dtype, device: Some(device) })
        }
    };
    b.storage("out", elem, true);
    // The f32 library is always there: it brings `mulhilo`, and the normals' ln, sin, cos.
    b.code(&library(&BTreeSet::from([DType::F32, dtype])));
    b.code(shaders::PHILOX);
    if dtype == DType::F64 {
        b.code(shaders::PHILOX_F64);
    }
    // Elements per Philox block.
    let per = if dtype == DType::F64 { 2 } else { 4 };
    let mut body = format!(
        "    let n = prm(0u);\n    let blocks = (n - 1u) / {per}u + 1u;\n    \
         if (n == 0u || g > (blocks - 1u) / {WG}u) {{ return; }}\n    \
         let blk = g * {WG}u + lid;\n    if (blk >= blocks) {{ return; }}\n    \
         let w = philox(vec4<u32>(blk, 0u, 0u, 0u), vec2<u32>(prm(1u), prm(2u)));\n    \
         let base = blk * {per}u;\n"
    );
    let values: Vec<String> = match (dtype, normal) {
        (DType::I32 | DType::U32 | DType::F16 | DType::BF16 | DType::I64 | DType::U8 | DType::Bool, _) => {
            (0..4).map(|j| format!("w[{j}]")).collect()
        }
        (DType::F32, false) => (0..4).map(|j| format!("unit_f32(w[{j}])")).collect(),
        (DType::F64, false) => vec!["unit_f64(w[0], w[1])".into(), "unit_f64(w[2], w[3])".into()],
        (DType::F64, true) => {
            // u1 = ((w01 >> 11) + 1) 2^-53 in (0, 1], u2 = (w23 >> 11) 2^-53; one pair per block.
            body.push_str(&format!(
                "    let u1 = unit_f64(w[0], w[1]) + {two_m53};\n    let r = sqrt_f64(-2.0 * ln_f64(u1));\n    \
                 let th = {two_pi} * unit_f64(w[2], w[3]);\n",
                two_m53 = format_args!("{:e}lf", 2f64.powi(-53)),
                two_pi = format_args!("{:e}lf", 2.0 * std::f64::consts::PI),
            ));
            vec!["r * cos_f64(th)".into(), "r * sin_f64(th)".into()]
        }
        (DType::F32, true) => {
            body.push_str(
                "    let two_pi = bitcast<f32>(0x40c90fdbu);\n    \
                 let u1a = f32((w[0] >> 8u) + 1u) * bitcast<f32>(0x33800000u);\n    \
                 let ra = sqrt_f32(-2.0 * ln_f32(u1a));\n    let ta = two_pi * unit_f32(w[1]);\n    \
                 let u1b = f32((w[2] >> 8u) + 1u) * bitcast<f32>(0x33800000u);\n    \
                 let rb = sqrt_f32(-2.0 * ln_f32(u1b));\n    let tb = two_pi * unit_f32(w[3]);\n",
            );
            vec![
                "ra * cos_f32(ta)".into(),
                "ra * sin_f32(ta)".into(),
                "rb * cos_f32(tb)".into(),
                "rb * sin_f32(tb)".into(),
            ]
        }
    };
    for (j, v) in values.iter().enumerate() {
        let _ = writeln!(body, "    if (base + {j}u < n) {{ out[base + {j}u] = {v}; }}");
    }
    Ok(b.finish((WG, 1), &body))
}
