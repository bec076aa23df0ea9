//! The f64 reference of the view and data-movement ops — views, data movement, scans, sorting —
//! element at a time from numpy's rules (as `polycompute::op` states them), written
//! independently of the CPU backend: explicit multi-indices, a comparison sort with numpy's
//! comparator, compensated prefix sums.

use std::cmp::Ordering;

use polycompute::{BinaryOp, DType, HostVec, Layout, Program, Scalar, ScanKind};

use super::reference::{accurate_sum, AccurateSum, Input, Reference};
use super::scalar::{self, get, Builder};
use super::tolerance::{self, ErrorBound};

fn plain(values: HostVec, dims: Vec<usize>) -> Reference {
    Reference { values, dims, bound: None }
}

fn size(dims: &[usize]) -> usize {
    dims.iter().product()
}

/// `(outer, n, inner)` of `dims` around `axis`.
fn split(dims: &[usize], axis: usize) -> Result<(usize, usize, usize), String> {
    if axis >= dims.len() {
        return Err(format!("axis {axis} out of range for {dims:?}"));
    }
    Ok((size(&dims[..axis]), dims[axis], size(&dims[axis + 1..])))
}

/// The elements a view reads, in its row-major order, as an input of its own shape.
pub fn read_view(buffer: &HostVec, layout: &Layout) -> Result<Input, String> {
    let dims = layout.shape.dims().to_vec();
    let mut out = Builder::new(buffer.dtype(), size(&dims));
    for flat in 0..size(&dims) {
        let (mut rest, mut at) = (flat, layout.offset as i64);
        for ax in (0..dims.len()).rev() {
            at += (rest % dims[ax]) as i64 * layout.strides[ax] as i64;
            rest /= dims[ax];
        }
        if at < 0 || at as usize >= buffer.len() {
            return Err(format!("view {layout:?} reads element {at} of {}", buffer.len()));
        }
        out.push(get(buffer, at as usize));
    }
    Ok((dims, out.finish()))
}

/// A map over views: each view read out, then the ordinary map reference.
pub fn map_views(program: &Program, layouts: &[Layout], inputs: &[Input]) -> Result<Reference, String> {
    let read = inputs.iter().zip(layouts).map(|((_, v), l)| read_view(v, l)).collect::<Result<Vec<_>, _>>()?;
    super::reference::map_reference(program, &read)
}

/// numpy's concatenate.
pub fn concat(inputs: &[Input], axis: usize) -> Result<Reference, String> {
    let (first, _) = inputs.first().ok_or("concat of nothing")?;
    let mut dims = first.clone();
    split(&dims, axis)?;
    dims[axis] = inputs.iter().map(|(d, _)| d[axis]).sum();
    let (outer, n, inner) = split(&dims, axis)?;
    let mut out = Builder::new(inputs[0].1.dtype(), size(&dims));
    for o in 0..outer {
        for (d, v) in inputs {
            for k in 0..d[axis] * inner {
                out.push(get(v, o * d[axis] * inner + k));
            }
        }
    }
    let _ = n;
    Ok(plain(out.finish(), dims))
}

/// Index `k` of an index array as a position on an axis of length `n` (negative from the end).
fn position(idx: &HostVec, k: usize, n: usize) -> Result<usize, String> {
    let i = match get(idx, k) {
        s @ (Scalar::I32(_) | Scalar::U32(_) | Scalar::I64(_)) => super::scalar::int_value(s).unwrap_or(0),
        s => return Err(format!("index of dtype {}", s.dtype())),
    };
    let p = if i < 0 { i + n as i128 } else { i };
    if p < 0 || p >= n as i128 {
        return Err(format!("index {i} out of range for {n}"));
    }
    Ok(p as usize)
}

/// numpy's take along one axis.
pub fn take(a: &Input, idx: &Input, axis: usize) -> Result<Reference, String> {
    let (outer, n, inner) = split(&a.0, axis)?;
    let m = size(&idx.0);
    let mut dims = a.0[..axis].to_vec();
    dims.extend_from_slice(&idx.0);
    dims.extend_from_slice(&a.0[axis + 1..]);
    let mut out = Builder::new(a.1.dtype(), outer * m * inner);
    for o in 0..outer {
        for k in 0..m {
            let p = position(&idx.1, k, n)?;
            for i in 0..inner {
                out.push(get(&a.1, (o * n + p) * inner + i));
            }
        }
    }
    Ok(plain(out.finish(), dims))
}

