//! Runs a case on a device and compares the result with the reference under the case's
//! tolerance.

use polycompute::{BufferRef, DType, Device, Error, HostVec};

use super::corpus::Case;
use super::reference::{Input, Reference};
use super::scalar::get;
use super::tolerance::{ErrorBound, Tolerance};
use polycompute_testing::ulps;

/// How a case went on one device.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Within tolerance.
    Pass,
    /// Outside tolerance, or an error other than `Unsupported`.
    Fail,
    /// The device answered `Error::Unsupported`.
    Unsupported,
}

/// The result of one case on one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Pass, fail or unsupported.
    pub status: Status,
    /// True when every element matched the reference bit for bit (any NaN matching any NaN).
    pub exact: bool,
    /// The largest distance in ULPs (integers: in units) between an element and the
    /// reference; for bound-checked ops (sum, mean, prod, matmul) in ULPs of the magnitude of
    /// the terms; `u64::MAX` for a NaN where a number was due or the reverse.
    pub max_ulp: u64,
    /// What went wrong, for failures and unsupported cases.
    pub message: String,
}

impl Outcome {
    fn error(status: Status, message: String) -> Outcome {
        Outcome { status, exact: false, max_ulp: 0, message }
    }
}

/// How many mismatching elements a failure message lists.
const SHOWN: usize = 5;

/// Compares `got` with the reference under `tol`.
pub fn compare(got: &HostVec, reference: &Reference, tol: Tolerance) -> Outcome {
    let want = &reference.values;
    if got.dtype() != want.dtype() || got.len() != want.len() {
        return Outcome::error(
            Status::Fail,
            format!("result is {} x{}, the reference {} x{}", got.dtype(), got.len(), want.dtype(), want.len()),
        );
    }
    let (mut exact, mut max_ulp, mut bad, mut shown) = (true, 0u64, 0usize, Vec::new());
    for i in 0..want.len() {
        let check = element(got, want, i, tol, reference.bound.as_ref().map(|b| b[i]));
        exact &= check.identical;
        max_ulp = max_ulp.max(check.ulp);
        if !check.ok {
            bad += 1;
            if shown.len() < SHOWN {
                shown.push(format!(
                    "[{i}] got {} want {} ({})",
                    super::golden::format_value(got, i),
                    super::golden::format_value(want, i),
                    if check.ulp == u64::MAX { "NaN mismatch".to_string() } else { format!("{} ulp", check.ulp) }
                ));
            }
        }
    }
    if bad == 0 {
        Outcome { status: Status::Pass, exact, max_ulp, message: String::new() }
    } else {
        let message =
            format!("{bad} of {} element(s) outside tolerance {}: {}", want.len(), tol.describe(), shown.join("; "));
        Outcome { status: Status::Fail, exact: false, max_ulp, message }
    }
}

struct ElementCheck {
    ok: bool,
    identical: bool,
    ulp: u64,
}

fn element(got: &HostVec, want: &HostVec, i: usize, tol: Tolerance, bound: Option<ErrorBound>) -> ElementCheck {
    let (g, w) = (get(got, i), get(want, i));
    if let (Some(gi), Some(wi)) = (crate::scalar::int_value(g), crate::scalar::int_value(w)) {
        // Integers and bools exactly (through f64 two i64s past 2^53 could look equal).
        let ulp = u64::try_from(gi.abs_diff(wi)).unwrap_or(u64::MAX);
        return ElementCheck { ok: ulp == 0, identical: ulp == 0, ulp };
    }
    let (gf, wf) = (g.to_f64(), w.to_f64());
    if gf.is_nan() || wf.is_nan() {
        let both = gf.is_nan() && wf.is_nan();
        return ElementCheck { ok: both, identical: both, ulp: if both { 0 } else { u64::MAX } };
    }
    let identical = g.to_bits() == w.to_bits();
    let dtype = want.dtype();
    // ULPs of the output dtype (a half's are the half's, not those of the f32 it computes in).
    let (gh, wh) = (polycompute::f16::from_f64(gf), polycompute::f16::from_f64(wf));
    let (gb, wb) = (polycompute::bf16::from_f64(gf), polycompute::bf16::from_f64(wf));
    let mut ulp = match dtype {
        DType::F32 => ulps::distance(gf as f32, wf as f32),
        DType::F16 => ulps::distance(gh, wh),
        DType::BF16 => ulps::distance(gb, wb),
        _ => ulps::distance(gf, wf),
    };
    let ok = match (tol.ulps(), bound) {
        (Some(within), _) if dtype == DType::F32 => within.check(gf as f32, wf as f32).is_ok(),
        (Some(within), _) if dtype == DType::F16 => within.check(gh, wh).is_ok(),
        (Some(within), _) if dtype == DType::BF16 => within.check(gb, wb).is_ok(),
        (Some(within), _) => within.check(gf, wf).is_ok(),
        _ if gf.is_infinite() || wf.is_infinite() => gf == wf,
        (None, Some(b)) => {
            // Reported in ULPs of the terms' magnitude: a result that cancelled to near zero
            // has tiny ULPs of its own that say nothing about the accuracy.
            let unit = ulps::ulp_size(b.magnitude.max(wf.abs()), dtype);
            if unit > 0.0 {
                ulp = ulp.min(((gf - wf).abs() / unit).ceil() as u64);
            }
            (gf - wf).abs() <= b.limit + ulps::ulp_size(wf, dtype)
        }
        (None, None) => identical,
    };
    ElementCheck { ok, identical, ulp }
}

