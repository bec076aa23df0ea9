//! Map: a fused elementwise [`Program`] over inputs broadcast to the output shape. Core's
//! planning ([`polycompute_core::plan`]) coalesces the dimensions and classifies each input,
//! so a kernel depends only on the [`MapSignature`] (program, each input's [`Access`], number
//! of coalesced dimensions); the sizes and strides travel as a by-value parameter.

use std::fmt::Write;
use std::sync::Arc;

use polycompute_core::expr::InstOp;
use polycompute_core::plan::{Access, MapLayout, MapSignature};
#[cfg(test)]
use polycompute_core::DType;
use polycompute_core::{BinaryOp, Layout, Program, Shape, UnaryOp};

use super::{cached, ctype, literal, Kernel, KernelKey};

/// A planned map launch.
#[derive(Clone, Debug)]
pub struct MapPlan {
    /// The kernel (memoized on its [`MapSignature`]).
    pub kernel: Arc<Kernel>,
    /// The by-value geometry parameter ([`MapLayout::words`]): `dims[ndim]`, then `ndim`
    /// strides per strided input (empty when no input is strided, and then the kernel has
    /// no such parameter).
    pub geometry: Vec<u32>,
    /// How each input is read (what the plan's tests check).
    #[cfg(test)]
    pub access: Vec<Access>,
}

/// Plans the map of `program` over inputs of `input_shapes` to `out`: core's
/// [`MapLayout`] gives each input's access class and the coalesced geometry, and the
/// kernel is generated once per [`MapSignature`].
pub fn plan(program: &Arc<Program>, input_shapes: &[Shape], out: &Shape) -> MapPlan {
    let layout = MapLayout::new(input_shapes, out);
    let signature = layout.signature(program);
    let kernel = cached(KernelKey::Map(signature.clone()), || source(&signature, false));
    MapPlan {
        kernel,
        geometry: layout.words(),
        #[cfg(test)]
        access: layout.access,
    }
}

/// Plans the map of `program` over inputs read through `layouts` (views: signed strides,
/// offsets) and broadcast to `out`, as [`polycompute_core::Op::MapViews`] declares them. An
/// input whose layout is its whole buffer in row-major order of the output's shape is read in
/// place; the others are strided, walked over dimensions coalesced with their signed strides.
/// The geometry is `dims`, then each strided input's strides (as two's-complement words),
/// then each one's offset: the kernel sums them in wrapping `u32` arithmetic, and the final
/// index is in the buffer, so the wrapped sum is exact.
pub fn plan_views(program: &Arc<Program>, layouts: &[Layout], out: &Shape) -> MapPlan {
    let access: Vec<Access> = layouts
        .iter()
        .map(|l| {
            if l.offset == 0 && l.shape == *out && l.is_contiguous() {
                Access::Same
            } else if l.offset == 0 && l.numel() == 1 {
                Access::Scalar
            } else {
                Access::Strided
            }
        })
        .collect();
    let strided: Vec<&Layout> =
        layouts.iter().zip(&access).filter(|(_, a)| **a == Access::Strided).map(|(l, _)| l).collect();
    let (dims, strides) =
        coalesce_signed(out.dims(), &strided.iter().map(|l| output_strides(l, out)).collect::<Vec<_>>());
    let signature = MapSignature {
        program: program.clone(),
        access: access.clone(),
        ndim: if strided.is_empty() { 0 } else { dims.len() },
    };
    let kernel = cached(KernelKey::MapViews(signature.clone()), || source(&signature, true));
    let mut geometry = Vec::new();
    if !strided.is_empty() {
        geometry.extend(dims.iter().map(|&d| d as u32));
        for s in &strides {
            // Two's complement: the kernel's wrapping sum treats the word as a signed step.
            geometry.extend(s.iter().map(|&x| x as u32));
        }
        geometry.extend(strided.iter().map(|l| l.offset as u32));
    }
    MapPlan {
        kernel,
        geometry,
        #[cfg(test)]
        access,
    }
}

/// The stride of `l` along each axis of `out` (numpy broadcasting: missing and size-1 axes
/// step by 0).
fn output_strides(l: &Layout, out: &Shape) -> Vec<i64> {
    let (od, ld) = (out.dims(), l.shape.dims());
    let lead = od.len() - ld.len().min(od.len());
    (0..od.len()).map(|a| if a < lead || ld[a - lead] == 1 { 0 } else { l.strides[a - lead] as i64 }).collect()
}

