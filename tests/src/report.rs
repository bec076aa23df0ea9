//! Runs the corpus on a set of devices and summarizes it as `polycompute check` shows it: rows
//! op × dtype, columns devices, cells `exact`, the largest error in ULPs, `unsupported` or
//! `FAIL`; or as JSON.

use std::fmt::Write as _;

use polycompute::{DType, Device};

use super::corpus::Case;
use super::runner::{run_case, Outcome, Status};
use super::Prepared;

/// One op × dtype on one device, over all the cases of that row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cell {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases the device answered `Unsupported`.
    pub unsupported: usize,
    /// False once any passing case was not bit for bit.
    pub inexact: bool,
    /// Largest error in ULPs among the cases that ran.
    pub max_ulp: u64,
}

impl Cell {
    /// `fail` if any case failed, else `pass` if any passed, else `unsupported`.
    pub fn status(&self) -> Status {
        if self.failed > 0 {
            Status::Fail
        } else if self.passed > 0 || self.unsupported == 0 {
            Status::Pass
        } else {
            Status::Unsupported
        }
    }

    /// The table cell.
    pub fn text(&self) -> String {
        let main = match self.status() {
            Status::Fail => "FAIL".to_string(),
            Status::Unsupported => return "unsupported".into(),
            Status::Pass if !self.inexact => "exact".into(),
            Status::Pass => format!("{} ulp", self.max_ulp),
        };
        if self.unsupported > 0 {
            format!("{main} ({} unsupported)", self.unsupported)
        } else {
            main
        }
    }

    fn add(&mut self, o: &Outcome) {
        match o.status {
            Status::Pass => self.passed += 1,
            Status::Fail => self.failed += 1,
            Status::Unsupported => {
                self.unsupported += 1;
                return;
            }
        }
        self.inexact |= !o.exact;
        self.max_ulp = self.max_ulp.max(o.max_ulp);
    }
}

/// One row: an op and dtype, with a cell per device.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The op (`add`, `sum`, `cast_to_i32`, ...).
    pub op: String,
    /// The dtype.
    pub dtype: DType,
    /// One cell per device, in the report's device order.
    pub cells: Vec<Cell>,
}

/// A failed case on a device.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Failure {
    /// The case's name.
    pub case: String,
    /// The device id.
    pub device: String,
    /// What went wrong.
    pub message: String,
}

/// The summary of a corpus run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Device ids, the table's columns.
    pub devices: Vec<String>,
    /// Number of cases run.
    pub cases: usize,
    /// Rows in corpus order.
    pub rows: Vec<Row>,
    /// Every failure, with its message.
    pub failures: Vec<Failure>,
}

impl Report {
    /// An empty report over these devices.
    pub fn new(devices: Vec<String>) -> Report {
        Report { devices, ..Report::default() }
    }

    /// Records the outcome of `case` on device number `device`.
    pub fn record(&mut self, case: &Case, device: usize, outcome: &Outcome) {
        let ndev = self.devices.len();
        let pos = match self.rows.iter().position(|r| r.op == case.op && r.dtype == case.dtype) {
            Some(p) => p,
            None => {
                self.rows.push(Row { op: case.op.clone(), dtype: case.dtype, cells: vec![Cell::default(); ndev] });
                self.rows.len() - 1
            }
        };
        if let Some(cell) = self.rows[pos].cells.get_mut(device) {
            cell.add(outcome);
        }
        if outcome.status == Status::Fail {
            let id = self.devices.get(device).cloned().unwrap_or_default();
            self.failures.push(Failure { case: case.name.clone(), device: id, message: outcome.message.clone() });
        }
    }

    /// The text table, followed by the failures' messages.
    pub fn table(&self) -> String {
        let mut head = vec!["op".to_string(), "dtype".to_string()];
        head.extend(self.devices.iter().cloned());
        let mut lines = vec![head];
        for r in &self.rows {
            let mut line = vec![r.op.clone(), r.dtype.to_string()];
            line.extend(r.cells.iter().map(Cell::text));
            lines.push(line);
        }
        let widths: Vec<usize> =
            (0..lines[0].len()).map(|c| lines.iter().map(|l| l[c].len()).max().unwrap_or(0)).collect();
        let mut out = String::new();
        for l in &lines {
            let cells: Vec<String> = l.iter().zip(&widths).map(|(s, w)| format!("{s:<w$}")).collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        }
        let _ = writeln!(
            out,
            "\n{} case(s) on {} device(s), {} failure(s)",
            self.cases,
            self.devices.len(),
            self.failures.len()
        );
        for f in &self.failures {
            let _ = writeln!(out, "FAIL {} on {}: {}", f.case, f.device, abridge(&f.message));
        }
        out
    }

