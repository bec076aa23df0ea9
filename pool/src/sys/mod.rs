//! Everything that differs between operating systems, and nothing else: the rest of the
//! crate is the same on Linux, macOS and Windows. This tree imports nothing of the crate (it
//! reports plain `std::io` errors), so it can be read, and ported, on its own.
//!
//! * [`process`] — starting a worker process from one long-lived thread, arranging for it to
//!   die with its parent, and reading how it ended.
//! * [`socket`] — the parent/worker channel: a Unix-domain socket, or loopback TCP.
//! * [`shm`] — where shared-memory segment files live, creating them owner-only, and hints
//!   for mapping them.
//! * [`token`] — secrets from the OS's cryptographic generator, compared in constant time.
//! * [`cpu`] — which core the calling thread runs on (a placement hint).
//! * [`liveness`] — whether a process id still runs (to tell leftovers from live segments).
//! * `terminate` (Windows) — ending a worker by id, to wake its driver (see that module).

pub(crate) mod cpu;
pub(crate) mod liveness;
pub(crate) mod process;
pub(crate) mod shm;
pub(crate) mod socket;
#[cfg(windows)]
pub(crate) mod terminate;
pub(crate) mod token;

mod job_object;
