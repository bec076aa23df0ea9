//! The corpus cases of the array API's axes: reductions over negative axes, several axes
//! (next to each other, merged by a reshape, and apart, moved last by a permutation), every
//! axis listed, no axis (`[]`, numpy's `axis=()`), keepdims; argmin/argmax along a negative
//! axis; `var`/`std` with ddof 0, 1 and at least the reduced count; `logsumexp` over rows of
//! `-inf`, with a NaN, with `+inf` and past f32's `exp` range. These run through
//! `DeviceArray` (a reduction over several axes is more than one op), on every dtype each
//! supports.

use polycompute::{Axes, DType, Device, DeviceArray, Element, Error, HostVec, ReduceKind, Result, Shape};

use super::corpus::{input, label, CaseOp, InputSpec};
use super::inputs::Gen;
use super::reference::Input;
use super::tolerance::{self, Tolerance};

/// The corpus's `add` method, as a callback.
type Add<'a> = dyn FnMut(String, &str, DType, CaseOp, Vec<InputSpec>, Tolerance) + 'a;

/// A reduction the array API builds: one of the kernel's or one made of several ops.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// sum, prod, min, max, mean, argmin or argmax.
    Kind(ReduceKind),
    /// `var(axes, ddof)`.
    Var(usize),
    /// `std(axes, ddof)`.
    Std(usize),
    /// `logsumexp(axes)`.
    LogSumExp,
}

impl Reduction {
    /// The method's name (the row of `polycompute check`).
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Kind(k) => k.name(),
            Reduction::Var(_) => "var",
            Reduction::Std(_) => "std",
            Reduction::LogSumExp => "logsumexp",
        }
    }

    /// The result's dtype for an input of `dtype`.
    pub fn output_dtype(self, dtype: DType) -> DType {
        match self {
            Reduction::Kind(k) => k.output_dtype(dtype),
            Reduction::Var(_) | Reduction::Std(_) if dtype.is_int() => DType::F64,
            _ => dtype,
        }
    }
}

/// A reduction call through `DeviceArray`: which, over which axes, keepdims or not.
#[derive(Clone, Debug, PartialEq)]
pub struct AxesCall {
    /// The reduction.
    pub reduction: Reduction,
    /// The axes as given (negative from the end); `None` for every axis.
    pub axes: Option<Vec<isize>>,
    /// numpy's keepdims.
    pub keepdims: bool,
}

impl AxesCall {
    /// The [`Axes`] argument.
    pub fn axes(&self) -> Axes {
        let axes = self.axes.as_ref().map_or_else(Axes::all, |a| Axes::from(a.as_slice()));
        if self.keepdims {
            axes.keepdims()
        } else {
            axes
        }
    }

    /// What it computes, in words.
    pub fn describe(&self) -> String {
        let ddof = match self.reduction {
            Reduction::Var(d) | Reduction::Std(d) => format!(" ddof {d}"),
            _ => String::new(),
        };
        let keep = if self.keepdims { " keepdims" } else { "" };
        format!("{} axes {:?}{ddof}{keep}", self.reduction.name(), self.axes)
    }

