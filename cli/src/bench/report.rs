//! One line of `polycompute bench`: its JSON form and the aligned table.

use serde::Serialize;

use super::cases::Figures;

/// One benchmark on one device. `--json` prints a list of these.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measurement {
    /// `map_axpy_f32`, `sum_f32`, `matmul_f32_1024`, `matmul_f32_2048`, `uniform_f32`,
    /// `normal_f32`, `map_small_f32`.
    pub name: String,
    /// The device id, e.g. `cpu:0`.
    pub device: String,
    /// polycompute's figure (median of the repetitions); `null` when the benchmark failed.
    pub value: Option<f64>,
    /// `GB/s`, `GFLOP/s` or `us/call`.
    pub unit: String,
    /// The baseline measured in the same run, in the same unit; `null` when there is none.
    pub baseline: Option<f64>,
    /// polycompute's speed relative to the baseline: above 1 is faster. For throughput
    /// units `value / baseline`, for `us/call` `baseline / value`.
    pub ratio: Option<f64>,
    /// What the baseline is ("hand-written rayon loop", "device-to-device copy", ...).
    pub baseline_name: String,
    /// Why the benchmark has no value, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Measurement {
    /// A completed measurement.
    pub fn new(name: &str, device: &str, f: Figures) -> Measurement {
        let ratio = f.baseline.filter(|b| *b > 0.0 && f.value > 0.0).map(|b| {
            if f.unit.starts_with("us") {
                b / f.value
            } else {
                f.value / b
            }
        });
        Measurement {
            name: name.into(),
            device: device.into(),
            value: Some(f.value),
            unit: f.unit.into(),
            baseline: f.baseline,
            ratio,
            baseline_name: f.baseline_name.into(),
            error: None,
        }
    }

    /// A benchmark that could not run, and why.
    pub fn failed(name: &str, device: &str, error: String) -> Measurement {
        Measurement {
            name: name.into(),
            device: device.into(),
            value: None,
            unit: String::new(),
            baseline: None,
            ratio: None,
            baseline_name: String::new(),
            error: Some(error),
        }
    }

    /// A one-line summary for the progress output.
    pub fn summary(&self) -> String {
        match (&self.error, self.value) {
            (Some(e), _) => format!("failed: {e}"),
            (None, Some(v)) => {
                let base = match (self.baseline, self.ratio) {
                    (Some(b), Some(r)) => format!(" (baseline {} {}, ratio {})", number(b), self.unit, number(r)),
                    _ => String::new(),
                };
                format!("{} {}{base}", number(v), self.unit)
            }
            (None, None) => "no value".into(),
        }
    }
}

/// Three significant digits or more, so GB/s, µs and ratios read alike at any scale.
fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{v:.2e}")
    }
}

/// The aligned table of all measurements.
pub fn table(rows: &[Measurement]) -> String {
    let header = ["device", "benchmark", "polycompute", "baseline", "ratio", "baseline is"].map(String::from);
    let mut lines: Vec<[String; 6]> = vec![header];
    for m in rows {
        let with_unit = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{} {}", number(v), m.unit));
        let last = match &m.error {
            Some(e) => format!("FAILED: {e}"),
            None => m.baseline_name.clone(),
        };
        lines.push([
            m.device.clone(),
            m.name.clone(),
            with_unit(m.value),
            with_unit(m.baseline),
            m.ratio.map_or_else(|| "-".to_string(), number),
            last,
        ]);
    }
    let mut widths = [0usize; 6];
    for line in &lines {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for line in &lines {
        let cells: Vec<String> = line
            .iter()
            .zip(widths)
            .enumerate()
            // Numbers right-aligned, words left-aligned; the last column is not padded.
            .map(|(i, (cell, w))| match i {
                2..=4 => format!("{cell:>w$}"),
                5 => cell.clone(),
                _ => format!("{cell:<w$}"),
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(unit: &'static str, value: f64, baseline: Option<f64>) -> Figures {
        Figures { value, unit, baseline, baseline_name: "b" }
    }

    #[test]
    fn ratio_means_faster_above_one_in_every_unit() {
        assert_eq!(Measurement::new("x", "cpu:0", figures("GB/s", 10.0, Some(5.0))).ratio, Some(2.0));
        assert_eq!(Measurement::new("x", "cpu:0", figures("us/call", 2.0, Some(4.0))).ratio, Some(2.0));
        assert_eq!(Measurement::new("x", "cpu:0", figures("GFLOP/s", 2.0, None)).ratio, None);
    }

    #[test]
    fn json_has_the_documented_fields() {
        let m = Measurement::new("sum_f32", "cpu:0", figures("GB/s", 10.0, Some(8.0)));
        let v = serde_json::to_value([m]).unwrap();
        for key in ["name", "device", "value", "unit", "baseline", "ratio"] {
            assert!(v[0].get(key).is_some(), "{key} missing in {v}");
        }
        assert!(v[0].get("error").is_none());
        let f = serde_json::to_value(Measurement::failed("sum_f32", "cpu:0", "boom".into())).unwrap();
        assert_eq!(f["error"], "boom");
        assert!(f["value"].is_null());
    }

    #[test]
    fn small_numbers_keep_their_digits() {
        assert_eq!(number(123.4), "123");
        assert_eq!(number(12.34), "12.3");
        assert_eq!(number(1.234), "1.23");
        assert_eq!(number(0.0456), "0.046");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(0.000_012), "1.20e-5");
    }

    #[test]
    fn table_columns_line_up() {
        let rows = [
            Measurement::new("sum_f32", "cpu:0", figures("GB/s", 10.0, Some(8.0))),
            Measurement::new("matmul_f32_2048", "cpu:0", figures("GFLOP/s", 123.4, Some(20.0))),
            Measurement::failed("uniform_f32", "cpu:0", "boom".into()),
        ];
        let text = table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        let col = |l: &str| l.find("cpu:0").unwrap();
        assert!(lines[1..].iter().all(|l| col(l) == 0));
        assert!(text.contains("FAILED: boom"));
        assert!(lines[2].contains("123 GFLOP/s") && lines[2].contains("6.17"));
    }
}
