//! The pool on MPI worker ranks (feature `mpi`), run under `mpirun` by `scripts/mpi.sh`:
//! `mpirun -n 4 target/.../mpi` — rank 0 runs the cases below, ranks ≥ 1 serve tasks in
//! `worker_main` and never reach them. Run without a launcher (a singleton, as `cargo test`
//! does), it checks that the pool keeps its local plan and that no MPI world exists.
//!
//! Other modes, chosen by the environment (scripts/mpi.sh runs each): `MPI_JOURNAL=<dir>`
//! (with `MPI_JOURNAL_DIE`: a rank kills itself halfway; then the rerun from the journal),
//! `MPI_RECOVER=<status>` (under `mpirun --enable-recovery`: a lost rank, its task retried),
//! `MPI_BENCH` (figures beside mpi4py.futures, scripts/mpi-bench.sh).
//!
//! The default mode (and the two-host one) also sends `SharedArray` inputs, outputs and shared
//! data between ranks: each must arrive as the receiving rank's own array, with the values.
//!
//! Prints `DIGEST <hex>` (a hash of every result of the 10,000-task map) so the script can
//! compare runs on 2 and 4 ranks: the same seed must give the same outputs on any number
//! of ranks, and on the local pool (compared here, in-process).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use polycompute::pool::{self, BoxError, TaskErrorKind};
use polycompute::shared::SharedArray;
use polycompute::{Pool, Task, TaskError, Tasks, WorkerContext, WorkerMode};

/// How the panics this test provokes begin (kept out of the output).
const DELIBERATE: &str = "deliberate";

/// A seeded draw per task: most return a value from the task's rng, some fail, some panic.
struct Draw;
impl Task for Draw {
    const NAME: &'static str = "draw";
    type Input = u64;
    type Output = (u64, u64);
    fn run(&self, ctx: &mut WorkerContext, x: u64) -> Result<(u64, u64), BoxError> {
        let roll = ctx.rng().below(100);
        match roll {
            0..=4 => Err(format!("error for {x}").into()),
            5..=7 => panic!("{DELIBERATE} panic for {x}"),
            _ => Ok((x * 3, ctx.rng().next_u64())),
        }
    }
}

/// The rank and host a task ran on.
struct Where;
impl Task for Where {
    const NAME: &'static str = "where";
    type Input = ();
    type Output = (usize, String, String);
    fn run(&self, ctx: &mut WorkerContext, (): ()) -> Result<(usize, String, String), BoxError> {
        let me = ctx.mpi_rank().ok_or("not on an MPI rank")?;
        Ok((me.rank, me.host.clone(), ctx.device().id().to_string()))
    }
}

/// A worker rank's value of an environment variable.
struct Env;
impl Task for Env {
    const NAME: &'static str = "env";
    type Input = String;
    type Output = Option<String>;
    fn run(&self, _: &mut WorkerContext, name: String) -> Result<Option<String>, BoxError> {
        Ok(std::env::var(&name).ok())
    }
}

/// Returns its input (the benchmark's no-op, as mpi4py's `noop`).
struct Noop;
impl Task for Noop {
    const NAME: &'static str = "noop";
    type Input = u64;
    type Output = u64;
    fn run(&self, _: &mut WorkerContext, x: u64) -> Result<u64, BoxError> {
        Ok(x)
    }
}

/// Sleeps this many milliseconds.
struct Sleep;
impl Task for Sleep {
    const NAME: &'static str = "sleep";
    type Input = u64;
    type Output = u64;
    fn run(&self, _: &mut WorkerContext, ms: u64) -> Result<u64, BoxError> {
        std::thread::sleep(Duration::from_millis(ms));
        Ok(ms)
    }
}

/// On its first attempt, kills its own rank (SIGKILL), as a crash or the OOM killer
/// would; on a later one, returns the attempt and its rank.
struct DieOnce;
impl Task for DieOnce {
    const NAME: &'static str = "die_once";
    type Input = ();
    type Output = (u32, usize);
    fn run(&self, ctx: &mut WorkerContext, (): ()) -> Result<(u32, usize), BoxError> {
        if ctx.attempt() == 1 {
            kill_self();
        }
        Ok((ctx.attempt(), ctx.mpi_rank().ok_or("not on an MPI rank")?.rank))
    }
}

/// Sleeps 3 ms and returns its input and attempt; the input marked to kill its rank does so
/// on its first attempt.
struct KillInBatch;
impl Task for KillInBatch {
    const NAME: &'static str = "kill_in_batch";
    type Input = (u64, bool);
    type Output = (u64, u32);
    fn run(&self, ctx: &mut WorkerContext, (x, kill): (u64, bool)) -> Result<(u64, u32), BoxError> {
        if kill && ctx.attempt() == 1 {
            kill_self();
        }
        std::thread::sleep(Duration::from_millis(3));
        Ok((x, ctx.attempt()))
    }
}

