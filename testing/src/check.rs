//! Cross-backend checks of a user's own code: run one closure on the CPU (the reference) and
//! on every other device, and compare each device's outputs with the reference's under a
//! [`Tolerance`].
//!
//! ```no_run
//! use polycompute_testing::{named, Check, Tolerance};
//! use polycompute_core::Device;
//!
//! fn scaled_sum(dev: &Device) -> polycompute_core::Result<(polycompute_core::DeviceArray<f32>, polycompute_core::DeviceArray<u32>)> {
//!     let x = dev.uniform::<f32>(7, &[64, 32])?;
//!     Ok((x.map(|v| v * 3.0)?.sum(Some(1))?, x.argmax(Some(1))?))
//! }
//!
//! // The sums may differ in their last bits (summation order); the argmax must not.
//! let magnitudes = vec![3.0 * 32.0; 64]; // Σ|terms| of each row sum: |3·x| < 3
//! let report = Check::new("scaled_sum")
//!     .tolerance_for(0, Tolerance::sum_like(4, magnitudes))
//!     .assert(scaled_sum);
//! println!("{report}");
//! ```
//!
//! A failure names the device, the output, its dtype and shape, how many elements differ,
//! the first few with their index, both values and their ULP distance, and the largest ULP
//! distance seen:
//!
//! ```text
//! check "scaled_sum": wgpu:0 (llvmpipe) differs from the reference cpu:0 in output 1 (u32, shape [64]): 1 of 64 element(s) differ beyond exact; max 1 ulp seen
//!     [17] got 3 want 2 (1 ulp)
//! ```

use std::fmt;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};

use polycompute_core::{registry, BackendKind, DType, Device, DeviceId};

use super::devices::{Required, TestKitError};
use super::outputs::{HostArray, IntoOutputs};
use super::tolerance::{self, Comparison, Tolerance};

/// Which output a per-output tolerance is for: its position or its [`named`](super::named) name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputKey {
    /// The output's position (0 for the first).
    Index(usize),
    /// The output's name.
    Name(String),
}

impl From<usize> for OutputKey {
    fn from(i: usize) -> OutputKey {
        OutputKey::Index(i)
    }
}

impl From<&str> for OutputKey {
    fn from(name: &str) -> OutputKey {
        OutputKey::Name(name.into())
    }
}

/// A cross-backend check: its name and its tolerances. Build it, then [`run`](Check::run) or
/// [`assert`](Check::assert) it with a closure.
#[derive(Clone, Debug)]
pub struct Check {
    name: String,
    tolerance: Option<Tolerance>,
    per_output: Vec<(OutputKey, Tolerance)>,
}

/// The devices a check runs on besides the reference.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every device of every backend linked in.
    All,
    /// The devices of one backend (the reference alone for [`BackendKind::Cpu`]).
    Kind(BackendKind),
}

/// What a check ran and saw.
#[derive(Clone, Debug)]
pub struct Report {
    /// The check's name.
    pub check: String,
    /// The reference device (`cpu:0`), first, then the devices compared with it.
    pub devices: Vec<DeviceId>,
    /// The reference's outputs.
    pub reference: Vec<HostArray>,
    /// Every compared device's outputs, in the order of `devices[1..]`.
    pub compared: Vec<Vec<HostArray>>,
    /// The largest ULP distance seen per compared device and output: `(device, output, ulps)`.
    pub max_ulps: Vec<(DeviceId, usize, Option<u64>)>,
    /// Why the scope's backend was skipped (no device), when it was.
    pub skipped: Option<String>,
    /// The devices skipped because they cannot run the check ([`CheckError::Unsupported`]).
    pub unsupported: Vec<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "check {:?}: ", self.check)?;
        if self.devices.is_empty() {
            return write!(f, "SKIPPED: {}", self.skipped.as_deref().unwrap_or("no device"));
        }
        let ids: Vec<String> = self.devices.iter().map(DeviceId::to_string).collect();
        write!(f, "{} output(s) agree on {}", self.reference.len(), ids.join(", "))?;
        if let Some(why) = &self.skipped {
            write!(f, " (skipped {why})")?;
        }
        for why in &self.unsupported {
            write!(f, " (skipped: {why})")?;
        }
        for (dev, out, ulps) in &self.max_ulps {
            if let Some(u) = ulps.filter(|u| *u > 0) {
                write!(f, "; {dev} output {out}: max {u} ulp")?;
            }
        }
        Ok(())
    }
}

