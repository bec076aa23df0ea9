//! WGSL generation. Each op has a generator that turns its signature (dtypes, fused
//! program, rank, variant) into a [`KernelSource`]; sizes are never baked in, they travel
//! in the kernel's uniform buffer (`prm(i)`), so one compiled kernel serves every shape.
//!
//! Pure text: this tree imports only `polycompute_core` and std, never wgpu or the device.
//! The hand-written helpers are WGSL files under `wgsl/` (see [`shaders`]); compiling and
//! caching kernels is `pipeline_cache`'s job.

pub(crate) mod fill;
pub(crate) mod half;
pub(crate) mod layout;
pub(crate) mod map;
pub(crate) mod matmul;
pub(crate) mod matmul_skinny;
pub(crate) mod movement;
pub(crate) mod radix;
pub(crate) mod reduce;
pub(crate) mod reduce_rows;
pub(crate) mod scan;
pub(crate) mod semantics;
pub(crate) mod shaders;
pub(crate) mod sort;
pub(crate) mod transcendental;
#[cfg(test)]
mod validate;

use std::fmt::Write;

use polycompute_core::{DType, Scalar};

/// How a kernel binds one buffer; binding `i` of group 0 is entry `i` of [`KernelSource::bindings`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Binding {
    /// `var<storage, read>`.
    Read,
    /// `var<storage, read_write>`.
    Write,
    /// `var<uniform>`: the kernel's sizes.
    Uniform,
}

/// A generated kernel: WGSL with one entry point `main`, and its bindings.
#[derive(Clone, Debug)]
pub(crate) struct KernelSource {
    /// The WGSL source.
    pub wgsl: String,
    /// The bindings, in binding order.
    pub bindings: Vec<Binding>,
}

/// Threads per workgroup of the one-dimensional kernels.
pub(crate) const WG: u32 = 256;

/// The WGSL type a kernel computes a dtype's values in: halves are computed on as f32 (see
/// [`half`]).
pub(crate) fn wgsl_type(d: DType) -> &'static str {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => "f32",
        DType::F64 => "f64",
        DType::I32 => "i32",
        DType::U32 => "u32",
        // Never reached (`device::not_yet`): no kernel is generated for them yet.
        DType::I64 | DType::U8 | DType::Bool => "u32",
    }
}

/// The WGSL element type of a dtype's storage array: halves are packed two to a `u32`.
pub(crate) fn storage_type(d: DType) -> &'static str {
    if d.is_half() {
        "u32"
    } else {
        wgsl_type(d)
    }
}

/// A WGSL expression with exactly the scalar's value (bits for f32 and i32, a round-trip
/// decimal for f64). Every literal is made a run-time value through `pz` (always 0): naga
/// folds constant expressions and rejects any that overflows or is not finite, while the
/// shared semantics define those results (`1.0 / 0.0` is inf, `i32::MAX + 1` wraps).
pub(crate) fn literal(s: Scalar) -> String {
    match s {
        Scalar::F32(v) => format!("bitcast<f32>(0x{:08x}u | pz)", v.to_bits()),
        Scalar::F64(v) if v.is_nan() => "f64(nan_f32())".to_string(),
        Scalar::F64(v) if v.is_infinite() => format!("f64(inf_f32({}))", v < 0.0),
        // A zero `0e0lf * x` is folded by drivers (lavapipe) to +0.0 whatever `x`, losing
        // the sign of -0.0 and making `x / 0.0` and `x * 0.0` of specials wrong; the f32
        // bits of a zero are exact and stay run-time values.
        Scalar::F64(v) if v == 0.0 => format!("f64(bitcast<f32>(0x{:08x}u | pz))", (v as f32).to_bits()),
        Scalar::F64(v) if v.is_sign_negative() => format!("((-{:e}lf) * f64(1u - pz))", -v),
        Scalar::F64(v) => format!("({v:e}lf * f64(1u - pz))"),
        Scalar::I32(v) => format!("bitcast<i32>(0x{:08x}u | pz)", v as u32),
        Scalar::U32(v) => format!("({v}u | pz)"),
        // A half is computed on as the f32 of its value, which is exact.
        Scalar::F16(v) => literal(Scalar::F32(v.to_f32())),
        Scalar::BF16(v) => literal(Scalar::F32(v.to_f32())),
        // Never reached (`device::not_yet`).
        Scalar::I64(v) => literal(Scalar::U32(v as u32)),
        Scalar::U8(v) => literal(Scalar::U32(u32::from(v))),
        Scalar::Bool(v) => literal(Scalar::U32(u32::from(v))),
    }
}

