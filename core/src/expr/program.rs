//! Type checking and lowering of an [`Expr`] into a [`Program`]: a flat list of typed
//! instructions in evaluation order, with common subexpressions merged. Backends compile
//! programs, never trees.

use std::collections::HashMap;

use super::{fold, BinaryOp, Expr, Literal, Node, UnaryOp};
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};

/// A type-checked elementwise program. Instruction `i` may only read instructions `< i`;
/// the last instruction is the result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// The dtypes of the inputs, in argument order.
    pub inputs: Vec<DType>,
    /// The instructions, in evaluation order.
    pub insts: Vec<Inst>,
}

/// One typed instruction of a [`Program`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    /// What it computes.
    pub op: InstOp,
    /// The dtype of its result.
    pub dtype: DType,
}

/// The operation of an [`Inst`]; operands are indices of earlier instructions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum InstOp {
    /// Input `n`, broadcast to the output shape.
    Arg(usize),
    /// A constant of the instruction's dtype.
    Lit(Scalar),
    /// The flat output index (`u32`).
    Index,
    /// A unary op on an operand of the instruction's dtype.
    Unary(UnaryOp, usize),
    /// A binary op on two operands of the same dtype; comparisons give 1/0 of that dtype,
    /// which is also the instruction's dtype.
    Binary(BinaryOp, usize, usize),
    /// `select(cond, then, else)`; `cond` may have any dtype, the branches the result's.
    Select(usize, usize, usize),
    /// A conversion of the operand to the instruction's dtype.
    Cast(usize),
}

impl Program {
    /// Type-checks `expr` against inputs of the given dtypes and lowers it. Literals that
    /// meet no typed operand and no cast get their default dtype (`f64`, `i32`); use
    /// [`Program::compile_to`] when the result's dtype is known.
    ///
    /// ```
    /// use polycompute_core::{DType, Expr, Program};
    /// let x = Expr::arg(0);
    /// let p = Program::compile(&(&x * 2.0 + &x), &[DType::F32]).unwrap();
    /// assert_eq!(p.output_dtype(), DType::F32);
    /// assert!(Program::compile(&(x + 2.5), &[DType::I32]).is_err());
    /// ```
    pub fn compile(expr: &Expr, inputs: &[DType]) -> Result<Program> {
        Program::lower(expr, inputs, None)
    }

    /// [`Program::compile`] for a result of dtype `output`: an expression whose dtype only
    /// its literals decide (a `select` of two literals, a literal alone) takes `output`.
    /// An expression of another known dtype compiles unchanged (its caller reports the
    /// mismatch).
    ///
    /// ```
    /// use polycompute_core::{DType, Expr, Program};
    /// let x = Expr::arg(0);
    /// let mask = Expr::select(x.clone().gt(0), 1.0, 0.0);
    /// assert_eq!(Program::compile_to(&mask, &[DType::I32], DType::F32).unwrap().output_dtype(), DType::F32);
    /// assert_eq!(Program::compile(&mask, &[DType::I32]).unwrap().output_dtype(), DType::F64);
    /// ```
    pub fn compile_to(expr: &Expr, inputs: &[DType], output: DType) -> Result<Program> {
        Program::lower(expr, inputs, Some(output))
    }

    fn lower(expr: &Expr, inputs: &[DType], output: Option<DType>) -> Result<Program> {
        let mut lower =
            Lowering { inputs, nature: HashMap::new(), done: HashMap::new(), cse: HashMap::new(), insts: Vec::new() };
        let want = output.or(lower.nature(expr)?.default_dtype());
        let out = lower.lower(expr, want)?;
        Ok(Program { inputs: inputs.to_vec(), insts: live(lower.insts, out) })
    }

    /// The copy `arg0` of one input of `dtype`: what [`Program::compile`] makes of
    /// `Expr::arg(0)`. Backends run data movement (a copy, a transpose that keeps its last
    /// axis) through their map kernels with it.
    ///
    /// ```
    /// use polycompute_core::{DType, Program};
    /// assert!(Program::identity(DType::I32).is_identity());
    /// ```
    pub fn identity(dtype: DType) -> Program {
        Program { inputs: vec![dtype], insts: vec![Inst { op: InstOp::Arg(0), dtype }] }
    }