/// SIGKILLs this process (and waits for it).
fn kill_self() {
    let _ = std::process::Command::new("kill").args(["-9", &std::process::id().to_string()]).status();
    std::thread::sleep(Duration::from_secs(60));
}

/// Logs its input to a file (one line per execution, from any rank), kills its own rank
/// at input [`KILL_AT`] when `MPI_JOURNAL_DIE` is set, else returns the square and whether
/// it ran in the run that was to die.
struct Counted;
impl Task for Counted {
    const NAME: &'static str = "counted";
    type Input = (String, u64);
    type Output = (u64, bool);
    fn run(&self, _: &mut WorkerContext, (log, x): (String, u64)) -> Result<(u64, bool), BoxError> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&log)?;
        f.write_all(format!("{x}\n").as_bytes())?;
        let dying = std::env::var_os("MPI_JOURNAL_DIE").is_some();
        if dying && x == KILL_AT {
            kill_self();
        }
        std::thread::sleep(Duration::from_millis(20));
        Ok((x * x, dying))
    }
}

/// Logs its input to a file (one line per execution, from any rank), then sleeps the given
/// milliseconds and returns the input.
struct LoggedSleep;
impl Task for LoggedSleep {
    const NAME: &'static str = "logged_sleep";
    type Input = (String, u64, u64);
    type Output = u64;
    fn run(&self, _: &mut WorkerContext, (log, x, ms): (String, u64, u64)) -> Result<u64, BoxError> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&log)?;
        f.write_all(format!("{x}\n").as_bytes())?;
        std::thread::sleep(Duration::from_millis(ms));
        Ok(x)
    }
}

/// Sums a shared array input on a worker rank; says whether the rank owns the array it got
/// (a copy sent as data: it must, ranks may be on other hosts), its segment and the rank.
struct ShmSum;
impl Task for ShmSum {
    const NAME: &'static str = "shm_sum";
    type Input = SharedArray<f32>;
    type Output = (f64, bool, String, usize);
    fn run(&self, ctx: &mut WorkerContext, a: SharedArray<f32>) -> Result<(f64, bool, String, usize), BoxError> {
        let rank = ctx.mpi_rank().ok_or("not on an MPI rank")?.rank;
        Ok((a.as_slice().iter().map(|&x| f64::from(x)).sum(), a.is_creator(), a.segment_name().into(), rank))
    }
}

/// Makes a shared array on a worker rank (`k * 1000 + i` for i in 0..len) and returns it,
/// with the name of the segment it made it in.
struct ShmMake;
impl Task for ShmMake {
    const NAME: &'static str = "shm_make";
    type Input = (u32, usize);
    type Output = (SharedArray<f32>, String);
    fn run(&self, _: &mut WorkerContext, (k, len): (u32, usize)) -> Result<(SharedArray<f32>, String), BoxError> {
        let data: Vec<f32> = (0..len).map(|i| (k * 1000) as f32 + i as f32).collect();
        let a = SharedArray::from_slice(&data, &[len / 2, 2])?;
        let name = a.segment_name().to_string();
        Ok((a, name))
    }
}

/// Sums the pool's shared data (a shared array) on a worker rank; whether the rank owns it,
/// and the rank.
struct ShmShared;
impl Task for ShmShared {
    const NAME: &'static str = "shm_shared";
    type Input = ();
    type Output = (f64, bool, usize);
    fn run(&self, ctx: &mut WorkerContext, (): ()) -> Result<(f64, bool, usize), BoxError> {
        let a = ctx.shared::<SharedArray<f32>>()?;
        let rank = ctx.mpi_rank().ok_or("not on an MPI rank")?.rank;
        Ok((a.as_slice().iter().map(|&x| f64::from(x)).sum(), a.is_creator(), rank))
    }
}

/// The journal run's tasks, and which one kills its rank in the first run.
const JOURNALED: u64 = 300;
const KILL_AT: u64 = 60;

fn tasks() -> Tasks {
    Tasks::new()
        .add(Draw)
        .add(Where)
        .add(Sleep)
        .add(DieOnce)
        .add(KillInBatch)
        .add(Counted)
        .add(LoggedSleep)
        .add(Noop)
        .add(ShmSum)
        .add(ShmMake)
        .add(ShmShared)
        .add(Env)
}

const N: u64 = 10_000;
const SEED: u64 = 0x5eed;

