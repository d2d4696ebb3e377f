//! `chuhe league …`: round-robin schedules, standings, score sheets, Swiss pairings, knockout
//! brackets and Elo lists from results files, and `chuhe league event …` against a running
//! server. One file per job:
//!
//! - `args`: the command line (clap);
//! - `file`: the results file as JSON (serde), format documented in `crates/league/README.md`;
//! - `lines`: where each JSON value starts, so errors name their line;
//! - `season`: the file turned into `chuhe-league` values (the parser and its checks);
//! - `chain`: the `result_chain` and board records;
//! - `schedule`, `pair`, `standings`, `sheet`, `elo`, `knockout`: one command each (they print what the
//!   `chuhe-league` renderers return; JSON output structs live beside their command);
//! - `event`: `chuhe league event …`, the organizer's operations on a running server's league
//!   service (docs/league.md) through `client` (one HTTP request per command), with rosters
//!   from CSV (`roster`).

mod args;
mod chain;
pub(crate) mod client;
mod elo;
mod event;
mod file;
mod knockout;
mod lines;
mod pair;
mod roster;
mod schedule;
mod season;
mod sheet;
mod standings;

pub use args::LeagueArgs;

use anyhow::{Result, anyhow, bail};
use args::{LeagueCommand, OutFormat, SheetFormat};
use chuhe_league::sheet::{csv_document, form_csv_document, html_document};
use chuhe_league::text::BOM;
use season::Season;
use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: LeagueArgs) -> Result<ExitCode> {
    let out = match args.command {
        LeagueCommand::Schedule(a) => schedule::schedule(&a)?,
        LeagueCommand::Bracket(a) => schedule::bracket(&a)?,
        LeagueCommand::Pair(a) => {
            let text = read_input(&a.file)?;
            let season = Season::parse(&text)?;
            let outcome = season.pair(&a)?;
            if let Some(log) = &outcome.log {
                eprintln!("override: {log}");
            }
            if let Some(error) = outcome.error {
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(outcome.out.as_bytes())?;
                stdout.flush()?;
                bail!("{error}");
            }
            outcome.out
        }
        LeagueCommand::Standings(a) => {
            let text = read_input(&a.file)?;
            let season = Season::parse(&text)?;
            let table = season.standings()?;
            match a.format {
                OutFormat::Json => {
                    let mut s = serde_json::to_string_pretty(
                        &season.standings_json(&table, a.boards.then_some(a.min_board_games)),
                    )?;
                    s.push('\n');
                    s
                }
                OutFormat::Text | OutFormat::Csv | OutFormat::Html => {
                    season.standings_printout(&table, &a)
                }
            }
        }
        LeagueCommand::Knockout(a) => {
            let text = read_input(&a.file)?;
            let season = Season::parse(&text)?;
            season.knockout(&a)?
        }
        LeagueCommand::Event(a) => event::run(a)?,
        LeagueCommand::Elo(a) => {
            let text = read_input(&a.file)?;
            let season = Season::parse(&text)?;
            let ratings = match &a.ratings {
                Some(p) => Some(read_input(p)?),
                None => None,
            };
            season.elo(&a, ratings.as_deref())?
        }
        LeagueCommand::Sheet(a) => {
            let text = read_input(&a.file)?;
            let season = Season::parse(&text)?;
            let mut sheets = season.sheets(a.round, a.blank)?;
            if let Some(t) = a.table {
                sheets.retain(|s| s.table == Some(t));
            }
            if sheets.is_empty() {
                bail!(
                    "no matches{}{} in {}",
                    a.round
                        .map(|r| format!(" in round {r}"))
                        .unwrap_or_default(),
                    a.table
                        .map(|t| format!(" on table {t}"))
                        .unwrap_or_default(),
                    a.file.display()
                );
            }
            match a.format {
                SheetFormat::Csv if a.bom => format!("{BOM}{}", csv_document(&sheets)),
                SheetFormat::Csv => csv_document(&sheets),
                SheetFormat::Html => html_document(&sheets, a.lang.lang()),
                SheetFormat::FormCsv => form_csv_document(&sheets, a.lang.lang()),
            }
        }
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn read_input(path: &Path) -> Result<String> {
    if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| anyhow!("reading standard input: {e}"))?;
        Ok(s)
    } else {
        std::fs::read_to_string(path).map_err(|e| {
            let missing = e.kind() == std::io::ErrorKind::NotFound;
            let err = anyhow!("reading {}: {e}", path.display());
            if missing && path.starts_with("examples") {
                crate::tip(
                    err,
                    "examples/ is in chuhe's repository: run this in the repository's root, or \
                     give the file's full path",
                )
            } else {
                err
            }
        })
    }
}