/// Runs `case` on `device` with the given inputs and compares with `reference`.
/// `Error::Unsupported` is [`Status::Unsupported`]; any other error is a failure.
pub fn run_case(device: &Device, case: &Case, inputs: &[Input], reference: &Reference) -> Outcome {
    match execute(device, case, inputs) {
        Ok(got) => compare(&got, reference, case.tolerance),
        Err(e @ Error::Unsupported { .. }) => Outcome::error(Status::Unsupported, e.to_string()),
        Err(e) => Outcome::error(Status::Fail, format!("error: {e}")),
    }
}

/// Uploads the inputs, executes the case's op, and downloads the result.
pub fn execute(device: &Device, case: &Case, inputs: &[Input]) -> polycompute::Result<HostVec> {
    if let super::corpus::CaseOp::Axes(call) = &case.compute {
        return super::corpus_axes::execute(device, call, inputs);
    }
    if let super::corpus::CaseOp::Array(call) = &case.compute {
        return super::corpus_array::execute(device, call, inputs);
    }
    let op = case.op()?;
    let backend = device.backend();
    let buffers = inputs.iter().map(|(_, v)| backend.upload(v.as_slice())).collect::<Result<Vec<BufferRef>, _>>()?;
    let refs: Vec<&BufferRef> = buffers.iter().collect();
    let out = backend.execute(&op, &refs)?;
    backend.synchronize()?;
    backend.download(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(values: HostVec) -> Reference {
        Reference { dims: vec![values.len()], values, bound: None }
    }

    #[test]
    fn exact_means_bits_except_nan_payloads() {
        let want = reference(HostVec::F32(vec![1.0, f32::NAN, -0.0]));
        let same = HostVec::F32(vec![1.0, f32::from_bits(0x7fc0_1234), -0.0]);
        let o = compare(&same, &want, Tolerance::Exact);
        assert_eq!((o.status, o.exact, o.max_ulp), (Status::Pass, true, 0));
        let zero_sign = compare(&HostVec::F32(vec![1.0, f32::NAN, 0.0]), &want, Tolerance::Exact);
        assert_eq!(zero_sign.status, Status::Fail);
        let off =
            compare(&HostVec::F32(vec![f32::from_bits(1.0f32.to_bits() + 1), f32::NAN, -0.0]), &want, Tolerance::Exact);
        assert_eq!((off.status, off.max_ulp), (Status::Fail, 1));
        assert!(off.message.contains("[0]"), "{}", off.message);
    }

    #[test]
    fn ulp_tolerance_allows_its_distance_and_no_more() {
        let want = reference(HostVec::F64(vec![1.0, 0.0, f64::INFINITY]));
        let near = HostVec::F64(vec![f64::from_bits(1.0f64.to_bits() + 2), -0.0, f64::INFINITY]);
        let o = compare(&near, &want, Tolerance::Ulp { ulp: 2, abs: 0.0 });
        assert_eq!((o.status, o.exact, o.max_ulp), (Status::Pass, false, 2));
        assert_eq!(compare(&near, &want, Tolerance::Ulp { ulp: 1, abs: 0.0 }).status, Status::Fail);
        // An absolute allowance covers results near zero; infinities must still match.
        let tiny = HostVec::F64(vec![1.0, 1e-9, f64::INFINITY]);
        assert_eq!(compare(&tiny, &want, Tolerance::Ulp { ulp: 0, abs: 1e-8 }).status, Status::Pass);
        let finite = HostVec::F64(vec![1.0, 0.0, f64::MAX]);
        assert_eq!(compare(&finite, &want, Tolerance::Ulp { ulp: 4, abs: 0.0 }).status, Status::Fail);
        let nan = HostVec::F64(vec![f64::NAN, 0.0, f64::INFINITY]);
        assert_eq!(compare(&nan, &want, Tolerance::Ulp { ulp: 4, abs: 1.0 }).max_ulp, u64::MAX);
    }

    #[test]
    fn bound_tolerance_uses_the_reference_bound() {
        let mut want = reference(HostVec::F32(vec![100.0]));
        want.bound = Some(vec![ErrorBound { limit: 0.01, magnitude: 100.0 }]);
        let near = compare(&HostVec::F32(vec![100.009]), &want, Tolerance::Bound);
        // 0.009 is 1180 ULPs of 100 (2^-13 each, rounded up).
        assert_eq!((near.status, near.max_ulp), (Status::Pass, 1180));
        assert_eq!(compare(&HostVec::F32(vec![100.02]), &want, Tolerance::Bound).status, Status::Fail);
    }

    #[test]
    fn integers_and_shapes_must_match() {
        let want = reference(HostVec::I32(vec![5, -1]));
        assert_eq!(compare(&HostVec::I32(vec![5, -1]), &want, Tolerance::Exact).status, Status::Pass);
        let o = compare(&HostVec::I32(vec![5, 1]), &want, Tolerance::Exact);
        assert_eq!((o.status, o.max_ulp), (Status::Fail, 2));
        assert_eq!(compare(&HostVec::I32(vec![5]), &want, Tolerance::Exact).status, Status::Fail);
        assert_eq!(compare(&HostVec::U32(vec![5, 1]), &want, Tolerance::Exact).status, Status::Fail);
    }
}
