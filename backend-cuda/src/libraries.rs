//! Where the CUDA libraries loaded at run time (NVRTC, cuBLAS) are looked for, wherever CUDA 13
//! puts them: the folders of `LD_LIBRARY_PATH`, the toolkit named by `CUDA_PATH`/`CUDA_HOME`/
//! `CUDA_ROOT`, the system loader's own search (by file name), every `/usr/local/cuda*`, and
//! the CUDA wheels of the Python environments present (`site-packages/nvidia/*/lib`, where
//! CUDA 13's wheels put everything in `nvidia/cu13/lib`). A toolkit folder is searched in
//! `lib64/`, `lib/` and `targets/x86_64-linux/lib/` (`targets/sbsa-linux/lib/` on aarch64).

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

/// One place a library is looked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A folder: the library's file names are tried in it.
    Dir(PathBuf),
    /// The system loader's own search by file name (its cache, `/etc/ld.so.conf`, default folders).
    Loader,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Dir(d) => write!(f, "{}", d.display()),
            Place::Loader => f.write_str("(the system loader's search)"),
        }
    }
}

/// What the search reads from the process: the environment variables and the roots of the
/// file system it scans (a test gives its own).
#[derive(Clone, Debug, Default)]
pub struct SearchEnv {
    /// `LD_LIBRARY_PATH`.
    pub ld_library_path: Option<OsString>,
    /// `CUDA_PATH`, `CUDA_HOME`, `CUDA_ROOT`, in that order (unset ones left out).
    pub cuda_roots: Vec<PathBuf>,
    /// `PATH`: each folder holding a `python3` names a Python environment (its parent).
    pub path: Option<OsString>,
    /// `VIRTUAL_ENV`, `CONDA_PREFIX` and the like: Python environments named directly.
    pub python_prefixes: Vec<PathBuf>,
    /// `PYTHONPATH`: folders that may hold an `nvidia/` package.
    pub python_path: Option<OsString>,
    /// The folder the `cuda*` toolkits are installed under (`/usr/local`).
    pub toolkit_parent: PathBuf,
}

impl SearchEnv {
    /// This process's environment.
    pub fn current() -> SearchEnv {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let mut python_prefixes: Vec<PathBuf> =
            ["VIRTUAL_ENV", "CONDA_PREFIX"].iter().filter_map(|v| var(v)).map(PathBuf::from).collect();
        python_prefixes.extend(["/usr/local", "/usr", "/opt/conda"].iter().map(PathBuf::from));
        if let Some(home) = var("HOME") {
            python_prefixes.push(Path::new(&home).join(".local"));
        }
        SearchEnv {
            ld_library_path: var("LD_LIBRARY_PATH"),
            cuda_roots: ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"]
                .iter()
                .filter_map(|v| var(v))
                .map(PathBuf::from)
                .collect(),
            path: var("PATH"),
            python_prefixes,
            python_path: var("PYTHONPATH"),
            toolkit_parent: PathBuf::from("/usr/local"),
        }
    }
}

/// The places of this process's environment, in search order: where NVRTC and cuBLAS are
/// looked for unless `POLYCOMPUTE_NVRTC_LIB` / `POLYCOMPUTE_CUBLAS_LIB` name a file.
///
/// ```
/// // The folders, in the order they are tried (the system loader's turn is marked by name).
/// for place in polycompute_cuda::search_places() {
///     println!("{place}");
/// }
/// ```
pub fn search_places() -> Vec<Place> {
    search_places_in(&SearchEnv::current())
}

