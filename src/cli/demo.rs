//! `polycompute demo`.

use std::process::ExitCode;

/// Options of `demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(_args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    Err("demo is not written yet".into())
}