/// Results reduced to what must match between pools: the value, or the error's kind name.
fn outcome(r: &Result<(u64, u64), TaskError>) -> String {
    match r {
        Ok(v) => format!("{v:?}"),
        Err(e) => match &e.kind {
            TaskErrorKind::Failed { message, .. } => format!("failed: {message}"),
            TaskErrorKind::Panicked { message } => format!("panicked: {message}"),
            other => format!("unexpected: {other}"),
        },
    }
}

fn check(cond: bool, what: String) -> Result<(), String> {
    cond.then_some(()).ok_or(what)
}

/// 10,000 draws with errors and panics: one result each, right values, same as the local pool.
fn many(pool: &Pool) -> Result<String, String> {
    let started = Instant::now();
    let got = pool.map::<Draw>(0..N);
    let took = started.elapsed();
    check(got.len() == N as usize, format!("{} results for {N} tasks", got.len()))?;
    let local = Pool::builder(&tasks()).cpu().mode(WorkerMode::Thread).seed(SEED).build().map_err(|e| e.to_string())?;
    let want = local.map::<Draw>(0..N);
    let (mut ok, mut failed, mut panicked) = (0, 0, 0);
    let mut digest = std::collections::hash_map::DefaultHasher::new();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let (g, w) = (outcome(g), outcome(w));
        check(g == w, format!("task {i}: {g} on the ranks, {w} on the local pool"))?;
        if let Ok((x, _)) = &got[i] {
            check(*x == 3 * i as u64, format!("task {i}: value {x}"))?;
        }
        if let Err(e) = &got[i] {
            check(e.index == i as u64, format!("task {i}'s error names task {}", e.index))?;
        }
        ok += got[i].is_ok() as u32;
        failed += g.starts_with("failed") as u32;
        panicked += g.starts_with("panicked") as u32;
        g.hash(&mut digest);
    }
    check(failed > 0 && panicked > 0, format!("{failed} errors and {panicked} panics: the draw is broken"))?;
    let used = pool.workers().iter().filter(|w| w.tasks > 0).count();
    check(used == pool.workers().len(), format!("only {used} of {} ranks ran tasks", pool.workers().len()))?;
    println!("many: {ok} ok, {failed} errors, {panicked} panics, identical to the local pool; {took:?} on the ranks");
    println!("DIGEST {:016x}", digest.finish());
    Ok(String::new())
}

/// A keyed submission draws what the same submission draws on a fresh local pool, however
/// much ran on the ranks before it.
fn seeded_streams(pool: &Pool) -> Result<String, String> {
    const KEY: u64 = 77;
    let got = pool.seeded(KEY).map::<Draw>(0..500);
    let local = Pool::builder(&tasks()).cpu().mode(WorkerMode::Thread).seed(SEED).build().map_err(|e| e.to_string())?;
    let want = local.seeded(KEY).map::<Draw>(0..500);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let (g, w) = (outcome(g), outcome(w));
        check(g == w, format!("keyed task {i}: {g} on the ranks, {w} on a fresh local pool"))?;
    }
    let unkeyed = pool.map::<Draw>(0..500);
    check(
        unkeyed.iter().map(outcome).collect::<Vec<_>>() != got.iter().map(outcome).collect::<Vec<_>>(),
        "an unkeyed submission drew the keyed one's numbers".into(),
    )?;
    println!("seeded streams: 500 keyed tasks after 10,000 others drew what a fresh local pool draws");
    Ok(String::new())
}

/// Every worker rank reports itself through WorkerContext; rank 0 never runs a task.
fn ranks(pool: &Pool) -> Result<String, String> {
    let world = pool::mpi_world().ok_or("no MPI world")?;
    let got: Vec<_> = pool
        .map::<Where>((0..4 * world.size).map(|_| ()))
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    for (rank, host, device) in &got {
        check(*rank >= 1 && *rank < world.size, format!("a task ran on rank {rank}"))?;
        check(*host == world.ranks[*rank].host, format!("rank {rank} says host {host}"))?;
        check(world.ranks[*rank].device == device.as_str(), format!("rank {rank} opened {device}"))?;
    }
    let mut locals: Vec<usize> = world.ranks.iter().map(|r| r.local_rank).collect();
    locals.sort();
    check(locals == (0..world.size).collect::<Vec<_>>(), format!("node-local ranks {locals:?} on one host"))?;
    // Open MPI's own idle yield is off on every rank (the launch here does not set it), so
    // that the pool's loops alone decide when to yield.
    const YIELD: &str = "OMPI_MCA_mpi_yield_when_idle";
    let mut settings = pool.map::<Env>((0..4 * world.size).map(|_| YIELD.to_string()));
    settings.push(Ok(std::env::var(YIELD).ok()));
    for s in &settings {
        check(matches!(s, Ok(Some(v)) if v == "0"), format!("{YIELD} on a rank: {s:?}"))?;
    }
    println!("ranks: {} hosts {:?}, tasks saw ranks {:?}", world.size, world.hosts(), {
        let mut r: Vec<_> = got.iter().map(|g| g.0).collect();
        r.sort();
        r.dedup();
        r
    });
    Ok(String::new())
}