    /// `arg0.cast(to)` over one input of `from`: what [`Program::compile`] makes of
    /// `Expr::arg(0).cast(to)`, so [`crate::Op::Cast`] has exactly a map's semantics. Equal
    /// to [`Program::identity`] when `from == to`.
    ///
    /// ```
    /// use polycompute_core::{DType, Program};
    /// assert_eq!(Program::cast(DType::F32, DType::I32).output_dtype(), DType::I32);
    /// assert_eq!(Program::cast(DType::U32, DType::U32), Program::identity(DType::U32));
    /// ```
    pub fn cast(from: DType, to: DType) -> Program {
        if from == to {
            return Program::identity(from);
        }
        Program {
            inputs: vec![from],
            insts: vec![Inst { op: InstOp::Arg(0), dtype: from }, Inst { op: InstOp::Cast(0), dtype: to }],
        }
    }

    /// Index of the result instruction.
    pub fn output(&self) -> usize {
        self.insts.len() - 1
    }

    /// The dtype of the result.
    pub fn output_dtype(&self) -> DType {
        self.insts[self.output()].dtype
    }

    /// True when the program reads [`InstOp::Index`].
    pub fn uses_index(&self) -> bool {
        self.insts.iter().any(|i| matches!(i.op, InstOp::Index))
    }

    /// The first sub-expression that computes in `dtype`, as text in [`Expr`]'s notation
    /// (`cast(arg0, f64)`), or `None` when no instruction has that dtype: what a backend
    /// names when it cannot run `dtype` (a device without f64).
    ///
    /// ```
    /// use polycompute_core::{DType, Expr, Program};
    /// let x = Expr::arg(0);
    /// let p = Program::compile(&(x.cast(DType::F64).sqrt().cast(DType::F32) * 2.0), &[DType::F32]).unwrap();
    /// assert_eq!(p.first_use_of(DType::F64).as_deref(), Some("cast(arg0, f64)"));
    /// assert_eq!(p.first_use_of(DType::I32), None);
    /// ```
    pub fn first_use_of(&self, dtype: DType) -> Option<String> {
        // Operands precede their users, so the first instruction of `dtype` is where the
        // dtype enters the program.
        let i = self.insts.iter().position(|inst| inst.dtype == dtype)?;
        let mut text = String::new();
        self.describe(i, &mut text);
        Some(text)
    }

    /// Appends instruction `i` as an expression, cut short past a few hundred characters
    /// (a shared subtree is spelled out at each use).
    fn describe(&self, i: usize, out: &mut String) {
        const LIMIT: usize = 300;
        if out.len() > LIMIT {
            if !out.ends_with('…') {
                out.push('…');
            }
            return;
        }
        let inst = self.insts[i];
        let mut call = |name: &str, args: &[usize], tail: Option<DType>| {
            out.push_str(name);
            out.push('(');
            for (k, &a) in args.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                self.describe(a, out);
            }
            if let Some(d) = tail {
                out.push_str(", ");
                out.push_str(d.name());
            }
            out.push(')');
        };
        match inst.op {
            InstOp::Arg(n) => out.push_str(&format!("arg{n}")),
            InstOp::Lit(s) => out.push_str(&s.to_string()),
            InstOp::Index => out.push_str("index"),
            InstOp::Unary(op, a) => call(op.name(), &[a], None),
            InstOp::Binary(op, a, b) => call(op.name(), &[a, b], None),
            InstOp::Select(c, a, b) => call("select", &[c, a, b], None),
            InstOp::Cast(a) => call("cast", &[a], Some(inst.dtype)),
        }
    }

    /// True when the program is exactly `arg0` of the output's dtype (a copy).
    pub fn is_identity(&self) -> bool {
        self.insts.len() == 1 && matches!(self.insts[0].op, InstOp::Arg(0))
    }
}

/// What a subtree's dtype is before context: known, or decided only by Rust literals (a
/// literal, ops on literals, a `select` of literal branches whatever its condition).
#[derive(Copy, Clone, Debug, PartialEq)]
enum Nature {
    Known(DType),
    WeakFloat,
    WeakInt,
}