/// The places of `env`, in search order, each once; folders that do not exist are left out.
pub fn search_places_in(env: &SearchEnv) -> Vec<Place> {
    let mut dirs: Vec<Place> = Vec::new();
    let mut push = |p: Place| {
        let exists = match &p {
            Place::Dir(d) => d.is_dir(),
            Place::Loader => true,
        };
        if exists && !dirs.contains(&p) {
            dirs.push(p);
        }
    };
    if let Some(lp) = &env.ld_library_path {
        std::env::split_paths(lp).filter(|d| !d.as_os_str().is_empty()).for_each(|d| push(Place::Dir(d)));
    }
    for root in &env.cuda_roots {
        toolkit_dirs(root).into_iter().for_each(|d| push(Place::Dir(d)));
    }
    push(Place::Loader);
    for root in toolkits(&env.toolkit_parent) {
        toolkit_dirs(&root).into_iter().for_each(|d| push(Place::Dir(d)));
    }
    for site in python_sites(env) {
        wheel_dirs(&site).into_iter().for_each(|d| push(Place::Dir(d)));
    }
    dirs
}

/// The files to try for a library of `names` (e.g. `libnvrtc.so.13`, ...) at `places`: by
/// full path in a folder, by bare name for the loader; newer names first within each place.
pub fn candidates(places: &[Place], names: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for place in places {
        for name in names {
            out.push(match place {
                Place::Dir(d) => d.join(name),
                Place::Loader => PathBuf::from(name),
            });
        }
    }
    out
}

/// The file the process has mapped for a library loaded by bare `name` (read from
/// `/proc/self/maps`), so a report can say which file the loader chose.
pub(crate) fn resolved(name: &Path) -> String {
    if name.is_absolute() || name.components().count() > 1 {
        return name.display().to_string();
    }
    let file = name.to_string_lossy();
    let mapped = std::fs::read_to_string("/proc/self/maps").ok().and_then(|maps| {
        maps.lines()
            .filter_map(|l| l.split_whitespace().nth(5))
            .find(|p| Path::new(p).file_name().is_some_and(|f| f.to_string_lossy().starts_with(file.as_ref())))
            .map(str::to_string)
    });
    match mapped {
        Some(path) => format!("{path} (found by the loader as {file})"),
        None => format!("{file} (found by the loader)"),
    }
}

/// A toolkit's library folders.
fn toolkit_dirs(root: &Path) -> Vec<PathBuf> {
    let arch = if cfg!(target_arch = "aarch64") { "sbsa-linux" } else { "x86_64-linux" };
    vec![root.join("lib64"), root.join("lib"), root.join("targets").join(arch).join("lib")]
}

/// `cuda`, then `cuda-13.1`, `cuda-13.0`, `cuda-12.9`, ... under `parent` (newest first).
fn toolkits(parent: &Path) -> Vec<PathBuf> {
    let mut versioned: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name.strip_prefix("cuda-")?;
            Some((version.split('.').map(|p| p.parse().unwrap_or(0)).collect(), e.path()))
        })
        .collect();
    versioned.sort_by(|a, b| b.0.cmp(&a.0));
    std::iter::once(parent.join("cuda")).chain(versioned.into_iter().map(|v| v.1)).collect()
}

/// The `site-packages`/`dist-packages` folders of the Python environments `env` names.
fn python_sites(env: &SearchEnv) -> Vec<PathBuf> {
    let mut prefixes: Vec<PathBuf> = Vec::new();
    if let Some(path) = &env.path {
        for dir in std::env::split_paths(path) {
            if dir.join("python3").exists() {
                if let Some(prefix) = dir.parent() {
                    prefixes.push(prefix.to_path_buf());
                }
            }
        }
    }
    prefixes.extend(env.python_prefixes.iter().cloned());
    let mut sites: Vec<PathBuf> = env.python_path.iter().flat_map(std::env::split_paths).collect();
    for prefix in prefixes {
        for lib in ["lib", "lib64"] {
            let mut pythons: Vec<PathBuf> = std::fs::read_dir(prefix.join(lib))
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
                .map(|e| e.path())
                .collect();
            pythons.sort();
            for py in pythons.into_iter().rev() {
                sites.push(py.join("site-packages"));
                sites.push(py.join("dist-packages"));
            }
        }
    }
    sites
}