/// Merges neighbouring axes that every input walks as one, drops size-1 axes, and keeps at
/// least one axis (`[1]` for one element, `[0]` for none), as core's `coalesce` does for
/// unsigned strides.
fn coalesce_signed(dims: &[usize], strides: &[Vec<i64>]) -> (Vec<usize>, Vec<Vec<i64>>) {
    if dims.contains(&0) {
        return (vec![0], vec![vec![0]; strides.len()]);
    }
    let (mut od, mut os): (Vec<usize>, Vec<Vec<i64>>) = (Vec::new(), vec![Vec::new(); strides.len()]);
    for (a, &size) in dims.iter().enumerate() {
        if size == 1 {
            continue;
        }
        let merge = !od.is_empty() && strides.iter().zip(&os).all(|(s, o)| o.last() == Some(&(s[a] * size as i64)));
        if merge {
            if let Some(last) = od.last_mut() {
                *last *= size;
            }
            for (s, o) in strides.iter().zip(os.iter_mut()) {
                if let Some(outer) = o.last_mut() {
                    *outer = s[a];
                }
            }
        } else {
            od.push(size);
            for (s, o) in strides.iter().zip(os.iter_mut()) {
                o.push(s[a]);
            }
        }
    }
    if od.is_empty() {
        return (vec![1], vec![vec![0]; strides.len()]);
    }
    (od, os)
}

/// The kernel of `cast(arg0)` from `from` to `to` (Op::Cast shares the map's semantics): the
/// map of core's [`Program::cast`] over one input read in place.
#[cfg(test)]
pub fn cast_kernel(from: DType, to: DType) -> Kernel {
    source(&MapSignature { program: Arc::new(Program::cast(from, to)), access: vec![Access::Same], ndim: 0 }, false)
}

/// Elements per thread per loop trip: their loads are issued together, so each thread keeps
/// several memory requests in flight (what a bandwidth-bound map needs to approach copy speed).
const UNROLL: usize = 4;

