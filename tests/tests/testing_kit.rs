//! The cross-backend test kit (`polycompute::testing`) on real devices: one test per backend
//! kind with a shared snapshot, tolerance policies, readable failures for a deliberately wrong
//! device result, and bad input (output counts, shapes, dtypes, empty outputs, NaN placement,
//! signed zeros, errors and panics in the closure). It also checks a few of our own ops
//! across devices with the kit (dogfooding).

use polycompute::testing::{
    backend_tests, named, Check, CheckError, HostArray, IntoOutputs, Scope, SignedZeros, Tolerance,
};
use polycompute::{BackendKind, DType, Device, DeviceArray, HostVec, Result};

/// Row softmax, then a matrix product with fixed weights, and the argmax of each row: maps,
/// reductions and matmul in one small pipeline.
fn softmax_matmul(dev: &Device) -> Result<(DeviceArray<f32>, DeviceArray<u32>)> {
    let logits = dev.uniform::<f32>(11, &[8, 32])?.map(|x| x * 8.0 - 4.0)?;
    let max = logits.max(Some(1))?.reshape(&[8, 1])?;
    let e = logits.zip_map(&max, |x, m| (x - m).exp())?;
    let total = e.sum(Some(1))?.reshape(&[8, 1])?;
    let probs = e.zip_map(&total, |a, b| a / b)?;
    let weights = dev.uniform::<f32>(12, &[32, 4])?;
    let mixed = probs.matmul(&weights)?;
    Ok((mixed, probs.argmax(Some(1))?))
}

// `softmax_matmul::cpu`, `::wgpu`, `::cuda`, and one snapshot for all of them.
backend_tests!(softmax_matmul, check = Check::new("softmax_matmul").tolerance_for(0, Tolerance::ulps(64)), snapshot);

/// Integer work is exact on every backend by default: a histogram of bucketed values.
fn bucket_counts(dev: &Device) -> Result<DeviceArray<u32>> {
    let x = dev.uniform::<f32>(5, &[4096])?;
    let bucket = x.map_to::<u32>(|v| (v * 8.0).floor().cast(DType::U32))?.reshape(&[512, 8])?;
    bucket.sum(Some(0))
}

backend_tests!(bucket_counts);

/// Data movement and sign operations keep every bit of the special values (NaN, -0.0,
/// subnormals, infinities): exact, signed zeros included.
fn specials_survive_ops(dev: &Device) -> Result<(DeviceArray<f32>, DeviceArray<f64>, DeviceArray<i32>)> {
    use polycompute::testing::Specials;
    let f = f32::extended();
    let d = f64::extended();
    let i = i32::extended();
    Ok((
        dev.from_slice(&f, &[f.len()])?.copy()?.map(|x| -x)?,
        dev.from_slice(&d, &[d.len()])?.transpose()?,
        dev.from_slice(&i, &[i.len()])?.copy()?,
    ))
}

backend_tests!(specials_survive_ops, check = Check::new("specials").tolerance(Tolerance::exact()));

fn host(data: HostVec, shape: &[usize]) -> HostArray {
    HostArray::new(data, shape)
}

/// The test-only wrapper: the check's closure, with one element nudged by one ULP on every
/// device that is not the CPU.
fn off_by_one_ulp_off_cpu<F>(f: F) -> impl FnMut(&Device) -> Result<Vec<HostArray>>
where
    F: Fn(&Device) -> Result<DeviceArray<f32>>,
{
    move |dev| {
        let mut out = f(dev)?.into_outputs()?;
        if dev.kind() != BackendKind::Cpu {
            if let HostVec::F32(v) = &mut out[0].data {
                v[5] = f32::from_bits(v[5].to_bits() + 1);
            }
        }
        Ok(out)
    }
}

fn doubled(dev: &Device) -> Result<DeviceArray<f32>> {
    dev.uniform::<f32>(3, &[4, 4])?.map(|x| x * 2.0)
}

#[test]
fn a_one_ulp_error_on_one_device_fails_with_a_readable_message() {
    let check = Check::new("doubled").tolerance(Tolerance::exact());
    let devices = check.run(doubled).unwrap().devices;
    let err = match check.run(off_by_one_ulp_off_cpu(doubled)) {
        Err(e) => e,
        Ok(report) => {
            // Only the CPU here: the wrapper had no other device to act on (visibly skipped).
            assert_eq!(devices.len(), 1, "{report}");
            assert!(report.skipped.is_some());
            return;
        }
    };
    let text = err.to_string();
    assert_eq!(err.errors.len(), devices.len() - 1, "one failure per non-CPU device: {text}");
    let want = doubled(&Device::cpu()).unwrap().to_vec().unwrap()[5];
    let got = f32::from_bits(want.to_bits() + 1);
    assert!(text.starts_with("check \"doubled\": "), "{text}");
    assert!(text.contains("differs from the reference in output 0 (f32, shape [4, 4]): 1 of 16 element(s) differ beyond exact; max 1 ulp seen"), "{text}");
    assert!(text.contains(&format!("[1, 1] (flat 5) got {got:?} want {want:?} (1 ulp)")), "{text}");
    assert!(text.contains(&format!("{} (", devices[1])), "names the device: {text}");
}

