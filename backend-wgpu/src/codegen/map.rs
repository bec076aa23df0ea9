//! The fused elementwise kernel: one thread per output element, each input read as core's
//! planning classifies it (`plan::Access`): directly (same index), as a scalar, or through
//! broadcast strides over the coalesced output shape.

use polycompute_core::DeviceId;
use std::collections::BTreeSet;
use std::fmt::Write;

use polycompute_core::expr::{InstOp, Program};
use polycompute_core::plan::{Access, MapSignature};
use polycompute_core::{BinaryOp, DType, Error, Result, UnaryOp};

use super::semantics::{cast_name, library};
use super::{half, literal, storage_type, wgsl_type, Builder, KernelSource, WG};

/// The uniform words of a map kernel: `n`, then `plan::MapLayout::words` (the `ndim` output
/// dims, then `ndim` strides for each strided input in order).
pub(crate) fn param_count(sig: &MapSignature) -> usize {
    1 + sig.ndim + sig.ndim * sig.strided().count()
}

/// The uniform words of a map over views ([`kernel_over_views`]): [`param_count`], then one
/// offset (the buffer index of element `[0, ...]`) per strided input.
pub(crate) fn param_count_views(sig: &MapSignature) -> usize {
    param_count(sig) + sig.strided().count()
}

/// The kernel of `sig`: its program over inputs read as its access classes, on an output of
/// `sig.ndim` coalesced dimensions (used only by strided inputs). An f64 op WGSL cannot
/// express is [`Error::Unsupported`].
pub(crate) fn kernel(sig: &MapSignature, device: DeviceId) -> Result<KernelSource> {
    build(sig, device, false)
}

/// [`kernel`] for inputs that are views (core's `Op::MapViews`): each strided input starts
/// at its offset, and its strides (two's complement words) may be negative; the u32
/// arithmetic wraps into the buffer, where every element lies.
pub(crate) fn kernel_over_views(sig: &MapSignature, device: DeviceId) -> Result<KernelSource> {
    build(sig, device, true)
}

fn build(sig: &MapSignature, device: DeviceId, offsets: bool) -> Result<KernelSource> {
    let (program, ndim) = (&*sig.program, sig.ndim);
    let mut dtypes: BTreeSet<DType> = program.insts.iter().map(|i| i.dtype).collect();
    dtypes.extend(program.inputs.iter().copied());
    let mut b = Builder::new(if offsets { param_count_views(sig) } else { param_count(sig) });
    for (k, d) in program.inputs.iter().enumerate() {
        b.storage(&format!("in{k}"), storage_type(*d), false);
    }
    let out_dtype = program.output_dtype();
    b.storage("out", storage_type(out_dtype), true);
    b.code(&library(&dtypes));
    for (k, d) in program.inputs.iter().enumerate() {
        if d.is_half() {
            b.code(&half::load_fn(&format!("ld{k}"), &format!("in{k}"), *d));
        }
    }

    // The value of output element `gid`, ending in `r{output}`.
    let mut value = String::new();
    // Strided inputs: decompose gid over the output dims, innermost first.
    let strided: Vec<usize> = sig.strided().collect();
    if !strided.is_empty() {
        value.push_str("    var rem = gid;\n");
        for (slot, k) in strided.iter().enumerate() {
            if offsets {
                let _ = writeln!(value, "    var o{k} = prm({}u);", param_count(sig) + slot);
            } else {
                let _ = writeln!(value, "    var o{k} = 0u;");
            }
        }
        for d in (0..ndim).rev() {
            if d == 0 {
                value.push_str("    {\n        let c = rem;\n");
            } else {
                let _ = write!(
                    value,
                    "    {{\n        let dim = prm({}u);\n        let c = rem % dim;\n        rem = rem / dim;\n",
                    1 + d
                );
            }
            for (slot, k) in strided.iter().enumerate() {
                let _ = writeln!(value, "        o{k} = o{k} + c * prm({}u);", 1 + ndim + slot * ndim + d);
            }
            value.push_str("    }\n");
        }
    }
    for (i, inst) in program.insts.iter().enumerate() {
        let t = wgsl_type(inst.dtype);
        let e = inst_expr(program, &sig.access, i, device)?;
        let _ = writeln!(value, "    let r{i}: {t} = {e};");
    }

    let mut body = String::new();
    if out_dtype.is_half() {
        // Two elements per thread, so each thread writes a whole word of the output. An
        // input returned as it is (a copy, a transpose) keeps its bits, NaN payloads too.
        let ret = match program.insts[program.output()].op {
            InstOp::Arg(k) if program.inputs.get(k) == Some(&out_dtype) => {
                let at = arg_index(&sig.access, k);
                format!("half_bits(in{k}[({at}) >> 1u], {at})")
            }
            _ => format!("{}(r{})", half::to_bits_fn(out_dtype), program.output()),
        };
        let _ = write!(b.source_mut(), "fn element(gid: u32) -> u32 {{\n{value}    return {ret};\n}}\n");
        let _ = write!(
            body,
            "    let n = prm(0u);\n    let words = n / 2u + (n & 1u);\n    \
             if (words == 0u || g > (words - 1u) / {WG}u) {{ return; }}\n    \
             let w = g * {WG}u + lid;\n    if (w >= words) {{ return; }}\n    \
             let lo = element(2u * w);\n    var hi = 0u;\n    \
             if (2u * w + 1u < n) {{ hi = element(2u * w + 1u); }}\n    \
             out[w] = lo | (hi << 16u);\n"
        );
    } else {
        let _ = write!(
            body,
            "    let n = prm(0u);\n    if (n == 0u || g > (n - 1u) / {WG}u) {{ return; }}\n    \
             let gid = g * {WG}u + lid;\n    if (gid >= n) {{ return; }}\n"
        );
        body.push_str(&value);
        let _ = writeln!(body, "    out[gid] = r{};", program.output());
    }
    Ok(b.finish((WG, 1), &body))
}

