//! The macros of the kit: one test per backend kind, and the shared device snapshot.

/// Turns a check function into one test per backend kind, so that `cargo test` lists
/// `my_check::cpu`, `my_check::wgpu` and `my_check::cuda` separately.
///
/// The function takes a `&Device` and returns `Result<outputs, E>` (any
/// [`IntoOutputs`](crate::IntoOutputs): one array, a tuple, a `Vec`, [`named`](crate::named)
/// arrays; `E` any `Display`). Each test runs it on the reference `cpu:0` and on every device
/// of its backend, and compares them with a [`Check`](crate::Check) (default: the
/// function's name and default tolerances; `check = <expr>` gives another). With `snapshot`,
/// the outputs are also compared with one insta snapshot shared by every backend (see
/// [`assert_device_snapshot!`](crate::assert_device_snapshot)).
///
/// A backend that is not compiled in or has no device prints a `SKIPPED` line (past the test
/// harness's capture) and passes, unless `POLYCOMPUTE_REQUIRE` names it: then it fails.
///
/// ```no_run
/// use polycompute_testing::{backend_tests, Check, Tolerance};
/// use polycompute_core::{Device, DeviceArray, Result};
///
/// fn doubled(dev: &Device) -> Result<DeviceArray<f32>> {
///     dev.uniform::<f32>(1, &[256])?.map(|x| x * 2.0)
/// }
/// backend_tests!(doubled);
///
/// fn softmax(dev: &Device) -> Result<DeviceArray<f32>> {
///     let e = dev.uniform::<f32>(2, &[8, 16])?.map(|x| x.exp())?;
///     let total = e.sum(Some(1))?.reshape(&[8, 1])?;
///     e.zip_map(&total, |a, b| a / b)
/// }
/// backend_tests!(softmax, check = Check::new("softmax").tolerance(Tolerance::ulps(8)));
/// // `backend_tests!(softmax, check = ..., snapshot)` also asserts one snapshot that every
/// // backend shares.
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __polycompute_backend_tests {
    ($name:ident $(,)?) => {
        $crate::__polycompute_backend_tests!(@plain $name, $crate::Check::new(stringify!($name)));
    };
    ($name:ident, check = $check:expr $(,)?) => {
        $crate::__polycompute_backend_tests!(@plain $name, $check);
    };
    ($name:ident, snapshot $(,)?) => {
        $crate::__polycompute_backend_tests!(@snapshot $name, $crate::Check::new(stringify!($name)));
    };
    ($name:ident, check = $check:expr, snapshot $(,)?) => {
        $crate::__polycompute_backend_tests!(@snapshot $name, $check);
    };
    (@plain $name:ident, $check:expr) => {
        #[cfg(test)]
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::__polycompute_backend_tests!(@plain_one $name, $check, cpu, Cpu);
            $crate::__polycompute_backend_tests!(@plain_one $name, $check, wgpu, Wgpu);
            $crate::__polycompute_backend_tests!(@plain_one $name, $check, cuda, Cuda);
        }
    };
    (@plain_one $name:ident, $check:expr, $test:ident, $kind:ident) => {
        #[test]
        fn $test() {
            let check: $crate::Check = $check;
            check.assert_scope($crate::Scope::Kind($crate::__core::BackendKind::$kind), $name);
        }
    };
    (@snapshot $name:ident, $check:expr) => {
        #[cfg(test)]
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::__polycompute_backend_tests!(@snapshot_one $name, $check, cpu, Cpu);
            $crate::__polycompute_backend_tests!(@snapshot_one $name, $check, wgpu, Wgpu);
            $crate::__polycompute_backend_tests!(@snapshot_one $name, $check, cuda, Cuda);
        }
    };
    (@snapshot_one $name:ident, $check:expr, $test:ident, $kind:ident) => {
        #[test]
        fn $test() {
            $crate::assert_device_snapshot!(
                scope = $crate::Scope::Kind($crate::__core::BackendKind::$kind),
                stringify!($name),
                $check,
                $name
            );
        }
    };
}

/// Runs a closure on the reference `cpu:0` and on every device (or, with `scope = ...`, on
/// one backend's devices), compares them under a [`Check`](crate::Check)'s
/// tolerances, and asserts one insta snapshot of the outputs that every backend shares.
///
/// `assert_device_snapshot!(name, check, closure)`: `name` names the snapshot file
/// (`<module>__<name>.snap` beside the test, as insta's `assert_snapshot!`); `cargo insta
/// review` accepts or rejects it as usual. See [`snapshot`](crate::snapshot) for what it
/// records and why allowed last-bit differences never churn it.
///
/// ```no_run
/// use polycompute_testing::{assert_device_snapshot, named, Check, Tolerance};
/// use polycompute_core::Device;
///
/// assert_device_snapshot!("histogram", Check::new("histogram").tolerance(Tolerance::ulps(2)), |dev: &Device| {
///     let x = dev.uniform::<f32>(3, &[1000])?;
///     let bins = x.map_to::<u32>(|v| (v * 10.0).floor().cast(polycompute_core::DType::U32))?;
///     Ok::<_, polycompute_core::Error>((named("bins", bins), named("mean", x.mean(None)?)))
/// });
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __polycompute_assert_device_snapshot {
    (scope = $scope:expr, $name:expr, $check:expr, $f:expr $(,)?) => {{
        let site = $crate::snapshot::Site {
            workspace: $crate::insta::_get_workspace_root!().as_path().to_path_buf(),
            file: file!(),
            module_path: module_path!(),
        };
        let name: &str = $name;
        let check: $crate::Check = $check;
        if let Some(text) = $crate::snapshot::prepare(&check, $scope, &site, name, $f) {
            $crate::insta::assert_snapshot!(name, text, concat!("the outputs of ", stringify!($f), " on every device"));
        }
    }};
    ($name:expr, $check:expr, $f:expr $(,)?) => {
        $crate::assert_device_snapshot!(scope = $crate::Scope::All, $name, $check, $f)
    };
}
