//! The f64 CPU reference: a naive, element-at-a-time implementation of every op's contract
//! (`polycompute::op` and `polycompute::expr`), written independently of the CPU
//! backend. Its results, rounded to the output dtype, are the suite's golden values.

use polycompute::{DType, Fill, HostVec, Program, ReduceKind, Scalar};

use super::corpus::CaseOp;
use super::movement;
use super::scalar::{self, get, Builder};
use super::tolerance::{self, ErrorBound};

/// The reference output of one case.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The values, rounded to the output dtype.
    pub values: HostVec,
    /// The output's dimensions.
    pub dims: Vec<usize>,
    /// Per-element absolute error bound, for ops whose tolerance scales with their terms
    /// (float sum, prod, mean, matmul).
    pub bound: Option<Vec<ErrorBound>>,
}

/// One input: its dimensions and elements.
pub type Input = (Vec<usize>, HostVec);

/// Computes the reference result of `op` on `inputs`, or says why the op is invalid.
pub fn compute(op: &CaseOp, inputs: &[Input]) -> Result<Reference, String> {
    let plain = |values: HostVec, dims: Vec<usize>| Reference { values, dims, bound: None };
    match op {
        CaseOp::Map(expr) => {
            let dtypes: Vec<DType> = inputs.iter().map(|(_, v)| v.dtype()).collect();
            let program = Program::compile(expr, &dtypes).map_err(|e| e.to_string())?;
            map(&program, inputs)
        }
        CaseOp::Reduce { kind, axis } => {
            let (dims, v) = one(inputs)?;
            reduce(*kind, *axis, dims, v)
        }
        CaseOp::Matmul => match inputs {
            [(ld, l), (rd, r)] => matmul(ld, l, rd, r),
            _ => Err("matmul takes two inputs".into()),
        },
        CaseOp::MatmulTransposed(t) => match inputs {
            [(ld, l), (rd, r)] => {
                // The operands are the stored buffers transposed back.
                let operand = |dims: &Vec<usize>, v: &HostVec, on: bool| -> Result<(HostVec, Vec<usize>), String> {
                    let mut perm: Vec<usize> = (0..dims.len()).collect();
                    if on && dims.len() >= 2 {
                        perm.swap(dims.len() - 2, dims.len() - 1);
                    }
                    transpose(dims, v, &perm)
                };
                let ((l, ld), (r, rd)) = (operand(ld, l, t.lhs)?, operand(rd, r, t.rhs)?);
                matmul(&ld, &l, &rd, &r)
            }
            _ => Err("matmul takes two inputs".into()),
        },
        CaseOp::Copy => {
            let (dims, v) = one(inputs)?;
            Ok(plain(v.clone(), dims.clone()))
        }
        CaseOp::Transpose(perm) => {
            let (dims, v) = one(inputs)?;
            transpose(dims, v, perm).map(|(v, d)| plain(v, d))
        }
        CaseOp::Cast(to) => {
            let (dims, v) = one(inputs)?;
            let mut out = Builder::new(*to, v.len());
            (0..v.len()).for_each(|i| out.push(scalar::cast(get(v, i), *to)));
            Ok(plain(out.finish(), dims.clone()))
        }
        CaseOp::Fill { fill, dtype, len } => fill_values(*fill, *dtype, *len).map(|v| plain(v, vec![*len])),
        CaseOp::MapViews { expr, layouts } => {
            let dtypes: Vec<DType> = inputs.iter().map(|(_, v)| v.dtype()).collect();
            let program = Program::compile(expr, &dtypes).map_err(|e| e.to_string())?;
            movement::map_views(&program, layouts, inputs)
        }
        CaseOp::Concat(axis) => movement::concat(inputs, *axis),
        CaseOp::Take(axis) => match inputs {
            [a, i] => movement::take(a, i, *axis),
            _ => Err("take takes two inputs".into()),
        },
        CaseOp::TakeAlongAxis(axis) => match inputs {
            [a, i] => movement::take_along_axis(a, i, *axis),
            _ => Err("take_along_axis takes two inputs".into()),
        },
        CaseOp::ScatterAdd(axis) => match inputs {
            [a, i, v] => movement::scatter_add(a, i, v, *axis),
            _ => Err("scatter_add takes three inputs".into()),
        },
        CaseOp::Pad { widths, value } => movement::pad(one_input(inputs)?, widths, *value),
        CaseOp::Scan { kind, axis } => movement::scan(one_input(inputs)?, *kind, *axis),
        CaseOp::Sort(axis) => movement::sort(one_input(inputs)?, *axis, true),
        CaseOp::Argsort(axis) => movement::sort(one_input(inputs)?, *axis, false),
        CaseOp::TopK { k, axis } => movement::topk(one_input(inputs)?, *k, *axis),
        CaseOp::Axes(call) => super::reference_axes::compute(call, one_input(inputs)?),
        CaseOp::Array(call) => super::reference_array::compute(call, inputs),
    }
}

