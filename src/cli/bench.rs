//! `polycompute bench [--device ...] [--json]`.

use std::process::ExitCode;

/// Options of `bench`.
#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(_args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    Err("bench is not written yet".into())
}
