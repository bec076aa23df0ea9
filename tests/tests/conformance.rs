//! Cross-backend conformance: every case of `polycompute_conformance::corpus()` on every
//! available device of every backend, one trial per backend × case, named
//! `conformance::{backend}::{case}` (filter with `cargo test --test conformance -- NAME`).
//!
//! For each case, `conformance::golden::{case}` recomputes the f64 reference and asserts it
//! equals the case's insta snapshot (`tests/snapshots/conformance__{case}.snap`, one per case,
//! shared by all backends); each backend trial compares every device's result with that
//! reference under the case's tolerance. A backend that is not compiled in or has no device is
//! skipped, and says so; `POLYCOMPUTE_REQUIRE=wgpu,cuda` (any subset) makes that a failure.

use polycompute::sync::LockUnpoisoned;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use libtest_mimic::{Arguments, Failed, Trial};
use polycompute::testing::devices::{Required, REQUIRE_ENV};
use polycompute::{BackendKind, Device};
use polycompute_conformance::{corpus, golden, run_case, Case, Prepared, Status};

/// Backend kinds in the order their trials run.
const KINDS: [BackendKind; 3] = [BackendKind::Cpu, BackendKind::Wgpu, BackendKind::Cuda];

/// A case with its inputs and reference, computed by the first trial that needs them and
/// dropped after the last (the large cases hold hundreds of megabytes).
struct Shared {
    case: Case,
    prepared: Mutex<Option<Arc<Prepared>>>,
    users: AtomicUsize,
}

impl Shared {
    fn get(&self) -> Result<Arc<Prepared>, Failed> {
        let mut slot = self.prepared.lock_unpoisoned();
        if let Some(p) = slot.as_ref() {
            return Ok(p.clone());
        }
        let p = Arc::new(Prepared::new(&self.case).map_err(|e| format!("reference failed: {e}"))?);
        *slot = Some(p.clone());
        Ok(p)
    }

    fn done(&self) {
        if self.users.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.prepared.lock_unpoisoned().take();
        }
    }

    fn run<T>(&self, f: impl FnOnce(&Prepared) -> Result<T, Failed>) -> Result<T, Failed> {
        let result = self.get().and_then(|p| f(&p));
        self.done();
        result
    }
}

/// The backends `POLYCOMPUTE_REQUIRE` names, or the names it has that are no backend.
fn required() -> Result<Vec<BackendKind>, String> {
    Required::from_env().map(|r| r.kinds().to_vec()).map_err(|e| e.to_string())
}

/// A listed device's id, and the device or why it did not open.
type Opened = (String, Result<Device, String>);

/// Every device of `kind`, opened, or why there is none.
fn open_devices(kind: BackendKind) -> Result<Vec<Opened>, String> {
    let backend = polycompute::registry::backend(kind).map_err(|e| e.to_string())?;
    let infos = backend.devices().map_err(|e| e.to_string())?;
    if infos.is_empty() {
        return Err(format!("backend {kind} reports no device"));
    }
    Ok(infos
        .iter()
        .map(|i| (i.id().to_string(), Device::open(kind, i.ordinal).map_err(|e| format!("{}: {e}", i.id()))))
        .collect())
}

fn golden_trial(shared: Arc<Shared>) -> Trial {
    Trial::test(format!("conformance::golden::{}", shared.case.name), move || {
        shared.run(|p| {
            // The reference and core's op validation must agree on what comes out.
            let (dtype, shape) = shared.case.output().map_err(|e| e.to_string())?;
            let r = &p.reference;
            if (dtype, shape.dims()) != (r.values.dtype(), r.dims.as_slice()) {
                return Err(format!("op gives {dtype} {shape}, the reference {} {:?}", r.values.dtype(), r.dims).into());
            }
            let text = p.golden(&shared.case);
            // The goldens are the corpus's, in the crate's snapshots/ (not beside this file).
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_path(golden::snapshot_dir());
            settings.bind(|| insta::assert_snapshot!(shared.case.name.as_str(), text));
            Ok(())
        })
    })
}

