//! How a worker process learns that its parent died, and leaves Ctrl-C to the parent.
//!
//! | OS | learns that its parent died by |
//! |----|--------------------------------|
//! | Linux | `PR_SET_PDEATHSIG` (SIGKILL; tied to the spawning thread, hence the long-lived one in [`super::spawn`]) plus a `getppid` check, and EOF on its stdin pipe |
//! | macOS | EOF on its stdin, a pipe from the parent that is never written (no death signal exists) |
//! | Windows | the Job Object's `KILL_ON_JOB_CLOSE`, and EOF on its stdin pipe |

cfg_if::cfg_if! {
    if #[cfg(target_os = "linux")] {
        /// How a process worker learns that its parent died (shown in the worker plan).
        pub(crate) const HOW: &str =
            "a worker learns that its parent died by PR_SET_PDEATHSIG, a getppid check and EOF on its stdin pipe";
    } else if #[cfg(unix)] {
        /// How a process worker learns that its parent died (shown in the worker plan).
        pub(crate) const HOW: &str = "a worker learns that its parent died by EOF on its stdin pipe";
    } else if #[cfg(windows)] {
        /// How a process worker learns that its parent died (shown in the worker plan).
        pub(crate) const HOW: &str =
            "workers live in a Job Object with KILL_ON_JOB_CLOSE and also watch for EOF on their stdin pipe";
    } else {
        /// How a process worker learns that its parent died (shown in the worker plan).
        pub(crate) const HOW: &str = "a worker learns that its parent died by EOF on its stdin pipe";
    }
}

/// Called first thing in a worker process: arranges to die with the parent (`parent_pid`)
/// and leaves Ctrl-C to the parent, which decides whether workers stop (a terminal sends
/// SIGINT to the whole process group; a worker killed by it would look like a crash).
pub(crate) fn arrange(parent_pid: u32) -> Result<(), String> {
    cfg_if::cfg_if! {
        if #[cfg(target_os = "linux")] {
            // SAFETY: prctl(PR_SET_PDEATHSIG, sig) takes plain integers.
            if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
                return Err(format!("prctl(PR_SET_PDEATHSIG): {}", std::io::Error::last_os_error()));
            }
            // The parent may have died before the line above: then no signal will come.
            // SAFETY: getppid has no preconditions.
            let ppid = unsafe { libc::getppid() };
            if u32::try_from(ppid).ok() != Some(parent_pid) {
                return Err(format!("the parent process {parent_pid} has already exited"));
            }
        } else {
            let _ = parent_pid;
        }
    }
    cfg_if::cfg_if! {
        if #[cfg(unix)] {
            // SAFETY: installing SIG_IGN for SIGINT touches no Rust state.
            unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
        } else if #[cfg(windows)] {
            // SAFETY: a null handler with TRUE makes this process ignore Ctrl-C.
            unsafe { windows_sys::Win32::System::Console::SetConsoleCtrlHandler(None, 1) };
        }
    }
    Ok(())
}