/// A SharedArray in a task's input reaches a rank on rank 0's node as its handle (the rank
/// maps rank 0's segment: no copy), and a rank on another node as its data (a shared array
/// of the rank's own, holding the right values); so does one in the pool's shared data.
/// Outputs travel as data from every rank.
fn shared_arrays(tasks: &Tasks) -> Result<(), String> {
    let world = pool::mpi_world().ok_or("no MPI world")?;
    let (rows, cols) = (1000, 4);
    let data: Vec<f32> = (0..rows * cols).map(|i| (i % 777) as f32 * 0.25).collect();
    let input = SharedArray::from_slice(&data, &[rows, cols]).map_err(|e| e.to_string())?;
    let weights = SharedArray::from_slice(&[1.5f32, 2.5, 4.0], &[3]).map_err(|e| e.to_string())?;
    let pool = Pool::builder(tasks).seed(SEED).shared_data(weights).build().map_err(|e| e.to_string())?;
    let parts = 4 * (world.size - 1);
    let chunk = rows / parts;
    let slices: Vec<SharedArray<f32>> = (0..parts)
        .map(|p| input.rows(p * chunk..(p + 1) * chunk))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let sums = pool.map::<ShmSum>(slices.clone());
    let (mut seen, mut near, mut far) = (Vec::new(), Vec::new(), Vec::new());
    for (p, (got, slice)) in sums.into_iter().zip(&slices).enumerate() {
        let (sum, owned, name, rank) = got.map_err(|e| format!("shm_sum {p}: {e}"))?;
        let want: f64 = slice.as_slice().iter().map(|&x| f64::from(x)).sum();
        check(sum == want, format!("slice {p}: sum {sum} on rank {rank}, {want} here"))?;
        if world.beside_root(rank) {
            check(
                !owned && name == input.segment_name(),
                format!("slice {p} reached rank {rank}, on rank 0's node, as a copy ({name})"),
            )?;
            near.push(rank);
        } else {
            check(
                owned && name != input.segment_name(),
                format!("slice {p} reached rank {rank}, on another node, as a handle ({name})"),
            )?;
            far.push(rank);
        }
        seen.push(rank);
    }
    seen.sort();
    seen.dedup();
    check(seen == (1..world.size).collect::<Vec<_>>(), format!("shared inputs ran on ranks {seen:?}"))?;
    let made = pool.map::<ShmMake>((0..parts as u32).map(|k| (k, 64)));
    for (k, got) in made.into_iter().enumerate() {
        let (a, theirs) = got.map_err(|e| format!("shm_make {k}: {e}"))?;
        let want: Vec<f32> = (0..64).map(|i| (k * 1000 + i) as f32).collect();
        check(a.shape() == [32, 2] && a.as_slice() == want, format!("output {k}: {:?}", a.shape()))?;
        check(a.is_creator() && a.segment_name() != theirs, format!("output {k} came back as a handle ({theirs})"))?;
    }
    for got in pool.map::<ShmShared>((0..parts).map(|_| ())) {
        let (sum, owned, rank) = got.map_err(|e| format!("shm_shared: {e}"))?;
        let copy = !world.beside_root(rank);
        check(
            sum == 8.0 && owned == copy,
            format!("the shared data on rank {rank}: sum {sum}, its own copy: {owned}"),
        )?;
    }
    for v in [&mut near, &mut far] {
        v.sort();
        v.dedup();
    }
    // One host: every worker rank shares rank 0's node. Two (MPI_TWO_HOSTS): both kinds.
    let want_far = world.hosts().len() > 1;
    check(!near.is_empty() && far.is_empty() != want_far, format!("handles to ranks {near:?}, data to {far:?}"))?;
    println!(
        "shared arrays: {parts} inputs and the shared data reached ranks {near:?} (rank 0's node) as \
         handles and ranks {far:?} as data; {parts} outputs travelled as data"
    );
    Ok(())
}

