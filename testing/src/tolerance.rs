//! How close one device's output must be to the reference's: a [`Tolerance`], and the
//! element-by-element comparison of two host arrays under it ([`compare`]).
//!
//! | rule | an element matches when |
//! |---|---|
//! | [`Tolerance::exact`] | the bits agree (integers: the values) |
//! | [`Tolerance::ulps(n)`](Tolerance::ulps) | at most `n` ULPs apart (integers: `\|a - b\| <= n`) |
//! | [`Tolerance::abs_rel(a, r)`](Tolerance::abs_rel) | `\|got - want\| <= a + r·\|want\|` |
//! | [`Tolerance::sum_like(n, Σ\|terms\|)`](Tolerance::sum_like) | `\|got - want\| <= n·ε·Σ\|terms\|` (ε of the dtype) |
//!
//! In every rule a NaN matches a NaN and nothing else (so NaN *placement* is checked), and an
//! infinity matches only itself. `-0.0` against `+0.0` differs under `exact` and matches under
//! the others; [`Tolerance::zeros`] says otherwise. Without a tolerance of its own a check
//! uses [`Tolerance::default_for`]: exact for integers, [`DEFAULT_FLOAT_ULPS`] ULPs for floats.
//!
//! ```
//! use polycompute_testing::{tolerance, Tolerance};
//! use polycompute_core::HostVec;
//!
//! let want = HostVec::F32(vec![1.0, 2.0, f32::NAN]);
//! let next = f32::from_bits(2.0f32.to_bits() + 1);
//! let got = HostVec::F32(vec![1.0, next, f32::NAN]);
//! let exact = tolerance::compare(&got, &want, &Tolerance::exact()).unwrap();
//! assert_eq!((exact.count, exact.max_ulps), (1, Some(1)));
//! assert_eq!(tolerance::compare(&got, &want, &Tolerance::ulps(1)).unwrap().count, 0);
//! ```

use std::fmt;
use std::sync::Arc;

use polycompute_core::{DType, HostVec};

use super::ulps::{self, SignedZeros};

/// The ULPs a float output may differ by when its check names no tolerance: room for the
/// last-bit differences of fused multiply-adds and of a GPU's `exp`/`log`/division.
pub const DEFAULT_FLOAT_ULPS: u64 = 4;

/// How an element is allowed to differ from its reference (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// Bit for bit (any NaN still matches any NaN).
    Exact,
    /// At most this many ULPs apart.
    Ulps(u64),
    /// `|got - want| <= abs + rel·|want|`.
    AbsRel {
        /// Absolute allowance.
        abs: f64,
        /// Allowance relative to the reference's magnitude.
        rel: f64,
    },
    /// `|got - want| <= ulps·ε·Σ|terms|`: the error of a sum is bounded by the magnitude of its
    /// terms, not of its result (which cancellation can make tiny).
    SumLike {
        /// How many ε (the dtype's machine epsilon) of Σ|terms|.
        ulps: u64,
        /// Σ|terms| of each output element; one value applies to every element.
        magnitudes: Arc<[f64]>,
    },
}

/// A [`Rule`] and whether the sign of a zero counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Tolerance {
    rule: Rule,
    zeros: SignedZeros,
}

impl Tolerance {
    /// Bit for bit: `-0.0` and `+0.0` differ; a NaN matches any NaN.
    pub fn exact() -> Tolerance {
        Tolerance { rule: Rule::Exact, zeros: SignedZeros::Distinct }
    }

    /// At most `n` ULPs apart (for integers, at most `n` apart); the zeros match.
    pub fn ulps(n: u64) -> Tolerance {
        Tolerance { rule: Rule::Ulps(n), zeros: SignedZeros::Equal }
    }

    /// `|got - want| <= abs`.
    pub fn abs(abs: f64) -> Tolerance {
        Tolerance::abs_rel(abs, 0.0)
    }

    /// `|got - want| <= rel·|want|`.
    pub fn rel(rel: f64) -> Tolerance {
        Tolerance::abs_rel(0.0, rel)
    }

    /// `|got - want| <= abs + rel·|want|` (numpy's `isclose`).
    pub fn abs_rel(abs: f64, rel: f64) -> Tolerance {
        Tolerance { rule: Rule::AbsRel { abs, rel }, zeros: SignedZeros::Equal }
    }

    /// For sums, means, dot products and matrix products: `|got - want| <= n·ε·Σ|terms|`,
    /// with `magnitudes` the Σ|terms| of each output element (compute it on the host or as
    /// `x.map(|v| v.abs())?.sum(axis)`), or one value for all of them. Integer sums are exact.
    pub fn sum_like(n: u64, magnitudes: impl Into<Vec<f64>>) -> Tolerance {
        let magnitudes: Vec<f64> = magnitudes.into();
        Tolerance { rule: Rule::SumLike { ulps: n, magnitudes: magnitudes.into() }, zeros: SignedZeros::Equal }
    }

