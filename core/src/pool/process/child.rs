//! Process workers, worker side: [`worker_main`].

use std::io::{BufReader, BufWriter, Read};

use crate::device::Device;
use crate::pool::broadcast::BroadcastData;
use crate::pool::context::WorkerContext;
use crate::pool::spin;
use crate::pool::task::{Failure, Tasks};
use crate::pool::wire::{self, FromWorker, ToWorker};
use crate::sys::process::parent_death;
use crate::sys::socket;

/// Call this first thing in `main`, with the program's tasks. In a normal run it returns at
/// once. In a process the pool started as a worker (it sets an environment variable), it
/// serves tasks until the pool lets it go and then exits the process, never returning, the
/// way Python's `multiprocessing` needs `freeze_support()` at the top of the main module.
///
/// ```no_run
/// fn main() {
///     let tasks = polycompute_core::Tasks::new(); // .add(MyTask) ...
///     polycompute_core::worker_main(&tasks);
///     // ... the program proper: build a Pool with the same tasks ...
/// }
/// ```
#[allow(clippy::needless_doctest_main)] // where the call goes in `main` is the point
pub fn worker_main(tasks: &Tasks) {
    let Some(addr) = std::env::var_os(wire::ENV_ADDR) else { return };
    let addr = addr.to_string_lossy().into_owned();
    let token = std::env::var(wire::ENV_TOKEN).unwrap_or_default();
    let parent = std::env::var(wire::ENV_PARENT).ok().and_then(|p| p.parse::<u32>().ok()).unwrap_or(0);
    // A task that starts this program again must get a normal run, not a second worker.
    // (Done before any thread of ours exists; edition 2021's remove_var is safe to call.)
    for var in [wire::ENV_ADDR, wire::ENV_TOKEN, wire::ENV_PARENT] {
        std::env::remove_var(var);
    }
    let code = match serve(tasks, &addr, token, parent) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("polycompute worker (pid {}): {e}", std::process::id());
            70
        }
    };
    std::process::exit(code);
}

fn serve(tasks: &Tasks, addr: &str, token: String, parent: u32) -> Result<(), String> {
    parent_death::arrange(parent)?;
    let stream = socket::connect(addr).map_err(|e| format!("cannot connect to the parent at {addr}: {e}"))?;
    let mut reader = BufReader::with_capacity(1 << 16, stream.try_clone().map_err(|e| e.to_string())?);
    let mut out = BufWriter::with_capacity(1 << 16, stream);
    wire::write_frame(&mut out, &FromWorker::Hello { token, pid: std::process::id() }, &[])
        .map_err(|e| e.to_string())?;

    // stdin is the lifeline: the parent never writes to it, and it reads EOF when the parent
    // lets the worker go or dies, however it dies (even while a task runs here).
    std::thread::Builder::new()
        .name("polycompute-lifeline".into())
        .spawn(|| {
            let mut buf = [0u8; 64];
            loop {
                match std::io::stdin().read(&mut buf) {
                    Ok(0) | Err(_) => std::process::exit(0),
                    Ok(_) => {}
                }
            }
        })
        .map_err(|e| e.to_string())?;

    // EOF on the socket: the pool let the worker go.
    let mut frame = Vec::new();
    let mut recv = |frame: &mut Vec<u8>| match spin::until_readable(&mut reader)
        .and_then(|()| wire::read_frame(&mut reader, frame))
    {
        Ok(true) => Ok(()),
        Ok(false) => std::process::exit(0),
        Err(e) => Err(format!("reading from the parent: {e}")),
    };
    recv(&mut frame)?;
    let setup = wire::split_frame::<ToWorker>(&frame).map_err(|e| e.to_string())?.0;
    let ToWorker::Setup { worker, kind, ordinal, seed, spill_over, broadcast_type, broadcast, tasks: theirs } = setup
    else {
        return Err("the parent did not send a setup first".into());
    };
    let mismatches = tasks.mismatches(&theirs);
    if !mismatches.is_empty() {
        let message = format!(
            "the worker's tasks differ from the pool's: {}; give worker_main the same Tasks as the pool",
            mismatches.join("; ")
        );
        let _ = wire::write_frame(&mut out, &FromWorker::StartFailed { message }, &[]);
        return Ok(());
    }
    let device = match Device::open(kind, ordinal) {
        Ok(d) => d,
        Err(e) => {
            let message = format!("cannot open {kind}:{ordinal} in the worker: {e}");
            let _ = wire::write_frame(&mut out, &FromWorker::StartFailed { message }, &[]);
            return Ok(());
        }
    };
    let broadcast = BroadcastData { value: None, type_name: broadcast_type, bytes: broadcast.map(std::sync::Arc::new) };
    let spill_over = usize::try_from(spill_over).unwrap_or(usize::MAX);
    let mut ctx = WorkerContext::new(worker, device.clone(), true, seed, broadcast);
    wire::write_frame(&mut out, &FromWorker::Ready { device: device.id() }, &[]).map_err(|e| e.to_string())?;

    let mut results = Vec::new();
    loop {
        recv(&mut frame)?;
        let (header, body) = wire::split_frame::<ToWorker>(&frame).map_err(|e| e.to_string())?;
        let ToWorker::Job { id, task, first_index, attempt, count } = header else {
            return Err("unexpected setup frame".into());
        };
        let entry = tasks.get(&task);
        results.clear();
        let mut retire = None;
        for (k, input) in wire::inputs(body).enumerate().take(count as usize) {
            ctx.begin(first_index + k as u64, attempt);
            let failure = wire::push_result(&mut results, |out| {
                let input = input.map_err(|e| Failure::Serialization(e.to_string()))?;
                let Some(t) = entry else { return Err(Failure::UnknownTask(tasks.known())) };
                // A large input is decoded straight from its shared-memory mapping.
                input
                    .with(false, |bytes| t.run_encoded(&mut ctx, bytes, out, spill_over))
                    .map_err(|why| Failure::Serialization(format!("the input: {why}")))?
            });
            if let Some(Failure::Failed { sticky: true, message }) = failure {
                retire = Some(format!("sticky device fault: {message}"));
            }
        }
        let done = retire.is_some();
        wire::write_frame(&mut out, &FromWorker::Results { id, count, retire }, &results).map_err(|e| e.to_string())?;
        if done {
            return Ok(()); // the device context is poisoned: the pool starts a fresh worker
        }
    }
}
