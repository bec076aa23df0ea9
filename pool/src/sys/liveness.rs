//! Whether another process still runs, asked by its id.

/// Whether process `pid` may still run (Unix: `kill(pid, 0)`; Windows: its exit code).
/// Where this cannot be told, `true`: a leftover is then kept rather than a live process's
/// file removed.
pub(crate) fn alive(pid: u32) -> bool {
    cfg_if::cfg_if! {
        if #[cfg(unix)] {
            let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
            if pid <= 0 {
                return false;
            }
            // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
            let r = unsafe { libc::kill(pid, 0) };
            r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        } else if #[cfg(windows)] {
            use windows_sys::Win32::Foundation::{CloseHandle, GetLastError, ERROR_ACCESS_DENIED, STILL_ACTIVE};
            use windows_sys::Win32::System::Threading::{
                GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
            };
            // SAFETY: OpenProcess takes plain values and returns a handle or null.
            let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
            if handle.is_null() {
                // No such process; one we may not query still runs.
                // SAFETY: reads this thread's last error code.
                return unsafe { GetLastError() } == ERROR_ACCESS_DENIED;
            }
            let mut code = 0u32;
            // SAFETY: `handle` is a process handle we own; `code` is a valid out pointer.
            let ok = unsafe { GetExitCodeProcess(handle, &mut code) };
            // SAFETY: closes the handle opened above, once.
            unsafe { CloseHandle(handle) };
            // A process that exited with code 259 (STILL_ACTIVE) looks alive: kept, not removed.
            ok == 0 || code == STILL_ACTIVE as u32
        } else {
            let _ = pid;
            true
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_is_alive_and_pid_zero_is_not_a_worker() {
        assert!(super::alive(std::process::id()));
        if cfg!(unix) {
            assert!(!super::alive(0), "pid 0 names a process group, never a creator");
        }
    }
}
