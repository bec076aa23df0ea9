//! Snapshots of device outputs shared by every backend, with [insta](https://insta.rs)
//! (`polycompute`'s feature `testing` brings the kit with it).
//!
//! A snapshot records what a human reviews, per output: its dtype and shape, a deterministic
//! sample of at most [`SAMPLE`] elements (evenly spaced, first and last included) formatted so
//! that they read back to the same value, summary statistics and a digest. It is made from the
//! reference's (`cpu:0`) outputs and its file names no backend.
//!
//! Every device's outputs are compared with the reference's in full under the check's
//! [`Tolerance`]s (a failure there is the check's failure), and each device's
//! sample and statistics with the stored snapshot under the same tolerances. When all of them
//! agree, insta is handed the stored snapshot itself, so differences the tolerance allows never
//! churn it; the digest must match only where the tolerance is exact (integers, by default).
//! Otherwise insta gets the first disagreeing device's rendering: the test fails with insta's
//! diff and a `.snap.new` file, and `cargo insta review` works as usual.
//!
//! ```no_run
//! use polycompute_testing::{assert_device_snapshot, Check};
//!
//! assert_device_snapshot!("squares", Check::new("squares"), |dev: &polycompute_core::Device| {
//!     dev.from_slice(&[1.0f32, 2.0, 3.0], &[3])?.map(|x| x.clone() * x)
//! });
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use polycompute_core::{DType, Device, HostVec};

use super::check::{format_value, Check, Scope};
use super::outputs::{HostArray, IntoOutputs};
use super::tolerance::{self, Tolerance};
use super::ulps;

/// The most elements a snapshot shows per output.
pub const SAMPLE: usize = 16;

/// Where an assertion is: what insta needs to find its snapshot file. Made by
/// [`assert_device_snapshot!`](crate::assert_device_snapshot) at the call site.
#[derive(Clone, Debug)]
pub struct Site {
    /// The cargo workspace root of the crate with the assertion.
    pub workspace: PathBuf,
    /// `file!()` at the assertion.
    pub file: &'static str,
    /// `module_path!()` at the assertion.
    pub module_path: &'static str,
}

impl Site {
    /// The snapshot file insta uses for `name` at this site, honouring insta's settings
    /// (snapshot path, module prefix, suffix).
    pub fn snapshot_file(&self, name: &str) -> PathBuf {
        let settings = insta::Settings::clone_current();
        let mut file = String::new();
        if settings.prepend_module_to_snapshot() {
            file.push_str(&self.module_path.replace("::", "__"));
            file.push_str("__");
        }
        file.push_str(&name.replace(['/', '\\'], "__"));
        if let Some(suffix) = settings.snapshot_suffix() {
            let _ = write!(file, "@{suffix}");
        }
        file.push_str(".snap");
        let dir = Path::new(self.file).parent().unwrap_or(Path::new(""));
        self.workspace.join(dir).join(settings.snapshot_path()).join(file)
    }
}

/// The sampled flat positions of an output of `len` elements.
pub fn sample_positions(len: usize) -> Vec<usize> {
    if len <= SAMPLE {
        return (0..len).collect();
    }
    (0..SAMPLE).map(|i| i * (len - 1) / (SAMPLE - 1)).collect()
}

/// One output as a snapshot records it.
#[derive(Clone, Debug, PartialEq)]
struct Summary {
    header: String,
    samples: Vec<(String, String)>,
    stats: Vec<(String, String)>,
    digest: String,
}

