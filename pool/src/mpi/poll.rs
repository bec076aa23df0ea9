//! The MPI calls both sides poll with, none of which waits inside MPI.
//!
//! The pool's loops choose when to yield the core (see `idle` and `comm::drive_until`), and
//! `launch` turns off Open MPI's own yielding in empty polls. A blocking MPI call would then
//! spin inside MPI without yielding: a worker rank's blocking send of a large result (past
//! the eager limit, 4 KiB for shared memory) waits for rank 0 to progress it, and where both
//! share a core rank 0 gets it only when the kernel preempts the spinner. So sends and
//! receives here start non-blocking and yield between tests.
//!
//! Open MPI's `MPI_Improbe` (ob1) looks for a matching message first and runs the progress
//! engine after: a message that reached the shared-memory queue since the last call is only
//! pulled in by this call's progress, and found by the next. So a probe that finds nothing
//! looks once more before its caller pauses (one pause saved per message; on a shared core,
//! one context switch each way).

use mpi::datatype::Equivalence;
use mpi::point_to_point::{Destination, Message, Source, Status};

/// A message from `source` waiting to be received, if any (see the module docs).
pub(super) fn probe(source: &impl Source) -> Option<(Message, Status)> {
    source.immediate_matched_probe().or_else(|| source.immediate_matched_probe())
}

/// [`probe`] for messages with `tag`.
pub(super) fn probe_tag(source: &impl Source, tag: i32) -> Option<(Message, Status)> {
    source.immediate_matched_probe_with_tag(tag).or_else(|| source.immediate_matched_probe_with_tag(tag))
}

/// Receives a probed message's bytes, yielding while its data still arrives.
pub(super) fn receive((message, status): (Message, Status)) -> (Vec<u8>, Status) {
    let len = usize::try_from(status.count(u8::equivalent_datatype())).unwrap_or(0);
    let mut bytes = vec![0u8; len];
    mpi::request::scope(|scope| {
        let mut request = message.immediate_matched_receive_into(scope, &mut bytes[..]);
        while let Err(pending) = request.test() {
            request = pending;
            std::thread::yield_now();
        }
    });
    (bytes, status)
}

/// Sends `bytes` with `tag` to `to`, yielding until the send completes (for a large message,
/// until the receiver has taken it).
pub(super) fn send(to: &impl Destination, tag: i32, bytes: &[u8]) {
    mpi::request::scope(|scope| {
        let mut request = to.immediate_send_with_tag(scope, bytes, tag);
        while let Err(pending) = request.test() {
            request = pending;
            std::thread::yield_now();
        }
    });
}