fn device_trial(
    kind: BackendKind,
    devices: Arc<Vec<Device>>,
    shared: Arc<Shared>,
    unsupported: Arc<AtomicUsize>,
) -> Trial {
    Trial::test(format!("conformance::{kind}::{}", shared.case.name), move || {
        shared.run(|p| {
            let mut failures = Vec::new();
            for device in devices.iter() {
                let outcome = run_case(device, &shared.case, &p.inputs, &p.reference);
                match outcome.status {
                    Status::Pass => {}
                    Status::Unsupported => {
                        unsupported.fetch_add(1, Ordering::Relaxed);
                    }
                    Status::Fail => failures.push(format!("{}: {}", device.id(), outcome.message)),
                }
            }
            if failures.is_empty() {
                Ok(())
            } else {
                Err(failures.join("\n").into())
            }
        })
    })
}

/// Every snapshot file belongs to a case: a removed or renamed case must take its golden file
/// with it, or a stale golden value would linger unseen.
fn orphan_trial(names: Vec<String>) -> Trial {
    Trial::test("conformance::golden::no_orphan_snapshots", move || {
        let dir = golden::snapshot_dir();
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut orphans = Vec::new();
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let case = file.strip_prefix("conformance__").and_then(|f| f.strip_suffix(".snap"));
            if let Some(case) = case {
                if !names.iter().any(|n| n == case) {
                    orphans.push(file);
                }
            }
        }
        if orphans.is_empty() {
            Ok(())
        } else {
            Err(format!("snapshots of no case (delete them): {orphans:?}").into())
        }
    })
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let required = required().unwrap_or_else(|e| {
        trials.push(Trial::test("conformance::require", move || Err(e.clone().into())));
        Vec::new()
    });
    let mut backends = Vec::new();
    for kind in KINDS {
        match open_devices(kind) {
            Ok(devices) => {
                let mut ok = Vec::new();
                for (id, device) in devices {
                    match device {
                        Ok(d) => ok.push(d),
                        // A listed device that does not open is a failure, named by its id.
                        Err(e) => trials.push(Trial::test(format!("conformance::{kind}::open_{id}"), move || {
                            Err(e.clone().into())
                        })),
                    }
                }
                eprintln!(
                    "conformance: {kind}: {}",
                    ok.iter().map(|d| format!("{} ({})", d.id(), d.info().name)).collect::<Vec<_>>().join(", ")
                );
                backends.push((kind, Arc::new(ok)));
            }
            Err(reason) if required.contains(&kind) => {
                let msg = format!("{kind} is required by {REQUIRE_ENV} but unavailable: {reason}");
                trials.push(Trial::test(format!("conformance::{kind}::available"), move || Err(msg.clone().into())));
            }
            Err(reason) => {
                eprintln!("conformance: SKIPPED {kind}: {reason} (set {REQUIRE_ENV}={kind} to make this a failure)");
                trials.push(Trial::test(format!("conformance::{kind}::available"), || Ok(())).with_ignored_flag(true));
            }
        }
    }
    trials.push(orphan_trial(corpus().into_iter().map(|c| c.name).collect()));
    let unsupported = Arc::new(AtomicUsize::new(0));
    for case in corpus() {
        let shared = Arc::new(Shared { case, prepared: Mutex::new(None), users: AtomicUsize::new(1 + backends.len()) });
        trials.push(golden_trial(shared.clone()));
        for (kind, devices) in &backends {
            trials.push(device_trial(*kind, devices.clone(), shared.clone(), unsupported.clone()));
        }
    }
    // The size tier's larger variant, on request: compared with the reference, no golden.
    if std::env::var("POLYCOMPUTE_SIZE_TIER").is_ok_and(|v| v == "large") {
        for case in polycompute_conformance::corpus_large() {
            let shared = Arc::new(Shared { case, prepared: Mutex::new(None), users: AtomicUsize::new(backends.len()) });
            for (kind, devices) in &backends {
                trials.push(device_trial(*kind, devices.clone(), shared.clone(), unsupported.clone()));
            }
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    let n = unsupported.load(Ordering::Relaxed);
    if n > 0 {
        eprintln!("conformance: {n} case run(s) answered Unsupported (not failures; see `polycompute check`)");
    }
    conclusion.exit();
}
