//! The `polycompute` command: `probe`, `bench`, `check`, `demo`.

mod cli;

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
    Probe(cli::probe::Args),
    /// Measure map, sum, matmul and random fill on each device, beside a baseline.
    Bench(cli::bench::Args),
    /// Run the conformance corpus on every available device and compare with the reference.
    Check(cli::check::Args),
    /// A compute server with one worker per device running a batch workload.
    Demo(cli::demo::Args),
    /// Build a libcuda link stub so that `--features cuda` builds without CUDA; prints the
    /// environment to export: `eval "$(polycompute cuda-stub)"`.
    CudaStub(cli::cuda_stub::Args),
}

fn main() -> std::process::ExitCode {
    // Process workers of the demo's pool are this binary re-executed: serve them first.
    polycompute::worker_main(&cli::demo::tasks());
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Probe(args) => cli::probe::run(args),
        Command::Bench(args) => cli::bench::run(args),
        Command::Check(args) => cli::check::run(args),
        Command::Demo(args) => cli::demo::run(args),
        Command::CudaStub(args) => cli::cuda_stub::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
