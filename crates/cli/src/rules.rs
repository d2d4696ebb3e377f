//! `chuhe rules …`: perft and the JSON Lines batch interface.

use anyhow::Context as _;
use chuhe_rules::{Position, perft_divide};
use clap::{Args, Subcommand};
use std::io::Write as _;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Debug, Subcommand)]
enum RulesCommand {
    /// Count move paths: one line per legal move with its count, then the total alone on the
    /// last line.
    Perft {
        /// A FEN (quote it) or `startpos`.
        position: String,
        /// Depth in plies (1 or more).
        depth: u32,
    },
}

/// Reads `startpos` or a FEN.
pub(crate) fn parse_position(text: &str) -> Result<Position, chuhe_rules::FenError> {
    if text.trim() == "startpos" {
        Ok(Position::new())
    } else {
        Position::from_fen(text)
    }
}

pub fn run(args: RulesArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        RulesCommand::Perft { position, depth } => {
            let pos =
                parse_position(&position).with_context(|| format!("position {position:?}"))?;
            if depth == 0 {
                anyhow::bail!("depth must be at least 1");
            }
            let mut out = std::io::stdout().lock();
            let mut total = 0u64;
            for (m, n) in perft_divide(&pos, depth) {
                writeln!(out, "{m} {n}")?;
                total += n;
            }
            writeln!(out, "{total}")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
