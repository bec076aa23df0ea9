//! Distances in units in the last place (ULPs), and a comparison of results with their
//! references built on them.
//!
//! A float's *position* counts the representable values from zero ([`UlpFloat::position`]):
//! `+0.0` and `-0.0` share position 0, the smallest subnormals on either side are 2 apart,
//! and the largest finite value is 1 from infinity. The ULP distance of two values is the
//! difference of their positions.
//!
//! [`Ulps`] says how close a result must be. In every case a NaN matches any NaN and nothing
//! else, and an infinity matches only itself; whether `-0.0` matches `+0.0` is
//! [`SignedZeros`]' choice.
//!
//! ```
//! use polycompute_testing::{ulps, SignedZeros, Ulps};
//!
//! let next = f32::from_bits(1.0f32.to_bits() + 1);
//! assert_eq!(ulps::distance(1.0f32, next), 1);
//! assert!(Ulps::within(1).check(next, 1.0).is_ok());
//! assert!(Ulps::EXACT.check(next, 1.0).is_err());
//! assert!(Ulps::EXACT.check(f64::NAN, -f64::NAN).is_ok(), "any NaN matches any NaN");
//! assert!(Ulps::EXACT.check(-0.0f32, 0.0).is_err(), "exact tells the zeros apart");
//! assert!(Ulps::EXACT.zeros(SignedZeros::Equal).check(-0.0f32, 0.0).is_ok());
//!
//! let err = Ulps::within(2).compare(&[1.0f32, 2.0, 3.5], &[1.0, 2.0, 3.0]).unwrap_err();
//! assert_eq!(err.to_string(), "1 of 3 element(s) differ beyond 2 ulp: [2] got 3.5 want 3.0 (2097152 ulp)");
//! ```

use std::fmt;

use polycompute_core::{bf16, f16, DType};

/// A float type whose values can be measured in ULPs: `f32`, `f64`, [`f16`](struct@f16) or [`bf16`]
/// (a half's ULPs are those of the half type, not of the f32 it is computed in).
pub trait UlpFloat: Copy + PartialEq + fmt::Debug + fmt::Display + Send + Sync + 'static {
    /// The value's position on the line of representable values (see the
    /// [module docs](self)); meaningful for non-NaN values.
    fn position(self) -> i128;
    /// The value as an f64 (exact).
    fn as_f64(self) -> f64;
    /// The value's bits, widened.
    fn bits(self) -> u64;
}

