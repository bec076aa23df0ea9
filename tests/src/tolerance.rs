//! How close a device's result must be to the reference: exact (bit for bit), within a
//! number of ULPs (or an absolute error, where the GPU specs state one), or within an error
//! bound that scales with the number of terms (reductions, matmul). The table here is the one
//! in `docs/conformance.md`; a unit test keeps the two identical.

use polycompute::{BinaryOp, DType, ReduceKind, UnaryOp};

use polycompute_testing::Ulps;

/// The allowed difference between a device's result and the reference.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Tolerance {
    /// Bit for bit, except that any NaN matches any NaN. `-0.0` and `+0.0` differ.
    Exact,
    /// Within `ulp` units in the last place, or within `abs` absolute error (the WGSL and
    /// Vulkan precision rules state some functions' accuracy as an absolute error). `+0.0`
    /// and `-0.0` are equal here; infinities must match exactly.
    Ulp {
        /// Allowed distance in ULPs of the output dtype.
        ulp: u64,
        /// Allowed absolute error; 0 for none.
        abs: f64,
    },
    /// Within the per-element bound the reference computed (see [`sum_bound`],
    /// [`prod_bound`], [`matmul_bound`]), plus one ULP for the final rounding.
    Bound,
}

impl Tolerance {
    /// True for [`Tolerance::Exact`].
    pub fn is_exact(self) -> bool {
        self == Tolerance::Exact
    }

    /// The test kit's comparison for [`Tolerance::Exact`] and [`Tolerance::Ulp`]; `None` for
    /// [`Tolerance::Bound`], which needs the reference's per-element bound.
    pub fn ulps(self) -> Option<Ulps> {
        match self {
            Tolerance::Exact => Some(Ulps::EXACT),
            Tolerance::Ulp { ulp, abs } => Some(Ulps::within(ulp).or_abs(abs)),
            Tolerance::Bound => None,
        }
    }

    /// The table cell of `docs/conformance.md`.
    pub fn describe(self) -> String {
        match self {
            Tolerance::Exact => "exact".into(),
            Tolerance::Ulp { ulp, abs: 0.0 } => format!("{ulp} ulp"),
            Tolerance::Ulp { ulp, abs } => format!("{ulp} ulp or abs 2^{}", abs.log2().round() as i32),
            Tolerance::Bound => "bound".into(),
        }
    }
}

const fn ulp(ulp: u64) -> Tolerance {
    Tolerance::Ulp { ulp, abs: 0.0 }
}

/// `2^e` as f64, for the absolute tolerances.
fn pow2(e: i32) -> f64 {
    2f64.powi(e)
}

/// Tolerance of a unary op on `dtype`.
///
/// The halves compute in f32 and round once: an f32 result within a few f32 ULPs of the true
/// value rounds to the reference's half or to its neighbour (when the true value is near a
/// tie), so 1 ULP of the half covers every f32 error bound below, plus the f32 rule's
/// absolute error where the WGSL rules state one.
pub fn unary(op: UnaryOp, dtype: DType) -> Tolerance {
    use UnaryOp::*;
    let f32 = dtype == DType::F32;
    match op {
        Neg | Abs | Floor | Ceil | Round => Tolerance::Exact,
        _ if dtype.is_int() => Tolerance::Exact,
        _ if dtype.is_half() => match unary(op, DType::F32) {
            Tolerance::Ulp { abs, .. } => Tolerance::Ulp { ulp: 1, abs },
            _ => ulp(1),
        },
        // WGSL: sqrt is inherited from 1/inverseSqrt (2 ULP) and division (2.5 ULP).
        Sqrt if f32 => ulp(5),
        // WGSL: 1/x is 2.5 ULP.
        Recip if f32 => ulp(3),
        Sqrt | Recip => Tolerance::Exact,
        // WGSL: exp is 3 + 2|x| ULP; the corpus keeps |x| <= 10.
        Exp if f32 => ulp(23),
        // No WGSL built-in: the wgpu backend's own expm1 (exp's reduction, one rounding)
        // measures 2 ULP (backend-wgpu/tests/unary_accuracy.rs); CUDA documents expm1f at 1.
        Expm1 if f32 => ulp(3),
        // WGSL: ln is 3 ULP outside [0.5, 2], absolute error 2^-21 inside.
        Ln if f32 => Tolerance::Ulp { ulp: 3, abs: pow2(-21) },
        // The wgpu backend's own log1p, log2 and log10 (WGSL has no log1p or log10, and its
        // log2 is ln's loose rule) measure within 1 ULP of the exact value
        // (backend-wgpu/tests/unary_accuracy.rs); CUDA documents log1pf and log2f at 1,
        // log10f at 2 (the CPU's, glibc's, measures 1.7); plus one for the reference.
        Log1p | Log2 if f32 => ulp(2),
        Log10 if f32 => ulp(3),
        // WGSL: sin and cos have absolute error 2^-11 on [-pi, pi] (the corpus's domain).
        Sin | Cos if f32 => Tolerance::Ulp { ulp: 4, abs: pow2(-11) },
        // WGSL: tan is inherited from sin/cos; on [-1, 1] that is below 2^-8 absolute.
        Tan if f32 => Tolerance::Ulp { ulp: 4, abs: pow2(-8) },
        // WGSL: tanh is inherited from sinh/cosh, i.e. from exp; absolute near 0.
        Tanh if f32 => Tolerance::Ulp { ulp: 4, abs: pow2(-11) },
        // f64 (CPU libm, CUDA's libdevice; WGSL has no f64 transcendentals): the device's
        // documented bound plus one ULP for the reference's own libm.
        Exp | Expm1 | Ln | Log1p | Log2 | Tanh => ulp(2),
        // The reference's f64 log10 (glibc's) measures 1.6 ULP off itself; CUDA documents 1.
        Log10 => ulp(3),
        Sin | Cos => ulp(3),
        Tan => ulp(4),
    }
}

