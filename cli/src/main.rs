//! The `polycompute` command: `probe`, `bench`, `check`, `demo`, `cuda-stub`; one module per
//! subcommand. Its own package (`polycompute-cli`), so that clap and the command's other
//! dependencies are built only by those who install the command, never by a library user.

mod bench;
mod check;
mod cuda_stub;
mod demo;
mod probe;

use clap::{Parser, Subcommand};

/// Portable numeric compute on CUDA, wgpu and the CPU.
#[derive(Parser)]
#[command(name = "polycompute", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the platform, each backend's devices (or why it has none) and the worker plan.
    Probe(probe::Args),
    /// Measure map, sum, matmul and random fill on each device, beside a baseline.
    Bench(bench::Args),
    /// Run the conformance corpus on every available device and compare with the reference.
    Check(check::Args),
    /// A compute server with one worker per device running a batch workload.
    Demo(demo::Args),
    /// Build a libcuda link stub so that `--features cuda` builds without CUDA; prints the
    /// environment to export: `eval "$(polycompute cuda-stub)"`.
    CudaStub(cuda_stub::Args),
}

fn main() -> std::process::ExitCode {
    // Process workers of the demo's pool are this binary re-executed: serve them first.
    polycompute::worker_main(&demo::tasks());
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Probe(args) => probe::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Check(args) => check::run(args),
        Command::Demo(args) => demo::run(args),
        Command::CudaStub(args) => cuda_stub::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