impl Nature {
    fn join(self, other: Nature) -> Nature {
        match (self, other) {
            (Nature::Known(d), _) | (_, Nature::Known(d)) => Nature::Known(d),
            (Nature::WeakFloat, _) | (_, Nature::WeakFloat) => Nature::WeakFloat,
            _ => Nature::WeakInt,
        }
    }

    fn resolve(self, want: Option<DType>) -> DType {
        match (self, want) {
            (Nature::Known(d), _) => d,
            (_, Some(w)) => w,
            (Nature::WeakFloat, None) => DType::F64,
            (Nature::WeakInt, None) => DType::I32,
        }
    }

    fn default_dtype(self) -> Option<DType> {
        Some(self.resolve(None))
    }
}

struct Lowering<'a> {
    inputs: &'a [DType],
    /// Memo of `nature`, keyed by node address: shared subtrees are visited once.
    nature: HashMap<*const Node, Nature>,
    /// Memo of `lower`, keyed by node address and the dtype it was lowered to.
    done: HashMap<(*const Node, DType), usize>,
    cse: HashMap<Inst, usize>,
    insts: Vec<Inst>,
}

impl Lowering<'_> {
    fn nature(&mut self, e: &Expr) -> Result<Nature> {
        let key = std::sync::Arc::as_ptr(&e.0);
        if let Some(&n) = self.nature.get(&key) {
            return Ok(n);
        }
        let n = match e.node() {
            Node::Arg(i) => Nature::Known(self.arg_dtype(*i)?),
            Node::Index => Nature::Known(DType::U32),
            Node::Lit(Literal::Typed(s)) => Nature::Known(s.dtype()),
            Node::Lit(Literal::Float(_)) => Nature::WeakFloat,
            Node::Lit(Literal::Int(_)) => Nature::WeakInt,
            Node::Unary(_, a) => self.nature(a)?,
            Node::Binary(_, a, b) | Node::Select(_, a, b) => {
                let (na, nb) = (self.nature(a)?, self.nature(b)?);
                if let (Nature::Known(x), Nature::Known(y)) = (na, nb) {
                    if x != y {
                        // Name the cast that makes the operands agree.
                        let b = if matches!(b.node(), Node::Arg(_)) { format!("{b}") } else { format!("({b})") };
                        let context = format!("{e} (write `{b}.cast(DType::{x:?})`, or cast the other side to {y})");
                        return Err(Error::DTypeMismatch { context, expected: x, found: y });
                    }
                }
                na.join(nb)
            }
            Node::Cast(a, d) => {
                self.nature(a)?;
                Nature::Known(*d)
            }
        };
        self.nature.insert(key, n);
        Ok(n)
    }

    fn arg_dtype(&self, index: usize) -> Result<DType> {
        self.inputs.get(index).copied().ok_or(Error::MissingArgument { index, available: self.inputs.len() })
    }

    /// Lowers `e`; `want` is the dtype its context needs when `e` is made of literals only.
    fn lower(&mut self, e: &Expr, want: Option<DType>) -> Result<usize> {
        let dtype = self.nature(e)?.resolve(want);
        let key = (std::sync::Arc::as_ptr(&e.0), dtype);
        if let Some(&r) = self.done.get(&key) {
            return Ok(r);
        }
        let reg = match e.node() {
            Node::Arg(i) => self.emit(InstOp::Arg(*i), dtype),
            Node::Index => self.emit(InstOp::Index, dtype),
            Node::Lit(lit) => self.emit(InstOp::Lit(literal(*lit, dtype)?), dtype),
            Node::Unary(op, a) => {
                if op.float_only() && !dtype.is_float() {
                    return Err(Error::InvalidExpr(format!(
                        "{} is defined for floats only, but {e} has dtype {dtype}; cast the operand to f32 or f64",
                        op.name()
                    )));
                }
                if dtype.is_bool() && !matches!(op, UnaryOp::Abs) {
                    return Err(bool_refused(op.name(), e));
                }
                let a = self.lower(a, Some(dtype))?;
                self.emit(InstOp::Unary(*op, a), dtype)
            }
            Node::Binary(op, a, b) => {
                if op.int_only() && dtype.is_float() {
                    return Err(Error::InvalidExpr(format!(
                        "{} is bitwise and defined for integers only, but {e} has dtype {dtype}",
                        op.name()
                    )));
                }
                if dtype.is_bool() && matches!(op, BinaryOp::Sub | BinaryOp::Div | BinaryOp::Rem | BinaryOp::Pow) {
                    return Err(bool_refused(op.name(), e));
                }
                let (a, b) = (self.lower(a, Some(dtype))?, self.lower(b, Some(dtype))?);
                self.emit(InstOp::Binary(*op, a, b), dtype)
            }
            Node::Select(c, a, b) => {
                let cw = self.nature(c)?.default_dtype();
                let c = self.lower(c, cw)?;
                let (a, b) = (self.lower(a, Some(dtype))?, self.lower(b, Some(dtype))?);
                self.emit(InstOp::Select(c, a, b), dtype)
            }
            Node::Cast(a, to) => self.lower_cast(a, *to)?,
        };
        self.done.insert(key, reg);
        Ok(reg)
    }

    /// Lowers `a.cast(to)`. A cast is a use that decides the dtype of literals no typed
    /// operand reaches: integer literals take `to`, float literals take `to` when it is a
    /// float. Float literals cast to an integer keep `f64` and are folded; a `select` of
    /// such branches is cast branch by branch, so its branches fold too.
    fn lower_cast(&mut self, a: &Expr, to: DType) -> Result<usize> {
        match self.nature(a)? {
            Nature::WeakInt => self.lower(a, Some(to)),
            Nature::WeakFloat if to.is_float() => self.lower(a, Some(to)),
            Nature::WeakFloat => {
                if let Node::Select(c, x, y) = a.node() {
                    let cw = self.nature(c)?.default_dtype();
                    let c = self.lower(c, cw)?;
                    let (x, y) = (self.lower_cast(x, to)?, self.lower_cast(y, to)?);
                    return Ok(self.emit(InstOp::Select(c, x, y), to));
                }
                let src = self.lower(a, None)?;
                Ok(self.convert(src, to))
            }
            Nature::Known(_) => {
                let src = self.lower(a, None)?;
                Ok(self.convert(src, to))
            }
        }
    }

    /// `src` converted to `to`: itself when it already has that dtype.
    fn convert(&mut self, src: usize, to: DType) -> usize {
        if self.insts[src].dtype == to {
            return src;
        }
        self.emit(InstOp::Cast(src), to)
    }

    /// Appends `op` (or finds the equal instruction already there); an op whose operands
    /// are all constants becomes the constant it computes.
    fn emit(&mut self, op: InstOp, dtype: DType) -> usize {
        let inst = Inst { op: self.fold(op, dtype).map_or(op, InstOp::Lit), dtype };
        if let InstOp::Select(c, a, b) = inst.op {
            if let InstOp::Lit(c) = self.insts[c].op {
                return if fold::truthy(c) { a } else { b };
            }
        }
        if let Some(&r) = self.cse.get(&inst) {
            return r;
        }
        self.insts.push(inst);
        self.cse.insert(inst, self.insts.len() - 1);
        self.insts.len() - 1
    }

    /// The value of `op` when its operands are constants.
    fn fold(&self, op: InstOp, dtype: DType) -> Option<Scalar> {
        let lit = |r: usize| match self.insts[r].op {
            InstOp::Lit(s) => Some(s),
            _ => None,
        };
        match op {
            InstOp::Unary(op, a) => fold::unary(op, lit(a)?),
            InstOp::Binary(op, a, b) => fold::binary(op, lit(a)?, lit(b)?),
            InstOp::Cast(a) => Some(fold::cast(lit(a)?, dtype)),
            InstOp::Arg(_) | InstOp::Index | InstOp::Lit(_) | InstOp::Select(..) => None,
        }
    }
}