/// Tolerance of a binary op on `dtype`.
pub fn binary(op: BinaryOp, dtype: DType) -> Tolerance {
    match op {
        _ if dtype.is_int() => Tolerance::Exact,
        // Halves: f32's 2.5 (division) and 32 (pow) ULPs are far below half a half-ULP, so a
        // device rounds to the reference's half or its neighbour.
        BinaryOp::Div | BinaryOp::Pow if dtype.is_half() => ulp(1),
        // WGSL: x / y is 2.5 ULP.
        BinaryOp::Div if dtype == DType::F32 => ulp(3),
        // Measured: wgpu 1 ULP for all finite inputs (its own range reduction, checked by
        // backend-wgpu/tests/pow_accuracy.rs), the CPU exact on the corpus; CUDA documents
        // powf at 4 ULP, the loosest of the three.
        BinaryOp::Pow if dtype == DType::F32 => ulp(4),
        BinaryOp::Pow => ulp(3),
        // Everything else is correctly rounded (+ - *, IEEE f64 division) or exact (rem is
        // fmod, exact, plus at most one correctly rounded addition; min, max, comparisons).
        _ => Tolerance::Exact,
    }
}

/// Tolerance of a reduction of `dtype`.
pub fn reduce(kind: ReduceKind, dtype: DType) -> Tolerance {
    match kind {
        ReduceKind::Sum | ReduceKind::Prod | ReduceKind::Mean if dtype.is_float() => Tolerance::Bound,
        _ => Tolerance::Exact,
    }
}

/// Tolerance of matmul.
pub fn matmul() -> Tolerance {
    Tolerance::Bound
}

/// Tolerance of the normal fill: Box–Muller through ln, sqrt, cos and sin. WGSL guarantees
/// cos/sin only to 2^-11 absolute on [-pi, pi] and r <= 5.8 for f32, so the f32 result is
/// good to about 2^-8.5 absolute; f64 is held to the rounding of theta = 2 pi u2 (r <= 8.6).
pub fn normal_fill(dtype: DType) -> Tolerance {
    match dtype {
        DType::F32 => Tolerance::Ulp { ulp: 64, abs: pow2(-7) },
        // The f32 stream rounded once: its error is below 2^-7, so the half is the
        // reference's or its neighbour, or within f32's absolute error.
        DType::F16 | DType::BF16 => Tolerance::Ulp { ulp: 1, abs: pow2(-7) },
        _ => Tolerance::Ulp { ulp: 64, abs: pow2(-40) },
    }
}

/// The allowed error of one element under [`Tolerance::Bound`], and the magnitude of its
/// terms (`sum(abs(x))`, `abs(prod)`, `sum(abs(a * b))`), in whose ULPs the error is reported:
/// ULPs of a result that cancelled to near zero would say little.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ErrorBound {
    /// Largest allowed absolute error (before the extra ULP for the final rounding).
    pub limit: f64,
    /// Magnitude of the terms.
    pub magnitude: f64,
}