impl UlpFloat for f32 {
    fn position(self) -> i128 {
        ordered_f32(self) as i128
    }
    fn as_f64(self) -> f64 {
        self as f64
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

impl UlpFloat for f64 {
    fn position(self) -> i128 {
        ordered_f64(self)
    }
    fn as_f64(self) -> f64 {
        self
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

macro_rules! half_ulp_float {
    ($t:ty) => {
        impl UlpFloat for $t {
            fn position(self) -> i128 {
                ordered_half(self.to_bits()) as i128
            }
            fn as_f64(self) -> f64 {
                self.to_f64()
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
        }
    };
}

half_ulp_float!(f16);
half_ulp_float!(bf16);

/// The position of a 16-bit float (f16 or bf16: both keep the sign in the top bit and order
/// their magnitudes as integers) among the representable values; `-0.0` and `+0.0` share 0.
pub fn ordered_half(bits: u16) -> i32 {
    let mag = (bits & 0x7fff) as i32;
    if bits >> 15 == 1 {
        -mag
    } else {
        mag
    }
}

/// The position of an f32 among the representable values; `-0.0` and `+0.0` share 0.
pub fn ordered_f32(x: f32) -> i64 {
    let bits = x.to_bits();
    let mag = (bits & 0x7fff_ffff) as i64;
    if bits >> 31 == 1 {
        -mag
    } else {
        mag
    }
}

/// The position of an f64 among the representable values; `-0.0` and `+0.0` share 0.
pub fn ordered_f64(x: f64) -> i128 {
    let bits = x.to_bits();
    let mag = (bits & 0x7fff_ffff_ffff_ffff) as i128;
    if bits >> 63 == 1 {
        -mag
    } else {
        mag
    }
}

/// The ULP distance of two non-NaN values (any two f64 values are at most 2^64 - 2^53 apart).
pub fn distance<T: UlpFloat>(a: T, b: T) -> u64 {
    u64::try_from((a.position() - b.position()).unsigned_abs()).unwrap_or(u64::MAX)
}

/// The size of one ULP of `dtype` at `x` (the gap to the next value away from zero); 0 for a
/// non-finite `x`. `dtype` F32, F16 and BF16 measure in their own type, anything else in f64.
pub fn ulp_size(x: f64, dtype: DType) -> f64 {
    match dtype {
        DType::F16 => {
            let a = polycompute_core::halves::f16_from_f64(x.abs());
            if !a.is_finite() {
                return 0.0;
            }
            f16::from_bits(a.to_bits() + 1).to_f64() - a.to_f64()
        }
        DType::BF16 => {
            let a = polycompute_core::halves::bf16_from_f64(x.abs());
            if !a.is_finite() {
                return 0.0;
            }
            bf16::from_bits(a.to_bits() + 1).to_f64() - a.to_f64()
        }
        DType::F32 => {
            let a = (x as f32).abs();
            if !a.is_finite() {
                return 0.0;
            }
            (f32::from_bits(a.to_bits() + 1) - a) as f64
        }
        _ => {
            let a = x.abs();
            if !a.is_finite() {
                return 0.0;
            }
            f64::from_bits(a.to_bits() + 1) - a
        }
    }
}

/// Whether `-0.0` and `+0.0` match.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SignedZeros {
    /// They match (as `==` has it).
    Equal,
    /// They differ: the sign of a zero result is part of what is checked.
    Distinct,
}

/// How close a result must be to its reference: within `max` ULPs, or within an absolute
/// error, with a rule for the zeros' signs. NaN matches only NaN; an infinity only itself.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Ulps {
    max: u64,
    abs: f64,
    zeros: SignedZeros,
}

impl Ulps {
    /// Bit for bit, except that any NaN matches any NaN: `-0.0` and `+0.0` differ.
    pub const EXACT: Ulps = Ulps { max: 0, abs: 0.0, zeros: SignedZeros::Distinct };

    /// Within `max` ULPs; `-0.0` and `+0.0` match (they are 0 ULPs apart).
    pub const fn within(max: u64) -> Ulps {
        Ulps { max, abs: 0.0, zeros: SignedZeros::Equal }
    }

    /// Also accepts an absolute error up to `abs` (for functions whose accuracy is stated
    /// as an absolute error, or results near zero).
    pub const fn or_abs(self, abs: f64) -> Ulps {
        Ulps { abs, ..self }
    }

    /// The same tolerance with `rule` for the zeros' signs.
    pub const fn zeros(self, rule: SignedZeros) -> Ulps {
        Ulps { zeros: rule, ..self }
    }

    /// The largest allowed ULP distance.
    pub const fn max_ulps(&self) -> u64 {
        self.max
    }

    /// Checks one value against its reference.
    pub fn check<T: UlpFloat>(&self, got: T, want: T) -> Result<(), Mismatch> {
        let (g, w) = (got.as_f64(), want.as_f64());
        let mismatch = |ulps| Err(Mismatch { index: None, got: g, want: w, ulps });
        if g.is_nan() || w.is_nan() {
            return if g.is_nan() && w.is_nan() { Ok(()) } else { mismatch(None) };
        }
        let ulps = distance(got, want);
        if g == w {
            let sign_differs = g.is_sign_negative() != w.is_sign_negative();
            return if sign_differs && self.zeros == SignedZeros::Distinct { mismatch(Some(0)) } else { Ok(()) };
        }
        if g.is_infinite() || w.is_infinite() || (ulps > self.max && (g - w).abs() > self.abs) {
            return mismatch(Some(ulps));
        }
        Ok(())
    }

    /// Checks every element of `got` against `want`, describing the first few mismatches.
    pub fn compare<T: UlpFloat>(&self, got: &[T], want: &[T]) -> Result<(), Mismatches> {
        let mut out = Mismatches { tolerance: *self, len: want.len(), got_len: got.len(), count: 0, shown: Vec::new() };
        if got.len() != want.len() {
            return Err(out);
        }
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            if let Err(m) = self.check(g, w) {
                out.count += 1;
                if out.shown.len() < Mismatches::SHOWN {
                    out.shown.push(Mismatch { index: Some(i), ..m });
                }
            }
        }
        if out.count == 0 {
            Ok(())
        } else {
            Err(out)
        }
    }

    /// [`compare`](Ulps::compare), panicking with `what` and the mismatches.
    #[track_caller]
    pub fn assert<T: UlpFloat>(&self, got: &[T], want: &[T], what: impl fmt::Display) {
        if let Err(m) = self.compare(got, want) {
            panic!("{what}: {m}");
        }
    }
}

impl fmt::Display for Ulps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let exact = self.max == 0 && self.abs == 0.0;
        if exact {
            f.write_str("exact")?;
        } else if self.abs == 0.0 {
            write!(f, "{} ulp", self.max)?;
        } else {
            write!(f, "{} ulp or abs {:e}", self.max, self.abs)?;
        }
        // Exact tells the zeros apart unless told otherwise; a ULP allowance does not.
        match (exact, self.zeros) {
            (true, SignedZeros::Equal) => f.write_str(" but -0.0 == +0.0")?,
            (false, SignedZeros::Distinct) => f.write_str(", signed zeros")?,
            _ => {}
        }
        Ok(())
    }
}

/// One value that is not close enough to its reference.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Its position, when it is an element of a slice.
    pub index: Option<usize>,
    /// The value, as f64.
    pub got: f64,
    /// The reference, as f64.
    pub want: f64,
    /// Their ULP distance; `None` when one of them is NaN and the other is not.
    pub ulps: Option<u64>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(i) = self.index {
            write!(f, "[{i}] ")?;
        }
        write!(f, "got {:?} want {:?} (", self.got, self.want)?;
        match self.ulps {
            None => f.write_str("NaN mismatch)"),
            Some(0) => f.write_str("sign of zero)"),
            Some(u) => write!(f, "{u} ulp)"),
        }
    }
}