/// The map kernel of `signature`; with `views`, each strided input starts at its offset
/// (the geometry's last words) rather than 0.
fn source(signature: &MapSignature, views: bool) -> Kernel {
    let MapSignature { program, access, ndim } = signature;
    let ndim = *ndim;
    let strided: Vec<usize> = signature.strided().collect();
    let mut s = String::new();
    if !strided.is_empty() {
        let base = if views { format!(" u32 base[{}];", strided.len()) } else { String::new() };
        let _ = writeln!(s, "struct Geo {{ u32 dim[{ndim}]; u32 st[{}][{ndim}];{base} }};", strided.len());
        // Offsets of the strided inputs for output element idx.
        let _ = writeln!(s, "PC_FN void pc_offsets(u32 idx, const Geo& g, u32 off[{}]) {{", strided.len());
        for j in 0..strided.len() {
            if views {
                let _ = writeln!(s, "  off[{j}] = g.base[{j}];");
            } else {
                let _ = writeln!(s, "  off[{j}] = 0u;");
            }
        }
        s.push_str("  u32 rest = idx;\n");
        for d in (0..ndim).rev() {
            let _ = writeln!(s, "  {{ const u32 c = rest % g.dim[{d}]; rest /= g.dim[{d}];");
            for j in 0..strided.len() {
                let _ = writeln!(s, "    off[{j}] += c * g.st[{j}][{d}];");
            }
            s.push_str("  }\n");
        }
        s.push_str("}\n");
    }
    // The program, as a function of the loaded arguments and the index.
    let out_t = ctype(program.output_dtype());
    let _ = write!(s, "PC_FN {out_t} pc_eval(");
    for (k, t) in program.inputs.iter().enumerate() {
        let _ = write!(s, "{} a{k}, ", ctype(*t));
    }
    s.push_str("u32 idx) {\n  (void)idx;\n");
    for (r, inst) in program.insts.iter().enumerate() {
        let t = ctype(inst.dtype);
        let value = match inst.op {
            InstOp::Arg(k) => format!("a{k}"),
            InstOp::Lit(v) => literal(v),
            InstOp::Index => "idx".to_string(),
            InstOp::Unary(op, a) => format!("{}(r{a})", unary_fn(op)),
            InstOp::Binary(op, a, b) => format!("{}(r{a}, r{b})", binary_fn(op)),
            InstOp::Select(c, a, b) => format!("pc_truthy(r{c}) ? r{a} : r{b}"),
            InstOp::Cast(a) => format!("pc_to_{}(r{a})", inst.dtype.name()),
        };
        let _ = writeln!(s, "  const {t} r{r} = {value};");
    }
    let _ = writeln!(s, "  return r{};\n}}", program.output());
    // Loading input k for element idx (strided inputs use the offsets in off[]).
    let load = |k: usize, idx: &str, off: &str| match access.get(k).copied().unwrap_or(Access::Same) {
        Access::Same => format!("in{k}[{idx}]"),
        Access::Scalar => format!("in{k}[0]"),
        Access::Strided => {
            let j = strided.iter().position(|&x| x == k).unwrap_or(0);
            format!("in{k}[{off}[{j}]]")
        }
    };
    let _ = write!(s, "extern \"C\" __global__ void pc_map({out_t}* __restrict__ out");
    for (k, t) in program.inputs.iter().enumerate() {
        let _ = write!(s, ", const {}* __restrict__ in{k}", ctype(*t));
    }
    s.push_str(", u32 n");
    if !strided.is_empty() {
        s.push_str(", Geo g");
    }
    s.push_str(") {\n");
    s.push_str("  const u64 stride = (u64)blockDim.x * gridDim.x;\n");
    s.push_str("  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n");
    // Unrolled trips: all loads first, then the evaluations and stores.
    let _ = writeln!(s, "  for (; i + {} * stride < n; i += {UNROLL} * stride) {{", UNROLL - 1);
    let _ = writeln!(s, "    u32 idx[{UNROLL}];");
    let _ = writeln!(s, "    #pragma unroll\n    for (int u = 0; u < {UNROLL}; ++u) idx[u] = (u32)(i + u * stride);");
    if !strided.is_empty() {
        let _ = writeln!(s, "    u32 off[{UNROLL}][{}];", strided.len());
        let _ =
            writeln!(s, "    #pragma unroll\n    for (int u = 0; u < {UNROLL}; ++u) pc_offsets(idx[u], g, off[u]);");
    }
    for (k, t) in program.inputs.iter().enumerate() {
        let _ = writeln!(s, "    {} v{k}[{UNROLL}];", ctype(*t));
        let _ = writeln!(
            s,
            "    #pragma unroll\n    for (int u = 0; u < {UNROLL}; ++u) v{k}[u] = {};",
            load(k, "idx[u]", "off[u]")
        );
    }
    let args: String = (0..program.inputs.len()).map(|k| format!("v{k}[u], ")).collect();
    let _ =
        writeln!(s, "    #pragma unroll\n    for (int u = 0; u < {UNROLL}; ++u) out[idx[u]] = pc_eval({args}idx[u]);");
    s.push_str("  }\n");
    // The remainder, one element per trip.
    s.push_str("  for (; i < n; i += stride) {\n    const u32 idx = (u32)i;\n");
    if !strided.is_empty() {
        let _ = writeln!(s, "    u32 off[{}];\n    pc_offsets(idx, g, off);", strided.len());
    }
    let args: String = (0..program.inputs.len()).map(|k| format!("{}, ", load(k, "idx", "off"))).collect();
    let _ = writeln!(s, "    out[idx] = pc_eval({args}idx);");
    s.push_str("  }\n}\n");
    let key = if views { KernelKey::MapViews(signature.clone()) } else { KernelKey::Map(signature.clone()) };
    Kernel::new(key, "pc_map", &s)
}

/// The prelude function of a unary op (`codegen/cuda/semantics.cuh`). Matched, not built
/// from the op's name: a new op does not compile until its CUDA function is named here.
pub fn unary_fn(op: UnaryOp) -> String {
    let name = match op {
        UnaryOp::Neg => "pc_neg",
        UnaryOp::Abs => "pc_abs",
        UnaryOp::Sqrt => "pc_sqrt",
        UnaryOp::Recip => "pc_recip",
        UnaryOp::Exp => "pc_exp",
        UnaryOp::Expm1 => "pc_expm1",
        UnaryOp::Ln => "pc_ln",
        UnaryOp::Log1p => "pc_log1p",
        UnaryOp::Log2 => "pc_log2",
        UnaryOp::Log10 => "pc_log10",
        UnaryOp::Sin => "pc_sin",
        UnaryOp::Cos => "pc_cos",
        UnaryOp::Tan => "pc_tan",
        UnaryOp::Tanh => "pc_tanh",
        UnaryOp::Floor => "pc_floor",
        UnaryOp::Ceil => "pc_ceil",
        UnaryOp::Round => "pc_round",
    };
    name.to_string()
}

