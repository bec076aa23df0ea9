//! `POLYCOMPUTE_BACKEND` chooses `Device::default()`; an unknown or absent backend is an
//! error, never a silent fallback. One test in its own binary: it changes the environment.

use polycompute::{Device, Error};

#[test]
fn polycompute_backend_selects_the_default_device() {
    // This binary runs this single test, so no other thread reads the environment meanwhile.
    let set = |v: &str| std::env::set_var("POLYCOMPUTE_BACKEND", v);
    set("cpu");
    assert_eq!(Device::default().unwrap().id(), "cpu:0");
    set("CPU:0");
    assert_eq!(Device::default().unwrap().id(), "cpu:0");
    set("metal");
    assert!(matches!(Device::default(), Err(Error::UnknownDevice(_))));
    set("cpu:3");
    assert!(matches!(Device::default(), Err(Error::NoSuchDevice { ordinal: 3, .. })));
    if polycompute::registry::backend(polycompute::BackendKind::Cuda).is_err() {
        set("cuda");
        assert!(matches!(Device::default(), Err(Error::BackendNotCompiled { .. })));
    }
    set("");
    assert!(Device::default().is_ok());
}
