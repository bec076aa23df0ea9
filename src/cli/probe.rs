//! `polycompute probe [--json]`.

use std::process::ExitCode;

/// Options of `probe`.
#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let probe = polycompute::probe();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&probe)?);
    } else {
        println!("{probe:#?}");
    }
    Ok(ExitCode::SUCCESS)
}
