//! Shared arrays in the pool: workers read a shared input and write disjoint rows of a shared
//! output, in thread and process mode; bad handles; cleanup after a normal exit and after
//! the creating parent is SIGKILLed.

use std::collections::HashSet;

use polycompute::pool::{BoxError, TaskErrorKind};
use polycompute::shared::{SharedArray, SharedHandle, SharedLock};
use polycompute::{Task, WorkerContext, WorkerMode};

use crate::support::builder;

/// Sums its rows of a shared input; returns the sum and its process id.
pub struct ShmSum;
impl Task for ShmSum {
    const NAME: &'static str = "shm_sum";
    type Input = SharedArray<f32>;
    type Output = (f64, u32);
    fn run(&self, _: &mut WorkerContext, rows: SharedArray<f32>) -> Result<(f64, u32), BoxError> {
        Ok((rows.as_slice().iter().map(|&x| f64::from(x)).sum(), std::process::id()))
    }
}

/// Writes 2·input into its rows of a shared output; returns the output rows' handle (a
/// shared array can be an output too).
pub struct ShmDouble;
impl Task for ShmDouble {
    const NAME: &'static str = "shm_double";
    type Input = (SharedArray<f32>, SharedArray<f32>);
    type Output = SharedArray<f32>;
    fn run(
        &self,
        _: &mut WorkerContext,
        (input, mut output): (SharedArray<f32>, SharedArray<f32>),
    ) -> Result<SharedArray<f32>, BoxError> {
        if input.shape() != output.shape() {
            return Err(format!("shapes {:?} and {:?}", input.shape(), output.shape()).into());
        }
        // SAFETY: each task gets its own rows of the output, and the input is another segment.
        unsafe { output.view_mut() }.zip_mut_with(&input.view(), |o, &i| *o = 2.0 * i);
        Ok(output)
    }
}

/// Attaches a handle inside the worker (the pool's decoding does the same); the error's text
/// on failure.
pub struct ShmAttach;
impl Task for ShmAttach {
    const NAME: &'static str = "shm_attach";
    type Input = SharedHandle;
    type Output = f32;
    fn run(&self, _: &mut WorkerContext, h: SharedHandle) -> Result<f32, BoxError> {
        let a = SharedArray::<f32>::attach(&h)?;
        Ok(a.as_slice().iter().sum())
    }
}

fn input(rows: usize, cols: usize) -> SharedArray<f32> {
    let data: Vec<f32> = (0..rows * cols).map(|i| (i % 1000) as f32).collect();
    SharedArray::from_slice(&data, &[rows, cols]).unwrap()
}

pub fn workers_read_a_shared_input(mode: WorkerMode) {
    let pool = builder(mode).workers_per_device(2).build().unwrap();
    let (rows, cols, per) = (256, 1000, 8);
    let a = input(rows, cols);
    let parts: Vec<_> = (0..rows / per).map(|k| a.rows(k * per..(k + 1) * per).unwrap()).collect();
    let out = pool.map::<ShmSum>(parts.clone());
    let mut pids = HashSet::new();
    for (part, r) in parts.iter().zip(out) {
        let (sum, pid) = r.unwrap();
        assert_eq!(sum, part.as_slice().iter().map(|&x| f64::from(x)).sum::<f64>());
        pids.insert(pid);
    }
    let total: f64 = a.as_slice().iter().map(|&x| f64::from(x)).sum();
    assert_eq!(total, (0..rows * cols).map(|i| (i % 1000) as f64).sum::<f64>());
    if mode == WorkerMode::Process {
        assert!(!pids.contains(&std::process::id()), "process workers summed it");
    }
}

pub fn workers_write_disjoint_rows(mode: WorkerMode) {
    let pool = builder(mode).workers_per_device(2).build().unwrap();
    let (rows, cols, per) = (100, 333, 7); // the last task gets 2 rows
    let a = input(rows, cols);
    let out = SharedArray::<f32>::zeros(&[rows, cols]).unwrap();
    let jobs: Vec<_> = (0..rows)
        .step_by(per)
        .map(|s| {
            let r = s..(s + per).min(rows);
            (a.rows(r.clone()).unwrap(), out.rows(r).unwrap())
        })
        .collect();
    let returned = pool.map::<ShmDouble>(jobs);
    for (k, r) in returned.into_iter().enumerate() {
        let back = r.unwrap();
        assert_eq!(back.segment_name(), out.segment_name());
        assert!(back.is_creator(), "a handle coming back maps to the parent's own segment");
        assert_eq!(back.shape()[0], per.min(rows - k * per));
    }
    for (o, i) in out.as_slice().iter().zip(a.as_slice()) {
        assert_eq!(*o, 2.0 * *i);
    }
    // The file goes when the parent drops its last handle.
    let path = std::path::Path::new(dir()).join(out.segment_name());
    assert!(path.exists());
    drop(out);
    if mode == WorkerMode::Process && crate::support::under_wine() {
        // A known Wine difference (docs/windows.md): Wine keeps a deleted file's name visible
        // while another process (a worker) still maps it; Windows and Linux hide it at once.
        assert!(path.exists(), "Wine hid {} at once, as Windows does: drop this exception", path.display());
        drop(pool);
        let gone = crate::support::within(std::time::Duration::from_secs(5), || !path.exists());
        assert!(gone.is_some(), "{} outlived the workers that mapped it", path.display());
        return;
    }
    assert!(!path.exists(), "dropping the last handle removed {}", path.display());
}

