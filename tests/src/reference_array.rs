//! The f64 reference of the array vocabulary's cases ([`crate::corpus_array`]): each call is
//! the `Expr` ops it is a map of, element by element with the reference's own scalar rules
//! ([`super::scalar`]), broadcast by numpy's rules; the constructors are numpy's formulas.

use polycompute::{BinaryOp, DType, Scalar, UnaryOp};

use super::corpus_array::{arange_len, scalar_of, Arg, ArrayCall, CallKind, Method};
use super::reference::{broadcast, Input, Reference};
use super::scalar::{self, get, Builder};

/// An operand of an elementwise call: an input array or a constant of the call's dtype.
enum Val<'a> {
    Array(&'a Input),
    Const(Scalar),
}

/// The reference of `call` on `inputs`.
pub(crate) fn compute(call: &ArrayCall, inputs: &[Input]) -> Result<Reference, String> {
    let t = call.dtype;
    let mut rest = inputs.iter();
    let mut next = || rest.next().ok_or_else(|| "fewer inputs than the call takes".to_string());
    let c = |v: f64| scalar_of(v, t);
    let bin = |op: BinaryOp, a: Scalar, b: Scalar| scalar::binary(op, a, b);
    match &call.kind {
        CallKind::Operator { op, rhs } => {
            let a = Val::Array(next()?);
            let b = arg(*rhs, t, &mut next)?;
            elementwise(t, &[a, b], |v| bin(*op, v[0], v[1]))
        }
        CallKind::ScalarLeft { op, lhs } => {
            elementwise(t, &[Val::Const(c(*lhs)), Val::Array(next()?)], |v| bin(*op, v[0], v[1]))
        }
        CallKind::Negate => elementwise(t, &[Val::Array(next()?)], |v| scalar::unary(UnaryOp::Neg, v[0])),
        CallKind::Assign(op) => {
            let a = Val::Array(next()?);
            elementwise(t, &[a, Val::Array(next()?)], |v| bin(*op, v[0], v[1]))
        }
        // Each operator is its own map: the product rounds before the sum.
        CallKind::ChainLeft => {
            let x = Val::Array(next()?);
            elementwise(t, &[x, Val::Array(next()?)], |v| bin(BinaryOp::Add, bin(BinaryOp::Mul, v[0], c(2.0)), v[1]))
        }
        CallKind::ChainRight => {
            let x = Val::Array(next()?);
            elementwise(t, &[x, Val::Array(next()?)], |v| bin(BinaryOp::Sub, v[1], bin(BinaryOp::Mul, v[0], c(2.0))))
        }
        CallKind::Method(Method::Unary(op)) => elementwise(t, &[Val::Array(next()?)], |v| scalar::unary(*op, v[0])),
        CallKind::Method(Method::Square) => elementwise(t, &[Val::Array(next()?)], |v| bin(BinaryOp::Mul, v[0], v[0])),
        CallKind::WithOperand { op, rhs } => {
            let x = Val::Array(next()?);
            let b = arg(*rhs, t, &mut next)?;
            elementwise(t, &[x, b], |v| bin(*op, v[0], v[1]))
        }
        // numpy's clip: minimum(maximum(x, lo), hi).
        CallKind::Clip { lo, hi } => {
            let x = Val::Array(next()?);
            let lo = arg(*lo, t, &mut next)?;
            let hi = arg(*hi, t, &mut next)?;
            elementwise(t, &[x, lo, hi], |v| bin(BinaryOp::Min, bin(BinaryOp::Max, v[0], v[1]), v[2]))
        }
        // Non-zero (NaN included) takes the first branch.
        CallKind::Where { a, b } => {
            let cond = Val::Array(next()?);
            let a = arg(*a, t, &mut next)?;
            let b = arg(*b, t, &mut next)?;
            elementwise(t, &[cond, a, b], |v| if scalar::truthy(v[0]) { v[1] } else { v[2] })
        }
        CallKind::MapScaled => {
            let x = Val::Array(next()?);
            elementwise(t, &[x, Val::Array(next()?)], |v| bin(BinaryOp::Mul, v[0], scalar::cast(v[1], t)))
        }
        CallKind::Arange { start, stop, step } => Ok(arange(t, *start, *stop, *step)),
        CallKind::Linspace { start, stop, num } => linspace(t, *start, *stop, *num),
        CallKind::Eye(n) => {
            let values = (0..n * n).map(|i| c(if i / n == i % n { 1.0 } else { 0.0 }));
            Ok(filled(t, values, vec![*n, *n]))
        }
        CallKind::Ones(dims) => Ok(filled(t, (0..dims.iter().product()).map(|_| c(1.0)), dims.clone())),
        CallKind::ZerosLike | CallKind::OnesLike | CallKind::FullLike(_) => {
            let (dims, _) = next()?;
            let v = match call.kind {
                CallKind::ZerosLike => 0.0,
                CallKind::FullLike(v) => v,
                _ => 1.0,
            };
            Ok(filled(t, (0..dims.iter().product()).map(|_| c(v)), dims.clone()))
        }
    }
}