/// A task over its timeout fails as Timeout; the rank's late result is dropped, and the
/// pool goes on. A cancelled task's result is Cancelled.
fn timeout_and_cancel(tasks: &Tasks) -> Result<String, String> {
    let pool = Pool::builder(tasks).task_timeout(Duration::from_millis(200)).build().map_err(|e| e.to_string())?;
    let slow = pool.submit::<Sleep>(1500);
    match slow.wait() {
        Err(TaskError { kind: TaskErrorKind::Timeout { .. }, .. }) => {}
        other => return Err(format!("a 1.5 s task under a 200 ms timeout gave {other:?}")),
    }
    let quick: Vec<u64> =
        pool.map::<Sleep>([1, 2, 3]).into_iter().collect::<Result<_, _>>().map_err(|e| e.to_string())?;
    check(quick == [1, 2, 3], format!("after the timeout: {quick:?}"))?;
    let cancelled = pool.submit::<Sleep>(150);
    cancelled.cancel();
    match cancelled.wait() {
        Err(TaskError { kind: TaskErrorKind::Cancelled, .. }) => {}
        other => return Err(format!("a cancelled task gave {other:?}")),
    }
    let after = pool.submit::<Sleep>(1).wait().map_err(|e| e.to_string())?;
    check(after == 1, "after the cancellation".into())?;
    println!("timeout and cancellation: ok");
    Ok(String::new())
}

/// In a chunk of 64 inputs, one that hangs (2 s) under a 300 ms timeout fails as Timeout
/// within about a second, counted from its own start (the ranks' heartbeats say which input
/// runs), not after 64 × 300 ms; every other input of the chunk, before it and after it,
/// gets its result.
fn timeout_in_a_chunk(tasks: &Tasks) -> Result<(), String> {
    const HUNG: usize = 10;
    let limit = Duration::from_millis(300);
    let pool = Pool::builder(tasks).task_timeout(limit).chunk_size(64).build().map_err(|e| e.to_string())?;
    // Every rank answered the pool's setup (a rank may still be finishing the previous
    // pool's timed-out task): the clock below times the map alone.
    pool.submit::<Sleep>(0).wait().map_err(|e| e.to_string())?;
    let inputs: Vec<u64> = (0..64).map(|i| if i == HUNG { 2000 } else { 1 }).collect();
    let start = Instant::now();
    let mut timed_out = None;
    let mut ok = 0;
    for (i, r) in pool.map_unordered::<Sleep>(inputs) {
        match r {
            Ok(ms) => {
                check(i != HUNG && ms == 1, format!("input {i} gave {ms}"))?;
                ok += 1;
            }
            Err(TaskError { kind: TaskErrorKind::Timeout { after, elapsed }, .. }) if i == HUNG => {
                check(after == limit, format!("the timeout says {after:?}"))?;
                timed_out = Some((elapsed, start.elapsed()));
            }
            Err(e) => return Err(format!("input {i} of the chunk: {e}")),
        }
    }
    let (elapsed, came) = timed_out.ok_or("the hung input did not time out")?;
    check(ok == 63, format!("{ok} of the 63 other inputs succeeded"))?;
    check(elapsed < Duration::from_secs(1), format!("the hung input timed out after {elapsed:?}"))?;
    check(came < Duration::from_millis(1500), format!("the Timeout came {came:?} after the map began"))?;
    println!("timeout in a chunk of 64: the hung input failed after {elapsed:?} ({came:?} into the map), 63 others ok");
    Ok(())
}

/// With `MPI_HUNG=<dir>` set: two inputs of one chunk hang for [`HUNG_MS`] under a 500 ms
/// timeout. Both fail as Timeout and the 298 others succeed; every input starts exactly
/// once (each execution is logged to `<dir>/log`, which the script counts after the launch,
/// when every rank is gone): the others are fast (tens of µs), so the rank holds the results
/// of the inputs before the first hung one in an unsent bunch when it hangs, and its heartbeat
/// must send them; the rank freed from the first hung input skips the rest of its job, which
/// other ranks took over. The program then ends while both hung inputs still sleep, and the
/// script checks that the launch ended well before they would have finished.
fn hung_inputs(tasks: &Tasks, dir: &str) -> Result<(), String> {
    let log = format!("{dir}/log");
    let limit = Duration::from_millis(500);
    let pool = Pool::builder(tasks).task_timeout(limit).chunk_size(50).build().map_err(|e| e.to_string())?;
    let hung = |x: u64| x == 60 || x == 61;
    let inputs = (0..300).map(|x| (log.clone(), x, if hung(x) { HUNG_MS } else { 0 }));
    let started = Instant::now();
    let (mut ok, mut timed_out) = (0, 0);
    for (x, r) in pool.map::<LoggedSleep>(inputs).into_iter().enumerate() {
        match r {
            Ok(v) => {
                check(!hung(x as u64) && v == x as u64, format!("input {x} gave {v}"))?;
                ok += 1;
            }
            Err(TaskError { kind: TaskErrorKind::Timeout { .. }, .. }) if hung(x as u64) => timed_out += 1,
            Err(e) => return Err(format!("input {x}: {e}")),
        }
    }
    check(ok == 298 && timed_out == 2, format!("{ok} ok and {timed_out} timed out, not 298 and 2"))?;
    println!(
        "hung inputs: 2 timed out, 298 ok in {:?}; rank 0's program ends now, with both still sleeping",
        started.elapsed()
    );
    Ok(())
}