/// Machine epsilon (distance from 1 to the next float) of a float dtype; 0 for integers.
pub fn eps(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f32::EPSILON as f64,
        DType::F64 => f64::EPSILON,
        DType::F16 => polycompute::f16::EPSILON.to_f64(),
        DType::BF16 => polycompute::bf16::EPSILON.to_f64(),
        _ => 0.0,
    }
}

/// The epsilon of the arithmetic a dtype accumulates in: f32's for the halves (sums,
/// products, dot products and scans accumulate in f32 and round once), the dtype's own
/// otherwise. The final rounding to the half is the bound's extra ULP.
pub fn acc_eps(dtype: DType) -> f64 {
    if dtype.is_half() {
        eps(DType::F32)
    } else {
        eps(dtype)
    }
}

/// Error bound of a float sum of `n` terms whose absolute values add up to `abs_sum`:
/// `max(1, ceil(log2 n)) * eps * abs_sum`, the pairwise-summation bound of the architecture
/// contract (twice the textbook `ceil(log2 n) * u`).
pub fn sum_bound(n: usize, abs_sum: f64, dtype: DType) -> f64 {
    let depth = (n.max(2) as f64).log2().ceil();
    depth * acc_eps(dtype) * abs_sum
}

/// Error bound of a float sum of `n` terms added in any order, sequentially included
/// (cumsum): `n * eps * abs_sum` (Higham, eq. 4.4, with margin); `eps` of the accumulation.
pub fn scan_bound(n: usize, abs_sum: f64, dtype: DType) -> f64 {
    n.max(1) as f64 * acc_eps(dtype) * abs_sum
}

/// Error bound of scatter_add's sum of `n` terms, each add rounded to the dtype itself (for
/// the halves too, as numpy's `add.at` on float16): `n * eps * abs_sum`.
pub fn scatter_bound(n: usize, abs_sum: f64, dtype: DType) -> f64 {
    n.max(1) as f64 * eps(dtype) * abs_sum
}

/// Error bound of a float product of `n` factors with value `value`: each of the `n - 1`
/// multiplications rounds once, whatever the order, so `n * eps * |value|` covers it.
pub fn prod_bound(n: usize, value: f64, dtype: DType) -> f64 {
    n as f64 * acc_eps(dtype) * value.abs()
}

/// Error bound of a dot product of length `k` whose term magnitudes add up to `abs_sum`:
/// `k * eps * abs_sum` holds for any summation order, blocking, or fused multiply-add
/// (Higham, Accuracy and Stability of Numerical Algorithms, eq. 3.5, with margin).
pub fn matmul_bound(k: usize, abs_sum: f64, dtype: DType) -> f64 {
    k.max(1) as f64 * acc_eps(dtype) * abs_sum
}

// ---- Reductions built from others: var, std, logsumexp ----

/// Tolerance of `var` and `std` of `dtype`: a bound, for integers too (they compute in f64).
pub fn moment(_dtype: DType) -> Tolerance {
    Tolerance::Bound
}

/// Tolerance of `logsumexp` (floats).
pub fn logsumexp(_dtype: DType) -> Tolerance {
    Tolerance::Bound
}

/// The epsilon `var`, `std` and `logsumexp` compute in: f32's for the halves (they compute
/// in f32 and round once), f64's for integers (var and std give f64), the dtype's own else.
pub fn work_eps(dtype: DType) -> f64 {
    if dtype.is_int() {
        f64::EPSILON
    } else {
        acc_eps(dtype)
    }
}

/// Error bound of the two-pass variance of `n` elements whose magnitudes add up to `abs_sum`,
/// with mean `mean`, squared deviations adding up to `squares` and divisor `divisor`
/// (`max(n - ddof, 0)`). The computed mean is off by at most
/// `d = ceil(log2 n) * eps * abs_sum / n + eps * |mean|`, which changes the sum of squares by
/// exactly `n * d^2` (the first-order term is `2 d * sum(x - mean) = 0`); each square
/// rounds twice and the pairwise sum of the `n` nonnegative squares adds
/// `ceil(log2 n) * eps * squares`; the division one more rounding (3 for WGSL's f32
/// division): `((ceil(log2 n) + 6) * eps * squares + n * d^2) / divisor`.
pub fn var_bound(n: usize, abs_sum: f64, mean: f64, squares: f64, divisor: usize, dtype: DType) -> ErrorBound {
    let e = work_eps(dtype);
    let depth = (n.max(2) as f64).log2().ceil();
    let d = depth * e * abs_sum / n.max(1) as f64 + e * mean.abs();
    let div = divisor as f64;
    ErrorBound { limit: ((depth + 6.0) * e * squares + n as f64 * d * d) / div, magnitude: squares / div }
}