/// The instructions `out` depends on, renumbered in order: folding leaves the constants it
/// consumed behind, and a device must not see (nor need the dtype of) an unused one.
fn live(insts: Vec<Inst>, out: usize) -> Vec<Inst> {
    let mut used = vec![false; insts.len()];
    used[out] = true;
    for i in (0..=out).rev() {
        if used[i] {
            operands(insts[i].op).into_iter().flatten().for_each(|j| used[j] = true);
        }
    }
    let mut index = vec![0; insts.len()];
    let mut kept = Vec::with_capacity(insts.len());
    for (i, inst) in insts.into_iter().enumerate().take(out + 1) {
        if used[i] {
            index[i] = kept.len();
            let op = match inst.op {
                InstOp::Unary(op, a) => InstOp::Unary(op, index[a]),
                InstOp::Binary(op, a, b) => InstOp::Binary(op, index[a], index[b]),
                InstOp::Select(c, a, b) => InstOp::Select(index[c], index[a], index[b]),
                InstOp::Cast(a) => InstOp::Cast(index[a]),
                op @ (InstOp::Arg(_) | InstOp::Index | InstOp::Lit(_)) => op,
            };
            kept.push(Inst { op, dtype: inst.dtype });
        }
    }
    kept
}

/// The instructions `op` reads.
fn operands(op: InstOp) -> [Option<usize>; 3] {
    match op {
        InstOp::Unary(_, a) | InstOp::Cast(a) => [Some(a), None, None],
        InstOp::Binary(_, a, b) => [Some(a), Some(b), None],
        InstOp::Select(c, a, b) => [Some(c), Some(a), Some(b)],
        InstOp::Arg(_) | InstOp::Index | InstOp::Lit(_) => [None; 3],
    }
}