fn one_input(inputs: &[Input]) -> Result<&Input, String> {
    match inputs {
        [a] => Ok(a),
        _ => Err(format!("expected one input, got {}", inputs.len())),
    }
}

/// The map reference over inputs already in row-major order (for [`movement::map_views`]).
pub(crate) fn map_reference(program: &Program, inputs: &[Input]) -> Result<Reference, String> {
    map(program, inputs)
}

fn one(inputs: &[Input]) -> Result<(&Vec<usize>, &HostVec), String> {
    match inputs {
        [(d, v)] => Ok((d, v)),
        _ => Err(format!("expected one input, got {}", inputs.len())),
    }
}

/// numpy broadcasting, aligned from the right.
pub fn broadcast(shapes: &[&[usize]]) -> Result<Vec<usize>, String> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1; rank];
    for s in shapes {
        for (j, &d) in s.iter().enumerate() {
            let o = &mut out[rank - s.len() + j];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(format!("shapes {shapes:?} do not broadcast"));
            }
        }
    }
    Ok(out)
}

/// Flat offset into an input of `dims` for the output multi-index `idx` (broadcast dims read 0).
fn offset(idx: &[usize], dims: &[usize]) -> usize {
    let lead = idx.len() - dims.len();
    dims.iter().enumerate().fold(0, |acc, (j, &d)| acc * d + if d == 1 { 0 } else { idx[lead + j] })
}

/// Row-major multi-index of flat position `flat` in `dims`.
fn unflatten(mut flat: usize, dims: &[usize], idx: &mut [usize]) {
    for (slot, &d) in idx.iter_mut().zip(dims).rev() {
        *slot = flat % d;
        flat /= d;
    }
}

fn map(program: &Program, inputs: &[Input]) -> Result<Reference, String> {
    use polycompute::expr::InstOp;
    let shapes: Vec<&[usize]> = inputs.iter().map(|(d, _)| d.as_slice()).collect();
    let dims = broadcast(&shapes)?;
    let n: usize = dims.iter().product();
    let mut out = Builder::new(program.output_dtype(), n);
    let mut idx = vec![0; dims.len()];
    let mut regs: Vec<Scalar> = Vec::with_capacity(program.insts.len());
    for o in 0..n {
        unflatten(o, &dims, &mut idx);
        regs.clear();
        for inst in &program.insts {
            let v = match inst.op {
                InstOp::Arg(k) => get(&inputs[k].1, offset(&idx, &inputs[k].0)),
                InstOp::Lit(s) => s,
                InstOp::Index => Scalar::U32(o as u32),
                InstOp::Unary(op, a) => scalar::unary(op, regs[a]),
                InstOp::Binary(op, a, b) => scalar::binary(op, regs[a], regs[b]),
                InstOp::Select(c, a, b) => {
                    if scalar::truthy(regs[c]) {
                        regs[a]
                    } else {
                        regs[b]
                    }
                }
                InstOp::Cast(a) => scalar::cast(regs[a], inst.dtype),
            };
            regs.push(v);
        }
        out.push(regs[regs.len() - 1]);
    }
    Ok(Reference { values: out.finish(), dims, bound: None })
}