/// The prelude function of a binary op (`codegen/cuda/semantics.cuh`), matched as
/// [`unary_fn`] is.
pub fn binary_fn(op: BinaryOp) -> String {
    let name = match op {
        BinaryOp::Add => "pc_add",
        BinaryOp::Sub => "pc_sub",
        BinaryOp::Mul => "pc_mul",
        BinaryOp::Div => "pc_div",
        BinaryOp::Rem => "pc_rem",
        BinaryOp::Pow => "pc_pow",
        BinaryOp::Min => "pc_min",
        BinaryOp::Max => "pc_max",
        BinaryOp::Eq => "pc_eq",
        BinaryOp::Ne => "pc_ne",
        BinaryOp::Lt => "pc_lt",
        BinaryOp::Le => "pc_le",
        BinaryOp::Gt => "pc_gt",
        BinaryOp::Ge => "pc_ge",
        BinaryOp::And => "pc_and",
        BinaryOp::Or => "pc_or",
        BinaryOp::Xor => "pc_xor",
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute_core::Expr;

    #[test]
    fn plan_reads_each_input_the_cheapest_way() {
        let e = Expr::arg(0) + Expr::arg(1) * Expr::arg(2);
        let p = Arc::new(Program::compile(&e, &[DType::F32; 3]).unwrap());
        let s = |d: &[usize]| Shape::new(d).unwrap();
        let plan = plan(&p, &[s(&[3, 4]), s(&[1]), s(&[4])], &s(&[3, 4]));
        assert_eq!(plan.access, vec![Access::Same, Access::Scalar, Access::Strided]);
        assert_eq!(plan.geometry, vec![3, 4, 0, 1]);
        assert!(plan.kernel.source.contains("in1[0]") && plan.kernel.source.contains("in2[off[u][0]]"));
    }

    #[test]
    fn views_walk_signed_strides_from_their_offsets() {
        let p = Arc::new(Program::compile(&(Expr::arg(0) + Expr::arg(1)), &[DType::F32; 2]).unwrap());
        let s = |d: &[usize]| Shape::new(d).unwrap();
        // A fully flipped 3x4 buffer coalesces to one axis of stride -1 from offset 11; the
        // plain input is read in place.
        let flipped = Layout { shape: s(&[3, 4]), strides: vec![-4, -1], offset: 11 };
        let plan = plan_views(&p, &[flipped, Layout::contiguous(s(&[3, 4]))], &s(&[3, 4]));
        assert_eq!(plan.access, vec![Access::Strided, Access::Same]);
        assert_eq!(plan.geometry, vec![12, (-1i32) as u32, 11]);
        assert!(plan.kernel.source.contains("off[0] = g.base[0];"), "{}", plan.kernel.source);
        // A broadcast row with a step-2 slice: [3, 4] from a [4] view of stride 2 at offset 1.
        let row = Layout { shape: s(&[4]), strides: vec![2], offset: 1 };
        let plan = plan_views(&p, &[row, Layout::contiguous(s(&[3, 4]))], &s(&[3, 4]));
        assert_eq!(plan.geometry, vec![3, 4, 0, 2, 1]);
        // A plain map and a map over views never share a kernel.
        let plain = super::plan(&p, &[s(&[4]), s(&[3, 4])], &s(&[3, 4]));
        assert!(!Arc::ptr_eq(&plain.kernel, &plan.kernel));
    }

    #[test]
    fn a_cast_is_the_map_of_core_cast_program() {
        let k = cast_kernel(DType::F32, DType::I32);
        assert!(k.source.contains("pc_to_i32(r0)"), "{}", k.source);
        let s = Shape::from(&[5][..]);
        let planned = plan(&Arc::new(Program::cast(DType::F32, DType::I32)), std::slice::from_ref(&s), &s);
        assert_eq!(*planned.kernel, k);
    }
}