/// One way a device's outputs fail the check.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckError {
    /// No device list could be made (`POLYCOMPUTE_REQUIRE`).
    Devices(String),
    /// The reference device (`cpu:0`) does not open.
    NoReference(String),
    /// The closure returned an error on a device (or its outputs could not be read back).
    Failed {
        /// The device.
        device: DeviceId,
        /// The error's message.
        error: String,
    },
    /// The closure returned [`Error::Unsupported`](polycompute_core::Error::Unsupported) on a device that
    /// is not the reference: the device cannot run it (f64 without `SHADER_F64`), so it is
    /// skipped, visibly; a failure only when the scope's required backend compared no device.
    Unsupported {
        /// The device.
        device: DeviceId,
        /// The error's message.
        error: String,
    },
    /// The closure panicked on a device.
    Panicked {
        /// The device.
        device: DeviceId,
        /// The panic's message.
        message: String,
    },
    /// A device returned another number of outputs than the reference.
    OutputCount {
        /// The device.
        device: DeviceId,
        /// Its number of outputs.
        got: usize,
        /// The reference's.
        want: usize,
    },
    /// An output differs in dtype, shape or length from the reference's, or its tolerance
    /// does not fit it.
    Mismatched {
        /// The device.
        device: DeviceId,
        /// The output (`output 1 "probs"`).
        output: String,
        /// What differs.
        what: String,
    },
    /// An output is empty on the reference: comparing no elements checks nothing.
    Empty {
        /// The output.
        output: String,
        /// Its shape.
        shape: Vec<usize>,
    },
    /// Elements differ beyond the tolerance.
    Values(Box<ValueMismatch>),
}

/// Elements of one output that differ beyond its tolerance on one device.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueMismatch {
    /// The device and its name (`wgpu:0 (llvmpipe)`).
    pub device: String,
    /// The output.
    pub output: String,
    /// Its dtype.
    pub dtype: DType,
    /// Its shape.
    pub shape: Vec<usize>,
    /// The tolerance, described.
    pub tolerance: String,
    /// The number of elements.
    pub len: usize,
    /// How many differ.
    pub count: usize,
    /// The largest ULP distance seen.
    pub max_ulps: Option<u64>,
    /// The first few, described (`[2, 5] got 0.125 want 0.12500001 (1 ulp)`).
    pub shown: Vec<String>,
}

impl fmt::Display for ValueMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ValueMismatch { device, output, dtype, shape, tolerance, len, count, max_ulps, shown } = self;
        write!(
            f,
            "{device} differs from the reference in {output} ({dtype}, shape {shape:?}): \
             {count} of {len} element(s) differ beyond {tolerance}; max "
        )?;
        match max_ulps {
            Some(u) => write!(f, "{u} ulp seen")?,
            None => f.write_str("ulp: none (NaN against a number)")?,
        }
        for s in shown {
            write!(f, "\n    {s}")?;
        }
        if *count > shown.len() {
            write!(f, "\n    ... and {} more", count - shown.len())?;
        }
        Ok(())
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Devices(e) => f.write_str(e),
            CheckError::NoReference(e) => write!(f, "the reference device cpu:0 is unavailable: {e}"),
            CheckError::Failed { device, error } => write!(f, "the closure failed on {device}: {error}"),
            CheckError::Unsupported { device, error } => write!(f, "{device} cannot run the check: {error}"),
            CheckError::Panicked { device, message } => write!(f, "the closure panicked on {device}: {message}"),
            CheckError::OutputCount { device, got, want } => {
                write!(f, "{device} returned {got} output(s), the reference returned {want}")
            }
            CheckError::Mismatched { device, output, what } => write!(f, "{device}, {output}: {what}"),
            CheckError::Empty { output, shape } => write!(
                f,
                "{output} is empty (shape {shape:?}) on the reference: comparing no elements checks nothing; \
                 assert the empty result directly instead"
            ),
            CheckError::Values(m) => m.fmt(f),
        }
    }
}