    /// `{"cases": N, "failures": N, "results": [{"op", "dtype", "device", "status", "max_ulp"}]}`,
    /// plus `failed`, the failures' details. `max_ulp` is null where nothing ran.
    pub fn json(&self) -> serde_json::Value {
        let mut results = Vec::new();
        for r in &self.rows {
            for (cell, device) in r.cells.iter().zip(&self.devices) {
                let ran = cell.passed + cell.failed > 0;
                results.push(serde_json::json!({
                    "op": r.op,
                    "dtype": r.dtype.name(),
                    "device": device,
                    "status": cell.status(),
                    "max_ulp": if ran { Some(cell.max_ulp) } else { None },
                    "unsupported_cases": cell.unsupported,
                }));
            }
        }
        serde_json::json!({
            "cases": self.cases,
            "failures": self.failures.len(),
            "results": results,
            "failed": self.failures,
        })
    }
}

/// The first lines of a long message (a kernel compile error carries the whole generated
/// source); `--json` keeps it whole.
fn abridge(message: &str) -> String {
    const LINES: usize = 12;
    let mut lines: Vec<&str> = message.lines().take(LINES + 1).collect();
    if lines.len() > LINES {
        lines.truncate(LINES);
        lines.push("[...] (the whole message is in --json)");
    }
    lines.join("\n")
}

/// Runs every case on every device, computing each case's reference once.
pub fn run(devices: &[Device], cases: &[Case]) -> Report {
    let mut report = Report::new(devices.iter().map(|d| d.id().to_string()).collect());
    for case in cases {
        report.cases += 1;
        match Prepared::new(case) {
            Ok(p) => {
                for (k, device) in devices.iter().enumerate() {
                    report.record(case, k, &run_case(device, case, &p.inputs, &p.reference));
                }
            }
            Err(e) => {
                let failed = Outcome { status: Status::Fail, exact: false, max_ulp: 0, message: e };
                (0..devices.len()).for_each(|k| report.record(case, k, &failed));
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::corpus;

    fn outcome(status: Status, exact: bool, max_ulp: u64) -> Outcome {
        Outcome { status, exact, max_ulp, message: "why".into() }
    }

    #[test]
    fn cells_summarize_their_cases() {
        let all = corpus();
        let sin: Vec<&Case> = all.iter().filter(|c| c.op == "sin" && c.dtype == DType::F32).collect();
        let add = all.iter().find(|c| c.op == "add").unwrap();
        let mut r = Report::new(vec!["cpu:0".into(), "wgpu:0".into()]);
        r.record(sin[0], 0, &outcome(Status::Pass, false, 1));
        r.record(sin[1], 0, &outcome(Status::Pass, true, 0));
        r.record(sin[0], 1, &outcome(Status::Unsupported, false, 0));
        r.record(sin[1], 1, &outcome(Status::Unsupported, false, 0));
        r.record(add, 0, &outcome(Status::Pass, true, 0));
        r.record(add, 1, &outcome(Status::Fail, false, 7));
        let cells: Vec<Vec<String>> = r.rows.iter().map(|row| row.cells.iter().map(Cell::text).collect()).collect();
        assert_eq!(cells, vec![vec!["1 ulp", "unsupported"], vec!["exact", "FAIL"]]);
        assert_eq!(r.failures.len(), 1);
        assert_eq!(r.failures[0].device, "wgpu:0");
        let json = r.json();
        assert_eq!(json["failures"], 1);
        assert_eq!(json["results"][1]["status"], "unsupported");
        assert!(json["results"][1]["max_ulp"].is_null());
        assert_eq!(json["results"][3]["status"], "fail");
        assert!(r.table().contains("FAIL add"));
    }

    #[test]
    fn long_messages_are_abridged_in_the_table() {
        let long: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let short = abridge(&long);
        assert!(short.contains("line 11") && !short.contains("line 12") && short.ends_with("--json)"));
        assert_eq!(abridge("one\ntwo"), "one\ntwo");
    }

    #[test]
    fn partially_unsupported_rows_say_so() {
        let mut c = Cell::default();
        c.add(&outcome(Status::Pass, true, 0));
        c.add(&outcome(Status::Unsupported, false, 0));
        assert_eq!((c.status(), c.text()), (Status::Pass, "exact (1 unsupported)".to_string()));
    }
}
