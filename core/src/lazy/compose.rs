//! Splicing programs: a consumer's program with each pending input's program inlined at
//! its argument, over one deduplicated list of leaf inputs.
//!
//! Bit-identity needs no extra cast: a pending array's program ends in an instruction of
//! the array's stored dtype (the map checked it), and every instruction rounds to its own
//! dtype, so the inlined value is exactly what the eager chain would have stored.

use rustc_hash::FxHashMap;

use crate::expr::{Inst, InstOp, Program};

/// What one argument of the consumer becomes.
pub(crate) enum Part<'a> {
    /// Leaf input `n` of the composed program.
    Leaf(usize),
    /// A producer's program, whose argument `k` is leaf `leaves[k]`.
    Inline { program: &'a Program, leaves: Vec<usize> },
}

/// Instructions with common subexpressions merged (a producer used twice is inlined once).
#[derive(Default)]
struct Builder {
    insts: Vec<Inst>,
    seen: FxHashMap<Inst, usize>,
}

impl Builder {
    fn push(&mut self, inst: Inst) -> usize {
        if let Some(&i) = self.seen.get(&inst) {
            return i;
        }
        self.insts.push(inst);
        self.seen.insert(inst, self.insts.len() - 1);
        self.insts.len() - 1
    }
}

/// `op` with its instruction operands renamed by `map` and its argument by `arg`.
fn rename(op: InstOp, map: &[usize], arg: impl Fn(usize) -> usize) -> InstOp {
    match op {
        InstOp::Arg(n) => InstOp::Arg(arg(n)),
        InstOp::Lit(_) | InstOp::Index => op,
        InstOp::Unary(u, a) => InstOp::Unary(u, map[a]),
        InstOp::Binary(b, x, y) => InstOp::Binary(b, map[x], map[y]),
        InstOp::Select(c, x, y) => InstOp::Select(map[c], map[x], map[y]),
        InstOp::Cast(a) => InstOp::Cast(map[a]),
    }
}

/// The consumer with `parts[j]` in place of its argument `j`, over leaves of `leaf_dtypes`.
pub(crate) fn compose(consumer: &Program, parts: &[Part<'_>], leaf_dtypes: Vec<crate::dtype::DType>) -> Program {
    let mut b = Builder::default();
    let mut map = Vec::with_capacity(consumer.insts.len());
    for inst in &consumer.insts {
        let at = match (inst.op, parts) {
            (InstOp::Arg(j), parts) => match &parts[j] {
                Part::Leaf(l) => b.push(Inst { op: InstOp::Arg(*l), dtype: inst.dtype }),
                Part::Inline { program, leaves } => {
                    let mut inner = Vec::with_capacity(program.insts.len());
                    for q in &program.insts {
                        let op = rename(q.op, &inner, |k| leaves[k]);
                        inner.push(b.push(Inst { op, dtype: q.dtype }));
                    }
                    inner[program.output()]
                }
            },
            (op, _) => b.push(Inst { op: rename(op, &map, |n| n), dtype: inst.dtype }),
        };
        map.push(at);
    }
    let out = map[consumer.output()];
    Program { inputs: leaf_dtypes, insts: live(b.insts, out) }
}

/// The instructions `out` depends on, in order, with `out` last (the `Program` invariant).
fn live(insts: Vec<Inst>, out: usize) -> Vec<Inst> {
    let mut used = vec![false; out + 1];
    used[out] = true;
    for i in (0..=out).rev() {
        if used[i] {
            for j in operands(insts[i].op) {
                used[j] = true;
            }
        }
    }
    let mut new_index = vec![usize::MAX; out + 1];
    let mut kept = Vec::with_capacity(out + 1);
    for (i, inst) in insts.into_iter().take(out + 1).enumerate() {
        if used[i] {
            new_index[i] = kept.len();
            kept.push(Inst { op: rename(inst.op, &new_index, |n| n), dtype: inst.dtype });
        }
    }
    kept
}

fn operands(op: InstOp) -> impl Iterator<Item = usize> {
    let v: [Option<usize>; 3] = match op {
        InstOp::Arg(_) | InstOp::Lit(_) | InstOp::Index => [None; 3],
        InstOp::Unary(_, a) | InstOp::Cast(a) => [Some(a), None, None],
        InstOp::Binary(_, a, b) => [Some(a), Some(b), None],
        InstOp::Select(c, a, b) => [Some(c), Some(a), Some(b)],
    };
    v.into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::expr::Expr;

    #[test]
    fn a_producer_is_inlined_at_its_argument_and_shared_uses_merge() {
        let x = Expr::arg(0);
        let producer = Program::compile(&(&x - Expr::arg(1)), &[DType::F32, DType::F32]).unwrap();
        let consumer = Program::compile(&(&x * Expr::arg(1)), &[DType::F32, DType::F32]).unwrap();
        let inline = || Part::Inline { program: &producer, leaves: vec![0, 1] };
        let p = compose(&consumer, &[inline(), inline()], vec![DType::F32, DType::F32]);
        let direct = Program::compile(&((&x - Expr::arg(1)) * (&x - Expr::arg(1))), &[DType::F32, DType::F32]).unwrap();
        assert_eq!(p, direct);
    }

    #[test]
    fn a_half_intermediate_keeps_its_rounding_instruction() {
        let x = Expr::arg(0);
        let producer = Program::compile(&x.cast(DType::F16), &[DType::F32]).unwrap();
        let consumer = Program::compile(&x.cast(DType::F32).exp(), &[DType::F16]).unwrap();
        let p = compose(&consumer, &[Part::Inline { program: &producer, leaves: vec![0] }], vec![DType::F32]);
        let dtypes: Vec<DType> = p.insts.iter().map(|i| i.dtype).collect();
        assert_eq!(dtypes, [DType::F32, DType::F16, DType::F32, DType::F32]);
    }
}
