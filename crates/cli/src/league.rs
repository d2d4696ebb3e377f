//! `chuhe league …`

use clap::{Args, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct LeagueArgs {
    #[command(subcommand)]
    command: LeagueCommand,
}

#[derive(Debug, Subcommand)]
enum LeagueCommand {}

pub fn run(args: LeagueArgs) -> anyhow::Result<ExitCode> {
    match args.command {}
}
