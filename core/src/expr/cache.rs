//! A per-thread cache of compiled programs, so that a closure rebuilt on every call
//! (`map(&[&x, &y], |a| &a[0] * 1.5 + &a[1])` in a loop) is type-checked and lowered once.
//!
//! The key is the expression's structure (equal trees, whatever their `Arc`s), the input
//! dtypes and the requested result dtype. Lookups hash the tree with FxHash and compare it
//! with the stored tree: no allocation and no lock on a hit. Only small expressions are
//! cached (at most [`MAX_NODES`] nodes, counting a shared subtree at each use): they are
//! the ones whose compile time is most of a call; a larger one compiles as before, so the
//! walk stays linear even for deep shared DAGs (`e = &e + &e`, 200 times).
//!
//! Per thread, so no two threads contend; each holds at most [`CAPACITY`] programs and is
//! emptied when full (a real workload reuses a handful of expressions).

use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHasher};
use smallvec::SmallVec;

use super::{Expr, Node, Program};
use crate::dtype::DType;
use crate::error::Result;

/// Largest expression cached, in nodes visited by a tree walk.
const MAX_NODES: usize = 64;

/// Programs kept per thread before its cache is emptied.
const CAPACITY: usize = 1024;

/// One cached program and the key it was compiled for.
struct Entry {
    expr: Expr,
    inputs: Box<[DType]>,
    output: Option<DType>,
    program: Arc<Program>,
}

thread_local! {
    /// Entries under the hash of their key; a collision replaces the older entry.
    static CACHE: RefCell<FxHashMap<u64, Entry>> = RefCell::new(FxHashMap::default());
    /// `Expr::arg(0)`, `Expr::arg(1)`, …: the arguments handed to `map`'s closures.
    static ARGS: RefCell<Vec<Expr>> = const { RefCell::new(Vec::new()) };
}

/// Arguments kept per thread (a map with more inputs makes the rest afresh).
const KEPT_ARGS: usize = 64;

/// `[Expr::arg(0), …, Expr::arg(n - 1)]`, cloned from a per-thread list: a call of `map`
/// allocates neither the nodes nor, for up to four inputs, the list.
pub(crate) fn args(n: usize) -> SmallVec<[Expr; 4]> {
    let kept = ARGS.try_with(|args| {
        // No other code runs while the list is borrowed: only teardown makes this fail.
        let mut args = args.try_borrow_mut().ok()?;
        while args.len() < n.min(KEPT_ARGS) {
            let next = Expr::arg(args.len());
            args.push(next);
        }
        Some(args.iter().take(n).cloned().chain((args.len()..n).map(Expr::arg)).collect())
    });
    kept.ok().flatten().unwrap_or_else(|| (0..n).map(Expr::arg).collect())
}

/// [`Program::compile`] (`output` `None`) or [`Program::compile_to`], remembered per thread:
/// an equal expression over the same input dtypes gets the same `Arc<Program>` back.
///
/// ```
/// use std::sync::Arc;
/// use polycompute_core::expr::compile_cached;
/// use polycompute_core::{DType, Expr};
///
/// let axpy = |x: Expr, y: Expr| x * 1.5 + y;
/// let a = compile_cached(&axpy(Expr::arg(0), Expr::arg(1)), &[DType::F32; 2], Some(DType::F32))?;
/// // A tree rebuilt from scratch is found by its structure.
/// let b = compile_cached(&axpy(Expr::arg(0), Expr::arg(1)), &[DType::F32; 2], Some(DType::F32))?;
/// assert!(Arc::ptr_eq(&a, &b));
/// # Ok::<(), polycompute_core::Error>(())
/// ```
pub fn compile_cached(expr: &Expr, inputs: &[DType], output: Option<DType>) -> Result<Arc<Program>> {
    let compile = || {
        match output {
            Some(out) => Program::compile_to(expr, inputs, out),
            None => Program::compile(expr, inputs),
        }
        .map(Arc::new)
    };
    let Some(hash) = key_hash(expr, inputs, output) else {
        return compile();
    };
    let hit = CACHE
        .try_with(|cache| {
            let cache = cache.borrow();
            let e = cache.get(&hash)?;
            (e.output == output && *e.inputs == *inputs && e.expr == *expr).then(|| e.program.clone())
        })
        .ok()
        .flatten();
    if let Some(program) = hit {
        return Ok(program);
    }
    let program = compile()?;
    // During thread teardown the cache is gone: the program is simply not remembered.
    let _ = CACHE.try_with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= CAPACITY {
            cache.clear();
        }
        let entry = Entry { expr: expr.clone(), inputs: inputs.into(), output, program: program.clone() };
        cache.insert(hash, entry);
    });
    Ok(program)
}