/// numpy's take_along_axis.
pub fn take_along_axis(a: &Input, idx: &Input, axis: usize) -> Result<Reference, String> {
    let (outer, n, inner) = split(&a.0, axis)?;
    let m = *idx.0.get(axis).ok_or("indices of the wrong rank")?;
    let mut out = Builder::new(a.1.dtype(), outer * m * inner);
    for o in 0..outer {
        for k in 0..m {
            for i in 0..inner {
                let p = position(&idx.1, (o * m + k) * inner + i, n)?;
                out.push(get(&a.1, (o * n + p) * inner + i));
            }
        }
    }
    Ok(plain(out.finish(), idx.0.clone()))
}

/// `np.add.at` on a copy of `a`: floats summed exactly (compensated) per element, with the
/// bound of a sum of that many terms.
pub fn scatter_add(a: &Input, idx: &Input, values: &Input, axis: usize) -> Result<Reference, String> {
    let (outer, n, inner) = split(&a.0, axis)?;
    let m = size(&idx.0);
    let dtype = a.1.dtype();
    // Every term of each output element, the element itself first, in index order.
    let mut terms: Vec<Vec<Scalar>> = (0..a.1.len()).map(|e| vec![get(&a.1, e)]).collect();
    for o in 0..outer {
        for k in 0..m {
            let p = position(&idx.1, k, n)?;
            for i in 0..inner {
                terms[(o * n + p) * inner + i].push(get(&values.1, (o * m + k) * inner + i));
            }
        }
    }
    let mut out = Builder::new(dtype, terms.len());
    let mut bounds = Vec::with_capacity(terms.len());
    for t in &terms {
        if dtype.is_float() {
            let (sum, abs) = accurate_sum(t.iter().map(|s| s.to_f64()));
            out.push(scalar::float(dtype, sum));
            bounds.push(ErrorBound { limit: tolerance::scatter_bound(t.len(), abs, dtype), magnitude: abs });
        } else {
            out.push(t[1..].iter().fold(t[0], |acc, &x| scalar::binary(BinaryOp::Add, acc, x)));
        }
    }
    Ok(Reference { values: out.finish(), dims: a.0.clone(), bound: dtype.is_float().then_some(bounds) })
}

/// numpy's pad with a constant.
pub fn pad(a: &Input, widths: &[(usize, usize)], value: Scalar) -> Result<Reference, String> {
    if widths.len() != a.0.len() {
        return Err("one (before, after) per axis".into());
    }
    let dims: Vec<usize> = a.0.iter().zip(widths).map(|(&d, &(lo, hi))| d + lo + hi).collect();
    let mut out = Builder::new(a.1.dtype(), size(&dims));
    let mut idx = vec![0usize; dims.len()];
    for flat in 0..size(&dims) {
        let mut rest = flat;
        for ax in (0..dims.len()).rev() {
            idx[ax] = rest % dims[ax];
            rest /= dims[ax];
        }
        let inside = idx.iter().zip(widths).zip(&a.0).all(|((&i, &(lo, _)), &d)| i >= lo && i < lo + d);
        if inside {
            let src = idx.iter().zip(widths).zip(&a.0).fold(0, |acc, ((&i, &(lo, _)), &d)| acc * d + (i - lo));
            out.push(get(&a.1, src));
        } else {
            out.push(value);
        }
    }
    Ok(plain(out.finish(), dims))
}