    /// What a check uses for an output of `dtype` when it names no tolerance: exact for
    /// integers, [`DEFAULT_FLOAT_ULPS`] ULPs for floats.
    pub fn default_for(dtype: DType) -> Tolerance {
        if dtype.is_int() {
            Tolerance::exact()
        } else {
            Tolerance::ulps(DEFAULT_FLOAT_ULPS)
        }
    }

    /// The same rule with `rule` for `-0.0` against `+0.0`.
    pub fn zeros(self, rule: SignedZeros) -> Tolerance {
        Tolerance { zeros: rule, ..self }
    }

    /// The rule.
    pub fn rule(&self) -> &Rule {
        &self.rule
    }

    /// Whether only bit-identical results match (then a digest must match too).
    pub fn is_exact(&self) -> bool {
        let no_allowance = match self.rule {
            Rule::Exact | Rule::Ulps(0) => true,
            Rule::AbsRel { abs, rel } => abs == 0.0 && rel == 0.0,
            Rule::Ulps(_) | Rule::SumLike { .. } => false,
        };
        no_allowance && self.zeros == SignedZeros::Distinct
    }

    /// How far from `want` an element of `dtype` (element `index` of its output) may be, as
    /// an absolute error; `None` for the ULP rules, which are not absolute.
    pub fn allowance(&self, dtype: DType, index: usize, want: f64) -> Option<f64> {
        match &self.rule {
            Rule::Exact | Rule::Ulps(_) => None,
            Rule::AbsRel { abs, rel } => Some(abs + rel * want.abs()),
            Rule::SumLike { ulps, magnitudes } => {
                let m =
                    if magnitudes.len() == 1 { magnitudes[0] } else { magnitudes.get(index).copied().unwrap_or(0.0) };
                Some(*ulps as f64 * epsilon(dtype) * m)
            }
        }
    }

    /// The absolute slack this tolerance gives an element near `want`, ULP rules included
    /// (for comparing summary statistics, which add the elements' slacks).
    pub fn slack(&self, dtype: DType, index: usize, want: f64) -> f64 {
        match self.rule {
            Rule::Exact => 0.0,
            Rule::Ulps(n) if dtype.is_int() => n as f64,
            Rule::Ulps(n) => n as f64 * ulps::ulp_size(want, dtype),
            _ => self.allowance(dtype, index, want).unwrap_or(0.0),
        }
    }

    /// Checks that the rule fits an output of `len` elements (a sum-like rule needs one
    /// magnitude or one per element).
    pub fn fits(&self, len: usize) -> Result<(), String> {
        match &self.rule {
            Rule::SumLike { magnitudes, .. } if magnitudes.len() != 1 && magnitudes.len() != len => Err(format!(
                "the sum-like tolerance has {} magnitude(s) for {len} element(s): give one, or one per element",
                magnitudes.len()
            )),
            Rule::AbsRel { abs, rel } if !(abs >= &0.0 && rel >= &0.0) => {
                Err(format!("the tolerance abs {abs} rel {rel} must be non-negative numbers"))
            }
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.rule {
            Rule::Exact => f.write_str("exact")?,
            Rule::Ulps(n) => write!(f, "{n} ulp")?,
            Rule::AbsRel { abs, rel } => write!(f, "abs {abs:e} + rel {rel:e}")?,
            Rule::SumLike { ulps, .. } => write!(f, "sum-like {ulps}·ε·Σ|terms|")?,
        }
        match (&self.rule, self.zeros) {
            (Rule::Exact, SignedZeros::Equal) => f.write_str(" but -0.0 == +0.0"),
            (Rule::Exact, _) | (_, SignedZeros::Equal) => Ok(()),
            (_, SignedZeros::Distinct) => f.write_str(", signed zeros"),
        }
    }
}

/// The machine epsilon of `dtype` (0 for integers, whose sums are exact).
pub fn epsilon(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f32::EPSILON as f64,
        DType::F64 => f64::EPSILON,
        DType::I32 | DType::U32 | DType::I64 | DType::U8 | DType::Bool => 0.0,
        DType::F16 => polycompute_core::f16::EPSILON.to_f64(),
        DType::BF16 => polycompute_core::bf16::EPSILON.to_f64(),
    }
}

/// One element that differs beyond the tolerance.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ElementDiff {
    /// Its flat (row-major) index.
    pub index: usize,
    /// The device's value (exact for every dtype).
    pub got: f64,
    /// The reference's value.
    pub want: f64,
    /// Their ULP distance (integers: their difference); `None` when one is NaN and the other
    /// is not.
    pub ulps: Option<u64>,
}