fn arg<'a>(a: Arg, dtype: DType, next: &mut impl FnMut() -> Result<&'a Input, String>) -> Result<Val<'a>, String> {
    Ok(match a {
        Arg::Array => Val::Array(next()?),
        Arg::Scalar(v) => Val::Const(scalar_of(v, dtype)),
    })
}

fn filled(dtype: DType, values: impl Iterator<Item = Scalar>, dims: Vec<usize>) -> Reference {
    let mut out = Builder::new(dtype, 0);
    values.for_each(|v| out.push(v));
    Reference { values: out.finish(), dims, bound: None }
}

/// Row-major multi-index of flat position `flat` in `dims`.
fn unflatten(mut flat: usize, dims: &[usize], idx: &mut [usize]) {
    for (slot, &d) in idx.iter_mut().zip(dims).rev() {
        *slot = flat % d;
        flat /= d;
    }
}

/// Flat offset into an input of `dims` for the output multi-index `idx` (broadcast axes
/// read index 0).
fn offset(idx: &[usize], dims: &[usize]) -> usize {
    let lead = idx.len() - dims.len();
    dims.iter().enumerate().fold(0, |acc, (j, &d)| acc * d + if d == 1 { 0 } else { idx[lead + j] })
}

/// `f` of the operands at every position of their broadcast shape, as `dtype`.
fn elementwise(dtype: DType, vals: &[Val<'_>], f: impl Fn(&[Scalar]) -> Scalar) -> Result<Reference, String> {
    let shapes: Vec<&[usize]> = vals
        .iter()
        .filter_map(|v| match v {
            Val::Array((d, _)) => Some(d.as_slice()),
            Val::Const(_) => None,
        })
        .collect();
    let dims = broadcast(&shapes)?;
    let n: usize = dims.iter().product();
    let mut out = Builder::new(dtype, n);
    let (mut idx, mut args) = (vec![0; dims.len()], Vec::with_capacity(vals.len()));
    for o in 0..n {
        unflatten(o, &dims, &mut idx);
        args.clear();
        args.extend(vals.iter().map(|v| match v {
            Val::Array((d, x)) => get(x, offset(&idx, d)),
            Val::Const(s) => *s,
        }));
        out.push(f(&args));
    }
    Ok(Reference { values: out.finish(), dims, bound: None })
}

/// numpy's `arange` with the bounds converted to `dtype` first: `start + i * step` in f64
/// (exact for integers) for `i` below numpy's length, each rounded once.
fn arange(dtype: DType, start: f64, stop: f64, step: f64) -> Reference {
    let len = arange_len(dtype, start, stop, step);
    let [a, s] = [start, step].map(|v| scalar_of(v, dtype).to_f64());
    let values = (0..len).map(|i| scalar::cast(Scalar::F64(a + i as f64 * s), dtype));
    filled(dtype, values, vec![len])
}

/// numpy's `linspace` (`endpoint=True`) in f64: `step = (stop - start) / (num - 1)`,
/// `y[i] = i * step + start`, the last one `stop` itself; one value is `start`.
fn linspace(dtype: DType, start: f64, stop: f64, num: usize) -> Result<Reference, String> {
    if !dtype.is_float() {
        return Err(format!("linspace of {dtype}"));
    }
    let (a, b) = (scalar_of(start, dtype).to_f64(), scalar_of(stop, dtype).to_f64());
    let mut y: Vec<f64> = match num {
        0 => vec![],
        1 => vec![a],
        _ => {
            let step = (b - a) / (num - 1) as f64;
            (0..num).map(|i| i as f64 * step + a).collect()
        }
    };
    if let Some(last) = y.last_mut().filter(|_| num > 1) {
        *last = b;
    }
    Ok(filled(dtype, y.into_iter().map(|v| scalar::float(dtype, v)), vec![num]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute::{f16, HostVec};

    fn f64s(r: &Reference) -> Vec<f64> {
        (0..r.values.len()).map(|i| get(&r.values, i).to_f64()).collect()
    }

    fn call(dtype: DType, kind: CallKind) -> ArrayCall {
        ArrayCall { dtype, kind }
    }

    #[test]
    fn operators_broadcast_and_take_scalars_on_either_side() {
        let x: Input = (vec![2, 1], HostVec::I32(vec![7, -7]));
        let y: Input = (vec![3], HostVec::I32(vec![2, -2, 0]));
        let div = call(DType::I32, CallKind::Operator { op: BinaryOp::Div, rhs: Arg::Array });
        let r = compute(&div, &[x.clone(), y]).unwrap();
        // Floor division; by zero gives 0.
        assert_eq!((r.dims.clone(), f64s(&r)), (vec![2, 3], vec![3.0, -4.0, 0.0, -4.0, 3.0, 0.0]));
        let left = call(DType::I32, CallKind::ScalarLeft { op: BinaryOp::Rem, lhs: 7.0 });
        assert_eq!(f64s(&compute(&left, &[(vec![2], HostVec::I32(vec![-2, 0]))]).unwrap()), vec![-1.0, 0.0]);
        let chain = call(DType::F32, CallKind::ChainRight);
        let r = compute(&chain, &[(vec![1], HostVec::F32(vec![1.5])), (vec![2], HostVec::F32(vec![1.0, 4.0]))]);
        assert_eq!(f64s(&r.unwrap()), vec![-2.0, 1.0]);
    }

    #[test]
    fn clip_and_where_follow_numpy() {
        let x: Input = (vec![4], HostVec::F32(vec![f32::NAN, -5.0, 0.5, 5.0]));
        let clip = |lo, hi| {
            f64s(
                &compute(
                    &call(DType::F32, CallKind::Clip { lo: Arg::Scalar(lo), hi: Arg::Scalar(hi) }),
                    std::slice::from_ref(&x),
                )
                .unwrap(),
            )
        };
        let r = clip(-1.0, 1.0);
        assert!(r[0].is_nan() && r[1..] == [-1.0, 0.5, 1.0]);
        let r = clip(1.0, -1.0);
        assert!(r[0].is_nan() && r[1..] == [-1.0, -1.0, -1.0]);
        let cond: Input = (vec![4], HostVec::F16(vec![f16::NAN, f16::NEG_ZERO, f16::ONE, f16::ZERO]));
        let w = call(DType::I32, CallKind::Where { a: Arg::Scalar(1.0), b: Arg::Scalar(2.0) });
        assert_eq!(f64s(&compute(&w, &[cond]).unwrap()), vec![1.0, 2.0, 1.0, 2.0]);
        let relu = call(DType::F64, CallKind::WithOperand { op: BinaryOp::Max, rhs: Arg::Scalar(0.0) });
        let r = compute(&relu, &[(vec![1], HostVec::F64(vec![-0.0]))]).unwrap();
        assert!(f64s(&r)[0] == 0.0 && f64s(&r)[0].is_sign_positive());
    }

    #[test]
    fn constructors_follow_numpy() {
        let r = compute(&call(DType::I32, CallKind::Arange { start: 5.0, stop: -5.0, step: -2.0 }), &[]).unwrap();
        assert_eq!(f64s(&r), vec![5.0, 3.0, 1.0, -1.0, -3.0]);
        let r = compute(&call(DType::F64, CallKind::Arange { start: 1.0, stop: 0.0, step: 0.5 }), &[]).unwrap();
        assert_eq!(r.dims, vec![0]);
        let r = compute(&call(DType::F64, CallKind::Linspace { start: 0.0, stop: 1.0, num: 5 }), &[]).unwrap();
        assert_eq!(f64s(&r), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        let one = compute(&call(DType::F32, CallKind::Linspace { start: 2.0, stop: 9.0, num: 1 }), &[]).unwrap();
        assert_eq!(f64s(&one), vec![2.0]);
        assert!(compute(&call(DType::I32, CallKind::Linspace { start: 0.0, stop: 1.0, num: 2 }), &[]).is_err());
        let eye = compute(&call(DType::U32, CallKind::Eye(2)), &[]).unwrap();
        assert_eq!((eye.dims.clone(), f64s(&eye)), (vec![2, 2], vec![1.0, 0.0, 0.0, 1.0]));
    }
}