fn values(data: &HostVec) -> Vec<f64> {
    match data {
        HostVec::F32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::F64(v) => v.clone(),
        HostVec::I32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::U32(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::F16(v) => v.iter().map(|&x| x.to_f64()).collect(),
        HostVec::BF16(v) => v.iter().map(|&x| x.to_f64()).collect(),
        // Past 2^53 an i64 rounds here; the digest below holds its exact bits.
        HostVec::I64(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::U8(v) => v.iter().map(|&x| x as f64).collect(),
        HostVec::Bool(v) => v.iter().map(|&x| x as u8 as f64).collect(),
    }
}

/// FNV-1a, 64 bits, of the dtype, the shape and the elements' little-endian bytes.
fn digest(out: &HostArray) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(out.dtype().name().as_bytes());
    for d in &out.shape {
        eat(&(*d as u64).to_le_bytes());
    }
    match &out.data {
        HostVec::F32(v) => v.iter().for_each(|x| eat(&x.to_le_bytes())),
        HostVec::F64(v) => v.iter().for_each(|x| eat(&x.to_le_bytes())),
        HostVec::I32(v) => v.iter().for_each(|x| eat(&x.to_le_bytes())),
        HostVec::U32(v) => v.iter().for_each(|x| eat(&x.to_le_bytes())),
        HostVec::F16(v) => v.iter().for_each(|x| eat(&x.to_le_bytes())),
        HostVec::BF16(v) => v.iter().for_each(|x| eat(&x.to_le_bytes())),
        HostVec::I64(v) => v.iter().for_each(|x| eat(&x.to_le_bytes())),
        HostVec::U8(v) => v.iter().for_each(|x| eat(&[*x])),
        HostVec::Bool(v) => v.iter().for_each(|x| eat(&[*x as u8])),
    }
    format!("fnv1a64 {h:016x}")
}

fn summarize(index: usize, out: &HostArray) -> Summary {
    let dtype = out.dtype();
    let v = values(&out.data);
    let header = format!("{}: {dtype}, shape {:?}, {} element(s)", out.label(index), out.shape, v.len());
    let samples = sample_positions(v.len()).into_iter().map(|i| (out.index_of(i), format_value(dtype, v[i]))).collect();
    let numbers: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    let finite: Vec<f64> = numbers.iter().copied().filter(|x| x.is_finite()).collect();
    let fmt = |x: Option<f64>| x.map_or("none".to_string(), |x| format_value(dtype, x));
    // Sums in f64, in element order on the host: the same text on every machine.
    let sum: f64 = finite.iter().sum();
    let sum_abs: f64 = finite.iter().map(|x| x.abs()).sum();
    let mean = (!finite.is_empty()).then(|| sum / finite.len() as f64);
    // Integer sums are whole numbers (exact below 2^53); means are f64.
    let whole = |x: f64| if dtype.is_int() { format!("{}", x as i128) } else { format_value(dtype, x) };
    let wide = |x: f64| if dtype.is_int() { format!("{x:?}") } else { format_value(dtype, x) };
    let stats = vec![
        ("min".into(), fmt(numbers.iter().copied().reduce(f64::min))),
        ("max".into(), fmt(numbers.iter().copied().reduce(f64::max))),
        ("mean".into(), mean.map_or("none".into(), wide)),
        ("sum".into(), whole(sum)),
        ("sum|x|".into(), whole(sum_abs)),
        ("NaN".into(), (v.len() - numbers.len()).to_string()),
        ("inf".into(), (numbers.len() - finite.len()).to_string()),
    ];
    Summary { header, samples, stats, digest: digest(out) }
}

fn render(summaries: &[Summary]) -> String {
    let mut s = String::new();
    for sum in summaries {
        let _ = writeln!(s, "{}", sum.header);
        let _ = writeln!(s, "  sample ({} of the elements, evenly spaced):", sum.samples.len());
        for (k, v) in &sum.samples {
            let _ = writeln!(s, "    {k} {v}");
        }
        let stats: Vec<String> = sum.stats.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(s, "  stats: {}", stats.join(", "));
        let _ = writeln!(s, "  digest: {}", sum.digest);
    }
    s
}

/// Reads back what [`render`] wrote; `None` when the text is not such a snapshot.
fn parse(text: &str) -> Option<Vec<Summary>> {
    let mut out: Vec<Summary> = Vec::new();
    for line in text.lines() {
        if line.starts_with("output ") {
            out.push(Summary { header: line.to_string(), samples: vec![], stats: vec![], digest: String::new() });
        } else if let Some(stats) = line.strip_prefix("  stats: ") {
            let cur = out.last_mut()?;
            for kv in stats.split(", ") {
                let (k, v) = kv.split_once(' ')?;
                cur.stats.push((k.into(), v.into()));
            }
        } else if let Some(d) = line.strip_prefix("  digest: ") {
            out.last_mut()?.digest = d.into();
        } else if let Some(sample) = line.strip_prefix("    ") {
            let (k, v) = sample.rsplit_once(' ')?;
            out.last_mut()?.samples.push((k.into(), v.into()));
        } else if !line.starts_with("  sample") && !line.trim().is_empty() {
            return None;
        }
    }
    Some(out)
}

fn number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok()
}