/// numpy 2's refusal of an op on bools (`bool - bool`, `-bool`, `bool / bool`: numpy raises
/// or promotes to another dtype, which this IR never does implicitly).
fn bool_refused(op: &str, e: &Expr) -> Error {
    Error::InvalidExpr(format!(
        "{op} is not defined for bool (numpy 2 refuses it), in {e}; use xor/and/or/not for logic, \
         or cast the operands to an integer first"
    ))
}

/// The value of a literal in `dtype`, or why it has none.
fn literal(lit: Literal, dtype: DType) -> Result<Scalar> {
    let out_of_range = |v: i64| Error::InvalidExpr(format!("integer literal {v} does not fit in {dtype}"));
    Ok(match (lit, dtype) {
        (Literal::Typed(s), _) => s,
        (Literal::Float(bits), DType::F64) => Scalar::F64(f64::from_bits(bits)),
        (Literal::Float(bits), DType::F32) => Scalar::F32(f64::from_bits(bits) as f32),
        // One rounding from the f64 literal, as numpy's `np.float16(0.1)`.
        (Literal::Float(bits), DType::F16) => Scalar::F16(crate::halves::f16_from_f64(f64::from_bits(bits))),
        (Literal::Float(bits), DType::BF16) => Scalar::BF16(crate::halves::bf16_from_f64(f64::from_bits(bits))),
        (Literal::Float(bits), _) => {
            return Err(Error::InvalidExpr(format!(
                "float literal {:?} used where {dtype} is needed; use an integer literal or cast the other operand to a float",
                f64::from_bits(bits)
            )))
        }
        (Literal::Int(v), DType::F64) => Scalar::F64(v as f64),
        (Literal::Int(v), DType::F32) => Scalar::F32(v as f32),
        (Literal::Int(v), DType::F16) => Scalar::F16(crate::halves::f16_from_f64(v as f64)),
        (Literal::Int(v), DType::BF16) => Scalar::BF16(crate::halves::bf16_from_f64(v as f64)),
        (Literal::Int(v), DType::I32) => Scalar::I32(i32::try_from(v).map_err(|_| out_of_range(v))?),
        (Literal::Int(v), DType::U32) => Scalar::U32(u32::try_from(v).map_err(|_| out_of_range(v))?),
        (Literal::Int(v), DType::I64) => Scalar::I64(v),
        (Literal::Int(v), DType::U8) => Scalar::U8(u8::try_from(v).map_err(|_| out_of_range(v))?),
        (Literal::Int(v), DType::Bool) => {
            return Err(Error::InvalidExpr(format!(
                "integer literal {v} used where bool is needed; write Expr::scalar(Scalar::Bool(..)) or cast the bool operand to an integer"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_adopt_the_operand_dtype_and_subtrees_are_shared() {
        let x = Expr::arg(0);
        let sq = &x * &x;
        let p = Program::compile(&(&sq + &sq + 1), &[DType::F32]).unwrap();
        // arg, mul, add(sq, sq), lit, add
        assert_eq!(p.insts.len(), 5);
        assert_eq!(p.output_dtype(), DType::F32);
        assert!(p.insts.iter().any(|i| i.op == InstOp::Lit(Scalar::F32(1.0))));
    }

    #[test]
    fn mixed_dtypes_are_rejected() {
        let e = Expr::arg(0) + Expr::arg(1);
        assert!(matches!(Program::compile(&e, &[DType::F32, DType::F64]), Err(Error::DTypeMismatch { .. })));
        assert!(matches!(Program::compile(&e, &[DType::F32]), Err(Error::MissingArgument { index: 1, available: 1 })));
        assert!(Program::compile(&(Expr::arg(0) - 1), &[DType::U32]).is_ok());
        assert!(matches!(Program::compile(&(Expr::arg(0) + -1), &[DType::U32]), Err(Error::InvalidExpr(_))));
        assert!(matches!(Program::compile(&Expr::arg(0).sin(), &[DType::I32]), Err(Error::InvalidExpr(_))));
        assert!(matches!(Program::compile(&(Expr::arg(0) & 1), &[DType::F32]), Err(Error::InvalidExpr(_))));
    }

    #[test]
    fn deep_shared_dags_lower_in_linear_time() {
        let mut e = Expr::arg(0);
        for _ in 0..200 {
            e = &e + &e;
        }
        let p = Program::compile(&e, &[DType::F64]).unwrap();
        assert_eq!(p.insts.len(), 201);
    }

    #[test]
    fn casts_and_selects_type_independently() {
        let x = Expr::arg(0);
        let e = Expr::select(x.clone().gt(0), x.clone().cast(DType::F64), 0.5);
        let p = Program::compile(&e, &[DType::I32]).unwrap();
        assert_eq!(p.output_dtype(), DType::F64);
        let literal_only = Program::compile(&(Expr::float(1.0) + 2), &[]).unwrap();
        assert_eq!(literal_only.output_dtype(), DType::F64);
    }

    /// True when no instruction of `p` has dtype `d`.
    fn free_of(p: &Program, d: DType) -> bool {
        p.insts.iter().all(|i| i.dtype != d)
    }

    #[test]
    fn a_cast_decides_the_dtype_of_a_select_of_literals() {
        let r = Expr::arg(0);
        let e = Expr::select(r.clone().le(1.0), 1.0, 0.0).cast(DType::F32);
        let p = Program::compile(&e, &[DType::F32]).unwrap();
        assert!(free_of(&p, DType::F64), "{p:?}");
        // arg, 1.0, le, 0.0, select: the cast to the select's own dtype is gone.
        assert_eq!(p.insts.len(), 5, "{p:?}");
        assert!(matches!(p.insts[p.output()].op, InstOp::Select(..)));
        assert_eq!(p.output_dtype(), DType::F32);
        // An integer target: float branches are cast one by one and fold.
        let p = Program::compile(&Expr::select(r.gt(0.0), 2.7, -1.5).cast(DType::I32), &[DType::F32]).unwrap();
        assert!(free_of(&p, DType::F64), "{p:?}");
        assert!(p.insts.iter().any(|i| i.op == InstOp::Lit(Scalar::I32(2))));
        assert!(p.insts.iter().any(|i| i.op == InstOp::Lit(Scalar::I32(-1))));
    }

    #[test]
    fn literals_keep_the_array_dtype() {
        let x = Expr::arg(0);
        let p = Program::compile(&(&x * 2.0), &[DType::F32]).unwrap();
        assert!(free_of(&p, DType::F64) && p.output_dtype() == DType::F32);
        assert!(p.insts.contains(&Inst { op: InstOp::Lit(Scalar::F32(2.0)), dtype: DType::F32 }));
        // Integer literals with a float array are floats of its dtype.
        let p = Program::compile(&((&x + 3) / 2), &[DType::F32]).unwrap();
        assert!(p.insts.iter().any(|i| i.op == InstOp::Lit(Scalar::F32(3.0))));
        assert!(p.insts.iter().any(|i| i.op == InstOp::Lit(Scalar::F32(2.0))));
        // A literal subexpression takes the dtype where it meets the array, and folds.
        let third = Expr::float(1.0) / 3.0;
        let p = Program::compile(&(&x * third), &[DType::F32]).unwrap();
        assert_eq!(p.insts.len(), 3, "{p:?}");
        assert!(p.insts.iter().any(|i| i.op == InstOp::Lit(Scalar::F32(1.0f32 / 3.0))));
    }

    #[test]
    fn the_output_dtype_decides_when_nothing_else_does() {
        let x = Expr::arg(0);
        let mask = Expr::select(x.clone().gt(0), 1.0, 0.0);
        assert_eq!(Program::compile_to(&mask, &[DType::I32], DType::F32).unwrap().output_dtype(), DType::F32);
        let one = Program::compile_to(&Expr::float(1.0), &[DType::F32], DType::F32).unwrap();
        assert_eq!(one.insts, vec![Inst { op: InstOp::Lit(Scalar::F32(1.0)), dtype: DType::F32 }]);
        // A known dtype is not converted implicitly; a float literal never becomes an integer.
        assert_eq!(Program::compile_to(&x, &[DType::I32], DType::F32).unwrap().output_dtype(), DType::I32);
        assert!(matches!(Program::compile_to(&Expr::float(1.5), &[], DType::I32), Err(Error::InvalidExpr(_))));
    }

    #[test]
    fn casts_of_literals_and_constant_subexpressions_fold() {
        let p = Program::compile(&Expr::float(0.1).cast(DType::F32), &[]).unwrap();
        assert_eq!(p.insts, vec![Inst { op: InstOp::Lit(Scalar::F32(0.1)), dtype: DType::F32 }]);
        let p = Program::compile(&Expr::float(2.9).cast(DType::I32), &[]).unwrap();
        assert_eq!(p.insts, vec![Inst { op: InstOp::Lit(Scalar::I32(2)), dtype: DType::I32 }]);
        // Typed constants fold as well, in their own dtype.
        let two = Expr::scalar(Scalar::F64(2.0));
        let x = Expr::arg(0);
        let p = Program::compile(&(&x * two.sqrt().cast(DType::F32)), &[DType::F32]).unwrap();
        assert!(free_of(&p, DType::F64), "{p:?}");
        assert!(p.insts.iter().any(|i| i.op == InstOp::Lit(Scalar::F32(2f64.sqrt() as f32))));
        // A constant condition picks its branch.
        let p = Program::compile(&Expr::select(Expr::int(0), &x, -&x), &[DType::I32]).unwrap();
        assert!(p.insts.iter().all(|i| !matches!(i.op, InstOp::Select(..))), "{p:?}");
    }

    #[test]
    fn an_explicit_f64_cast_stays_and_is_named() {
        let x = Expr::arg(0);
        let e = (x.cast(DType::F64) * 0.5).cast(DType::F32);
        let p = Program::compile(&e, &[DType::F32]).unwrap();
        assert_eq!(p.first_use_of(DType::F64).as_deref(), Some("cast(arg0, f64)"));
        assert!(p.insts.contains(&Inst { op: InstOp::Lit(Scalar::F64(0.5)), dtype: DType::F64 }));
    }

    #[test]
    fn integer_literals_take_a_cast_target() {
        // (7 / 2) in f32 is 3.5: the cast decides the dtype before the division runs.
        let p = Program::compile(&(Expr::int(7) / 2).cast(DType::F32), &[]).unwrap();
        assert_eq!(p.insts, vec![Inst { op: InstOp::Lit(Scalar::F32(3.5)), dtype: DType::F32 }]);
        // A typed integer keeps integer (floor) division.
        let p = Program::compile(&(Expr::scalar(Scalar::I32(-7)) / 2).cast(DType::F32), &[]).unwrap();
        assert_eq!(p.insts, vec![Inst { op: InstOp::Lit(Scalar::F32(-4.0)), dtype: DType::F32 }]);
        assert!(matches!(Program::compile(&Expr::int(-1).cast(DType::U32), &[]), Err(Error::InvalidExpr(_))));
    }
}
