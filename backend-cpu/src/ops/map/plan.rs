//! Preparing a [`Program`] for block-wise evaluation: each instruction becomes a typed step
//! (a monomorphised kernel behind one indirect call per chunk) or a location that needs no
//! work (a contiguous input, a splatted value, a literal). Instructions made of literals
//! alone are folded here, once.

use polycompute_core::expr::{Inst, InstOp};
use polycompute_core::plan::Access;
use polycompute_core::{BinaryOp, DType, Error, HostSlice, HostVec, Layout, Program, Result, Scalar, Shape, UnaryOp};

use super::fuse;
use super::gather::Gather;
use super::half;
use super::kernels::{self, op, BinOp, UnOp};
use super::lane::{scratch_dest, DestMut, Lane};
use super::step::{dest, Ctx, Loc, Step};
use crate::num::{with_dtype, CastTo, Float, Int};

/// Elements per chunk: an instruction's scratch for a chunk stays in L1 (f32) or L2 (f64),
/// and the dispatch of each step is amortised over thousands of elements. 4096 measured
/// better than 1024 and 2048 for `y = a*x + y` on 2^24 f32.
pub(crate) const CHUNK: usize = 4096;

/// Elements per chunk of a plan that gathers a view (a divisor of [`CHUNK`]). A strided
/// view reads more memory per output element (a step-2 slice: every cache line for half of
/// its elements), so a 4096-element chunk reads 32 KiB of f32 input and pushes its own
/// scratch out of L1 before the next instruction reads it; 512 keeps the input of a chunk
/// and its scratch in L1. Measured on `map_step2_f32` (2^24 f32, `x[::2] * 1.5 + 1`), step-2
/// map / contiguous map, medians of 7-9 runs on the shared 2-core machine: 4096 0.58,
/// 1024 0.57, 512 0.66-0.68, 256 0.62, 128 0.55.
pub(crate) const VIEW_CHUNK: usize = 512;

/// A program ready to run over any inputs of the shapes it was prepared for.
pub(crate) struct Plan {
    /// The result's dtype.
    pub(crate) out_dtype: DType,
    locs: Vec<Loc>,
    /// The steps of the instructions that fill scratch, in order (the result excluded).
    steps: Vec<(usize, Step)>,
    /// Writes the result into the output chunk.
    out_step: Step,
    /// Dtype of each instruction's scratch, for those that have one.
    scratch: Vec<Option<DType>>,
    /// Elements per chunk: [`CHUNK`], or [`VIEW_CHUNK`] when a view is gathered.
    pub(crate) chunk: usize,
}

impl Plan {
    /// Prepares `program` for inputs of `input_shapes` broadcast to `shape`.
    pub(crate) fn new(program: &Program, input_shapes: &[Shape], shape: &Shape) -> Result<Plan> {
        Plan::with_views(program, input_shapes, None, shape)
    }

