//! The f64 reference of the axes cases ([`crate::corpus_axes`]): each output element is one
//! lane, the elements of the reduced axes in row-major order, reduced by the kernel
//! reductions' own reference ([`super::reference::reduce_lane`]) or by numpy's `var`/`std`
//! and scipy's `logsumexp`, written out in f64.

use polycompute::{DType, Scalar};

use super::corpus_axes::{AxesCall, Reduction};
use super::reference::{accurate_sum, reduce_lane, Input, Reference};
use super::scalar::{self, get, Builder};
use super::tolerance::{self, ErrorBound, Tolerance};

/// The reference of `call` on `input`.
pub(crate) fn compute(call: &AxesCall, (dims, v): &Input) -> Result<Reference, String> {
    let dtype = v.dtype();
    let (out_dtype, out_shape) = call.output(dtype, dims).map_err(|e| e.to_string())?;
    let axes = call.axes();
    let reduced = axes.resolve(dims.len(), call.reduction.name()).map_err(|e| e.to_string())?;
    let kept: Vec<usize> = (0..dims.len()).filter(|a| !reduced.contains(a)).collect();
    let kept_dims: Vec<usize> = kept.iter().map(|&a| dims[a]).collect();
    let lane_dims: Vec<usize> = reduced.iter().map(|&a| dims[a]).collect();
    let (outputs, len) = (kept_dims.iter().product::<usize>(), lane_dims.iter().product::<usize>());
    let mut out = Builder::new(out_dtype, outputs);
    let mut bounds = Vec::with_capacity(outputs);
    let (mut kidx, mut lidx, mut full) = (vec![0; kept.len()], vec![0; reduced.len()], vec![0; dims.len()]);
    let mut lane = Vec::with_capacity(len);
    for o in 0..outputs {
        unflatten(o, &kept_dims, &mut kidx);
        lane.clear();
        for j in 0..len {
            unflatten(j, &lane_dims, &mut lidx);
            kept.iter().zip(&kidx).chain(reduced.iter().zip(&lidx)).for_each(|(&a, &i)| full[a] = i);
            lane.push(get(v, flat(&full, dims)));
        }
        let (value, bound) = match call.reduction {
            // numpy's `axis=()`: the elements themselves (the mean's converted to f64).
            Reduction::Kind(_) if !axes.is_all() && reduced.is_empty() => {
                (scalar::cast(lane[0], out_dtype), ErrorBound { limit: 0.0, magnitude: 0.0 })
            }
            Reduction::Kind(kind) => {
                if kind.needs_elements() && lane.is_empty() {
                    return Err(format!("{} of no elements", kind.name()));
                }
                reduce_lane(kind, dtype, &lane)
            }
            Reduction::Var(ddof) => moment(&lane, ddof, false, dtype, out_dtype),
            Reduction::Std(ddof) => moment(&lane, ddof, true, dtype, out_dtype),
            Reduction::LogSumExp => logsumexp(&lane, dtype),
        };
        out.push(value);
        bounds.push(bound);
    }
    let tol = match call.reduction {
        Reduction::Kind(kind) => tolerance::reduce(kind, dtype),
        Reduction::Var(_) | Reduction::Std(_) => tolerance::moment(dtype),
        Reduction::LogSumExp => tolerance::logsumexp(dtype),
    };
    let bound = (tol == Tolerance::Bound).then_some(bounds);
    Ok(Reference { values: out.finish(), dims: out_shape.dims().to_vec(), bound })
}

/// Row-major multi-index of flat position `flat` in `dims`.
fn unflatten(mut flat: usize, dims: &[usize], idx: &mut [usize]) {
    for (slot, &d) in idx.iter_mut().zip(dims).rev() {
        *slot = flat % d;
        flat /= d;
    }
}