/// The library folders of the CUDA wheels in one `site-packages`: `nvidia/cu13/lib` first
/// (CUDA 13's wheels), then every other `nvidia/*/lib` (`nvidia/cuda_nvrtc/lib`, ...).
fn wheel_dirs(site: &Path) -> Vec<PathBuf> {
    let nvidia = site.join("nvidia");
    let mut subs: Vec<PathBuf> =
        std::fs::read_dir(&nvidia).into_iter().flatten().flatten().map(|e| e.path().join("lib")).collect();
    subs.sort();
    let cu13 = nvidia.join("cu13").join("lib");
    subs.retain(|d| d != &cu13);
    std::iter::once(cu13).chain(subs).collect()
}

// The search end to end: real loads from a toolkit's and a wheel's layout.
#[cfg(test)]
mod toolkit_and_wheel;

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> PathBuf {
        let root = std::env::temp_dir().join(format!(
            "polycompute-libsearch-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        for f in files {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"").unwrap();
        }
        root
    }

    fn dir(root: &Path, rel: &str) -> Place {
        Place::Dir(root.join(rel))
    }

    #[test]
    fn every_place_cuda_13_uses_is_searched_in_order() {
        let root = tree(&[
            "ld/libx.so",
            "home/cuda/targets/x86_64-linux/lib/libnvrtc.so.13",
            "usr/local/cuda/lib64/libcublas.so.13",
            "usr/local/cuda-12.4/lib64/libcublas.so.12",
            "usr/local/cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13",
            "venv/bin/python3",
            "venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13",
            "venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "pp/nvidia/cublas/lib/libcublas.so.12",
        ]);
        let env = SearchEnv {
            ld_library_path: Some(std::env::join_paths([root.join("ld"), root.join("missing")]).unwrap()),
            cuda_roots: vec![root.join("home/cuda")],
            path: Some(std::env::join_paths([root.join("venv/bin"), root.join("nothing")]).unwrap()),
            python_prefixes: vec![],
            python_path: Some(root.join("pp").into_os_string()),
            toolkit_parent: root.join("usr/local"),
        };
        let arch = if cfg!(target_arch = "aarch64") { "sbsa-linux" } else { "x86_64-linux" };
        if arch == "sbsa-linux" {
            return; // the tree above is laid out for x86-64
        }
        let places = search_places_in(&env);
        let want = vec![
            dir(&root, "ld"),
            dir(&root, "home/cuda/targets/x86_64-linux/lib"),
            Place::Loader,
            dir(&root, "usr/local/cuda/lib64"),
            dir(&root, "usr/local/cuda-13.0/targets/x86_64-linux/lib"),
            dir(&root, "usr/local/cuda-12.4/lib64"),
            dir(&root, "pp/nvidia/cublas/lib"),
            dir(&root, "venv/lib/python3.12/site-packages/nvidia/cu13/lib"),
            dir(&root, "venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib"),
        ];
        assert_eq!(places, want);
        let files = candidates(&places[1..3], &["libnvrtc.so.13", "libnvrtc.so.12"]);
        assert_eq!(
            files,
            vec![
                root.join("home/cuda/targets/x86_64-linux/lib/libnvrtc.so.13"),
                root.join("home/cuda/targets/x86_64-linux/lib/libnvrtc.so.12"),
                PathBuf::from("libnvrtc.so.13"),
                PathBuf::from("libnvrtc.so.12"),
            ]
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_path_is_reported_as_given_and_a_bare_name_as_the_mapped_file() {
        assert_eq!(resolved(Path::new("/x/libnvrtc.so.13")), "/x/libnvrtc.so.13");
        // The C library is mapped into every Linux process under a name starting with libc.so.
        if cfg!(target_os = "linux") {
            let r = resolved(Path::new("libc.so"));
            assert!(r.starts_with('/') && r.contains("found by the loader as libc.so"), "{r}");
        }
        assert_eq!(resolved(Path::new("libnot-loaded-here.so")), "libnot-loaded-here.so (found by the loader)");
    }
}