impl std::error::Error for Mismatch {}

/// The mismatches of a slice: how many, and the first few.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatches {
    /// The tolerance that was checked.
    pub tolerance: Ulps,
    /// The reference's length.
    pub len: usize,
    /// The result's length (a different length is a mismatch of its own).
    pub got_len: usize,
    /// How many elements mismatched.
    pub count: usize,
    /// The first [`Mismatches::SHOWN`] of them.
    pub shown: Vec<Mismatch>,
}

impl Mismatches {
    /// How many mismatches are kept for the description.
    pub const SHOWN: usize = 8;
}

impl fmt::Display for Mismatches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.got_len != self.len {
            return write!(f, "{} element(s), the reference has {}", self.got_len, self.len);
        }
        write!(f, "{} of {} element(s) differ beyond {}: ", self.count, self.len, self.tolerance)?;
        let shown: Vec<String> = self.shown.iter().map(Mismatch::to_string).collect();
        f.write_str(&shown.join("; "))?;
        if self.count > self.shown.len() {
            write!(f, "; ...")?;
        }
        Ok(())
    }
}

impl std::error::Error for Mismatches {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_representable_values() {
        assert_eq!(distance(1.0f32, f32::from_bits(1.0f32.to_bits() + 3)), 3);
        assert_eq!(distance(0.0f32, -0.0), 0);
        assert_eq!(distance(f32::from_bits(1), -f32::from_bits(1)), 2);
        assert_eq!(distance(f64::MAX, f64::INFINITY), 1);
        assert_eq!(distance(f64::NEG_INFINITY, f64::INFINITY), 2 * 0x7ff0_0000_0000_0000);
        assert_eq!(ulp_size(1.0, DType::F32), f32::EPSILON as f64);
        assert_eq!(ulp_size(1.0, DType::F64), f64::EPSILON);
        assert_eq!(ulp_size(f64::INFINITY, DType::F64), 0.0);
    }

    #[test]
    fn nan_matches_only_nan_and_infinity_only_itself() {
        let loose = Ulps::within(u64::MAX).or_abs(f64::INFINITY);
        assert!(loose.check(f32::NAN, f32::NAN).is_ok());
        assert_eq!(loose.check(f32::NAN, 1.0).unwrap_err().ulps, None);
        assert!(loose.check(1.0, f64::NAN).is_err());
        assert!(loose.check(f32::MAX, f32::INFINITY).is_err());
        assert!(loose.check(f32::INFINITY, f32::INFINITY).is_ok());
        assert!(loose.check(f32::NEG_INFINITY, f32::INFINITY).is_err());
    }

    #[test]
    fn zeros_follow_the_rule() {
        assert!(Ulps::within(0).check(-0.0f64, 0.0).is_ok());
        assert!(Ulps::within(3).zeros(SignedZeros::Distinct).check(-0.0f64, 0.0).is_err());
        assert!(Ulps::EXACT.check(0.0f32, 0.0).is_ok());
        assert_eq!(Ulps::EXACT.check(0.0f32, -0.0).unwrap_err().to_string(), "got 0.0 want -0.0 (sign of zero)");
    }

    #[test]
    fn ulps_or_absolute_error() {
        let one_up = f32::from_bits(1.0f32.to_bits() + 2);
        assert!(Ulps::within(2).check(one_up, 1.0).is_ok());
        assert!(Ulps::within(1).check(one_up, 1.0).is_err());
        assert!(Ulps::within(1).or_abs(1e-6).check(one_up, 1.0).is_ok());
        assert!(Ulps::within(0).or_abs(0.5).check(1.4f64, 1.0).is_ok());
    }

    #[test]
    fn compare_describes_the_first_mismatches_and_lengths() {
        let want = vec![1.0f64; 20];
        let mut got = want.clone();
        for g in got.iter_mut().skip(5) {
            *g = 2.0;
        }
        let m = Ulps::EXACT.compare(&got, &want).unwrap_err();
        assert_eq!((m.count, m.shown.len(), m.shown[0].index), (15, Mismatches::SHOWN, Some(5)));
        assert!(m.to_string().starts_with("15 of 20 element(s) differ beyond exact: [5] got 2.0 want 1.0 ("));
        assert!(m.to_string().ends_with("; ..."));
        let short = Ulps::EXACT.compare(&got[..3], &want).unwrap_err();
        assert_eq!(short.to_string(), "3 element(s), the reference has 20");
        assert!(Ulps::within(1).zeros(SignedZeros::Distinct).to_string().ends_with("signed zeros"));
        assert_eq!(Ulps::EXACT.zeros(SignedZeros::Equal).to_string(), "exact but -0.0 == +0.0");
        assert_eq!(Ulps::within(3).or_abs(0.5).to_string(), "3 ulp or abs 5e-1");
    }

    #[test]
    #[should_panic(expected = "sum: 1 of 1 element(s) differ beyond 1 ulp")]
    fn assert_names_what_failed() {
        Ulps::within(1).assert(&[3.0f32], &[2.0], "sum");
    }
}