/// How long [`hung_inputs`]'s two inputs sleep.
const HUNG_MS: u64 = 10_000;

/// With `MPI_JOURNAL=<dir>` set: a map of [`Counted`] with the journal `<dir>/journal`,
/// each execution logged to `<dir>/log`. With `MPI_JOURNAL_DIE` set too, a worker rank
/// kills itself halfway and the launcher ends the job (the script checks that it fails);
/// the rerun without it must give every task's result once, the first run's finished
/// tasks from the journal (not run again), the others run exactly once.
fn journaled(tasks: &Tasks, dir: &str) -> Result<(), String> {
    let log = format!("{dir}/log");
    let executions = || -> HashMap<u64, usize> {
        let mut n = HashMap::new();
        for line in std::fs::read_to_string(&log).unwrap_or_default().lines() {
            if let Ok(x) = line.parse() {
                *n.entry(x).or_default() += 1;
            }
        }
        n
    };
    let pool =
        Pool::builder(tasks).journal(format!("{dir}/journal")).chunk_size(1).build().map_err(|e| e.to_string())?;
    let before = executions();
    let got = pool.map::<Counted>((0..JOURNALED).map(|x| (log.clone(), x)));
    if std::env::var_os("MPI_JOURNAL_DIE").is_some() {
        return Err(format!("task {KILL_AT} killed its rank and the job went on"));
    }
    let after = executions();
    let mut replayed = 0;
    for (x, r) in got.iter().enumerate() {
        let x = x as u64;
        let (value, from_first_run) = r.as_ref().map_err(|e| format!("task {x}: {e}"))?;
        check(*value == x * x, format!("task {x} gave {value}"))?;
        let ran = after.get(&x).copied().unwrap_or(0) - before.get(&x).copied().unwrap_or(0);
        if *from_first_run {
            replayed += 1;
            check(ran == 0, format!("task {x} finished in the first run and ran {ran} more times"))?;
        } else {
            check(ran == 1, format!("task {x} ran {ran} times in the rerun"))?;
        }
    }
    check(replayed > 0 && replayed < JOURNALED, format!("{replayed} of {JOURNALED} results from the journal"))?;
    let first_run: usize = before.values().sum();
    println!(
        "journal: the killed run executed {first_run} tasks; the rerun took {replayed} results from the journal \
         and ran the other {}, each once",
        JOURNALED - replayed
    );
    Ok(())
}

/// With `MPI_RECOVER=<status>`, under `mpirun --enable-recovery`: a task kills its rank on
/// its first attempt. The pool marks the rank lost after its lease, runs the task again on
/// another rank (attempt 2, `retries(1)`), finishes the map, reports the rank in
/// `workers()` and `mpi_lost_ranks()`, and a second pool runs on the ranks left. The
/// program then ends with `<status>` (`exit_status_on_lost_ranks`), which the script checks.
fn recover(tasks: &Tasks, status: i32) -> Result<(), String> {
    pool::exit_status_on_lost_ranks(status);
    let world = pool::mpi_world().ok_or("no MPI world")?;
    let lease = Duration::from_millis(800);
    let pool = Pool::builder(tasks).retries(1).rank_lease(lease).chunk_size(1).build().map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let died = pool.submit::<DieOnce>(());
    let slept = pool.map::<Sleep>(vec![30; 12]);
    let (attempt, rank) = died.wait().map_err(|e| format!("the task whose rank died: {e}"))?;
    let took = t0.elapsed();
    check(slept.iter().all(|r| r.as_ref().is_ok_and(|ms| *ms == 30)), format!("the other tasks: {slept:?}"))?;
    check(attempt == 2, format!("the task whose rank died ended on attempt {attempt}, not 2"))?;
    let lost = pool::mpi_lost_ranks();
    check(lost.len() == 1 && lost[0] != rank, format!("lost ranks {lost:?}; the retry ran on rank {rank}"))?;
    let workers = pool.workers();
    let flagged: Vec<usize> = workers.iter().filter(|w| w.lost).map(|w| w.id + 1).collect();
    check(flagged == lost, format!("workers() flags ranks {flagged:?} as lost, mpi_lost_ranks says {lost:?}"))?;
    check(took >= lease && took < lease * 10, format!("the retry came after {took:?} with a lease of {lease:?}"))?;
    drop(pool);
    // A later pool leaves the lost rank out at once and runs on the others.
    let t1 = Instant::now();
    let pool = Pool::builder(tasks).build().map_err(|e| e.to_string())?;
    let got: Vec<_> =
        pool.map::<Where>((0..8).map(|_| ())).into_iter().collect::<Result<_, _>>().map_err(|e| e.to_string())?;
    check(got.iter().all(|(r, ..)| !lost.contains(r)), format!("a task ran on a lost rank: {got:?}"))?;
    check(t1.elapsed() < Duration::from_secs(5), format!("the next pool took {:?}", t1.elapsed()))?;
    drop(pool);
    batched_loss(tasks, &lost)?;
    println!(
        "recovery: rank {} of {} lost, found after {took:?} (lease {lease:?}); its task ran again on rank {rank} (attempt 2); \
         the next pool ran on the {} ranks left",
        lost[0],
        world.size,
        world.size - 2
    );
    Ok(())
}