/// Threads a map kernel runs for `n` output elements of `out` (two halves per thread).
pub(crate) fn threads(n: usize, out: DType) -> usize {
    if out.is_half() {
        half::words_of(n)
    } else {
        n
    }
}

fn unsupported(what: &str, dtype: DType, device: DeviceId) -> Error {
    Error::Unsupported {
        op: format!("{what} (WGSL has no {dtype} {what}; compute in f32 or on another backend)"),
        dtype,
        device: Some(device),
    }
}

/// The index input `k` is read at: the thread's element, 0 (a scalar) or its strided offset.
fn arg_index(access: &[Access], k: usize) -> String {
    match access.get(k) {
        Some(Access::Same) => "gid".to_string(),
        Some(Access::Scalar) => "0u".to_string(),
        _ => format!("o{k}"),
    }
}

/// The WGSL expression of instruction `i`: a half-typed result is computed in f32 and
/// rounded once to the half (inputs and literals are exact already).
fn inst_expr(p: &Program, access: &[Access], i: usize, device: DeviceId) -> Result<String> {
    let inst = p.insts[i];
    let e = f32_or_own_expr(p, access, i, device)?;
    Ok(match inst.op {
        InstOp::Arg(_) | InstOp::Lit(_) => e,
        _ if inst.dtype.is_half() => format!("{}({e})", half::round_fn(inst.dtype)),
        _ => e,
    })
}

/// The WGSL expression of instruction `i` in its dtype's WGSL type (f32 for halves).
fn f32_or_own_expr(p: &Program, access: &[Access], i: usize, device: DeviceId) -> Result<String> {
    let inst = p.insts[i];
    let d = inst.dtype;
    let t = wgsl_type(d);
    let r = |j: usize| format!("r{j}");
    Ok(match inst.op {
        InstOp::Arg(k) => {
            let at = arg_index(access, k);
            if p.inputs.get(k).is_some_and(|d| d.is_half()) {
                format!("ld{k}({at})")
            } else {
                format!("in{k}[{at}]")
            }
        }
        InstOp::Lit(s) => literal(s),
        InstOp::Index => "gid".to_string(),
        InstOp::Unary(op, a) => {
            let a = r(a);
            match op {
                UnaryOp::Neg if d.is_int() => format!("({t}(0) - {a})"),
                UnaryOp::Neg => format!("(-{a})"),
                UnaryOp::Abs if d == DType::U32 => a,
                UnaryOp::Abs => format!("abs({a})"),
                UnaryOp::Sqrt => format!("sqrt_{t}({a})"),
                UnaryOp::Recip => format!("({t}(1) / {a})"),
                UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round if d.is_int() => a,
                UnaryOp::Floor => format!("floor({a})"),
                UnaryOp::Ceil => format!("ceil({a})"),
                UnaryOp::Round => format!("round_{t}({a})"),
                UnaryOp::Exp
                | UnaryOp::Expm1
                | UnaryOp::Ln
                | UnaryOp::Log1p
                | UnaryOp::Log2
                | UnaryOp::Log10
                | UnaryOp::Tanh
                | UnaryOp::Sin
                | UnaryOp::Cos
                | UnaryOp::Tan => {
                    format!("{}_{t}({a})", op.name())
                }
            }
        }
        InstOp::Binary(op, a, b) => {
            let (a, b) = (r(a), r(b));
            match op {
                BinaryOp::Add => format!("({a} + {b})"),
                BinaryOp::Sub => format!("({a} - {b})"),
                BinaryOp::Mul => format!("({a} * {b})"),
                BinaryOp::Div if d.is_float() => format!("({a} / {b})"),
                BinaryOp::Div => format!("div_{t}({a}, {b})"),
                BinaryOp::Rem => format!("rem_{t}({a}, {b})"),
                BinaryOp::Pow if d == DType::F64 => return Err(unsupported("pow", d, device)),
                BinaryOp::Pow => format!("pow_{t}({a}, {b})"),
                BinaryOp::Min if d.is_int() => format!("min({a}, {b})"),
                BinaryOp::Max if d.is_int() => format!("max({a}, {b})"),
                BinaryOp::Min
                | BinaryOp::Max
                | BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge => format!("{}_{t}({a}, {b})", op.name()),
                BinaryOp::And => format!("({a} & {b})"),
                BinaryOp::Or => format!("({a} | {b})"),
                BinaryOp::Xor => format!("({a} ^ {b})"),
            }
        }
        InstOp::Select(c, a, b) => {
            let ct = wgsl_type(p.insts[c].dtype);
            format!("select({}, {}, truthy_{ct}({}))", r(b), r(a), r(c))
        }
        InstOp::Cast(a) => format!("{}({})", cast_name(p.insts[a].dtype, d), r(a)),
    })
}