    /// [`Plan::new`] for `Op::MapViews`: input `a` is read through `views[a]` (strided,
    /// offset, negative strides) chunk by chunk, unless it is contiguous from offset 0,
    /// which reads like a plain input.
    pub(crate) fn with_views(
        program: &Program,
        input_shapes: &[Shape],
        views: Option<&[Layout]>,
        shape: &Shape,
    ) -> Result<Plan> {
        let mut locs: Vec<Loc> = Vec::with_capacity(program.insts.len());
        let mut steps: Vec<(usize, Step)> = Vec::new();
        let mut scratch = vec![None; program.insts.len()];
        let out = program.insts.len().checked_sub(1).ok_or_else(|| Error::InvalidExpr("empty program".into()))?;
        let mut out_step = None;
        let mut chunk = CHUNK;
        let uses = use_counts(program);
        for (i, inst) in program.insts.iter().enumerate() {
            let (loc, step) = match inst.op {
                InstOp::Arg(a) => {
                    let in_shape = input_shapes
                        .get(a)
                        .ok_or(Error::MissingArgument { index: a, available: input_shapes.len() })?;
                    if program.inputs.get(a) != Some(&inst.dtype) {
                        return Err(Error::InvalidExpr(format!(
                            "instruction {i} reads input {a} with the wrong dtype"
                        )));
                    }
                    let view = views.and_then(|v| v.get(a)).filter(|l| !l.is_contiguous() || l.offset != 0);
                    if let Some(l) = view {
                        chunk = VIEW_CHUNK;
                        let g = Gather::from_layout(l, shape);
                        (Loc::Scratch, Some(with_dtype!(inst.dtype, T => gather_step::<T>(a, g))))
                    } else {
                        match Access::classify(in_shape, shape) {
                            Access::Same => (Loc::Input(a), None),
                            Access::Scalar => (Loc::Splat(a), None),
                            Access::Strided => {
                                let g = Gather::new(in_shape, shape);
                                (Loc::Scratch, Some(with_dtype!(inst.dtype, T => gather_step::<T>(a, g))))
                            }
                        }
                    }
                }
                InstOp::Lit(s) if s.dtype() == inst.dtype => (Loc::Lit(s), None),
                InstOp::Lit(s) => {
                    return Err(Error::InvalidExpr(format!("literal {s} in an instruction of dtype {}", inst.dtype)))
                }
                InstOp::Index if inst.dtype == DType::U32 => (Loc::Scratch, Some(Box::new(index_step) as Step)),
                InstOp::Index => {
                    return Err(Error::InvalidExpr(format!("the element index is u32, not {}; cast it", inst.dtype)))
                }
                _ => {
                    check_operands(program, i)?;
                    let step = compute_step(program, *inst)?;
                    match fold(&locs, *inst, &step) {
                        Some(lit) => (Loc::Lit(lit), None),
                        None => {
                            let is_array = |k: usize| matches!(locs[k], Loc::Input(_) | Loc::Scratch);
                            let is_value = |k: usize| matches!(locs[k], Loc::Splat(_) | Loc::Lit(_));
                            match fuse::find(program, i, &uses, is_array, is_value) {
                                Some(pair) => {
                                    // The inner instruction's only reader computes it itself.
                                    steps.retain(|(k, _)| *k != pair.inner);
                                    scratch[pair.inner] = None;
                                    let fused = match inst.dtype {
                                        DType::F16 => half::fused_step(pair),
                                        dtype => fuse::step(pair, dtype),
                                    };
                                    (Loc::Scratch, Some(fused))
                                }
                                None => (Loc::Scratch, Some(step)),
                            }
                        }
                    }
                }
            };
            locs.push(loc);
            if i == out {
                // The result is written straight into the output chunk.
                out_step = Some(match step {
                    Some(s) => s,
                    None => with_dtype!(inst.dtype, T => copy_step::<T>(i)),
                });
            } else if let Some(s) = step {
                scratch[i] = Some(inst.dtype);
                steps.push((i, s));
            }
        }
        let out_step = out_step.ok_or_else(|| Error::InvalidExpr("program without a result".into()))?;
        Ok(Plan { out_dtype: program.output_dtype(), locs, steps, out_step, scratch, chunk })
    }

    /// Fresh scratch buffers for one worker that evaluates chunks of at most `len` elements.
    pub(crate) fn new_scratch(&self, len: usize) -> Vec<HostVec> {
        if self.steps.is_empty() {
            // Only instructions with a step have scratch (a fused `a*x + y` has none): no
            // allocation per call.
            return Vec::new();
        }
        let len = len.min(self.chunk);
        self.scratch
            .iter()
            .map(|d| match d {
                Some(d) => with_dtype!(*d, T => T::new_scratch(len)),
                None => HostVec::U32(Vec::new()),
            })
            .collect()
    }