/// A rank killed by one input of a batch (retries 0): that input alone ends `Crashed`; the
/// batch's others, finished on the lost rank or not started there, all succeed on their first
/// attempt (nothing else is charged).
fn batched_loss(tasks: &Tasks, lost_before: &[usize]) -> Result<(), String> {
    const KILLER: u64 = 150;
    let pool = Pool::builder(tasks)
        .retries(0)
        .rank_lease(Duration::from_millis(800))
        .chunk_size(40)
        .build()
        .map_err(|e| e.to_string())?;
    let got = pool.map::<KillInBatch>((0..300).map(|x| (x, x == KILLER)));
    let mut crashed = Vec::new();
    for (x, r) in got.iter().enumerate() {
        match r {
            Ok((v, attempt)) => check(*v == x as u64 && *attempt == 1, format!("input {x}: {v} on attempt {attempt}"))?,
            Err(TaskError { kind: TaskErrorKind::Crashed { .. }, .. }) => crashed.push(x as u64),
            Err(e) => return Err(format!("input {x}: {e}")),
        }
    }
    check(
        crashed == [KILLER],
        format!("inputs {crashed:?} ended Crashed; only input {KILLER} ran when its rank died"),
    )?;
    let lost = pool::mpi_lost_ranks();
    check(lost.len() == lost_before.len() + 1, format!("lost ranks {lost:?}, before {lost_before:?}"))?;
    println!("recovery in a batch of 40: only the input that killed its rank was charged (Crashed), 299 others ok on attempt 1");
    Ok(())
}

/// With `MPI_BENCH` set: start to first result, no-op round trip (median), unbatched and
/// batched no-op map throughput on the worker ranks, as benches/mpi4py_pool.py measures
/// mpi4py.futures (figures only; scripts/mpi-bench.sh runs both).
fn bench(tasks: &Tasks) -> Result<(), String> {
    let t0 = Instant::now();
    let pool = Pool::builder(tasks).build().map_err(|e| e.to_string())?;
    pool.submit::<Noop>(0).wait().map_err(|e| e.to_string())?;
    let first = t0.elapsed();
    let mut trips: Vec<Duration> = (0..2000)
        .map(|i| {
            let t = Instant::now();
            let _ = pool.submit::<Noop>(i).wait();
            t.elapsed()
        })
        .collect();
    trips.sort();
    drop(pool);
    let rate = |chunk: usize, n: u64| -> Result<f64, String> {
        let pool = Pool::builder(tasks).chunk_size(chunk).build().map_err(|e| e.to_string())?;
        let t = Instant::now();
        let got = pool.map::<Noop>(0..n);
        let secs = t.elapsed().as_secs_f64();
        let right = got.iter().enumerate().all(|(i, r)| r.as_ref().is_ok_and(|x| *x == i as u64));
        check(got.len() == n as usize && right, "the map lost or garbled results".into())?;
        Ok(n as f64 / secs)
    };
    let unbatched = rate(1, 20_000)?;
    let batched = rate(256, 1_000_000)?;
    println!(
        "BENCH start-to-first-result {first:?}, round trip median {:?}, unbatched map {unbatched:.0} tasks/s, batched (256) {batched:.0} tasks/s",
        trips[trips.len() / 2]
    );
    Ok(())
}