/// A float sum in f64 with Neumaier's compensation (error independent of the length), with
/// IEEE's rules for NaN and infinities applied first; also returns the sum of magnitudes.
pub fn accurate_sum(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    let mut acc = AccurateSum::default();
    xs.for_each(|x| acc.push(x));
    acc.value()
}

/// [`accurate_sum`] one element at a time: after each `push`, [`AccurateSum::value`] is
/// exactly what `accurate_sum` gives for the elements so far (so a scan's reference is one
/// pass, not one sum per prefix).
#[derive(Clone, Copy, Debug, Default)]
pub struct AccurateSum {
    sum: f64,
    comp: f64,
    abs: f64,
    nan: bool,
    pos_inf: bool,
    neg_inf: bool,
}

impl AccurateSum {
    /// Adds `x`.
    pub fn push(&mut self, x: f64) {
        if x.is_nan() {
            self.nan = true;
        } else if x == f64::INFINITY {
            self.pos_inf = true;
        } else if x == f64::NEG_INFINITY {
            self.neg_inf = true;
        } else {
            let t = self.sum + x;
            self.comp += if self.sum.abs() >= x.abs() { (self.sum - t) + x } else { (x - t) + self.sum };
            self.sum = t;
            self.abs += x.abs();
        }
    }

    /// The sum so far and the sum of magnitudes.
    pub fn value(&self) -> (f64, f64) {
        let value = match (self.nan || (self.pos_inf && self.neg_inf), self.pos_inf, self.neg_inf) {
            (true, _, _) => f64::NAN,
            (_, true, _) => f64::INFINITY,
            (_, _, true) => f64::NEG_INFINITY,
            _ => self.sum + self.comp,
        };
        (value, self.abs)
    }
}

fn reduce(kind: ReduceKind, axis: Option<usize>, dims: &[usize], v: &HostVec) -> Result<Reference, String> {
    let (outer, len, inner, out_dims) = match axis {
        None => (1, v.len(), 1, Vec::new()),
        Some(a) if a < dims.len() => {
            let mut rest = dims.to_vec();
            rest.remove(a);
            (dims[..a].iter().product(), dims[a], dims[a + 1..].iter().product(), rest)
        }
        Some(a) => return Err(format!("axis {a} out of range for {dims:?}")),
    };
    if kind.needs_elements() && len == 0 {
        return Err(format!("{} of no elements", kind.name()));
    }
    let dtype = v.dtype();
    let out_dtype = kind.output_dtype(dtype);
    let mut out = Builder::new(out_dtype, outer * inner);
    let mut bounds = Vec::with_capacity(outer * inner);
    let mut lane = Vec::with_capacity(len);
    for o in 0..outer {
        for i in 0..inner {
            lane.clear();
            lane.extend((0..len).map(|j| get(v, (o * len + j) * inner + i)));
            let (value, bound) = reduce_lane(kind, dtype, &lane);
            out.push(value);
            bounds.push(bound);
        }
    }
    let bound = tolerance::reduce(kind, dtype).eq(&tolerance::Tolerance::Bound).then_some(bounds);
    Ok(Reference { values: out.finish(), dims: out_dims, bound })
}

