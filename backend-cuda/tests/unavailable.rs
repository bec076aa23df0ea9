//! Without a real NVIDIA driver (this repository's link stub, or nothing), the CUDA backend
//! must say why it is unavailable instead of crashing. With a driver and a GPU, it must list
//! the devices.

use polycompute_core::registry;
use polycompute_core::{BackendKind, Error};
use polycompute_testing::devices::is_required;

/// Whether the loader should find a real driver (`POLYCOMPUTE_REQUIRE` lists cuda); a stub
/// answers cuInit with 34.
fn real_driver_expected() -> bool {
    is_required(BackendKind::Cuda)
}

#[test]
fn backend_is_registered_and_reports_a_reason_or_devices() {
    // Linking the crate registers the backend.
    polycompute_cuda::set_matmul_impl(polycompute_cuda::MatmulImpl::Auto);
    let backend = registry::backend(BackendKind::Cuda).expect("the cuda backend is linked in");
    match backend.devices() {
        Ok(devices) => {
            assert!(!devices.is_empty());
            for d in &devices {
                assert_eq!(d.kind, BackendKind::Cuda);
                assert!(d.details.iter().any(|(k, v)| k == "arch" && v.starts_with("sm_")), "{d:?}");
            }
        }
        Err(Error::BackendUnavailable { kind: BackendKind::Cuda, reason }) => {
            assert!(!real_driver_expected(), "POLYCOMPUTE_REQUIRE=cuda but CUDA is unavailable: {reason}");
            assert!(
                reason.contains("stub library")
                    || reason.contains("not found")
                    || reason.contains("no CUDA device")
                    || reason.contains("libnvrtc"),
                "unclear reason: {reason}"
            );
            // Opening fails the same way, and never panics.
            match backend.open(0) {
                Err(Error::BackendUnavailable { reason: r, .. }) => assert_eq!(r, reason),
                Err(e) => panic!("open: unexpected error {e}"),
                Ok(_) => panic!("open succeeded although devices() failed"),
            }
            println!("cuda unavailable: {reason}");
        }
        Err(e) => panic!("unexpected error: {e}"),
    }
}

#[test]
fn probe_shows_the_cuda_status() {
    let statuses = registry::backend_statuses();
    let cuda = statuses.iter().find(|b| b.kind == BackendKind::Cuda).expect("cuda in the probe");
    if !cuda.available {
        assert_ne!(cuda.reason, "not compiled in");
        assert!(!cuda.reason.is_empty());
    }
}

#[test]
fn the_reason_names_what_is_missing() {
    if !cfg!(target_os = "linux") {
        println!("SKIPPED: the message checked here is the Linux loader's");
        return;
    }
    // Whether the loader finds a driver, asked the way the backend asks it (by name: the
    // library path, the loader's cache and its default folders), not guessed from ldconfig's
    // cache, which misses a driver installed in a default folder without a cache entry.
    // SAFETY: loading the NVIDIA driver (when there is one) runs only its initialisers, as the
    // backend itself does.
    if unsafe { libloading::Library::new("libcuda.so.1") }.is_ok() {
        println!("SKIPPED: a libcuda.so.1 is found here");
        return;
    }
    polycompute_cuda::set_matmul_impl(polycompute_cuda::matmul_impl());
    let err = registry::backend(BackendKind::Cuda).unwrap().devices().unwrap_err();
    // The test binary started without any libcuda: the link stub forwards, it is not needed.
    assert!(err.to_string().contains("libcuda.so.1 not found"), "{err}");
}