/// Error bound of `std = sqrt(var)` from the variance's bound `b`: `|sqrt(a) - sqrt(v)|` is at
/// most `sqrt(|a - v|)` and at most `|a - v| / sqrt(v)`; plus 6 ULPs for the square root
/// (WGSL's f32 sqrt is 5).
pub fn std_bound(var: ErrorBound, std: f64, dtype: DType) -> ErrorBound {
    let from_var = if std > 0.0 { var.limit.sqrt().min(var.limit / std) } else { var.limit.sqrt() };
    ErrorBound { limit: from_var + 6.0 * work_eps(dtype) * std, magnitude: std }
}

/// Error bound of `logsumexp` of one lane: `t` the shifted terms `x - m`, `s = sum(exp(t))`,
/// `out = ln(s) + m`. Each term's shift rounds (`eps * |t|` on `t`) and its exp is good to
/// `3 + 2|t|` ULPs (WGSL's f32 rule; libm and CUDA are tighter), the sum adds
/// `ceil(log2 n) * eps * s`, ln 4 ULPs or WGSL's absolute `2^-21` (f32), the final addition
/// 2 ULPs: `eps * (sum((4 + 3|t|) exp(t)) / s + ceil(log2 n) + 4 |ln s| + 2 |out|) + abs`.
pub fn logsumexp_bound(t: &[f64], s: f64, out: f64, dtype: DType) -> ErrorBound {
    let e = work_eps(dtype);
    let depth = (t.len().max(2) as f64).log2().ceil();
    // exp(-inf) is exactly 0 on every device: no error to count.
    let terms: f64 = t.iter().filter(|t| t.is_finite()).map(|t| (4.0 + 3.0 * t.abs()) * t.exp()).sum();
    let abs = if dtype == DType::F64 { 0.0 } else { pow2(-21) };
    let relative = if s > 0.0 && s.is_finite() { terms / s + depth + 4.0 * s.ln().abs() } else { 0.0 };
    let limit = e * (relative + 2.0 * if out.is_finite() { out.abs() } else { 0.0 }) + abs;
    ErrorBound { limit, magnitude: out.abs() }
}

/// The size of one ULP at `x` (the gap to the next float away from zero).
pub use polycompute_testing::ulps::ulp_size;

/// One row of the tolerance table: (op, dtype, tolerance).
pub type Row = (String, DType, Tolerance);

/// The whole tolerance table, every op × dtype that has a float tolerance, in a fixed order;
/// everything not listed is exact.
pub fn table() -> Vec<Row> {
    let mut rows = Vec::new();
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        for op in UnaryOp::ALL {
            rows.push((op.name().to_string(), dtype, unary(op, dtype)));
        }
        for op in BinaryOp::ALL.into_iter().filter(|o| !o.int_only()) {
            rows.push((op.name().to_string(), dtype, binary(op, dtype)));
        }
        for kind in ReduceKind::ALL {
            rows.push((kind.name().to_string(), dtype, reduce(kind, dtype)));
        }
        rows.push(("matmul".into(), dtype, matmul()));
        rows.push(("fill_normal".into(), dtype, normal_fill(dtype)));
        for op in ["cumsum", "cumprod", "scatter_add"] {
            rows.push((op.into(), dtype, Tolerance::Bound));
        }
        rows.push(("var".into(), dtype, moment(dtype)));
        rows.push(("std".into(), dtype, moment(dtype)));
        rows.push(("logsumexp".into(), dtype, logsumexp(dtype)));
    }
    rows.retain(|r| !r.2.is_exact());
    rows
}