/// The hash of the key, or `None` when the expression has more than [`MAX_NODES`] nodes.
fn key_hash(expr: &Expr, inputs: &[DType], output: Option<DType>) -> Option<u64> {
    let mut h = FxHasher::default();
    let mut budget = MAX_NODES;
    hash_tree(expr, &mut h, &mut budget)?;
    inputs.hash(&mut h);
    output.hash(&mut h);
    Some(h.finish())
}

/// Hashes the tree's structure, spending one unit of `budget` per node; `None` when it
/// runs out.
fn hash_tree(e: &Expr, h: &mut FxHasher, budget: &mut usize) -> Option<()> {
    *budget = budget.checked_sub(1)?;
    let node = e.node();
    std::mem::discriminant(node).hash(h);
    match node {
        Node::Arg(n) => n.hash(h),
        Node::Lit(lit) => lit.hash(h),
        Node::Index => {}
        Node::Unary(op, a) => {
            op.hash(h);
            hash_tree(a, h, budget)?;
        }
        Node::Binary(op, a, b) => {
            op.hash(h);
            hash_tree(a, h, budget)?;
            hash_tree(b, h, budget)?;
        }
        Node::Select(c, a, b) => {
            hash_tree(c, h, budget)?;
            hash_tree(a, h, budget)?;
            hash_tree(b, h, budget)?;
        }
        Node::Cast(a, dtype) => {
            dtype.hash(h);
            hash_tree(a, h, budget)?;
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn axpy() -> Expr {
        Expr::arg(0) * 1.5 + Expr::arg(1)
    }

    #[test]
    fn equal_trees_share_one_program_and_keys_keep_them_apart() {
        let f32s = [DType::F32; 2];
        let a = compile_cached(&axpy(), &f32s, None).unwrap();
        assert!(Arc::ptr_eq(&a, &compile_cached(&axpy(), &f32s, None).unwrap()));
        assert_eq!(*a, Program::compile(&axpy(), &f32s).unwrap());
        // Another dtype, another requested result, another literal: other programs.
        let f64s = compile_cached(&axpy(), &[DType::F64; 2], None).unwrap();
        assert_eq!(f64s.output_dtype(), DType::F64);
        let to = compile_cached(&axpy(), &f32s, Some(DType::F32)).unwrap();
        assert!(!Arc::ptr_eq(&a, &to));
        let other = compile_cached(&(Expr::arg(0) * 2.5 + Expr::arg(1)), &f32s, None).unwrap();
        assert_ne!(*a, *other);
        // -0.0 and 0.0 are different literals.
        let (neg, pos) = (Expr::arg(0) + -0.0, Expr::arg(0) + 0.0);
        let (pn, pp) =
            (compile_cached(&neg, &[DType::F32], None).unwrap(), compile_cached(&pos, &[DType::F32], None).unwrap());
        assert_ne!(*pn, *pp);
    }

    #[test]
    fn errors_are_reported_every_time() {
        for _ in 0..2 {
            let err = compile_cached(&(Expr::arg(0) + 2.5), &[DType::I32], None).unwrap_err();
            assert!(matches!(err, Error::InvalidExpr(_)), "{err}");
        }
    }

    #[test]
    fn large_and_deep_shared_expressions_compile_uncached_in_linear_time() {
        let mut e = Expr::arg(0);
        for _ in 0..200 {
            e = &e + &e;
        }
        assert_eq!(key_hash(&e, &[DType::F64], None), None);
        let p = compile_cached(&e, &[DType::F64], None).unwrap();
        assert_eq!(p.insts.len(), 201);
        assert!(!Arc::ptr_eq(&p, &compile_cached(&e, &[DType::F64], None).unwrap()));
    }
}
