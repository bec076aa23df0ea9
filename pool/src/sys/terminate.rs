//! Ending a worker process by its id, on Windows: there, shutting down a clone of a socket
//! does not wake a read already blocked on it (rust-lang/rust#121594), so the pool wakes a
//! worker's driver by ending the worker instead (its socket then closes, which does wake it).

use std::io;

/// Terminates process `pid`. The caller must hold a handle to it (its `Child`) so that the id
/// cannot have been reused.
pub(crate) fn terminate(pid: u32) -> io::Result<()> {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Threading::{OpenProcess, TerminateProcess, PROCESS_TERMINATE};
    // SAFETY: OpenProcess takes plain values and returns a handle or null.
    let handle = unsafe { OpenProcess(PROCESS_TERMINATE, 0, pid) };
    if handle.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `handle` is a process handle we own, opened with PROCESS_TERMINATE.
    let ok = unsafe { TerminateProcess(handle, 1) };
    let err = io::Error::last_os_error();
    // SAFETY: closes the handle opened above, once.
    unsafe { CloseHandle(handle) };
    if ok == 0 {
        Err(err)
    } else {
        Ok(())
    }
}
