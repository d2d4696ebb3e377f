//! `chuhe`: one binary, clap subcommands. Each subcommand group lives in its own module.

/// jemalloc instead of the system allocator (see the dependency's note in Cargo.toml).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use clap::{Parser, Subcommand};

mod admin;
mod league;
mod rules;
mod rulings;
mod serve;

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
    /// Run the game server (websocket protocol at /ws, organiser API, demo page).
    Serve(serve::ServeArgs),
    /// Administration on the database: players, tokens, casual games.
    Admin(admin::AdminArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Rules(args) => rules::run(args),
        Command::League(args) => league::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Admin(args) => admin::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::from(2)
        }
    }
}
