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
use super::{literal, wgsl_type, Builder, KernelSource, WG};

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
        b.storage(&format!("in{k}"), wgsl_type(*d), false);
    }
    b.storage("out", wgsl_type(program.output_dtype()), true);
    b.code(&library(&dtypes));

    let mut body = String::new();
    let _ = write!(
        body,
        "    let n = prm(0u);\n    if (n == 0u || g > (n - 1u) / {WG}u) {{ return; }}\n    \
         let gid = g * {WG}u + lid;\n    if (gid >= n) {{ return; }}\n"
    );
    // Strided inputs: decompose gid over the output dims, innermost first.
    let strided: Vec<usize> = sig.strided().collect();
    if !strided.is_empty() {
        body.push_str("    var rem = gid;\n");
        for (slot, k) in strided.iter().enumerate() {
            if offsets {
                let _ = writeln!(body, "    var o{k} = prm({}u);", param_count(sig) + slot);
            } else {
                let _ = writeln!(body, "    var o{k} = 0u;");
            }
        }
        for d in (0..ndim).rev() {
            if d == 0 {
                body.push_str("    {\n        let c = rem;\n");
            } else {
                let _ = write!(
                    body,
                    "    {{\n        let dim = prm({}u);\n        let c = rem % dim;\n        rem = rem / dim;\n",
                    1 + d
                );
            }
            for (slot, k) in strided.iter().enumerate() {
                let _ = writeln!(body, "        o{k} = o{k} + c * prm({}u);", 1 + ndim + slot * ndim + d);
            }
            body.push_str("    }\n");
        }
    }
    for (i, inst) in program.insts.iter().enumerate() {
        let t = wgsl_type(inst.dtype);
        let e = inst_expr(program, &sig.access, i, device)?;
        let _ = writeln!(body, "    let r{i}: {t} = {e};");
    }
    let _ = writeln!(body, "    out[gid] = r{};", program.output());
    Ok(b.finish((WG, 1), &body))
}

fn unsupported(what: &str, dtype: DType, device: DeviceId) -> Error {
    Error::Unsupported {
        op: format!("{what} (WGSL has no {dtype} {what}; compute in f32 or on another backend)"),
        dtype,
        device: Some(device),
    }
}

/// The WGSL expression of instruction `i`.
fn inst_expr(p: &Program, access: &[Access], i: usize, device: DeviceId) -> Result<String> {
    let inst = p.insts[i];
    let d = inst.dtype;
    let t = wgsl_type(d);
    let r = |j: usize| format!("r{j}");
    Ok(match inst.op {
        InstOp::Arg(k) => match access.get(k) {
            Some(Access::Same) => format!("in{k}[gid]"),
            Some(Access::Scalar) => format!("in{k}[0]"),
            _ => format!("in{k}[o{k}]"),
        },
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
                UnaryOp::Round => format!("round({a})"),
                UnaryOp::Exp | UnaryOp::Ln | UnaryOp::Tanh | UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tan => {
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