#[test]
fn the_same_message_for_a_nudged_result_on_the_cpu() {
    // Without a second device, compare host results directly: the message is the same.
    let want = doubled(&Device::cpu()).unwrap().into_outputs().unwrap();
    let mut got = want.clone();
    let HostVec::F32(v) = &mut got[0].data else { unreachable!() };
    for i in [2, 9] {
        v[i] = f32::from_bits(v[i].to_bits() + 3);
    }
    let check = Check::new("doubled");
    check.compare(&Device::cpu(), &got, &want).expect("3 ulp is within the default 4");
    let err = check.clone().tolerance(Tolerance::ulps(2)).compare(&Device::cpu(), &got, &want).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("cpu:0 ("), "{text}");
    assert!(
        text.contains("2 of 16 element(s) differ beyond 2 ulp; max 3 ulp seen\n    [0, 2] (flat 2) got "),
        "{text}"
    );
    assert!(matches!(err, CheckError::Values(ref m) if m.count == 2 && m.max_ulps == Some(3)));
}

#[test]
fn bad_input_gives_clear_failures() {
    let cpu = Device::cpu();
    let one = |x: &HostArray| vec![x.clone()];
    let check = Check::new("bad");
    let a = host(HostVec::F32(vec![1.0, 2.0]), &[2]);
    // Another number of outputs, another shape, another dtype.
    let e = check.compare(&cpu, &one(&a), &[a.clone(), a.clone()]).unwrap_err();
    assert_eq!(e.to_string(), "cpu:0 returned 1 output(s), the reference returned 2");
    let e = check.compare(&cpu, &[host(HostVec::F32(vec![1.0, 2.0]), &[1, 2])], &one(&a)).unwrap_err();
    assert_eq!(e.to_string(), "cpu:0, output 0: shape [1, 2] where the reference has [2]");
    let e = check.compare(&cpu, &[host(HostVec::F64(vec![1.0, 2.0]), &[2])], &one(&a)).unwrap_err();
    assert_eq!(e.to_string(), "cpu:0, output 0: dtype f64 where the reference has f32");
    // NaN only matches NaN; -0.0 against +0.0 depends on the rule.
    let nan = host(HostVec::F32(vec![f32::NAN, 0.0]), &[2]);
    let e = check.compare(&cpu, &one(&a), &one(&nan)).unwrap_err().to_string();
    assert!(e.contains("[0] got 1.0 want NaN (NaN against a number)"), "{e}");
    let neg = host(HostVec::F32(vec![f32::NAN, -0.0]), &[2]);
    check.compare(&cpu, &one(&neg), &one(&nan)).expect("ULP rules let the zeros match");
    let strict = check.clone().tolerance(Tolerance::ulps(4).zeros(SignedZeros::Distinct));
    let e = strict.compare(&cpu, &[neg], &[nan]).unwrap_err().to_string();
    assert!(e.contains("[1] got -0.0 want 0.0 (sign of zero)"), "{e}");
    // A sum-like tolerance whose magnitudes do not fit the output.
    let e = check.clone().tolerance(Tolerance::sum_like(2, vec![1.0; 3])).compare(&cpu, &one(&a), &one(&a));
    assert!(e.unwrap_err().to_string().contains("3 magnitude(s) for 2 element(s)"));
    // An empty output, an error and a panic in the closure: failures, not panics of the kit.
    let e = check.run(|d| d.zeros::<f32>(&[0, 3])).unwrap_err().to_string();
    assert!(e.contains("output 0 is empty (shape [0, 3]) on the reference"), "{e}");
    let e = check.run(|d| d.from_slice(&[1.0f32], &[2])).unwrap_err().to_string();
    assert!(e.starts_with("check \"bad\": the closure failed on cpu:0: "), "{e}");
    let e = check.run(|_| -> Result<DeviceArray<f32>> { panic!("boom") }).unwrap_err().to_string();
    assert_eq!(e, "check \"bad\": the closure panicked on cpu:0: boom");
}