/// Whether one device's output agrees with its stored summary under `tol`; what differs if not.
fn agrees(stored: &Summary, fresh: &Summary, out: &HostArray, tol: &Tolerance) -> Result<(), String> {
    let dtype = out.dtype();
    if stored.header != fresh.header {
        return Err(format!("`{}` where the snapshot has `{}`", fresh.header, stored.header));
    }
    if stored.samples.len() != fresh.samples.len() {
        return Err(format!(
            "{} sampled element(s) where the snapshot has {}",
            fresh.samples.len(),
            stored.samples.len()
        ));
    }
    let positions = sample_positions(out.data.len());
    for ((pos, (key, got)), (skey, want)) in positions.iter().zip(&fresh.samples).zip(&stored.samples) {
        let (Some(g), Some(w)) = (number(got), number(want)) else {
            return Err(format!("sample {skey} {want:?} is not a number"));
        };
        if key != skey {
            return Err(format!("sample {key} where the snapshot has {skey}"));
        }
        if let Some(d) = tolerance::compare_value(dtype, *pos, g, w, tol) {
            let dist = d.ulps.map_or("NaN against a number".into(), |u| format!("{u} ulp"));
            return Err(format!("element {key} is {got}, the snapshot has {want} ({dist}, beyond {tol})"));
        }
    }
    // Statistics add up the elements: their slack is the elements' slacks added up, plus the
    // rounding of the printed value.
    let v = values(&out.data);
    let slacks: Vec<f64> =
        v.iter().enumerate().filter(|(_, x)| x.is_finite()).map(|(i, x)| tol.slack(dtype, i, *x)).collect();
    let total: f64 = slacks.iter().sum();
    let widest = slacks.iter().copied().fold(0.0, f64::max);
    let printed =
        |x: f64| if dtype == DType::F32 { ulps::ulp_size(x, DType::F32) } else { ulps::ulp_size(x, DType::F64) };
    for ((k, got), (sk, want)) in fresh.stats.iter().zip(&stored.stats) {
        if k != sk {
            return Err(format!("statistic {k} where the snapshot has {sk}"));
        }
        if got == want {
            continue;
        }
        let (Some(g), Some(w)) = (number(got), number(want)) else {
            return Err(format!("{k} is {got}, the snapshot has {want}"));
        };
        let allowed = match k.as_str() {
            "NaN" | "inf" => 0.0,
            "min" | "max" if !tol.is_exact() => widest + printed(w),
            "sum" | "sum|x|" if !tol.is_exact() => total + 2.0 * printed(w),
            "mean" if !tol.is_exact() => total / slacks.len().max(1) as f64 + 2.0 * printed(w),
            _ => 0.0,
        };
        let within = (g - w).abs() <= allowed;
        if !within {
            return Err(format!("{k} is {got}, the snapshot has {want} (allowed: ±{allowed:e} under {tol})"));
        }
    }
    if tol.is_exact() && stored.digest != fresh.digest {
        return Err(format!(
            "digest {} where the snapshot has {} (the tolerance is exact)",
            fresh.digest, stored.digest
        ));
    }
    Ok(())
}