/// The outcome of comparing two arrays element by element.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// How many elements differ beyond the tolerance.
    pub count: usize,
    /// The largest ULP distance of any two non-NaN elements (within the tolerance or not);
    /// `None` when there were none.
    pub max_ulps: Option<u64>,
    /// The first [`Comparison::SHOWN`] differing elements.
    pub shown: Vec<ElementDiff>,
}

impl Comparison {
    /// How many differing elements are kept to be shown.
    pub const SHOWN: usize = 5;
}

/// Compares `got` with `want` element by element under `tolerance`. An error says why they
/// cannot be compared at all (different dtypes or lengths, or a tolerance that does not fit).
pub fn compare(got: &HostVec, want: &HostVec, tolerance: &Tolerance) -> Result<Comparison, String> {
    if got.dtype() != want.dtype() {
        return Err(format!("dtype {} where the reference has {}", got.dtype(), want.dtype()));
    }
    if got.len() != want.len() {
        return Err(format!("{} element(s) where the reference has {}", got.len(), want.len()));
    }
    tolerance.fits(want.len())?;
    let dtype = want.dtype();
    let mut out = Comparison::default();
    let mut each = |index: usize, g: f64, w: f64, ulps: Option<u64>, bits_equal: bool| {
        if let Some(u) = ulps {
            out.max_ulps = Some(out.max_ulps.map_or(u, |m| m.max(u)));
        }
        if !matches_one(tolerance, dtype, index, g, w, ulps, bits_equal) {
            out.count += 1;
            if out.shown.len() < Comparison::SHOWN {
                out.shown.push(ElementDiff { index, got: g, want: w, ulps });
            }
        }
    };
    match (got, want) {
        (HostVec::F32(g), HostVec::F32(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                let u = (!g.is_nan() && !w.is_nan()).then(|| ulps::distance(g, w));
                each(i, g as f64, w as f64, u, g.to_bits() == w.to_bits());
            }
        }
        (HostVec::F64(g), HostVec::F64(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                let u = (!g.is_nan() && !w.is_nan()).then(|| ulps::distance(g, w));
                each(i, g, w, u, g.to_bits() == w.to_bits());
            }
        }
        (HostVec::F16(g), HostVec::F16(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                let u = (!g.is_nan() && !w.is_nan()).then(|| ulps::distance(g, w));
                each(i, g.to_f64(), w.to_f64(), u, g.to_bits() == w.to_bits());
            }
        }
        (HostVec::BF16(g), HostVec::BF16(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                let u = (!g.is_nan() && !w.is_nan()).then(|| ulps::distance(g, w));
                each(i, g.to_f64(), w.to_f64(), u, g.to_bits() == w.to_bits());
            }
        }
        (HostVec::I32(g), HostVec::I32(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                each(i, g as f64, w as f64, Some(g.abs_diff(w) as u64), g == w);
            }
        }
        (HostVec::U32(g), HostVec::U32(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                each(i, g as f64, w as f64, Some(g.abs_diff(w) as u64), g == w);
            }
        }
        // i64 compares exactly by value (`g == w`); the f64s are only for the message.
        (HostVec::I64(g), HostVec::I64(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                each(i, g as f64, w as f64, Some(g.abs_diff(w)), g == w);
            }
        }
        (HostVec::U8(g), HostVec::U8(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                each(i, g as f64, w as f64, Some(g.abs_diff(w) as u64), g == w);
            }
        }
        (HostVec::Bool(g), HostVec::Bool(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                each(i, g as u8 as f64, w as u8 as f64, Some((g != w) as u64), g == w);
            }
        }
        _ => unreachable!("the dtypes were checked equal above"),
    }
    Ok(out)
}

/// Compares one element of `dtype` (element `index` of its output), both held as f64 (exact
/// for every dtype): the difference, when it is beyond `tolerance`.
pub fn compare_value(dtype: DType, index: usize, got: f64, want: f64, tolerance: &Tolerance) -> Option<ElementDiff> {
    let (ulps, bits_equal) = match dtype {
        DType::F32 => {
            let (g, w) = (got as f32, want as f32);
            ((!g.is_nan() && !w.is_nan()).then(|| ulps::distance(g, w)), g.to_bits() == w.to_bits())
        }
        DType::F64 => {
            ((!got.is_nan() && !want.is_nan()).then(|| ulps::distance(got, want)), got.to_bits() == want.to_bits())
        }
        DType::F16 => {
            let (g, w) = (polycompute_core::halves::f16_from_f64(got), polycompute_core::halves::f16_from_f64(want));
            ((!g.is_nan() && !w.is_nan()).then(|| ulps::distance(g, w)), g.to_bits() == w.to_bits())
        }
        DType::BF16 => {
            let (g, w) = (polycompute_core::halves::bf16_from_f64(got), polycompute_core::halves::bf16_from_f64(want));
            ((!g.is_nan() && !w.is_nan()).then(|| ulps::distance(g, w)), g.to_bits() == w.to_bits())
        }
        DType::I32 | DType::U32 | DType::I64 | DType::U8 | DType::Bool => {
            (Some((got - want).abs() as u64), got == want)
        }
    };
    let ok = matches_one(tolerance, dtype, index, got, want, ulps, bits_equal);
    (!ok).then_some(ElementDiff { index, got, want, ulps })
}