/// One reduced value and its error bound (0 for exact reductions).
pub(crate) fn reduce_lane(kind: ReduceKind, dtype: DType, lane: &[Scalar]) -> (Scalar, ErrorBound) {
    let exact = |s: Scalar| (s, ErrorBound { limit: 0.0, magnitude: 0.0 });
    let n = lane.len();
    let floats = || lane.iter().map(|s| s.to_f64());
    match kind {
        ReduceKind::Sum | ReduceKind::Mean if dtype.is_float() => {
            let (sum, abs) = accurate_sum(floats());
            let limit = tolerance::sum_bound(n, abs, dtype);
            if kind == ReduceKind::Mean {
                let nf = n as f64;
                (scalar::float(dtype, sum / nf), ErrorBound { limit: limit / nf, magnitude: abs / nf })
            } else {
                (scalar::float(dtype, sum), ErrorBound { limit, magnitude: abs })
            }
        }
        ReduceKind::Prod if dtype.is_float() => {
            let p = floats().product::<f64>();
            (scalar::float(dtype, p), ErrorBound { limit: tolerance::prod_bound(n, p, dtype), magnitude: p.abs() })
        }
        ReduceKind::Mean => {
            // Integers: the exact sum (at most 2^32 terms of 2^32 fits in i128), divided once.
            let sum: i128 = lane.iter().map(|&s| scalar::int_value(s).unwrap_or(0)).sum();
            exact(Scalar::F64(sum as f64 / n as f64))
        }
        ReduceKind::Sum | ReduceKind::Prod => {
            let op = if kind == ReduceKind::Sum { polycompute::BinaryOp::Add } else { polycompute::BinaryOp::Mul };
            let init = scalar::cast(Scalar::U32((kind == ReduceKind::Prod) as u32), dtype);
            exact(lane.iter().fold(init, |acc, &x| scalar::binary(op, acc, x)))
        }
        ReduceKind::Min | ReduceKind::Max => {
            let op = if kind == ReduceKind::Min { polycompute::BinaryOp::Min } else { polycompute::BinaryOp::Max };
            exact(lane[1..].iter().fold(lane[0], |acc, &x| scalar::binary(op, acc, x)))
        }
        ReduceKind::ArgMin | ReduceKind::ArgMax => exact(Scalar::U32(arg_extreme(kind, lane) as u32)),
    }
}

/// Index of the first NaN, else of the first minimum (or maximum); `-0.0 == +0.0` here.
fn arg_extreme(kind: ReduceKind, lane: &[Scalar]) -> usize {
    if let Some(i) = lane.iter().position(|s| s.to_f64().is_nan()) {
        return i;
    }
    let mut best = 0;
    for (i, s) in lane.iter().enumerate().skip(1) {
        if let (Some(x), Some(b)) = (scalar::int_value(*s), scalar::int_value(lane[best])) {
            // Integers exactly (f64 would tie i64::MAX with its neighbour).
            if (kind == ReduceKind::ArgMin && x < b) || (kind == ReduceKind::ArgMax && x > b) {
                best = i;
            }
            continue;
        }
        let (x, b) = (s.to_f64(), lane[best].to_f64());
        if (kind == ReduceKind::ArgMin && x < b) || (kind == ReduceKind::ArgMax && x > b) {
            best = i;
        }
    }
    best
}

fn matmul(ld: &[usize], l: &HostVec, rd: &[usize], r: &HostVec) -> Result<Reference, String> {
    let (batch, m, k, n) = match (ld, rd) {
        ([m, k], [k2, n]) if k == k2 => (1, *m, *k, *n),
        ([b, m, k], [b2, k2, n]) if b == b2 && k == k2 => (*b, *m, *k, *n),
        _ => return Err(format!("matmul of {ld:?} and {rd:?}")),
    };
    let dtype = l.dtype();
    let mut out = Builder::new(dtype, batch * m * n);
    let mut bounds = Vec::with_capacity(batch * m * n);
    for b in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let terms = (0..k).map(|p| get(l, (b * m + i) * k + p).to_f64() * get(r, (b * k + p) * n + j).to_f64());
                let (sum, abs) = accurate_sum(terms);
                out.push(scalar::float(dtype, sum));
                bounds.push(ErrorBound { limit: tolerance::matmul_bound(k, abs, dtype), magnitude: abs });
            }
        }
    }
    let dims = if ld.len() == 3 { vec![batch, m, n] } else { vec![m, n] };
    Ok(Reference { values: out.finish(), dims, bound: Some(bounds) })
}