/// The error bound of an op with [`Tolerance::Bound`], as the docs write it (`eps` is the
/// dtype's machine epsilon, `eps32` f32's — the halves accumulate in f32 — and `ulp` one
/// unit in the last place of the reference, in its own dtype).
pub fn bound_formula(op: &str, dtype: DType) -> &'static str {
    let half = dtype.is_half();
    match op {
        "sum" if half => "ceil(log2 n) * eps32 * sum(abs(x)) + 1 ulp",
        "sum" => "ceil(log2 n) * eps * sum(abs(x)) + 1 ulp",
        "mean" if half => "ceil(log2 n) * eps32 * sum(abs(x)) / n + 1 ulp",
        "mean" => "ceil(log2 n) * eps * sum(abs(x)) / n + 1 ulp",
        "prod" if half => "n * eps32 * abs(prod) + 1 ulp",
        "prod" => "n * eps * abs(prod) + 1 ulp",
        "matmul" if half => "k * eps32 * sum(abs(a * b)) + 1 ulp",
        "matmul" => "k * eps * sum(abs(a * b)) + 1 ulp",
        "cumsum" if half => "m * eps32 * sum(abs(x)) + 1 ulp",
        "cumsum" | "scatter_add" => "m * eps * sum(abs(x)) + 1 ulp",
        "cumprod" if half => "m * eps32 * abs(prod) + 1 ulp",
        "cumprod" => "m * eps * abs(prod) + 1 ulp",
        "var" if half => "((ceil(log2 n) + 6) * eps32 * S + n * d^2) / (n - ddof) + 1 ulp",
        "var" => "((ceil(log2 n) + 6) * eps * S + n * d^2) / (n - ddof) + 1 ulp",
        "std" if half => "min(sqrt(b), b / std) + 6 * eps32 * std + 1 ulp",
        "std" => "min(sqrt(b), b / std) + 6 * eps * std + 1 ulp",
        "logsumexp" if half => {
            "eps32 * (sum((4 + 3abs(t)) e^t) / s + ceil(log2 n) + 4 abs(ln s) + 2 abs(out)) + 2^-21 + 1 ulp"
        }
        "logsumexp" if dtype == DType::F32 => {
            "eps * (sum((4 + 3abs(t)) e^t) / s + ceil(log2 n) + 4 abs(ln s) + 2 abs(out)) + 2^-21 + 1 ulp"
        }
        "logsumexp" => "eps * (sum((4 + 3abs(t)) e^t) / s + ceil(log2 n) + 4 abs(ln s) + 2 abs(out)) + 1 ulp",
        _ => "bound",
    }
}

/// The table as the markdown `docs/conformance.md` carries.
pub fn markdown_table() -> String {
    let mut out = String::from("| op | f32 | f64 | f16 | bf16 |\n| --- | --- | --- | --- | --- |\n");
    let rows = table();
    let mut ops: Vec<&str> = Vec::new();
    for (op, _, _) in &rows {
        if !ops.contains(&op.as_str()) {
            ops.push(op);
        }
    }
    for op in ops {
        let cell = |d: DType| match rows.iter().find(|r| r.0 == op && r.1 == d) {
            None => "exact".to_string(),
            Some((_, _, Tolerance::Bound)) => bound_formula(op, d).to_string(),
            Some((_, _, t)) => t.describe(),
        };
        out.push_str(&format!(
            "| {op} | {} | {} | {} | {} |\n",
            cell(DType::F32),
            cell(DType::F64),
            cell(DType::F16),
            cell(DType::BF16)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulp_tolerances_are_the_kits() {
        let next = f32::from_bits(1.0f32.to_bits() + 2);
        assert!(Tolerance::Exact.ulps().unwrap().check(-0.0f32, 0.0).is_err());
        assert!(ulp(2).ulps().unwrap().check(next, 1.0).is_ok() && ulp(1).ulps().unwrap().check(next, 1.0).is_err());
        assert!(Tolerance::Ulp { ulp: 0, abs: 1e-6 }.ulps().unwrap().check(next, 1.0).is_ok());
        assert_eq!(Tolerance::Bound.ulps(), None);
        assert_eq!(ulp_size(1.0, DType::F32), f32::EPSILON as f64);
    }

    #[test]
    fn bounds_grow_with_size() {
        assert_eq!(sum_bound(1024, 1.0, DType::F32), 10.0 * f32::EPSILON as f64);
        assert!(sum_bound(257, 1.0, DType::F64) < sum_bound(257, 1.0, DType::F32));
        assert_eq!(matmul_bound(0, 5.0, DType::F64), 5.0 * f64::EPSILON);
    }

    #[test]
    fn integer_ops_are_exact_everywhere() {
        for op in BinaryOp::ALL {
            assert!(binary(op, DType::I32).is_exact() && binary(op, DType::U32).is_exact());
        }
        assert!(reduce(ReduceKind::Mean, DType::I32).is_exact());
    }

    #[test]
    fn the_docs_carry_the_enforced_table() {
        let docs = include_str!("../../docs/conformance.md");
        let table = markdown_table();
        assert!(docs.contains(&table), "docs/conformance.md must contain this table verbatim:\n{table}");
    }
}
