//! Type checking and lowering of an [`Expr`] into a [`Program`]: a flat list of typed
//! instructions in evaluation order, with common subexpressions merged. Backends compile
//! programs, never trees.

use std::collections::HashMap;

use super::{BinaryOp, Expr, Literal, Node, UnaryOp};
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
    /// Type-checks `expr` against inputs of the given dtypes and lowers it.
    ///
    /// ```
    /// use polycompute_core::{DType, Expr, Program};
    /// let x = Expr::arg(0);
    /// let p = Program::compile(&(&x * 2.0 + &x), &[DType::F32]).unwrap();
    /// assert_eq!(p.output_dtype(), DType::F32);
    /// assert!(Program::compile(&(x + 2.5), &[DType::I32]).is_err());
    /// ```
    pub fn compile(expr: &Expr, inputs: &[DType]) -> Result<Program> {
        let mut lower =
            Lowering { inputs, nature: HashMap::new(), done: HashMap::new(), cse: HashMap::new(), insts: Vec::new() };
        let want = lower.nature(expr)?.default_dtype();
        lower.lower(expr, want)?;
        Ok(Program { inputs: inputs.to_vec(), insts: lower.insts })
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

    /// True when the program is exactly `arg0` of the output's dtype (a copy).
    pub fn is_identity(&self) -> bool {
        self.insts.len() == 1 && matches!(self.insts[0].op, InstOp::Arg(0))
    }
}

/// What a subtree's dtype is before context: known, or made only of Rust literals.
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
                        return Err(Error::DTypeMismatch { context: format!("{e}"), expected: x, found: y });
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
        let op = match e.node() {
            Node::Arg(i) => InstOp::Arg(*i),
            Node::Index => InstOp::Index,
            Node::Lit(lit) => InstOp::Lit(literal(*lit, dtype)?),
            Node::Unary(op, a) => {
                if op.float_only() && dtype.is_int() {
                    return Err(Error::InvalidExpr(format!(
                        "{} is defined for floats only, but {e} has dtype {dtype}; cast the operand to f32 or f64",
                        op.name()
                    )));
                }
                InstOp::Unary(*op, self.lower(a, Some(dtype))?)
            }
            Node::Binary(op, a, b) => {
                if op.int_only() && dtype.is_float() {
                    return Err(Error::InvalidExpr(format!(
                        "{} is bitwise and defined for integers only, but {e} has dtype {dtype}",
                        op.name()
                    )));
                }
                InstOp::Binary(*op, self.lower(a, Some(dtype))?, self.lower(b, Some(dtype))?)
            }
            Node::Select(c, a, b) => {
                let cw = self.nature(c)?.default_dtype();
                InstOp::Select(self.lower(c, cw)?, self.lower(a, Some(dtype))?, self.lower(b, Some(dtype))?)
            }
            Node::Cast(a, _) => {
                let aw = self.nature(a)?.default_dtype();
                let src = self.lower(a, aw)?;
                if self.insts[src].dtype == dtype {
                    self.done.insert(key, src);
                    return Ok(src);
                }
                InstOp::Cast(src)
            }
        };
        let inst = Inst { op, dtype };
        let reg = match self.cse.get(&inst) {
            Some(&r) => r,
            None => {
                self.insts.push(inst);
                self.cse.insert(inst, self.insts.len() - 1);
                self.insts.len() - 1
            }
        };
        self.done.insert(key, reg);
        Ok(reg)
    }
}

/// The value of a literal in `dtype`, or why it has none.
fn literal(lit: Literal, dtype: DType) -> Result<Scalar> {
    let out_of_range = |v: i64| Error::InvalidExpr(format!("integer literal {v} does not fit in {dtype}"));
    Ok(match (lit, dtype) {
        (Literal::Typed(s), _) => s,
        (Literal::Float(bits), DType::F64) => Scalar::F64(f64::from_bits(bits)),
        (Literal::Float(bits), DType::F32) => Scalar::F32(f64::from_bits(bits) as f32),
        (Literal::Float(bits), _) => {
            return Err(Error::InvalidExpr(format!(
                "float literal {:?} used where {dtype} is needed; use an integer literal or cast the other operand to a float",
                f64::from_bits(bits)
            )))
        }
        (Literal::Int(v), DType::F64) => Scalar::F64(v as f64),
        (Literal::Int(v), DType::F32) => Scalar::F32(v as f32),
        (Literal::Int(v), DType::I32) => Scalar::I32(i32::try_from(v).map_err(|_| out_of_range(v))?),
        (Literal::Int(v), DType::U32) => Scalar::U32(u32::try_from(v).map_err(|_| out_of_range(v))?),
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
}
