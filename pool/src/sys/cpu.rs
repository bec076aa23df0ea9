//! Which CPU core the calling thread runs on.

/// The core the calling thread runs on at this instant, where the OS says (Linux:
/// `sched_getcpu`, a vDSO read of tens of nanoseconds); `None` elsewhere. The scheduler may
/// move the thread right after: a hint for placement choices, never a fact to rely on.
// Only the MPI scheduler asks; the tests run in every build.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn current() -> Option<u32> {
    cfg_if::cfg_if! {
        if #[cfg(target_os = "linux")] {
            // SAFETY: sched_getcpu takes nothing and returns a core number or -1.
            let cpu = unsafe { libc::sched_getcpu() };
            u32::try_from(cpu).ok()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    /// The last core the kernel ran this thread on (`/proc/thread-self/stat`, field 39).
    #[cfg(target_os = "linux")]
    fn kernel_says() -> Option<u32> {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
        // Fields after the command name (which may hold spaces) start at field 3.
        stat.rsplit_once(')')?.1.split_whitespace().nth(36)?.parse().ok()
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_core_is_the_one_the_kernel_reports() {
        // The thread may move between the two reads: some read, not every one, must agree.
        let agreed = (0..100).any(|_| {
            let before = super::current();
            let kernel = kernel_says();
            before.is_some() && before == kernel && super::current() == before
        });
        assert!(agreed, "sched_getcpu never matched /proc/thread-self/stat in 100 tries");
    }

    #[test]
    #[cfg(not(target_os = "linux"))]
    fn elsewhere_there_is_no_answer() {
        assert_eq!(super::current(), None);
    }
}