/// With `MPI_TWO_HOSTS` set (`scripts/mpi-two-node.sh`: ranks on two simulated hosts): the
/// node-local ranks count from 0 on each host, the 10,000-task map gives the local pool's
/// outputs with every rank taking part, and each task's rank reports its own host and device.
fn two_hosts(tasks: &Tasks) -> Result<(), String> {
    let world = pool::mpi_world().ok_or("no MPI world")?;
    let hosts = world.hosts();
    check(hosts.len() == 2, format!("hosts {hosts:?}: the launch must span two"))?;
    for host in &hosts {
        let mut locals: Vec<usize> = world.ranks.iter().filter(|r| &r.host == host).map(|r| r.local_rank).collect();
        locals.sort();
        check(locals == (0..locals.len()).collect::<Vec<_>>(), format!("node-local ranks {locals:?} on {host}"))?;
        let nodes: Vec<usize> = world.ranks.iter().filter(|r| &r.host == host).map(|r| r.node).collect();
        check(nodes.windows(2).all(|w| w[0] == w[1]), format!("the ranks of {host} name nodes {nodes:?}"))?;
    }
    let pool = Pool::builder(tasks).seed(SEED).build().map_err(|e| e.to_string())?;
    many(&pool)?;
    let got: Vec<_> = pool
        .map::<Where>((0..16 * world.size).map(|_| ()))
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut seen: Vec<usize> = Vec::new();
    for (rank, host, device) in &got {
        let me = world.ranks.get(*rank).ok_or(format!("a task ran on rank {rank}"))?;
        check(*rank >= 1 && *host == me.host, format!("rank {rank} says host {host}, the world {}", me.host))?;
        check(me.device == device.as_str(), format!("rank {rank} opened {device}, the world says {}", me.device))?;
        seen.push(*rank);
    }
    seen.sort();
    seen.dedup();
    check(seen == (1..world.size).collect::<Vec<_>>(), format!("tasks ran on ranks {seen:?}"))?;
    println!("two hosts: {hosts:?}, every worker rank ran tasks on its own host");
    drop(pool);
    shared_arrays(tasks)
}

fn main() -> ExitCode {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info.payload().downcast_ref::<String>().map(String::as_str);
        let msg = msg.or_else(|| info.payload().downcast_ref::<&str>().copied()).unwrap_or("");
        if !msg.starts_with(DELIBERATE) {
            default_hook(info);
        }
    }));
    let tasks = tasks();
    polycompute::worker_main(&tasks);
    let result = (|| -> Result<(), String> {
        let Some(world) = pool::mpi_world() else {
            // A singleton: the local plan, as without the feature.
            let plan = pool::worker_plan();
            check(plan.mode != WorkerMode::Mpi, format!("singleton plan {plan:?}"))?;
            let pool = Pool::builder(&tasks).mode(WorkerMode::Mpi).build();
            check(pool.is_err(), "WorkerMode::Mpi without a launch must be refused".into())?;
            println!("singleton: local plan ({:?}); run me under mpirun for the MPI cases", plan.mode);
            return Ok(());
        };
        if let Ok(dir) = std::env::var("MPI_JOURNAL") {
            return journaled(&tasks, &dir);
        }
        if let Ok(dir) = std::env::var("MPI_HUNG") {
            return hung_inputs(&tasks, &dir);
        }
        if let Ok(code) = std::env::var("MPI_RECOVER") {
            return recover(&tasks, code.parse().map_err(|e| format!("MPI_RECOVER={code}: {e}"))?);
        }
        if std::env::var_os("MPI_BENCH").is_some() {
            return bench(&tasks);
        }
        if std::env::var_os("MPI_TWO_HOSTS").is_some() {
            return two_hosts(&tasks);
        }
        let plan = pool::worker_plan();
        check(plan.mode == WorkerMode::Mpi, format!("plan under mpirun: {plan:?}"))?;
        let pool = Pool::builder(&tasks).seed(SEED).build().map_err(|e| e.to_string())?;
        check(
            pool.workers().len() == world.size - 1,
            format!("{} workers for {} ranks", pool.workers().len(), world.size),
        )?;
        // First: the pool's first submission (its streams are keyed 0, as the local pool's first).
        many(&pool)?;
        seeded_streams(&pool)?;
        ranks(&pool)?;
        drop(pool);
        // A second pool on the same ranks, after the first stopped.
        timeout_and_cancel(&tasks)?;
        timeout_in_a_chunk(&tasks)?;
        shared_arrays(&tasks)?;
        Ok(())
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mpi test FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}
