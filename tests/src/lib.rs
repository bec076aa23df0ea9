// On docs.rs (nightly, `--cfg docsrs`) each feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
//! polycompute-conformance: the cross-backend conformance corpus, shared by its test
//! `tests/tests/conformance.rs` and `polycompute check`: one list of cases
//! ([`corpus`](mod@corpus)), an independent f64 reference ([`reference`](mod@reference)), the
//! tolerance table ([`tolerance`]), the golden text each case's insta snapshot pins
//! ([`golden`], the snapshots in `tests/snapshots/`), and the runner that compares a device
//! with the reference ([`runner`]). `docs/conformance.md` explains the choices.
//!
//! The crate's integration tests (`tests/tests/`) are also the facade's: the API, bad input,
//! views, the test kit through `polycompute::testing`, and the worker pool.

pub mod corpus;
pub mod corpus_array;
pub mod corpus_axes;
mod corpus_dtypes;
mod corpus_sizes;
mod corpus_views;
pub mod golden;
pub mod inputs;
pub mod movement;
pub mod reference;
mod reference_array;
mod reference_axes;
pub mod report;
pub mod runner;
pub mod scalar;
pub mod tolerance;

pub use corpus::{corpus, corpus_large, Case, CaseOp};
pub use reference::Reference;
pub use runner::{run_case, Outcome, Status};
pub use tolerance::Tolerance;

/// A case's inputs and reference output, computed once and shared by every device.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The inputs (dimensions and elements).
    pub inputs: Vec<reference::Input>,
    /// The reference output.
    pub reference: Reference,
}

impl Prepared {
    /// Materializes the inputs of `case` and computes its reference.
    pub fn new(case: &Case) -> Result<Prepared, String> {
        let inputs = case.materialize();
        let reference = reference::compute(&case.compute, &inputs).map_err(|e| format!("{}: {e}", case.name))?;
        Ok(Prepared { inputs, reference })
    }

    /// The golden text of `case` (what its snapshot holds).
    pub fn golden(&self, case: &Case) -> String {
        golden::golden_text(case, &self.reference)
    }
}