fn transpose(dims: &[usize], v: &HostVec, perm: &[usize]) -> Result<(HostVec, Vec<usize>), String> {
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if sorted != (0..dims.len()).collect::<Vec<_>>() {
        return Err(format!("{perm:?} is not a permutation of {dims:?}"));
    }
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let mut out = Builder::new(v.dtype(), v.len());
    let (mut idx, mut src) = (vec![0; dims.len()], vec![0; dims.len()]);
    for o in 0..v.len() {
        unflatten(o, &out_dims, &mut idx);
        for (i, &p) in perm.iter().enumerate() {
            src[p] = idx[i];
        }
        out.push(get(v, offset(&src, dims)));
    }
    Ok((out.finish(), out_dims))
}

/// Philox4x32-10, written from the recipe in `polycompute::philox`'s docs.
pub fn philox(seed: u64, block: u64) -> [u32; 4] {
    let mut key = [seed as u32, (seed >> 32) as u32];
    let mut c = [block as u32, (block >> 32) as u32, 0, 0];
    for round in 0..10 {
        if round > 0 {
            key = [key[0].wrapping_add(0x9E37_79B9), key[1].wrapping_add(0xBB67_AE85)];
        }
        let lo_hi = |m: u32, x: u32| {
            let p = m as u64 * x as u64;
            (p as u32, (p >> 32) as u32)
        };
        let (lo0, hi0) = lo_hi(0xD251_1F53, c[0]);
        let (lo1, hi1) = lo_hi(0xCD9E_8D57, c[2]);
        c = [hi1 ^ c[1] ^ key[0], lo1, hi0 ^ c[3] ^ key[1], lo0];
    }
    c
}

fn fill_values(fill: Fill, dtype: DType, len: usize) -> Result<HostVec, String> {
    let mut out = Builder::new(dtype, len);
    if dtype.is_half() && !matches!(fill, Fill::Constant(_)) {
        // The halves' random streams: the f32 stream, each value rounded once.
        let wide = fill_values(fill, DType::F32, len)?;
        for i in 0..len {
            out.push(get(&wide, i));
        }
        return Ok(out.finish());
    }
    let two24 = 1.0 / 16_777_216.0;
    let two53 = 1.0 / 9_007_199_254_740_992.0;
    let word64 = |w: [u32; 4], lo: usize| ((w[lo + 1] as u64) << 32) | w[lo] as u64;
    for i in 0..len as u64 {
        let value = match (fill, dtype) {
            (Fill::Constant(s), _) if s.dtype() == dtype => s,
            (Fill::Constant(s), _) => return Err(format!("constant {s} for a {dtype} fill")),
            (Fill::Uniform { seed }, DType::U32) => Scalar::U32(philox(seed, i / 4)[(i % 4) as usize]),
            (Fill::Uniform { seed }, DType::I32) => Scalar::I32(philox(seed, i / 4)[(i % 4) as usize] as i32),
            (Fill::Uniform { seed }, DType::F32) => {
                Scalar::F32(((philox(seed, i / 4)[(i % 4) as usize] >> 8) as f64 * two24) as f32)
            }
            (Fill::Uniform { seed }, DType::F64) => {
                Scalar::F64((word64(philox(seed, i / 2), 2 * (i % 2) as usize) >> 11) as f64 * two53)
            }
            (Fill::Normal { seed }, DType::F32) => {
                let w = philox(seed, i / 4);
                let p = 2 * ((i % 4) / 2) as usize;
                let u1 = ((w[p] >> 8) + 1) as f64 * two24;
                let u2 = (w[p + 1] >> 8) as f64 * two24;
                Scalar::F32(box_muller(u1, u2, i) as f32)
            }
            (Fill::Normal { seed }, DType::F64) => {
                let w = philox(seed, i / 2);
                let u1 = ((word64(w, 0) >> 11) + 1) as f64 * two53;
                let u2 = (word64(w, 2) >> 11) as f64 * two53;
                Scalar::F64(box_muller(u1, u2, i))
            }
            (Fill::Uniform { .. }, _) => return Err(format!("uniform fill of {dtype} (made from f32 above)")),
            (Fill::Normal { .. }, _) => return Err(format!("normal fill of {dtype}")),
        };
        out.push(value);
    }
    Ok(out.finish())
}