    /// Evaluates output elements `start .. start + out.len()` (at most [`Plan::chunk`]).
    #[inline]
    pub(crate) fn run_chunk(&self, inputs: &[HostSlice<'_>], start: usize, out: DestMut<'_>, scratch: &mut [HostVec]) {
        let n = match &out {
            DestMut::F32(s) => s.len(),
            DestMut::F64(s) => s.len(),
            DestMut::I32(s) => s.len(),
            DestMut::U32(s) => s.len(),
            DestMut::F16(s) => s.len(),
            DestMut::BF16(s) => s.len(),
            DestMut::I64(s) => s.len(),
            DestMut::U8(s) => s.len(),
            DestMut::Bool(s) => s.len(),
        };
        for (i, step) in &self.steps {
            let (done, rest) = scratch.split_at_mut(*i);
            let ctx = Ctx { locs: &self.locs, inputs, start, n, done };
            step(&ctx, scratch_dest(&mut rest[0], n));
        }
        let ctx = Ctx { locs: &self.locs, inputs, start, n, done: scratch };
        (self.out_step)(&ctx, out);
    }
}

/// How many instructions read each instruction.
fn use_counts(program: &Program) -> Vec<usize> {
    let mut uses = vec![0; program.insts.len()];
    for inst in &program.insts {
        let ops: &[usize] = match &inst.op {
            InstOp::Unary(_, a) | InstOp::Cast(a) => &[*a],
            InstOp::Binary(_, a, b) => &[*a, *b],
            InstOp::Select(c, a, b) => &[*c, *a, *b],
            _ => &[],
        };
        for &j in ops {
            if let Some(u) = uses.get_mut(j) {
                *u += 1;
            }
        }
    }
    uses
}

/// Operands must come before the instruction (the program's invariant; checked so that a
/// malformed program is an error, not an out-of-bounds read).
fn check_operands(program: &Program, i: usize) -> Result<()> {
    let ops: &[usize] = match &program.insts[i].op {
        InstOp::Unary(_, a) | InstOp::Cast(a) => &[*a],
        InstOp::Binary(_, a, b) => &[*a, *b],
        InstOp::Select(c, a, b) => &[*c, *a, *b],
        _ => &[],
    };
    let bad = |why: String| Err(Error::InvalidExpr(format!("instruction {i}: {why}")));
    for &j in ops {
        if j >= i {
            return bad(format!("operand {j} is not an earlier instruction"));
        }
    }
    let dtype = program.insts[i].dtype;
    let want_same: &[usize] = match &program.insts[i].op {
        InstOp::Unary(_, a) => &[*a],
        InstOp::Binary(_, a, b) | InstOp::Select(_, a, b) => &[*a, *b],
        _ => &[],
    };
    for &j in want_same {
        if program.insts[j].dtype != dtype {
            return bad(format!("operand {j} has dtype {}, not {dtype}", program.insts[j].dtype));
        }
    }
    Ok(())
}

/// Evaluates an instruction whose operands are all literals, once.
fn fold(locs: &[Loc], inst: Inst, step: &Step) -> Option<Scalar> {
    let operands: Vec<usize> = match inst.op {
        InstOp::Unary(_, a) | InstOp::Cast(a) => vec![a],
        InstOp::Binary(_, a, b) => vec![a, b],
        InstOp::Select(c, a, b) => vec![c, a, b],
        _ => return None,
    };
    if !operands.iter().all(|&j| matches!(locs[j], Loc::Lit(_))) {
        return None;
    }
    let ctx = Ctx { locs, inputs: &[], start: 0, n: 1, done: &[] };
    with_dtype!(inst.dtype, T => {
        let mut v = [<T as crate::num::Num>::ZERO];
        step(&ctx, T::erase(&mut v));
        Some(polycompute_core::Element::to_scalar(v[0]))
    })
}

fn index_step(ctx: &Ctx<'_>, d: DestMut<'_>) {
    kernels::index(ctx.start, dest::<u32>(d));
}

fn gather_step<T: Lane>(a: usize, g: Gather) -> Step {
    Box::new(move |ctx, d| g.run(ctx.input::<T>(a), ctx.start, dest::<T>(d)))
}

fn copy_step<T: Lane>(j: usize) -> Step {
    Box::new(move |ctx, d| kernels::copy::<T>(ctx.src(j), dest::<T>(d)))
}

fn unary_step<T: Lane, O: UnOp<T>>(a: usize) -> Step {
    Box::new(move |ctx, d| kernels::unary::<T, O>(ctx.src(a), dest::<T>(d)))
}

fn binary_step<T: Lane, O: BinOp<T>>(a: usize, b: usize) -> Step {
    Box::new(move |ctx, d| kernels::binary::<T, O>(ctx.src(a), ctx.src(b), dest::<T>(d)))
}

fn select_step<C: Lane, T: Lane>(c: usize, a: usize, b: usize) -> Step {
    Box::new(move |ctx, d| kernels::select::<C, T>(ctx.src(c), ctx.src(a), ctx.src(b), dest::<T>(d)))
}

fn cast_step<S: Lane + CastTo<T>, T: Lane>(a: usize) -> Step {
    Box::new(move |ctx, d| kernels::cast::<S, T>(ctx.src(a), dest::<T>(d)))
}

/// The step of a computing instruction (unary, binary, select, cast).
fn compute_step(program: &Program, inst: Inst) -> Result<Step> {
    let dtype = inst.dtype;
    let invalid = |what: &str| Err(Error::InvalidExpr(format!("{what} is not defined for {dtype}")));
    match inst.op {
        InstOp::Unary(u, a) => match dtype {
            DType::F32 => float_unary::<f32>(u, a),
            DType::F64 => float_unary::<f64>(u, a),
            DType::I32 => common_unary::<i32>(u, a).map_or_else(|| invalid(u.name()), Ok),
            DType::U32 => common_unary::<u32>(u, a).map_or_else(|| invalid(u.name()), Ok),
            DType::I64 => common_unary::<i64>(u, a).map_or_else(|| invalid(u.name()), Ok),
            DType::U8 => common_unary::<u8>(u, a).map_or_else(|| invalid(u.name()), Ok),
            // The compiler admits only `abs` on bools (numpy's rule); the rest is refused here too.
            DType::Bool if u == UnaryOp::Abs => Ok(unary_step::<bool, op::Abs>(a)),
            DType::Bool => invalid(u.name()),
            // f16 widens each block once and rounds each result once (`half.rs`).
            DType::F16 => Ok(half::unary_step(u, a)),
            DType::BF16 => float_unary::<polycompute_core::bf16>(u, a),
        },
        InstOp::Binary(b, x, y) => match dtype {
            DType::F32 => common_binary::<f32>(b, x, y).map_or_else(|| invalid(b.name()), Ok),
            DType::F64 => common_binary::<f64>(b, x, y).map_or_else(|| invalid(b.name()), Ok),
            DType::I32 => Ok(int_binary::<i32>(b, x, y)),
            DType::U32 => Ok(int_binary::<u32>(b, x, y)),
            DType::I64 => Ok(int_binary::<i64>(b, x, y)),
            DType::U8 => Ok(int_binary::<u8>(b, x, y)),
            DType::Bool if matches!(b, BinaryOp::Sub | BinaryOp::Div | BinaryOp::Rem | BinaryOp::Pow) => {
                invalid(b.name())
            }
            DType::Bool => Ok(int_binary::<bool>(b, x, y)),
            DType::F16 => half::binary_step(b, x, y).map_or_else(|| invalid(b.name()), Ok),
            DType::BF16 => common_binary::<polycompute_core::bf16>(b, x, y).map_or_else(|| invalid(b.name()), Ok),
        },
        InstOp::Select(c, a, b) => {
            Ok(with_dtype!(program.insts[c].dtype, C => with_dtype!(dtype, T => select_step::<C, T>(c, a, b))))
        }
        InstOp::Cast(a) => Ok(with_dtype!(program.insts[a].dtype, S => with_dtype!(dtype, T => cast_step::<S, T>(a)))),
        _ => invalid("this instruction"),
    }
}

/// The step of a unary op defined on every dtype, or `None` for a float-only op. (Both
/// matches here name every op, so a new one is placed by the compiler.)
fn common_unary<T: Lane>(u: UnaryOp, a: usize) -> Option<Step> {
    Some(match u {
        UnaryOp::Neg => unary_step::<T, op::Neg>(a),
        UnaryOp::Abs => unary_step::<T, op::Abs>(a),
        UnaryOp::Floor => unary_step::<T, op::Floor>(a),
        UnaryOp::Ceil => unary_step::<T, op::Ceil>(a),
        UnaryOp::Round => unary_step::<T, op::Round>(a),
        UnaryOp::Sqrt
        | UnaryOp::Recip
        | UnaryOp::Exp
        | UnaryOp::Expm1
        | UnaryOp::Ln
        | UnaryOp::Log1p
        | UnaryOp::Log2
        | UnaryOp::Log10
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Tan
        | UnaryOp::Tanh => return None,
    })
}

fn float_unary<T: Lane + Float>(u: UnaryOp, a: usize) -> Result<Step> {
    Ok(match u {
        UnaryOp::Sqrt => unary_step::<T, op::Sqrt>(a),
        UnaryOp::Recip => unary_step::<T, op::Recip>(a),
        UnaryOp::Exp => unary_step::<T, op::Exp>(a),
        UnaryOp::Expm1 => unary_step::<T, op::Expm1>(a),
        UnaryOp::Ln => unary_step::<T, op::Ln>(a),
        UnaryOp::Log1p => unary_step::<T, op::Log1p>(a),
        UnaryOp::Log2 => unary_step::<T, op::Log2>(a),
        UnaryOp::Log10 => unary_step::<T, op::Log10>(a),
        UnaryOp::Sin => unary_step::<T, op::Sin>(a),
        UnaryOp::Cos => unary_step::<T, op::Cos>(a),
        UnaryOp::Tan => unary_step::<T, op::Tan>(a),
        UnaryOp::Tanh => unary_step::<T, op::Tanh>(a),
        UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round => {
            match common_unary::<T>(u, a) {
                Some(s) => s,
                None => return Err(Error::InvalidExpr(format!("{} is not defined for {}", u.name(), T::DTYPE))),
            }
        }
    })
}

fn common_binary<T: Lane>(b: BinaryOp, x: usize, y: usize) -> Option<Step> {
    Some(match b {
        BinaryOp::Add => binary_step::<T, op::Add>(x, y),
        BinaryOp::Sub => binary_step::<T, op::Sub>(x, y),
        BinaryOp::Mul => binary_step::<T, op::Mul>(x, y),
        BinaryOp::Div => binary_step::<T, op::Div>(x, y),
        BinaryOp::Rem => binary_step::<T, op::Rem>(x, y),
        BinaryOp::Pow => binary_step::<T, op::Pow>(x, y),
        BinaryOp::Min => binary_step::<T, op::Min>(x, y),
        BinaryOp::Max => binary_step::<T, op::Max>(x, y),
        BinaryOp::Eq => binary_step::<T, op::Eq>(x, y),
        BinaryOp::Ne => binary_step::<T, op::Ne>(x, y),
        BinaryOp::Lt => binary_step::<T, op::Lt>(x, y),
        BinaryOp::Le => binary_step::<T, op::Le>(x, y),
        BinaryOp::Gt => binary_step::<T, op::Gt>(x, y),
        BinaryOp::Ge => binary_step::<T, op::Ge>(x, y),
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => return None,
    })
}

fn int_binary<T: Lane + Int>(b: BinaryOp, x: usize, y: usize) -> Step {
    match b {
        BinaryOp::And => binary_step::<T, op::And>(x, y),
        BinaryOp::Or => binary_step::<T, op::Or>(x, y),
        BinaryOp::Xor => binary_step::<T, op::Xor>(x, y),
        _ => match common_binary::<T>(b, x, y) {
            Some(s) => s,
            None => unreachable!("every non-bitwise binary op has a common kernel"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute_core::expr::Inst;

    #[test]
    fn malformed_programs_are_errors_not_panics() {
        let s = Shape::new(&[3]).unwrap();
        let bad = |insts: Vec<Inst>| {
            Plan::new(&Program { inputs: vec![DType::F32], insts }, std::slice::from_ref(&s), &s).err()
        };
        let inst = |op, dtype| Inst { op, dtype };
        // The index read as f32, an operand from the future, mixed operand dtypes, a
        // float-only op on integers, an input of the wrong dtype, an empty program.
        assert!(bad(vec![inst(InstOp::Index, DType::F32)]).is_some());
        assert!(bad(vec![inst(InstOp::Unary(UnaryOp::Neg, 0), DType::F32)]).is_some());
        assert!(bad(vec![
            inst(InstOp::Arg(0), DType::F32),
            inst(InstOp::Index, DType::U32),
            inst(InstOp::Binary(BinaryOp::Add, 0, 1), DType::F32),
        ])
        .is_some());
        assert!(bad(vec![
            inst(InstOp::Lit(Scalar::I32(1)), DType::I32),
            inst(InstOp::Unary(UnaryOp::Sin, 0), DType::I32)
        ])
        .is_some());
        assert!(bad(vec![inst(InstOp::Arg(0), DType::I32)]).is_some());
        assert!(bad(vec![inst(InstOp::Arg(1), DType::F32)]).is_some());
        assert!(bad(vec![]).is_some());
    }
}
