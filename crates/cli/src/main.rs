//! `chuhe`: one binary, clap subcommands. Each subcommand group lives in its own module.

use clap::{Parser, Subcommand};

mod league;
mod rules;
mod rulings;

/// chuhe (楚河): a server for real-time online Xiangqi and team leagues.
#[derive(Debug, Parser)]
#[command(name = "chuhe", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Rules tools: perft, batch evaluation of positions and moves.
    Rules(rules::RulesArgs),
    /// League tools: schedules and standings.
    League(league::LeagueArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Rules(args) => rules::run(args),
        Command::League(args) => league::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::from(2)
        }
    }
}