/// Box–Muller in f64: `r cos θ` for even `i`, `r sin θ` for odd.
fn box_muller(u1: f64, u2: f64, i: u64) -> f64 {
    let r = (-2.0 * u1.ln()).sqrt();
    let theta = 2.0 * std::f64::consts::PI * u2;
    if i.is_multiple_of(2) {
        r * theta.cos()
    } else {
        r * theta.sin()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute::{philox as core_philox, Expr};

    fn run(op: CaseOp, inputs: Vec<Input>) -> Reference {
        compute(&op, &inputs).unwrap()
    }

    #[test]
    fn philox_matches_random123_and_core() {
        assert_eq!(philox(0, 0), [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
        for (seed, b) in [(1, 0), (0xdead_beef_0123_4567, 99), (u64::MAX, u64::MAX)] {
            assert_eq!(philox(seed, b), core_philox::block(seed, b));
        }
        let HostVec::F32(u) = fill_values(Fill::Uniform { seed: 5 }, DType::F32, 9).unwrap() else { panic!() };
        assert_eq!(u[6], core_philox::uniform_f32(5, 6));
        let HostVec::F64(u) = fill_values(Fill::Uniform { seed: 5 }, DType::F64, 9).unwrap() else { panic!() };
        assert_eq!(u[7], core_philox::uniform_f64(5, 7));
        let HostVec::F64(g) = fill_values(Fill::Normal { seed: 5 }, DType::F64, 9).unwrap() else { panic!() };
        assert!((g[3] - core_philox::normal_f64(5, 3)).abs() < 1e-12);
    }

    #[test]
    fn map_broadcasts_and_indexes() {
        // [2, 1] + [3] -> [2, 3]; plus the flat index.
        let e = Expr::arg(0) + Expr::arg(1) + Expr::index().cast(DType::I32);
        let r =
            run(CaseOp::Map(e), vec![(vec![2, 1], HostVec::I32(vec![10, 20])), (vec![3], HostVec::I32(vec![1, 2, 3]))]);
        assert_eq!(r.dims, vec![2, 3]);
        assert_eq!(r.values, HostVec::I32(vec![11, 13, 15, 24, 26, 28]));
        let sel = Expr::select(Expr::arg(0).gt(0.0), Expr::arg(0), -1.0);
        let r = run(CaseOp::Map(sel), vec![(vec![3], HostVec::F32(vec![2.0, -3.0, f32::NAN]))]);
        assert_eq!(format!("{:?}", r.values), "F32([2.0, -1.0, -1.0])");
    }

    #[test]
    fn reductions_over_each_axis() {
        // [2, 3] = [[1, 2, 3], [4, 5, 6]]
        let x = || vec![(vec![2, 3], HostVec::I32(vec![1, 2, 3, 4, 5, 6]))];
        let sum = |axis| run(CaseOp::Reduce { kind: ReduceKind::Sum, axis }, x());
        assert_eq!(sum(Some(0)).values, HostVec::I32(vec![5, 7, 9]));
        assert_eq!(sum(Some(1)).values, HostVec::I32(vec![6, 15]));
        assert_eq!(sum(None).values, HostVec::I32(vec![21]));
        assert_eq!(sum(None).dims, Vec::<usize>::new());
        let mean = run(CaseOp::Reduce { kind: ReduceKind::Mean, axis: Some(1) }, x());
        assert_eq!(mean.values, HostVec::F64(vec![2.0, 5.0]));
        let argmax = run(CaseOp::Reduce { kind: ReduceKind::ArgMax, axis: Some(0) }, x());
        assert_eq!(argmax.values, HostVec::U32(vec![1, 1, 1]));
        let prod = run(CaseOp::Reduce { kind: ReduceKind::Prod, axis: None }, x());
        assert_eq!(prod.values, HostVec::I32(vec![720]));
        let empty = run(CaseOp::Reduce { kind: ReduceKind::Mean, axis: None }, vec![(vec![0], HostVec::F32(vec![]))]);
        assert!(matches!(empty.values, HostVec::F32(ref v) if v[0].is_nan()));
        assert!(
            compute(&CaseOp::Reduce { kind: ReduceKind::Min, axis: None }, &[(vec![0], HostVec::F32(vec![]))]).is_err()
        );
    }

    #[test]
    fn float_reductions_propagate_nan_and_pick_the_first() {
        let v = vec![(vec![5], HostVec::F64(vec![3.0, f64::NAN, -1.0, f64::NAN, 7.0]))];
        let r = |kind| run(CaseOp::Reduce { kind, axis: None }, v.clone()).values;
        assert!(matches!(r(ReduceKind::Max), HostVec::F64(ref x) if x[0].is_nan()));
        assert!(matches!(r(ReduceKind::Sum), HostVec::F64(ref x) if x[0].is_nan()));
        assert_eq!(r(ReduceKind::ArgMin), HostVec::U32(vec![1]));
        let w = vec![(vec![4], HostVec::F32(vec![1.0, f32::INFINITY, -5.0, 2.0]))];
        let r = |kind| run(CaseOp::Reduce { kind, axis: None }, w.clone()).values;
        assert_eq!(r(ReduceKind::Sum), HostVec::F32(vec![f32::INFINITY]));
        assert_eq!((r(ReduceKind::ArgMin), r(ReduceKind::ArgMax)), (HostVec::U32(vec![2]), HostVec::U32(vec![1])));
        assert_eq!(r(ReduceKind::Min), HostVec::F32(vec![-5.0]));
    }

    #[test]
    fn compensated_sum_is_exact_where_naive_is_not() {
        let (s, abs) = accurate_sum([1e16, 1.0, -1e16, 1.0].into_iter());
        assert_eq!((s, abs), (2.0, 2e16 + 2.0));
        let sum = run(
            CaseOp::Reduce { kind: ReduceKind::Sum, axis: None },
            vec![(vec![3], HostVec::F32(vec![0.5, 0.25, -4.0]))],
        );
        assert_eq!(sum.values, HostVec::F32(vec![-3.25]));
        let limit = tolerance::sum_bound(3, 4.75, DType::F32);
        assert_eq!(sum.bound, Some(vec![ErrorBound { limit, magnitude: 4.75 }]));
    }

    #[test]
    fn matmul_by_hand() {
        // [[1, 2], [3, 4]] @ [[5], [6]] = [[17], [39]], batched twice with the second batch negated.
        let l = HostVec::F64(vec![1.0, 2.0, 3.0, 4.0, -1.0, -2.0, -3.0, -4.0]);
        let r = HostVec::F64(vec![5.0, 6.0, 5.0, 6.0]);
        let out = run(CaseOp::Matmul, vec![(vec![2, 2, 2], l), (vec![2, 2, 1], r)]);
        assert_eq!(out.dims, vec![2, 2, 1]);
        assert_eq!(out.values, HostVec::F64(vec![17.0, 39.0, -17.0, -39.0]));
        let empty = run(CaseOp::Matmul, vec![(vec![2, 0], HostVec::F32(vec![])), (vec![0, 3], HostVec::F32(vec![]))]);
        assert_eq!(empty.values, HostVec::F32(vec![0.0; 6]));
    }

    #[test]
    fn transpose_permutes_axes() {
        let v = HostVec::U32((0..6).collect());
        let t = run(CaseOp::Transpose(vec![1, 0]), vec![(vec![2, 3], v.clone())]);
        assert_eq!((t.dims, t.values), (vec![3, 2], HostVec::U32(vec![0, 3, 1, 4, 2, 5])));
        // [1, 2, 3] with perm [2, 0, 1] -> [3, 1, 2]; out[k][0][j] = in[0][j][k].
        let t = run(CaseOp::Transpose(vec![2, 0, 1]), vec![(vec![1, 2, 3], v)]);
        assert_eq!((t.dims, t.values), (vec![3, 1, 2], HostVec::U32(vec![0, 3, 1, 4, 2, 5])));
        assert!(compute(&CaseOp::Transpose(vec![0, 0]), &[(vec![2, 3], HostVec::U32(vec![0; 6]))]).is_err());
    }
}
