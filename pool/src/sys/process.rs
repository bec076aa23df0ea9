//! Starting worker processes and reading how they ended; how a worker dies with its parent
//! is in [`parent_death`].

use std::io;
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc;
use std::sync::OnceLock;

use super::job_object::JobObject;

pub(crate) mod parent_death;

type SpawnRequest = (Command, mpsc::SyncSender<io::Result<Child>>);

/// Starts a worker process. Every worker is started from one thread that lives as long as
/// the program: Linux delivers `PR_SET_PDEATHSIG` when the *thread* that started the child
/// exits, so a short-lived thread would kill its workers with it. On Windows that thread
/// also puts each worker in the Job Object that ends it with this process.
pub(crate) fn spawn(cmd: Command) -> io::Result<Child> {
    static SPAWNER: OnceLock<mpsc::Sender<SpawnRequest>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        let started = std::thread::Builder::new().name("polycompute-spawner".into()).spawn(move || {
            let mut jobs = JobObject::new();
            for (mut cmd, reply) in rx {
                let result = cmd.spawn().and_then(|mut child| match jobs.adopt(&child) {
                    Ok(()) => Ok(child),
                    Err(e) => {
                        let _ = child.kill();
                        let _ = child.wait();
                        Err(e)
                    }
                });
                let _ = reply.send(result);
            }
        });
        if let Err(e) = started {
            tracing::error!("cannot start the worker spawner thread: {e}");
        }
        tx
    });
    let (reply_tx, reply_rx) = mpsc::sync_channel(1);
    if spawner.send((cmd, reply_tx)).is_err() {
        return Err(io::Error::other("the worker spawner thread is not running"));
    }
    reply_rx.recv().unwrap_or_else(|_| Err(io::Error::other("the worker spawner thread stopped")))
}

/// The exit code and, on Unix, the signal that ended a worker.
pub(crate) fn exit_details(status: ExitStatus) -> (Option<i32>, Option<i32>) {
    cfg_if::cfg_if! {
        if #[cfg(unix)] {
            use std::os::unix::process::ExitStatusExt;
            (status.code(), status.signal())
        } else {
            (status.code(), None)
        }
    }
}