#[test]
fn named_outputs_and_per_output_tolerances() {
    let check = Check::new("named").tolerance_for("mean", Tolerance::rel(1e-6));
    let report = check
        .run(|dev| {
            let x = dev.uniform::<f64>(9, &[100])?;
            Ok::<_, polycompute::Error>((named("mean", x.mean(None)?), named("argmin", x.argmin(None)?)))
        })
        .unwrap();
    assert_eq!(report.reference[0].name.as_deref(), Some("mean"));
    assert_eq!(report.reference[1].dtype(), DType::U32);
    assert!(report.to_string().starts_with("check \"named\": 2 output(s) agree on cpu:0"), "{report}");
}

#[test]
fn a_required_backend_without_devices_fails_its_test() {
    // Run in a child process: POLYCOMPUTE_REQUIRE is read from the environment.
    if std::env::var("TESTING_KIT_CHILD").is_ok() {
        let r = Check::new("req").run_scope(Scope::Kind(BackendKind::Cuda), doubled);
        println!("RESULT {}", r.map_or_else(|e| e.to_string(), |r| r.to_string()));
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let kind = "cuda";
    let run = |require: &str| {
        let out = std::process::Command::new(&exe)
            .args(["--exact", "a_required_backend_without_devices_fails_its_test", "--nocapture"])
            .env("TESTING_KIT_CHILD", "1")
            .env("POLYCOMPUTE_REQUIRE", require)
            .output()
            .unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (free, free_err) = run("");
    let (required, _) = run(kind);
    if free.contains("agree on") {
        return; // a CUDA device is here: nothing to skip
    }
    assert!(free.contains("RESULT check \"req\": SKIPPED"), "{free}");
    assert!(free_err.contains("SKIPPED check \"req\" on"), "the skip is visible: {free_err}");
    assert!(
        required.contains(&format!("RESULT check \"req\": {kind} is required by POLYCOMPUTE_REQUIRE")),
        "{required}"
    );
}

#[test]
fn last_bit_differences_do_not_churn_a_stored_snapshot() {
    use polycompute::testing::snapshot::{prepare, Site};

    let dir = std::env::temp_dir().join(format!("pc-kit-snap-{}", std::process::id()));
    let site = Site { workspace: dir.clone(), file: "tests/kit.rs", module_path: "kit" };
    let path = site.snapshot_file("doubled");
    assert_eq!(path, dir.join("tests/snapshots/kit__doubled.snap"));
    let check = Check::new("doubled").tolerance(Tolerance::ulps(2));
    let fresh = prepare(&check, Scope::Kind(BackendKind::Cpu), &site, "doubled", doubled).unwrap();
    // A stored snapshot whose first element is one ULP away: within the tolerance, so insta is
    // handed the stored text and nothing churns.
    let first = fresh.lines().nth(2).unwrap().to_string();
    let (key, value) = first.trim().rsplit_once(' ').unwrap();
    let nudged: f32 = value.parse::<f32>().unwrap();
    let write = |v: f32| {
        let text = fresh.replacen(&first, &format!("    {key} {v:?}"), 1);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("---\nsource: tests/kit.rs\n---\n{text}")).unwrap();
        text
    };
    let stored = write(f32::from_bits(nudged.to_bits() + 1));
    let handed = prepare(&check, Scope::Kind(BackendKind::Cpu), &site, "doubled", doubled).unwrap();
    assert_eq!(handed.trim(), stored.trim(), "within the tolerance: the stored snapshot, unchanged");
    // Three ULPs away: beyond it, so insta gets the device's own rendering (and shows the diff).
    write(f32::from_bits(nudged.to_bits() + 3));
    let handed = prepare(&check, Scope::Kind(BackendKind::Cpu), &site, "doubled", doubled).unwrap();
    assert_eq!(handed, fresh);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_kit_reads_the_snapshot_file_insta_writes() {
    // backend_tests!(softmax_matmul, ..., snapshot) asserts from module `testing_kit::softmax_matmul`.
    let site = polycompute::testing::snapshot::Site {
        // As the macro does: insta's workspace root, which `file!()` is relative to.
        workspace: polycompute::testing::insta::_get_workspace_root!().as_path().to_path_buf(),
        file: file!(),
        module_path: "testing_kit::softmax_matmul",
    };
    let path = site.snapshot_file("softmax_matmul");
    assert!(path.is_file(), "{} is where insta keeps it", path.display());
    assert!(!path.to_string_lossy().contains("wgpu") && !path.to_string_lossy().contains("cpu"));
}