fn matches_one(t: &Tolerance, dtype: DType, index: usize, g: f64, w: f64, ulps: Option<u64>, bits_equal: bool) -> bool {
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    if bits_equal {
        return true;
    }
    if g == w {
        // Only -0.0 against +0.0 is equal without equal bits.
        return t.zeros == SignedZeros::Equal;
    }
    if g.is_infinite() || w.is_infinite() {
        return false;
    }
    let u = ulps.unwrap_or(u64::MAX);
    match t.rule {
        Rule::Exact => false,
        Rule::Ulps(n) => u <= n,
        _ => (g - w).abs() <= t.allowance(dtype, index, w).unwrap_or(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(x: f32, n: u32) -> f32 {
        f32::from_bits(x.to_bits() + n)
    }

    #[test]
    fn nan_placement_and_zeros() {
        let want = HostVec::F64(vec![f64::NAN, 0.0, 1.0]);
        let got = HostVec::F64(vec![1.0, -0.0, f64::NAN]);
        let c = compare(&got, &want, &Tolerance::ulps(10)).unwrap();
        assert_eq!(c.count, 2, "NaN where none was, and none where one was; the zeros match");
        assert_eq!(c.shown[0].ulps, None);
        let c = compare(&got, &want, &Tolerance::ulps(10).zeros(SignedZeros::Distinct)).unwrap();
        assert_eq!(c.count, 3);
        assert_eq!(compare(&want, &want, &Tolerance::exact()).unwrap().count, 0, "NaN matches NaN");
    }

    #[test]
    fn rules_measure_what_they_say() {
        let want = HostVec::F32(vec![1.0, 1000.0]);
        let got = HostVec::F32(vec![up(1.0, 3), up(1000.0, 3)]);
        assert_eq!(compare(&got, &want, &Tolerance::ulps(2)).unwrap().count, 2);
        let c = compare(&got, &want, &Tolerance::ulps(3)).unwrap();
        assert_eq!((c.count, c.max_ulps), (0, Some(3)));
        assert_eq!(compare(&got, &want, &Tolerance::abs(1e-6)).unwrap().count, 1, "only 1.0's error is that small");
        assert_eq!(compare(&got, &want, &Tolerance::rel(1e-6)).unwrap().count, 0);
        // A sum that cancelled to 1.0 out of terms of magnitude 1000 may be off by a few 1000·ε.
        assert_eq!(compare(&got, &want, &Tolerance::sum_like(4, vec![1000.0])).unwrap().count, 0);
        assert_eq!(compare(&got, &want, &Tolerance::sum_like(1, vec![1.0, 1.0])).unwrap().count, 2);
        let e = compare(&got, &want, &Tolerance::sum_like(1, vec![1.0, 2.0, 3.0])).unwrap_err();
        assert!(e.contains("3 magnitude(s) for 2 element(s)"), "{e}");
    }

    #[test]
    fn integers_are_exact_by_default_and_count_their_difference() {
        let want = HostVec::I32(vec![5, -3]);
        let got = HostVec::I32(vec![6, -3]);
        let c = compare(&got, &want, &Tolerance::default_for(DType::I32)).unwrap();
        assert_eq!((c.count, c.max_ulps, c.shown[0].index), (1, Some(1), 0));
        assert_eq!(compare(&got, &want, &Tolerance::ulps(1)).unwrap().count, 0);
        assert!(compare(&HostVec::U32(vec![1, 2]), &want, &Tolerance::exact()).unwrap_err().contains("dtype u32"));
        assert!(compare(&HostVec::I32(vec![1]), &want, &Tolerance::exact()).unwrap_err().contains("1 element(s)"));
    }

    #[test]
    fn infinities_match_only_themselves() {
        let want = HostVec::F32(vec![f32::INFINITY, f32::MAX]);
        let got = HostVec::F32(vec![f32::MAX, f32::INFINITY]);
        assert_eq!(compare(&got, &want, &Tolerance::abs_rel(f64::MAX, 1.0)).unwrap().count, 2);
        assert_eq!(Tolerance::ulps(2).zeros(SignedZeros::Distinct).to_string(), "2 ulp, signed zeros");
        assert!(Tolerance::exact().is_exact() && !Tolerance::abs(1e-9).is_exact());
        assert!(!Tolerance::ulps(0).is_exact(), "-0.0 matches +0.0 under it");
    }
}