/// A failed check: its name and every failure, one per device at most.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckFailed {
    /// The check's name.
    pub check: String,
    /// What failed.
    pub errors: Vec<CheckError>,
}

impl fmt::Display for CheckFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "check {:?}: ", self.check)?;
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CheckFailed {}

impl Check {
    /// A check named `name` (the name starts every failure message) with the default
    /// tolerances ([`Tolerance::default_for`]).
    pub fn new(name: impl Into<String>) -> Check {
        Check { name: name.into(), tolerance: None, per_output: Vec::new() }
    }

    /// The check's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tolerance of every output that has none of its own.
    pub fn tolerance(mut self, t: Tolerance) -> Check {
        self.tolerance = Some(t);
        self
    }

    /// The tolerance of one output, by position (`0`) or name (`"probs"`).
    pub fn tolerance_for(mut self, output: impl Into<OutputKey>, t: Tolerance) -> Check {
        self.per_output.push((output.into(), t));
        self
    }

    /// The tolerance output `index` is checked under.
    pub fn tolerance_of(&self, index: usize, output: &HostArray) -> Tolerance {
        let own = self.per_output.iter().rev().find(|(key, _)| match key {
            OutputKey::Index(i) => *i == index,
            OutputKey::Name(n) => output.name.as_deref() == Some(n),
        });
        match (own, &self.tolerance) {
            (Some((_, t)), _) | (None, Some(t)) => t.clone(),
            (None, None) => Tolerance::default_for(output.dtype()),
        }
    }

    /// Runs `f` on the reference (`cpu:0`) and on every other device, and compares.
    pub fn run<O, E>(&self, f: impl FnMut(&Device) -> Result<O, E>) -> Result<Report, CheckFailed>
    where
        O: IntoOutputs,
        E: fmt::Display + 'static,
    {
        self.run_scope(Scope::All, f)
    }

    /// [`run`](Check::run), panicking with the failure's message (the assertion of a test).
    #[track_caller]
    pub fn assert<O, E>(&self, f: impl FnMut(&Device) -> Result<O, E>) -> Report
    where
        O: IntoOutputs,
        E: fmt::Display + 'static,
    {
        match self.run(f) {
            Ok(report) => report,
            Err(e) => panic!("{e}"),
        }
    }

