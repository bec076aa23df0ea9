//! Windows Job Objects: every worker joins one that kills it when this process ends. Where
//! there are none, a no-op: workers watch their stdin lifeline (and, on Linux, a
//! parent-death signal) instead.

use std::io;
use std::process::Child;

cfg_if::cfg_if! {
    if #[cfg(windows)] {
        use windows_sys::Win32::Foundation::HANDLE;
        use windows_sys::Win32::System::JobObjects::{
            AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
            SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        };

        /// The Job Object every worker joins. Its handle is never closed: the system closes
        /// it when this process ends, however it ends, and KILL_ON_JOB_CLOSE then ends every
        /// worker.
        pub(super) struct JobObject(Option<HANDLE>);

        impl JobObject {
            pub(super) fn new() -> Self {
                JobObject(None)
            }

            fn handle(&mut self) -> io::Result<HANDLE> {
                if let Some(h) = self.0 {
                    return Ok(h);
                }
                // SAFETY: both arguments may be null (default security, unnamed job).
                let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
                if job.is_null() {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: a zeroed JOBOBJECT_EXTENDED_LIMIT_INFORMATION is a valid value
                // (plain integers); we pass its exact size.
                let ok = unsafe {
                    let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
                    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
                    SetInformationJobObject(
                        job,
                        JobObjectExtendedLimitInformation,
                        (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                        std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
                    )
                };
                if ok == 0 {
                    return Err(io::Error::last_os_error());
                }
                self.0 = Some(job);
                Ok(job)
            }

            /// Puts `child` in the job (creating the job on first use).
            pub(super) fn adopt(&mut self, child: &Child) -> io::Result<()> {
                use std::os::windows::io::AsRawHandle;
                let job = self.handle()?;
                // SAFETY: `job` is a live job handle owned by this thread and the child's
                // handle is valid while `child` is borrowed.
                let ok = unsafe { AssignProcessToJobObject(job, child.as_raw_handle() as HANDLE) };
                if ok == 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            }
        }
    } else {
        /// Where there are no Job Objects, workers watch their stdin lifeline (and, on Linux,
        /// a parent-death signal) instead.
        pub(super) struct JobObject;

        impl JobObject {
            pub(super) fn new() -> Self {
                JobObject
            }

            /// Nothing to join.
            pub(super) fn adopt(&mut self, _child: &Child) -> io::Result<()> {
                Ok(())
            }
        }
    }
}