/// cumsum/cumprod: integers wrap; floats from the exact prefix (compensated sum, f64
/// product) with the bound of a sequential sum or product of that many terms.
pub fn scan(a: &Input, kind: ScanKind, axis: usize) -> Result<Reference, String> {
    let (outer, n, inner) = split(&a.0, axis)?;
    let dtype = a.1.dtype();
    let mut values = vec![Scalar::zero(dtype); a.1.len()];
    let mut bounds = vec![ErrorBound { limit: 0.0, magnitude: 0.0 }; a.1.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            // One pass per lane: each prefix's value is the previous prefix's, one element on
            // (every accumulation below is a left fold, so this equals folding each prefix anew).
            let mut sum = AccurateSum::default();
            let mut product = 1.0f64;
            let mut run: Option<Scalar> = None;
            for k in 0..n {
                let x = get(&a.1, at(k));
                let (v, b) = match (kind, dtype.is_float()) {
                    (ScanKind::Sum, true) => {
                        sum.push(x.to_f64());
                        let (s, abs) = sum.value();
                        (
                            scalar::float(dtype, s),
                            ErrorBound { limit: tolerance::scan_bound(k + 1, abs, dtype), magnitude: abs },
                        )
                    }
                    (ScanKind::Prod, true) => {
                        product *= x.to_f64();
                        let p = product;
                        (
                            scalar::float(dtype, p),
                            ErrorBound { limit: tolerance::prod_bound(k + 1, p, dtype), magnitude: p.abs() },
                        )
                    }
                    (kind, false) => {
                        let op = if kind == ScanKind::Sum { BinaryOp::Add } else { BinaryOp::Mul };
                        let v = run.map_or(x, |acc| scalar::binary(op, acc, x));
                        run = Some(v);
                        (v, ErrorBound { limit: 0.0, magnitude: 0.0 })
                    }
                };
                values[at(k)] = v;
                bounds[at(k)] = b;
            }
        }
    }
    let mut out = Builder::new(dtype, values.len());
    values.into_iter().for_each(|v| out.push(v));
    Ok(Reference { values: out.finish(), dims: a.0.clone(), bound: dtype.is_float().then_some(bounds) })
}

/// numpy's sort order: NaN after everything, `-0.0 == +0.0`, integers by value.
fn numpy_order(a: Scalar, b: Scalar) -> Ordering {
    if let (Some(x), Some(y)) = (super::scalar::int_value(a), super::scalar::int_value(b)) {
        // Exactly (f64 would merge i64s past 2^53); false before true.
        return x.cmp(&y);
    }
    let (x, y) = (a.to_f64(), b.to_f64());
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        // f64 holds every i32 and u32 exactly, and compares -0.0 equal to +0.0.
        _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// `(outer, n, inner)` and each lane's positions in sorted order.
type SortedLanes = (usize, usize, usize, Vec<Vec<usize>>);

/// Each lane's positions in numpy's order (descending with `desc`), ties by position (a
/// stable sort).
fn lanes_sorted(a: &Input, axis: usize, desc: bool) -> Result<SortedLanes, String> {
    let (outer, n, inner) = split(&a.0, axis)?;
    let mut all = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let lane: Vec<Scalar> = (0..n).map(|k| get(&a.1, (o * n + k) * inner + i)).collect();
            let mut order: Vec<usize> = (0..n).collect();
            // `sort_by` is stable: equal elements keep their input order.
            order.sort_by(|&p, &q| {
                let c = numpy_order(lane[p], lane[q]);
                if desc {
                    c.reverse()
                } else {
                    c
                }
            });
            all.push(order);
        }
    }
    Ok((outer, n, inner, all))
}

/// Stable sort (`values`) or argsort (`!values`) along `axis`.
pub fn sort(a: &Input, axis: usize, values: bool) -> Result<Reference, String> {
    let (outer, n, inner, lanes) = lanes_sorted(a, axis, false)?;
    let mut out = vec![Scalar::U32(0); a.1.len()];
    for o in 0..outer {
        for i in 0..inner {
            for (k, &p) in lanes[o * inner + i].iter().enumerate() {
                out[(o * n + k) * inner + i] =
                    if values { get(&a.1, (o * n + p) * inner + i) } else { Scalar::U32(p as u32) };
            }
        }
    }
    let dtype = if values { a.1.dtype() } else { DType::U32 };
    let mut b = Builder::new(dtype, out.len());
    out.into_iter().for_each(|s| b.push(s));
    Ok(plain(b.finish(), a.0.clone()))
}

/// The indices of the `k` largest along `axis`: descending, ties by lower index, NaN first.
pub fn topk(a: &Input, k: usize, axis: usize) -> Result<Reference, String> {
    let (outer, n, inner, lanes) = lanes_sorted(a, axis, true)?;
    if k > n {
        return Err(format!("k = {k} > {n}"));
    }
    let mut dims = a.0.clone();
    dims[axis] = k;
    let mut out = vec![0u32; outer * k * inner];
    for o in 0..outer {
        for i in 0..inner {
            for (j, &p) in lanes[o * inner + i].iter().take(k).enumerate() {
                out[(o * k + j) * inner + i] = p as u32;
            }
        }
    }
    Ok(plain(HostVec::U32(out), dims))
}