    /// Runs `f` on the reference and on the devices of `scope`, and compares. A backend of the
    /// scope without devices is skipped: the report says why and a `SKIPPED` line goes to the
    /// terminal (past the test harness's capture); when `POLYCOMPUTE_REQUIRE` names it, that is
    /// a failure.
    pub fn run_scope<O, E>(
        &self,
        scope: Scope,
        mut f: impl FnMut(&Device) -> Result<O, E>,
    ) -> Result<Report, CheckFailed>
    where
        O: IntoOutputs,
        E: fmt::Display + 'static,
    {
        let fail = |e: CheckError| CheckFailed { check: self.name.clone(), errors: vec![e] };
        let required = Required::from_env().map_err(|e| fail(CheckError::Devices(e.to_string())))?;
        let (reference, others, skipped) = match self.devices(scope, &required) {
            Ok(found) => found,
            Err(e) => return Err(fail(e)),
        };
        // A backend's own check has nothing to do without its devices.
        let nothing_to_compare = matches!(scope, Scope::Kind(k) if k != BackendKind::Cpu) && others.is_empty();
        let Some(reference) = reference.filter(|_| !nothing_to_compare) else {
            let why = skipped.unwrap_or_default();
            show_skip(&self.name, &why);
            return Ok(Report {
                check: self.name.clone(),
                devices: Vec::new(),
                reference: Vec::new(),
                compared: Vec::new(),
                max_ulps: Vec::new(),
                skipped: Some(why),
                unsupported: Vec::new(),
            });
        };
        if let Some(why) = &skipped {
            show_skip(&self.name, why);
        }
        let want = run_one(&mut f, &reference).map_err(fail)?;
        for (i, out) in want.iter().enumerate() {
            if out.data.is_empty() {
                return Err(fail(CheckError::Empty { output: out.label(i), shape: out.shape.clone() }));
            }
        }
        let mut report = Report {
            check: self.name.clone(),
            devices: vec![reference.id()],
            reference: Vec::new(),
            compared: Vec::new(),
            max_ulps: Vec::new(),
            skipped,
            unsupported: Vec::new(),
        };
        let mut errors = Vec::new();
        for dev in &others {
            let got = match run_one(&mut f, dev) {
                Ok(got) => got,
                Err(e @ CheckError::Unsupported { .. }) => {
                    show_skip(&self.name, &e.to_string());
                    report.unsupported.push(e.to_string());
                    continue;
                }
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            match self.compare(dev, &got, &want) {
                Ok(ulps) => {
                    report.max_ulps.extend(ulps.into_iter().enumerate().map(|(i, u)| (dev.id(), i, u)));
                }
                Err(e) => errors.push(e),
            }
            report.devices.push(dev.id());
            report.compared.push(got);
        }
        report.reference = want;
        if let Scope::Kind(kind) = scope {
            if kind != BackendKind::Cpu && report.devices.len() == 1 && required.contains(kind) {
                errors.push(CheckError::Devices(format!(
                    "{kind} is required by {} but none of its devices could run the check",
                    super::devices::REQUIRE_ENV
                )));
            }
        }
        if errors.is_empty() {
            Ok(report)
        } else {
            Err(CheckFailed { check: self.name.clone(), errors })
        }
    }

    /// [`run_scope`](Check::run_scope), panicking with the failure's message.
    #[track_caller]
    pub fn assert_scope<O, E>(&self, scope: Scope, f: impl FnMut(&Device) -> Result<O, E>) -> Report
    where
        O: IntoOutputs,
        E: fmt::Display + 'static,
    {
        match self.run_scope(scope, f) {
            Ok(report) => report,
            Err(e) => panic!("{e}"),
        }
    }

    /// Compares one device's outputs with the reference's; the largest ULP distance of each
    /// output when they agree.
    pub fn compare(
        &self,
        device: &Device,
        got: &[HostArray],
        want: &[HostArray],
    ) -> Result<Vec<Option<u64>>, CheckError> {
        let id = device.id();
        if got.len() != want.len() {
            return Err(CheckError::OutputCount { device: id, got: got.len(), want: want.len() });
        }
        let mut max = Vec::new();
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let mismatched = |what: String| CheckError::Mismatched { device: id, output: w.label(i), what };
            if g.dtype() != w.dtype() {
                return Err(mismatched(format!("dtype {} where the reference has {}", g.dtype(), w.dtype())));
            }
            if g.shape != w.shape {
                return Err(mismatched(format!("shape {:?} where the reference has {:?}", g.shape, w.shape)));
            }
            let tol = self.tolerance_of(i, w);
            let c = tolerance::compare(&g.data, &w.data, &tol).map_err(mismatched)?;
            if c.count > 0 {
                return Err(values_error(device, i, w, &tol, &c));
            }
            max.push(c.max_ulps);
        }
        Ok(max)
    }