/// Assembles a kernel: the uniform block of `params` words (binding 0), the storage
/// bindings, helper code and the entry point.
pub(crate) struct Builder {
    src: String,
    bindings: Vec<Binding>,
}

impl Builder {
    /// A kernel whose uniform block holds `params` u32 words, read with `prm(i)`, after four
    /// words of zeros (see `pz`).
    pub(crate) fn new(params: usize) -> Builder {
        let vec4s = params.div_ceil(4).max(1);
        let mut src = String::new();
        let _ = write!(
            src,
            "struct Params {{ zero: vec4<u32>, w: array<vec4<u32>, {vec4s}>, }}\n\
             @group(0) @binding(0) var<uniform> params: Params;\n\
             fn prm(i: u32) -> u32 {{ return params.w[i >> 2u][i & 3u]; }}\n\
             // 0 at run time, read from memory by `main`: non-finite and overflowing values are\n\
             // built from it, so neither naga's constant folder (which rejects them) nor the\n\
             // driver's (which may assume no inf or NaN) sees a constant it could fold.\n\
             var<private> pz: u32 = 0u;\n"
        );
        Builder { src, bindings: vec![Binding::Uniform] }
    }

    /// Declares the next storage binding: `var<storage, read> name: array<ty>` (or read_write).
    pub(crate) fn storage(&mut self, name: &str, elem: &str, writable: bool) -> &mut Self {
        let access = if writable { "read_write" } else { "read" };
        let _ = writeln!(
            self.src,
            "@group(0) @binding({}) var<storage, {access}> {name}: array<{elem}>;",
            self.bindings.len()
        );
        self.bindings.push(if writable { Binding::Write } else { Binding::Read });
        self
    }

    /// The source so far, to append to.
    pub(crate) fn source_mut(&mut self) -> &mut String {
        &mut self.src
    }

    /// Appends code.
    pub(crate) fn code(&mut self, code: &str) -> &mut Self {
        self.src.push_str(code);
        self
    }

    /// Appends the entry point `main` with the given workgroup size and body. The body sees
    /// `g` (the linear workgroup index over a 2-D grid), `lid` (the local index) and `lx`,
    /// `ly` (the local coordinates).
    pub(crate) fn finish(self, wg: (u32, u32), body: &str) -> KernelSource {
        self.finish_with(wg, "", body)
    }

    /// [`Builder::finish`] with more entry-point arguments (`extra`: builtins, comma
    /// separated, such as the subgroup ones).
    pub(crate) fn finish_with(mut self, wg: (u32, u32), extra: &str, body: &str) -> KernelSource {
        let extra = if extra.is_empty() { String::new() } else { format!(",\n        {extra}") };
        let _ = write!(
            self.src,
            "\n@compute @workgroup_size({}, {})\n\
             fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n        \
             @builtin(local_invocation_id) lid3: vec3<u32>, @builtin(local_invocation_index) lid: u32{extra}) {{\n    \
             pz = params.zero.x;\n    let g = wid.y * nwg.x + wid.x;\n    let lx = lid3.x;\n    let ly = lid3.y;\n{body}}}\n",
            wg.0, wg.1
        );
        KernelSource { wgsl: self.src, bindings: self.bindings }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_keep_their_bits_and_never_fold_to_non_finite_constants() {
        assert_eq!(literal(Scalar::F32(1.0)), "bitcast<f32>(0x3f800000u | pz)");
        assert_eq!(literal(Scalar::F64(-2.5)), "((-2.5e0lf) * f64(1u - pz))");
        assert_eq!(literal(Scalar::I32(i32::MIN)), "bitcast<i32>(0x80000000u | pz)");
        let tiny = f64::from_bits(1);
        let text = literal(Scalar::F64(tiny));
        let digits = text.trim_start_matches('(').split("lf").next().unwrap();
        assert_eq!(digits.parse::<f64>().unwrap(), tiny);
    }
}