/// The text to hand insta for snapshot `name` at `site`: runs `check` on the reference and the
/// devices of `scope` (panicking with the check's failure), then compares every device with the
/// stored snapshot. `None` when the scope's backend was skipped (nothing to assert).
pub fn prepare<O, E>(
    check: &Check,
    scope: Scope,
    site: &Site,
    name: &str,
    f: impl FnMut(&Device) -> Result<O, E>,
) -> Option<String>
where
    O: IntoOutputs,
    E: std::fmt::Display + 'static,
{
    let report = check.assert_scope(scope, f);
    if report.devices.is_empty() {
        return None;
    }
    let summary = |outs: &[HostArray]| outs.iter().enumerate().map(|(i, o)| summarize(i, o)).collect::<Vec<_>>();
    let reference = summary(&report.reference);
    let fresh = render(&reference);
    let file = site.snapshot_file(name);
    let stored_text = match insta::Snapshot::from_file(&file) {
        Ok(snap) => match snap.contents() {
            insta::internals::SnapshotContents::Text(t) => t.to_string(),
            _ => return Some(fresh),
        },
        // No snapshot yet (or none insta can read): insta records the reference's.
        Err(_) => return Some(fresh),
    };
    let Some(stored) = parse(&stored_text) else {
        eprintln!("{}: not a device-array snapshot; the reference's rendering replaces it", file.display());
        return Some(fresh);
    };
    let all = std::iter::once((&report.devices[0], &report.reference))
        .chain(report.devices[1..].iter().zip(&report.compared));
    for (dev, outs) in all {
        let mine = summary(outs);
        let problem = if mine.len() != stored.len() {
            Some(format!("{} output(s) where the snapshot has {}", mine.len(), stored.len()))
        } else {
            mine.iter().zip(&stored).zip(outs).enumerate().find_map(|(i, ((m, s), o))| {
                agrees(s, m, o, &check.tolerance_of(i, o)).err().map(|e| format!("output {i}: {e}"))
            })
        };
        if let Some(problem) = problem {
            eprintln!(
                "check {:?}: {dev} disagrees with the snapshot {}: {problem}; insta shows {dev}'s rendering",
                check.name(),
                file.display()
            );
            return Some(render(&mine));
        }
    }
    Some(stored_text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(data: HostVec, shape: &[usize]) -> HostArray {
        HostArray::new(data, shape)
    }

    #[test]
    fn a_rendering_reads_back_and_agrees_with_itself() {
        let x: Vec<f32> = (0..40).map(|i| i as f32 / 7.0).collect();
        let out = array(HostVec::F32(x.clone()), &[4, 10]);
        let s = summarize(0, &out);
        let text = render(std::slice::from_ref(&s));
        assert!(text.starts_with("output 0: f32, shape [4, 10], 40 element(s)\n"), "{text}");
        assert!(text.contains(&format!("    [3, 9] {:?}\n", 39.0f32 / 7.0)), "the last element is sampled: {text}");
        assert_eq!(parse(&text).unwrap(), vec![s.clone()]);
        agrees(&s, &s, &out, &Tolerance::exact()).unwrap();
    }

    #[test]
    fn last_bit_differences_agree_within_the_tolerance_only() {
        let x: Vec<f32> = (1..=40).map(|i| i as f32 / 3.0).collect();
        let want = array(HostVec::F32(x.clone()), &[40]);
        let mut y = x.clone();
        for v in y.iter_mut().step_by(3) {
            *v = f32::from_bits(v.to_bits() + 1);
        }
        let got = array(HostVec::F32(y), &[40]);
        let (stored, fresh) = (summarize(0, &want), summarize(0, &got));
        agrees(&stored, &fresh, &got, &Tolerance::ulps(1)).unwrap();
        let e = agrees(&stored, &fresh, &got, &Tolerance::exact()).unwrap_err();
        assert!(e.contains("element [0] is 0.33333337, the snapshot has 0.33333334 (1 ulp, beyond exact)"), "{e}");
    }

    #[test]
    fn integers_compare_their_digest() {
        let a: Vec<u32> = (0..40).collect();
        let mut b = a.clone();
        // Elements 21 and 22 are not sampled; the sum, min and max stay the same.
        b[21] += 10;
        b[22] -= 10;
        let (want, got) = (array(HostVec::U32(a), &[40]), array(HostVec::U32(b), &[40]));
        let e = agrees(&summarize(0, &want), &summarize(0, &got), &got, &Tolerance::exact()).unwrap_err();
        assert!(e.contains("digest"), "{e}");
    }

    #[test]
    fn nan_counts_and_shapes_must_match() {
        let want = array(HostVec::F64(vec![1.0, f64::NAN, 3.0]), &[3]);
        let got = array(HostVec::F64(vec![1.0, 2.0, 3.0]), &[3]);
        let e = agrees(&summarize(0, &want), &summarize(0, &got), &got, &Tolerance::ulps(1000)).unwrap_err();
        assert!(e.contains("element [1] is 2.0, the snapshot has NaN (NaN against a number"), "{e}");
        let other = array(HostVec::F64(vec![1.0, 2.0, 3.0]), &[3, 1]);
        assert!(agrees(&summarize(0, &got), &summarize(0, &other), &other, &Tolerance::exact())
            .unwrap_err()
            .contains("shape [3, 1]"));
        assert_eq!(sample_positions(100).last(), Some(&99));
        assert_eq!(sample_positions(3), vec![0, 1, 2]);
        assert!(parse("something else").is_none());
    }
}