    fn devices(&self, scope: Scope, required: &Required) -> Result<Found, CheckError> {
        let skip = |kind: BackendKind, why: String| -> Result<String, CheckError> {
            if required.contains(kind) {
                Err(CheckError::Devices(TestKitError::Required { kind, reason: why }.to_string()))
            } else {
                Ok(format!("{kind}: {why} (set {}={kind} to make this a failure)", super::devices::REQUIRE_ENV))
            }
        };
        let reference = match Device::open(BackendKind::Cpu, 0) {
            Ok(d) => d,
            Err(e) => {
                // Nothing can be compared without the reference: a failure where the CPU or the
                // scope's backend is required, a visible skip otherwise.
                let needed =
                    required.contains(BackendKind::Cpu) || matches!(scope, Scope::Kind(k) if required.contains(k));
                if needed {
                    return Err(CheckError::NoReference(e.to_string()));
                }
                return Ok((None, Vec::new(), Some(skip(BackendKind::Cpu, format!("the reference cpu:0: {e}"))?)));
            }
        };
        let mut others = Vec::new();
        let mut skipped = Vec::new();
        let kinds: Vec<BackendKind> = match scope {
            Scope::All => BackendKind::ALL.iter().copied().filter(|k| *k != BackendKind::Cpu).collect(),
            Scope::Kind(BackendKind::Cpu) => Vec::new(),
            Scope::Kind(k) => vec![k],
        };
        for kind in kinds {
            let infos = match registry::backend(kind).and_then(|b| b.devices()) {
                Ok(infos) if !infos.is_empty() => infos,
                Ok(_) => {
                    skipped.push(skip(kind, "the backend lists no device".into())?);
                    continue;
                }
                Err(e) => {
                    skipped.push(skip(kind, e.to_string())?);
                    continue;
                }
            };
            for info in infos {
                let dev = Device::open(kind, info.ordinal)
                    .map_err(|e| CheckError::Failed { device: info.id(), error: format!("it does not open: {e}") })?;
                others.push(dev);
            }
        }
        // Under `All`, a backend without devices is only worth a line when nothing but the
        // reference ran.
        let skipped = (others.is_empty() && !skipped.is_empty()).then(|| skipped.join("; "));
        Ok((Some(reference), others, skipped))
    }
}

/// The reference (when it opens), the devices to compare with it, and why a backend was skipped.
type Found = (Option<Device>, Vec<Device>, Option<String>);

/// Writes a `SKIPPED` line to the process's stderr directly: a test harness captures what
/// `eprintln!` prints in a passing test, and a skip must never be silent.
fn show_skip(check: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED check {check:?} on {why}");
}

fn run_one<O: IntoOutputs, E: fmt::Display + 'static>(
    f: &mut impl FnMut(&Device) -> Result<O, E>,
    dev: &Device,
) -> Result<Vec<HostArray>, CheckError> {
    let device = dev.id();
    match catch_unwind(AssertUnwindSafe(|| f(dev))) {
        Ok(Ok(outs)) => outs
            .into_outputs()
            .map_err(|e| CheckError::Failed { device, error: format!("reading its outputs back: {e}") }),
        Ok(Err(e)) => {
            // A device that cannot run an op for a dtype (f64 on a GPU without it) is not wrong.
            let unsupported = (&e as &dyn std::any::Any)
                .downcast_ref::<polycompute_core::Error>()
                .is_some_and(|e| matches!(e, polycompute_core::Error::Unsupported { device: Some(_), .. }));
            if unsupported {
                return Err(CheckError::Unsupported { device, error: e.to_string() });
            }
            Err(CheckError::Failed { device, error: e.to_string() })
        }
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(CheckError::Panicked { device, message })
        }
    }
}