pub fn bad_handles(mode: WorkerMode) {
    let pool = builder(mode).build().unwrap();
    let a = input(4, 4);
    let good = a.handle();
    assert_eq!(pool.submit::<ShmAttach>(good.clone()).wait().unwrap(), a.as_slice().iter().sum::<f32>());
    let bad = |f: &dyn Fn(&mut SharedHandle), want: &str| {
        let mut h = good.clone();
        f(&mut h);
        let err = pool.submit::<ShmAttach>(h).wait().unwrap_err();
        assert!(
            matches!(&err.kind, TaskErrorKind::Failed { message, .. } if message.contains(want)),
            "want {want:?}: {err:?}"
        );
    };
    bad(&|h| h.shape = vec![5, 4], "does not fit");
    bad(&|h| h.token ^= 1, "token");
    bad(&|h| h.name.push('0'), "no longer exists");
    bad(&|h| h.name = "/etc/passwd".into(), "not a shared-array segment");
    bad(&|h| h.dtype = polycompute::DType::F64, "dtype mismatch");
    // A slice out of range never makes a handle.
    assert!(matches!(a.rows(2..5), Err(polycompute::Error::OutOfRange { .. })));
}

pub fn upload_shared() {
    let a = input(3, 5);
    let d = a.upload_to(&polycompute::Device::cpu()).unwrap();
    assert_eq!(d.shape(), &[3, 5]);
    assert_eq!(d.to_vec().unwrap(), a.as_slice());
}

pub fn dir() -> &'static str {
    if cfg!(target_os = "linux") && std::path::Path::new("/dev/shm").is_dir() {
        "/dev/shm"
    } else {
        Box::leak(std::env::temp_dir().to_string_lossy().into_owned().into_boxed_str())
    }
}

/// Names the scenario a re-executed test binary plays.
pub const ENV: &str = "POOL_SHM_SCENARIO";

/// Plays a creating parent: makes a segment, prints its name, then exits (`exit`) or waits
/// to be killed (`orphan`).
pub fn scenario(which: &str) -> std::process::ExitCode {
    let a = SharedArray::<f32>::zeros(&[1024]).unwrap();
    println!("SEGMENT {}", a.segment_name());
    match which {
        "exit" => std::process::ExitCode::SUCCESS,
        _ => {
            std::thread::sleep(std::time::Duration::from_secs(60));
            std::process::ExitCode::FAILURE
        }
    }
}

fn start(which: &str) -> (std::process::Child, std::path::PathBuf) {
    use std::io::BufRead;
    let exe = std::env::current_exe().unwrap();
    let mut child = std::process::Command::new(exe)
        .env(ENV, which)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the scenario");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let name = line.trim().strip_prefix("SEGMENT ").unwrap_or_else(|| panic!("unexpected output {line:?}"));
    (child, std::path::Path::new(dir()).join(name))
}

pub fn cleanup_after_exit() {
    let (mut child, path) = start("exit");
    assert!(child.wait().unwrap().success());
    assert!(!path.exists(), "{} outlived its creator's normal exit", path.display());
}

#[cfg(unix)]
pub fn cleanup_after_parent_sigkill() {
    let (mut child, path) = start("orphan");
    assert!(path.exists());
    crate::support::signal(child.id(), crate::support::sig::KILL);
    let _ = child.wait();
    assert!(path.exists(), "SIGKILL gives no chance to clean up: the file is left");
    // Its handle now names a dead parent.
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let pid: u32 = name.trim_start_matches("polycompute-shm-").split('-').next().unwrap().parse().unwrap();
    let h = SharedHandle { name, dtype: polycompute::DType::F32, shape: vec![1024], offset: 0, pid, token: 0 };
    let err = SharedArray::<f32>::attach(&h).unwrap_err();
    assert!(err.to_string().contains("is gone"), "{err}");
    // The next creation, in any process, removes the leftovers of dead creators.
    let _next = SharedArray::<f32>::zeros(&[1]).unwrap();
    assert!(!path.exists(), "{} was not cleaned at the next creation", path.display());
}

/// Adds one to a shared counter inside the lock, slowly (a lost update without it).
pub struct ShmLockedIncrement;
impl Task for ShmLockedIncrement {
    const NAME: &'static str = "shm_locked_increment";
    type Input = (SharedLock, SharedArray<u32>);
    type Output = ();
    fn run(&self, _: &mut WorkerContext, (lock, mut counter): (SharedLock, SharedArray<u32>)) -> Result<(), BoxError> {
        lock.with(|| {
            let v = counter.as_slice()[0];
            std::thread::sleep(std::time::Duration::from_micros(200));
            // SAFETY: the lock is held: no other worker touches the counter.
            unsafe { counter.as_slice_mut()[0] = v + 1 };
        })?;
        Ok(())
    }
}

pub fn lock_serializes_workers(mode: WorkerMode) {
    let pool = builder(mode).workers_per_device(2).build().unwrap();
    let lock = SharedLock::new().unwrap();
    let counter = SharedArray::<u32>::zeros(&[1]).unwrap();
    let n = 100;
    let out = pool.map::<ShmLockedIncrement>((0..n).map(|_| (lock.clone(), counter.clone())));
    assert!(out.into_iter().all(|r| r.is_ok()));
    assert_eq!(counter.as_slice()[0], n, "every increment under the lock counted");
}
