//! `chuhe rules …`

use clap::{Args, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Debug, Subcommand)]
enum RulesCommand {}

pub fn run(args: RulesArgs) -> anyhow::Result<ExitCode> {
    match args.command {}
}