/// Formats one element of `dtype` held as an f64 (exact for every dtype) stably: the shortest
/// text that reads back to the same value (`0.1`, `-0.0`, `NaN`, `inf`, `7`).
pub fn format_value(dtype: DType, v: f64) -> String {
    match dtype {
        DType::F32 => format!("{:?}", v as f32),
        DType::F64 => format!("{v:?}"),
        DType::I32 | DType::U32 | DType::I64 | DType::U8 => format!("{}", v as i64),
        DType::Bool => format!("{}", v != 0.0),
        DType::F16 => format!("{:?}", polycompute_core::halves::f16_from_f64(v)),
        DType::BF16 => format!("{:?}", polycompute_core::halves::bf16_from_f64(v)),
    }
}

fn values_error(device: &Device, index: usize, want: &HostArray, tol: &Tolerance, c: &Comparison) -> CheckError {
    let dtype = want.dtype();
    let shown = c
        .shown
        .iter()
        .map(|d| {
            let dist = match d.ulps {
                None => "NaN against a number".to_string(),
                Some(0) => "sign of zero".to_string(),
                Some(u) => format!("{u} ulp"),
            };
            let flat = if want.shape.len() > 1 { format!(" (flat {})", d.index) } else { String::new() };
            format!(
                "{}{flat} got {} want {} ({dist})",
                want.index_of(d.index),
                format_value(dtype, d.got),
                format_value(dtype, d.want)
            )
        })
        .collect();
    CheckError::Values(Box::new(ValueMismatch {
        device: format!("{} ({})", device.id(), device.info().name),
        output: want.label(index),
        dtype,
        shape: want.shape.clone(),
        tolerance: tol.to_string(),
        len: want.data.len(),
        count: c.count,
        max_ulps: c.max_ulps,
        shown,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycompute_core::HostVec;

    // Core's own tests link no backend: every scope is skipped, unless required.

    #[test]
    fn without_backends_a_check_is_skipped_not_passed_silently() {
        let report = Check::new("nothing").run(|_| Ok::<_, String>(HostArray::new(HostVec::F32(vec![1.0]), &[1])));
        let report = report.unwrap();
        assert!(report.skipped.as_deref().unwrap().contains("cpu"), "{report}");
        assert!(report.to_string().contains("SKIPPED"));
        let wgpu =
            Check::new("w").run_scope(Scope::Kind(BackendKind::Wgpu), |_| Ok::<_, String>(Vec::<HostArray>::new()));
        if crate::devices::is_required(BackendKind::Wgpu) {
            // Required (CI's all-features run), but core's tests have no reference device:
            // an error, never a silent pass.
            assert!(wgpu.is_err(), "a required backend must not be skipped");
        } else {
            assert!(wgpu.unwrap().skipped.is_some());
        }
    }

    #[test]
    fn per_output_tolerances_take_precedence() {
        let f = HostArray { name: Some("probs".into()), ..HostArray::new(HostVec::F32(vec![1.0]), &[1]) };
        let i = HostArray::new(HostVec::U32(vec![1]), &[1]);
        let c = Check::new("t");
        assert_eq!(c.tolerance_of(0, &f), Tolerance::ulps(tolerance::DEFAULT_FLOAT_ULPS));
        assert_eq!(c.tolerance_of(1, &i), Tolerance::exact());
        let c = c.tolerance(Tolerance::abs(0.5)).tolerance_for("probs", Tolerance::ulps(9));
        assert_eq!(c.tolerance_of(0, &f), Tolerance::ulps(9));
        assert_eq!(c.tolerance_of(1, &i), Tolerance::abs(0.5));
        assert_eq!(c.clone().tolerance_for(1, Tolerance::exact()).tolerance_of(1, &i), Tolerance::exact());
    }

    #[test]
    fn values_are_formatted_to_read_back() {
        assert_eq!(format_value(DType::F32, 0.1f32 as f64), "0.1");
        assert_eq!(format_value(DType::F64, -0.0), "-0.0");
        assert_eq!(format_value(DType::F32, f64::NAN), "NaN");
        assert_eq!(format_value(DType::U32, 7.0), "7");
        assert_eq!(format_value(DType::F32, f64::NEG_INFINITY), "-inf");
    }
}
