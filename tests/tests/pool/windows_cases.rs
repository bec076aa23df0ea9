//! The Windows-only cases: a worker dies with its parent through the Job Object
//! (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`) the pool puts it in.

use std::time::Duration;

use polycompute::WorkerMode::Process;

use crate::support::within;

/// Whether process `pid` still runs.
fn running(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
    use windows_sys::Win32::System::Threading::{GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION};
    // SAFETY: OpenProcess takes plain values and returns a handle or null.
    let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if handle.is_null() {
        return false;
    }
    let mut code = 0u32;
    // SAFETY: `handle` is a process handle we own; `code` is a valid out pointer.
    let ok = unsafe { GetExitCodeProcess(handle, &mut code) };
    // SAFETY: closes the handle opened above, once.
    unsafe { CloseHandle(handle) };
    ok != 0 && code == STILL_ACTIVE as u32
}

/// The parent is terminated (`TerminateProcess`, no chance to clean up): closing its last
/// handle to the job kills the busy workers with it.
pub fn parent_killed_leaves_no_worker() {
    let mut parent = crate::scenario::start("orphan", Process);
    let pids = crate::scenario::read_pids(&mut parent);
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&p| running(p)), "workers {pids:?} run before the parent dies");
    parent.kill().expect("terminate the parent");
    let _ = parent.wait();
    let gone = within(Duration::from_secs(2), || pids.iter().all(|&p| !running(p)));
    assert!(gone.is_some(), "workers {pids:?} outlived their terminated parent by 2 s");
    eprintln!("workers gone {:?} after their parent", gone.unwrap());
}
