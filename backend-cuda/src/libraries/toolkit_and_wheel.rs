//! NVRTC and cuBLAS are found where CUDA 13 puts them: a toolkit named by `CUDA_HOME` whose
//! libraries sit in `targets/x86_64-linux/lib`, and the `nvidia-cublas` wheel of a Python
//! environment on `PATH` (`site-packages/nvidia/cu13/lib`, with its `libcublasLt` beside it,
//! off the loader's path). Runs in a child process with that environment (fake libraries built
//! with the C compiler: see `fake/mod.rs`).

// The fake libraries only: the fake driver's harness runs the crate as a dependency.
#[path = "../../tests/fake/libraries.rs"]
mod fake;

use std::path::{Path, PathBuf};
use std::process::Command;

const CHILD_ENV: &str = "POLYCOMPUTE_LIBRARY_SEARCH_CHILD";

#[test]
fn nvrtc_and_cublas_are_found_in_a_toolkit_and_a_wheel() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return child();
    }
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        println!("SKIPPED: the layout built here is x86-64 Linux's");
        return;
    }
    let root = std::env::temp_dir().join(format!("polycompute-library-search-{}", std::process::id()));
    let toolkit_lib = root.join("cuda/targets/x86_64-linux/lib");
    let venv = root.join("venv");
    let wheel_lib = venv.join("lib/python3.12/site-packages/nvidia/cu13/lib");
    for d in [&toolkit_lib, &wheel_lib, &venv.join("bin")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(venv.join("bin/python3"), "#!/bin/sh\n").unwrap();
    // libcublas.so.13 needs libcublasLt.so.13 from its own folder, as the real one does.
    let built = [
        fake::compile(&toolkit_lib, "nvrtc", "libnvrtc.so.13", fake::FAKE_NVRTC),
        fake::compile(&wheel_lib, "cublaslt", "libcublasLt.so.13", "int cublasLtFake(void) { return 0; }"),
        compile_needing_lt(&wheel_lib),
    ];
    if built.iter().any(Option::is_none) {
        println!("SKIPPED: no C compiler to build the fake libraries");
        return;
    }
    let path = std::env::join_paths(
        std::iter::once(venv.join("bin")).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "libraries::toolkit_and_wheel::nvrtc_and_cublas_are_found_in_a_toolkit_and_a_wheel",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .env("CUDA_HOME", root.join("cuda"))
        .env("PATH", path)
        .env("POLYCOMPUTE_EXPECT_NVRTC", toolkit_lib.join("libnvrtc.so.13"))
        .env("POLYCOMPUTE_EXPECT_CUBLAS", wheel_lib.join("libcublas.so.13"))
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("CUDA_PATH")
        .env_remove("CUDA_ROOT")
        .env_remove("VIRTUAL_ENV")
        .env_remove("CONDA_PREFIX")
        .env_remove("PYTHONPATH")
        .env_remove(crate::NVRTC_ENV)
        .env_remove("POLYCOMPUTE_CUBLAS_LIB")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&root);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("1 passed"), "child failed:\n{text}");
    println!("{text}");
}

/// A fake `libcublas.so.13` linked against `libcublasLt.so.13` (DT_NEEDED), as the real one is.
fn compile_needing_lt(dir: &Path) -> Option<PathBuf> {
    let src = dir.join("cublas.c");
    std::fs::write(
        &src,
        format!("int cublasLtFake(void);\nint cublasUsesLt(void) {{ return cublasLtFake(); }}\n{}", fake::FAKE_CUBLAS),
    )
    .ok()?;
    let out = dir.join("libcublas.so.13");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let ok = Command::new(cc)
        .args(["-shared", "-fPIC", "-O1", "-Wl,-soname,libcublas.so.13", "-o"])
        .arg(&out)
        .arg(&src)
        .arg(format!("-L{}", dir.display()))
        .arg("-l:libcublasLt.so.13")
        .status()
        .ok()?
        .success();
    ok.then_some(out)
}

/// The first file of `names` present at the search's places (what a load must pick).
fn first_present(names: &[&str]) -> Option<PathBuf> {
    let places = crate::libraries::search_places();
    crate::libraries::candidates(&places, names).into_iter().find(|c| {
        if c.is_absolute() {
            c.exists()
        } else {
            // SAFETY: probing whether the system loader finds a CUDA library by name.
            unsafe { libloading::Library::new(c) }.is_ok()
        }
    })
}

fn child() {
    let want_nvrtc = PathBuf::from(std::env::var_os("POLYCOMPUTE_EXPECT_NVRTC").unwrap());
    let want_cublas = PathBuf::from(std::env::var_os("POLYCOMPUTE_EXPECT_CUBLAS").unwrap());
    let nvrtc = crate::nvrtc::Nvrtc::get().unwrap_or_else(|e| panic!("NVRTC: {e}"));
    // CUDA_HOME comes before the system's folders: its targets/x86_64-linux/lib wins.
    assert_eq!(nvrtc.path(), want_nvrtc.display().to_string());
    assert_eq!(nvrtc.version(), (13, 0));
    // The wheel comes after the loader and the /usr/local/cuda* toolkits: it wins only where
    // none of those has a cuBLAS (as in CI); elsewhere the first one present must be loaded.
    // (Asked before loading: once a libcublas.so.13 is loaded, the loader finds it by name.)
    let first = first_present(&["libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"]).unwrap();
    let cublas = crate::cublas_status().unwrap_or_else(|e| panic!("cuBLAS: {e}"));
    if first == want_cublas {
        assert_eq!(cublas, want_cublas.display().to_string());
    } else {
        println!("NOTE: a system cuBLAS comes first here: {}", first.display());
        assert!(
            cublas.starts_with(&*first.to_string_lossy()),
            "{cublas} is not the first present, {}",
            first.display()
        );
    }
}