    /// The result's dtype and shape for an input of `dtype` and `dims`, as the array API gives
    /// them (its errors included).
    pub fn output(&self, dtype: DType, dims: &[usize]) -> Result<(DType, Shape)> {
        let axes = self.axes();
        let reduced = axes.resolve(dims.len(), self.reduction.name())?;
        if self.reduction == Reduction::LogSumExp && !dtype.is_float() {
            return Err(Error::Unsupported { op: "logsumexp".into(), dtype, device: None });
        }
        let out: Vec<usize> = (0..dims.len())
            .filter_map(|a| match (reduced.contains(&a), self.keepdims) {
                (false, _) => Some(dims[a]),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect();
        Ok((self.reduction.output_dtype(dtype), Shape::new(&out)?))
    }
}

/// Runs `call` on `device` through `DeviceArray` and downloads the result.
pub fn execute(device: &Device, call: &AxesCall, inputs: &[Input]) -> Result<HostVec> {
    let [(dims, values)] = inputs else {
        return Err(Error::InvalidArgument { op: "corpus", argument: "inputs", why: "a reduction takes one".into() });
    };
    match values {
        HostVec::F32(v) => run(&device.from_slice(v, dims)?, call),
        HostVec::F64(v) => run(&device.from_slice(v, dims)?, call),
        HostVec::I32(v) => run(&device.from_slice(v, dims)?, call),
        HostVec::U32(v) => run(&device.from_slice(v, dims)?, call),
        HostVec::F16(v) => run(&device.from_slice(v, dims)?, call),
        HostVec::BF16(v) => run(&device.from_slice(v, dims)?, call),
        HostVec::I64(v) => run(&device.from_slice(v, dims)?, call),
        HostVec::U8(v) => run(&device.from_slice(v, dims)?, call),
        HostVec::Bool(v) => run(&device.from_slice(v, dims)?, call),
    }
}

fn run<T: Element>(x: &DeviceArray<T>, call: &AxesCall) -> Result<HostVec> {
    let axes = call.axes();
    match call.reduction {
        Reduction::Kind(ReduceKind::Sum) => download(&x.sum(axes)?),
        Reduction::Kind(ReduceKind::Prod) => download(&x.prod(axes)?),
        Reduction::Kind(ReduceKind::Min) => download(&x.min(axes)?),
        Reduction::Kind(ReduceKind::Max) => download(&x.max(axes)?),
        Reduction::Kind(ReduceKind::Mean) => download(&x.mean(axes)?),
        Reduction::Kind(ReduceKind::ArgMin) => download(&x.argmin(axes)?),
        Reduction::Kind(ReduceKind::ArgMax) => download(&x.argmax(axes)?),
        Reduction::Var(ddof) => download(&x.var(axes, ddof)?),
        Reduction::Std(ddof) => download(&x.std(axes, ddof)?),
        Reduction::LogSumExp => download(&x.logsumexp(axes)?),
    }
}

fn download<U: Element>(a: &DeviceArray<U>) -> Result<HostVec> {
    let plain = a.contiguous()?;
    let backend = a.device().backend();
    backend.synchronize()?;
    backend.download(plain.buffer()?)
}

/// Adds every case, in a fixed order.
pub(crate) fn add_all(add: &mut Add<'_>) {
    for dtype in crate::corpus::DTYPES {
        kernel_reductions(add, dtype);
        arg_reductions(add, dtype);
        moments(add, dtype);
        if dtype.is_float() {
            logsumexp(add, dtype);
        }
    }
}

/// `all`, `none` (`[]`), or the axes (`m` for minus): `axes_0_m1`.
fn axes_label(axes: &Option<Vec<isize>>) -> String {
    match axes {
        None => "all".into(),
        Some(a) if a.is_empty() => "none".into(),
        Some(a) => {
            let each: Vec<String> = a.iter().map(|&x| if x < 0 { format!("m{}", -x) } else { x.to_string() }).collect();
            format!("axes_{}", each.join("_"))
        }
    }
}

fn case(add: &mut Add<'_>, dtype: DType, reduction: Reduction, shape: AxesCase<'_>, gen: Gen, tol: Tolerance) {
    let (dims, axes, keepdims) = shape;
    let call = AxesCall { reduction, axes: axes.map(|a| a.to_vec()), keepdims };
    let ddof = match reduction {
        Reduction::Var(d) | Reduction::Std(d) => format!("_ddof{d}"),
        _ => String::new(),
    };
    let keep = if keepdims { "_keepdims" } else { "" };
    let name = format!("axes_{}_{dtype}_{}_{}{ddof}{keep}", reduction.name(), label(dims), axes_label(&call.axes));
    add(name, reduction.name(), dtype, CaseOp::Axes(call), vec![input(dims, dtype, gen)], tol);
}

/// The axes of the kernel reductions' cases: (dims, axes, keepdims).
type AxesCase<'a> = (&'a [usize], Option<&'a [isize]>, bool);

/// A var/std case: its axes case and ddof.
type MomentCase<'a> = (&'a [usize], Option<&'a [isize]>, bool, usize);

const KERNEL_AXES: [AxesCase<'static>; 9] = [
    (&[3, 4, 5], Some(&[-1]), false),
    // Apart: moved last and copied once.
    (&[3, 4, 5], Some(&[0, 2]), false),
    (&[3, 4, 5], Some(&[-3, -1]), true),
    // Next to each other: merged by a reshape.
    (&[3, 4, 5], Some(&[-2, -1]), true),
    (&[3, 4, 5], Some(&[1, 0]), false),
    // Every axis listed, every axis with keepdims, no axis.
    (&[3, 4, 5], Some(&[2, 0, 1]), false),
    (&[3, 4, 5], None, true),
    (&[3, 4, 5], Some(&[]), false),
    // Past a workgroup: 65 results of 231 elements each, axes apart.
    (&[7, 65, 33], Some(&[0, -1]), false),
];

fn kernel_reductions(add: &mut Add<'_>, dtype: DType) {
    let summed = if dtype.is_float() { Gen::Uniform { lo: -1.0, hi: 1.0 } } else { Gen::Wide { max_exp: 0 } };
    let compared = if dtype.is_float() { Gen::Specials } else { Gen::Wide { max_exp: 0 } };
    for kind in [ReduceKind::Sum, ReduceKind::Prod, ReduceKind::Min, ReduceKind::Max, ReduceKind::Mean] {
        let gen = if matches!(kind, ReduceKind::Min | ReduceKind::Max) { &compared } else { &summed };
        let tol = tolerance::reduce(kind, dtype);
        for (dims, axes, keep) in KERNEL_AXES {
            case(add, dtype, Reduction::Kind(kind), (dims, axes, keep), gen.clone(), tol);
        }
    }
    // An empty axis: sums of nothing are 0, means NaN; the reduced axes apart or not.
    for kind in [ReduceKind::Sum, ReduceKind::Prod, ReduceKind::Mean] {
        let tol = tolerance::reduce(kind, dtype);
        case(add, dtype, Reduction::Kind(kind), (&[3, 0, 5], Some(&[-2]), true), summed.clone(), tol);
        case(add, dtype, Reduction::Kind(kind), (&[3, 0, 5], Some(&[0, 2]), false), summed.clone(), tol);
    }
}

fn arg_reductions(add: &mut Add<'_>, dtype: DType) {
    // Specials for floats (NaN's first index wins), few distinct integers (ties: the first).
    let gen = if dtype.is_float() { Gen::Specials } else { Gen::Ints { lo: 0, hi: 3 } };
    for kind in [ReduceKind::ArgMin, ReduceKind::ArgMax] {
        let axes: [AxesCase<'_>; 4] = [
            (&[3, 4, 5], Some(&[-1]), false),
            (&[3, 4, 5], Some(&[-3]), true),
            (&[7, 65], Some(&[-2]), false),
            (&[3, 4, 5], None, true),
        ];
        for (dims, a, keep) in axes {
            case(add, dtype, Reduction::Kind(kind), (dims, a, keep), gen.clone(), Tolerance::Exact);
        }
    }
}

fn moments(add: &mut Add<'_>, dtype: DType) {
    let gen = if dtype.is_float() { Gen::Uniform { lo: -1.0, hi: 1.0 } } else { Gen::Wide { max_exp: 0 } };
    let tol = tolerance::moment(dtype);
    // (dims, axes, keepdims, ddof): ddof 0 and 1, ddof = n (inf) and > n, a lane of one
    // element with ddof 1 (0 / 0: NaN), no axis (every element its own lane: 0).
    let cases: [MomentCase<'_>; 9] = [
        (&[3, 4, 5], Some(&[-1]), false, 0),
        (&[3, 4, 5], Some(&[0, 2]), false, 1),
        (&[3, 4, 5], Some(&[-2, -1]), true, 1),
        (&[3, 4, 5], None, false, 0),
        (&[3, 4, 5], Some(&[-1]), false, 5),
        (&[3, 4, 5], Some(&[0]), true, 7),
        (&[4, 1], Some(&[-1]), false, 1),
        (&[3, 4, 5], Some(&[]), false, 0),
        (&[7, 65, 33], Some(&[0, -1]), false, 1),
    ];
    for (dims, axes, keep, ddof) in cases {
        case(add, dtype, Reduction::Var(ddof), (dims, axes, keep), gen.clone(), tol);
    }
    for (dims, axes, keep, ddof) in [cases[1], cases[2], cases[5], cases[6], cases[7]] {
        case(add, dtype, Reduction::Std(ddof), (dims, axes, keep), gen.clone(), tol);
    }
    // Far from zero: the two-pass form keeps the spread (a one-pass sum of squares would not).
    let offset = Gen::Uniform { lo: 100.0, hi: 104.0 };
    case(add, dtype, Reduction::Var(0), (&[4, 257], Some(&[-1]), false), offset, tol);
}

fn logsumexp(add: &mut Add<'_>, dtype: DType) {
    let tol = tolerance::logsumexp(dtype);
    // Rows of [6, 7]: all -inf; a NaN; +inf; +inf and -inf; 100 and 99 (exp overflows f32
    // without the shift); -inf beside finite values.
    let inf = f64::INFINITY;
    let mut at: Vec<(usize, f64)> = (0..7).map(|j| (j, -inf)).collect();
    at.extend([(9, f64::NAN), (16, inf), (21, inf), (22, -inf), (30, 100.0), (31, 99.0), (36, -inf), (40, -inf)]);
    let special = Gen::With(Box::new(Gen::Uniform { lo: -10.0, hi: 10.0 }), at);
    case(add, dtype, Reduction::LogSumExp, (&[6, 7], Some(&[-1]), false), special.clone(), tol);
    case(add, dtype, Reduction::LogSumExp, (&[6, 7], Some(&[-1]), true), special.clone(), tol);
    case(add, dtype, Reduction::LogSumExp, (&[6, 7], Some(&[]), false), special, tol);
    let gen = Gen::Uniform { lo: -10.0, hi: 10.0 };
    case(add, dtype, Reduction::LogSumExp, (&[5, 7, 3], Some(&[0, 2]), false), gen.clone(), tol);
    case(add, dtype, Reduction::LogSumExp, (&[5, 7, 3], None, false), gen.clone(), tol);
    case(add, dtype, Reduction::LogSumExp, (&[7, 65, 33], Some(&[-3, -1]), true), gen.clone(), tol);
    // No elements: log(0) = -inf.
    case(add, dtype, Reduction::LogSumExp, (&[2, 0], Some(&[-1]), false), gen, tol);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reduction on every dtype it supports has each form: a negative axis, several
    /// axes, keepdims, an empty axis list; var/std have ddof 0, 1 and at least n.
    #[test]
    fn every_reduction_and_dtype_has_every_form() {
        let calls: Vec<(DType, AxesCall)> = crate::corpus()
            .into_iter()
            .filter_map(|c| match c.compute {
                CaseOp::Axes(call) => Some((c.dtype, call)),
                _ => None,
            })
            .collect();
        let kinds = ReduceKind::ALL.map(Reduction::Kind);
        for dtype in crate::corpus::DTYPES {
            let mut reductions: Vec<Reduction> = kinds.to_vec();
            reductions.extend([Reduction::Var(0), Reduction::Std(1)]);
            if dtype.is_float() {
                reductions.push(Reduction::LogSumExp);
            }
            for r in reductions {
                let of = |r: Reduction| {
                    calls.iter().filter(move |(d, c)| *d == dtype && c.reduction.name() == r.name()).map(|(_, c)| c)
                };
                let negative = of(r).any(|c| c.axes.as_ref().is_some_and(|a| a.iter().any(|&x| x < 0)));
                let keep = of(r).any(|c| c.keepdims);
                assert!(negative && keep, "{} {dtype}: negative axis {negative}, keepdims {keep}", r.name());
                if !matches!(r, Reduction::Kind(ReduceKind::ArgMin | ReduceKind::ArgMax)) {
                    let several = of(r).any(|c| c.axes.as_ref().is_some_and(|a| a.len() > 1));
                    let empty = of(r).any(|c| c.axes.as_ref().is_some_and(|a| a.is_empty()));
                    assert!(several && empty, "{} {dtype}: several {several}, empty list {empty}", r.name());
                }
                if let Reduction::Var(_) | Reduction::Std(_) = r {
                    let ddofs: Vec<usize> = of(r)
                        .filter_map(|c| match c.reduction {
                            Reduction::Var(d) | Reduction::Std(d) => Some(d),
                            _ => None,
                        })
                        .collect();
                    assert!(
                        ddofs.contains(&1) && ddofs.iter().any(|&d| d >= 5),
                        "{} {dtype}: ddofs {ddofs:?}",
                        r.name()
                    );
                }
            }
        }
    }

    #[test]
    fn outputs_follow_numpy() {
        let call = |reduction, axes: Option<Vec<isize>>, keepdims| AxesCall { reduction, axes, keepdims };
        let sum = Reduction::Kind(ReduceKind::Sum);
        let shape = |c: AxesCall, d: DType| c.output(d, &[2, 3, 4]).map(|(t, s)| (t, s.dims().to_vec()));
        assert_eq!(shape(call(sum, Some(vec![0, -1]), false), DType::I32).unwrap(), (DType::I32, vec![3]));
        assert_eq!(shape(call(sum, None, true), DType::I32).unwrap(), (DType::I32, vec![1, 1, 1]));
        assert_eq!(
            shape(call(Reduction::Var(1), Some(vec![]), false), DType::U32).unwrap(),
            (DType::F64, vec![2, 3, 4])
        );
        assert!(matches!(shape(call(sum, Some(vec![3]), false), DType::F32), Err(Error::AxisOutOfRange { .. })));
        assert!(matches!(shape(call(Reduction::LogSumExp, None, false), DType::I32), Err(Error::Unsupported { .. })));
    }
}