fn flat(idx: &[usize], dims: &[usize]) -> usize {
    idx.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// numpy's two-pass `var` (`sum(|x - mean|^2) / max(n - ddof, 0)`), or its root, in f64.
fn moment(lane: &[Scalar], ddof: usize, sqrt: bool, dtype: DType, out: DType) -> (Scalar, ErrorBound) {
    let n = lane.len();
    let xs = || lane.iter().map(|s| s.to_f64());
    let (sum, abs_sum) = accurate_sum(xs());
    let mean = sum / n as f64;
    let (squares, _) = accurate_sum(xs().map(|x| (x - mean) * (x - mean)));
    let divisor = n.saturating_sub(ddof);
    // IEEE's division: a positive sum over 0 is inf, 0 / 0 and NaN / 0 are NaN.
    let var = squares / divisor as f64;
    let b = tolerance::var_bound(n, abs_sum, mean, squares, divisor, dtype);
    if sqrt {
        let std = var.sqrt();
        (scalar::float(out, std), tolerance::std_bound(b, std, dtype))
    } else {
        (scalar::float(out, var), b)
    }
}

/// scipy's `logsumexp`: `m + ln(sum(exp(x - m)))`, `m` the lane's maximum, or 0 where that
/// maximum is not finite (a lane of -inf, one with +inf, one with NaN) or there is none.
fn logsumexp(lane: &[Scalar], dtype: DType) -> (Scalar, ErrorBound) {
    let xs: Vec<f64> = lane.iter().map(|s| s.to_f64()).collect();
    // NaN-propagating maximum, as the kernel's.
    let max =
        xs.iter().copied().fold(f64::NEG_INFINITY, |m, x| if x.is_nan() || m.is_nan() { f64::NAN } else { m.max(x) });
    let shift = if max.is_finite() { max } else { 0.0 };
    let t: Vec<f64> = xs.iter().map(|x| x - shift).collect();
    let (s, _) = accurate_sum(t.iter().map(|t| t.exp()));
    let out = s.ln() + shift;
    (scalar::float(dtype, out), tolerance::logsumexp_bound(&t, s, out, dtype))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute::{HostVec, ReduceKind};

    fn call(reduction: Reduction, axes: Option<Vec<isize>>, keepdims: bool) -> AxesCall {
        AxesCall { reduction, axes, keepdims }
    }

    fn f64s(r: &Reference) -> Vec<f64> {
        (0..r.values.len()).map(|i| get(&r.values, i).to_f64()).collect()
    }

    #[test]
    fn lanes_are_the_reduced_axes_row_major() {
        // [2, 3, 2] = 0..12; sum over axes 0 and 2 keeps axis 1: (0+1+6+7), (2+3+8+9), ...
        let x: Input = (vec![2, 3, 2], HostVec::I32((0..12).collect()));
        let r = compute(&call(Reduction::Kind(ReduceKind::Sum), Some(vec![0, -1]), false), &x).unwrap();
        assert_eq!((r.dims.clone(), f64s(&r)), (vec![3], vec![14.0, 22.0, 30.0]));
        let r = compute(&call(Reduction::Kind(ReduceKind::Sum), Some(vec![0, -1]), true), &x).unwrap();
        assert_eq!(r.dims, vec![1, 3, 1]);
        let r = compute(&call(Reduction::Kind(ReduceKind::ArgMax), Some(vec![-2]), false), &x).unwrap();
        assert_eq!((r.dims.clone(), f64s(&r)), (vec![2, 2], vec![2.0; 4]));
        let r = compute(&call(Reduction::Kind(ReduceKind::Mean), Some(vec![]), false), &x).unwrap();
        assert_eq!((r.values.dtype(), r.dims.clone()), (DType::F64, vec![2, 3, 2]));
        assert!(compute(&call(Reduction::Kind(ReduceKind::Sum), Some(vec![1, -2]), false), &x).is_err());
    }

    #[test]
    fn var_follows_numpy_for_every_ddof() {
        let x: Input = (vec![4], HostVec::F64(vec![1.0, 2.0, 3.0, 4.0]));
        let var = |ddof| f64s(&compute(&call(Reduction::Var(ddof), None, false), &x).unwrap())[0];
        assert_eq!((var(0), var(1)), (1.25, 5.0 / 3.0));
        assert_eq!((var(4), var(9)), (f64::INFINITY, f64::INFINITY));
        let one: Input = (vec![1], HostVec::F64(vec![7.0]));
        assert!(f64s(&compute(&call(Reduction::Var(1), None, false), &one).unwrap())[0].is_nan());
        let std = f64s(&compute(&call(Reduction::Std(0), None, false), &x).unwrap())[0];
        assert_eq!(std, 1.25f64.sqrt());
    }

    #[test]
    fn logsumexp_follows_scipy_on_special_rows() {
        let inf = f64::INFINITY;
        let rows = vec![-inf, -inf, f64::NAN, 0.0, inf, 1.0, 1000.0, 1000.0];
        let x: Input = (vec![4, 2], HostVec::F64(rows));
        let r = f64s(&compute(&call(Reduction::LogSumExp, Some(vec![-1]), false), &x).unwrap());
        assert_eq!(r[0], -inf);
        assert!(r[1].is_nan());
        assert_eq!(r[2], inf);
        assert_eq!(r[3], 1000.0 + 2f64.ln());
    }
}
