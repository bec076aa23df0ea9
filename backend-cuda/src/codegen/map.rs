//! Map: a fused elementwise [`Program`] over inputs broadcast to the output shape. Dimensions
//! are coalesced first, so a kernel depends only on the program, how each input is read
//! (same shape, one element, or strided) and the number of coalesced dimensions; the sizes
//! and strides travel as a by-value parameter.

use std::fmt::Write;
use std::sync::Arc;

use polycompute_core::expr::{Inst, InstOp};
use polycompute_core::{BinaryOp, DType, Program, Result, Shape, UnaryOp};

use super::{cached, ctype, literal, Kernel, KernelKey};

/// How a kernel reads one input.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Same element count as the output: element `i` is at `i`.
    Same,
    /// One element, read by every output element.
    Scalar,
    /// Broadcast: offset computed from the coalesced coordinates and this input's strides.
    Strided,
}

/// A planned map launch.
#[derive(Clone, Debug)]
pub struct MapPlan {
    /// The kernel (memoized).
    pub kernel: Arc<Kernel>,
    /// The by-value geometry parameter: `dims[ndim]`, then `ndim` strides per strided input
    /// (empty when no input is strided, and then the kernel has no such parameter).
    pub geometry: Vec<u32>,
    /// How each input is read.
    pub access: Vec<Access>,
}

/// Plans the map of `program` over inputs of `input_shapes` to `out`.
pub fn plan(program: &Program, input_shapes: &[Shape], out: &Shape) -> Result<MapPlan> {
    let n = out.numel();
    let access: Vec<Access> = input_shapes
        .iter()
        .map(|s| match s.numel() {
            m if m == n => Access::Same,
            1 => Access::Scalar,
            _ => Access::Strided,
        })
        .collect();
    let strided: Vec<usize> = (0..access.len()).filter(|&k| access[k] == Access::Strided).collect();
    let (dims, strides) = if strided.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let all: Vec<Vec<usize>> = strided.iter().map(|&k| input_shapes[k].broadcast_strides(out)).collect();
        coalesce(out.dims(), &all)
    };
    let mut geometry: Vec<u32> = dims.iter().map(|&d| d as u32).collect();
    for s in &strides {
        geometry.extend(s.iter().map(|&x| x as u32));
    }
    let ndim = dims.len();
    let key = KernelKey::Map { program: program.clone(), access: access.clone(), ndim };
    let kernel = cached(key, || source(program, &access, ndim));
    Ok(MapPlan { kernel, geometry, access })
}

/// Merges adjacent dimensions that every strided input walks contiguously, and drops
/// dimensions of size 1. Returns the new dims and each input's strides over them.
pub fn coalesce(dims: &[usize], strides: &[Vec<usize>]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut out_dims: Vec<usize> = Vec::new();
    let mut out_strides: Vec<Vec<usize>> = vec![Vec::new(); strides.len()];
    for (d, &size) in dims.iter().enumerate() {
        if size == 1 {
            continue;
        }
        let mergeable = !out_dims.is_empty()
            && strides.iter().zip(&out_strides).all(|(s, o)| o.last().is_some_and(|&prev| prev == s[d] * size));
        if mergeable {
            if let Some(last) = out_dims.last_mut() {
                *last *= size;
            }
            for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
                if let Some(last) = o.last_mut() {
                    *last = s[d];
                }
            }
        } else {
            out_dims.push(size);
            for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
                o.push(s[d]);
            }
        }
    }
    if out_dims.is_empty() {
        out_dims.push(1);
        for o in &mut out_strides {
            o.push(0);
        }
    }
    (out_dims, out_strides)
}

/// The kernel of `cast(arg0)` from `from` to `to` (Op::Cast shares the map's semantics).
pub fn cast_kernel(from: DType, to: DType) -> Kernel {
    source(&cast_program(from, to), &[Access::Same], 0)
}

/// `cast(arg0)` as a program.
pub fn cast_program(from: DType, to: DType) -> Program {
    Program {
        inputs: vec![from],
        insts: vec![Inst { op: InstOp::Arg(0), dtype: from }, Inst { op: InstOp::Cast(0), dtype: to }],
    }
}

/// Elements per thread per loop trip: their loads are issued together, so each thread keeps
/// several memory requests in flight (what a bandwidth-bound map needs to approach copy speed).
const UNROLL: usize = 4;

fn source(program: &Program, access: &[Access], ndim: usize) -> Kernel {
    let strided: Vec<usize> = (0..access.len()).filter(|&k| access[k] == Access::Strided).collect();
    let mut s = String::new();
    if !strided.is_empty() {
        let _ = writeln!(s, "struct Geo {{ u32 dim[{ndim}]; u32 st[{}][{ndim}]; }};", strided.len());
        // Offsets of the strided inputs for output element idx.
        let _ = writeln!(s, "PC_FN void pc_offsets(u32 idx, const Geo& g, u32 off[{}]) {{", strided.len());
        for j in 0..strided.len() {
            let _ = writeln!(s, "  off[{j}] = 0u;");
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
    Kernel::new("pc_map", &s)
}

/// The prelude function of a unary op.
pub fn unary_fn(op: UnaryOp) -> String {
    format!("pc_{}", op.name())
}

/// The prelude function of a binary op.
pub fn binary_fn(op: BinaryOp) -> String {
    format!("pc_{}", op.name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute_core::Expr;

    #[test]
    fn coalescing_merges_contiguous_runs_and_keeps_broadcasts() {
        // [4, 5, 6] output, input [5, 6] broadcast over the first axis.
        let (d, s) = coalesce(&[4, 5, 6], &[vec![0, 6, 1]]);
        assert_eq!(d, vec![4, 30]);
        assert_eq!(s, vec![vec![0, 1]]);
        // [4, 1, 6] input into [4, 5, 6]: nothing merges across the broadcast axis.
        let (d, s) = coalesce(&[4, 5, 6], &[vec![6, 0, 1]]);
        assert_eq!(d, vec![4, 5, 6]);
        assert_eq!(s, vec![vec![6, 0, 1]]);
        let (d, _) = coalesce(&[1, 1], &[vec![0, 0]]);
        assert_eq!(d, vec![1]);
    }

    #[test]
    fn plan_reads_each_input_the_cheapest_way() {
        let e = Expr::arg(0) + Expr::arg(1) * Expr::arg(2);
        let p = Program::compile(&e, &[DType::F32; 3]).unwrap();
        let s = |d: &[usize]| Shape::new(d).unwrap();
        let plan = plan(&p, &[s(&[3, 4]), s(&[1]), s(&[4])], &s(&[3, 4])).unwrap();
        assert_eq!(plan.access, vec![Access::Same, Access::Scalar, Access::Strided]);
        assert_eq!(plan.geometry, vec![3, 4, 0, 1]);
        assert!(plan.kernel.source.contains("in1[0]") && plan.kernel.source.contains("in2[off[u][0]]"));
    }
}
