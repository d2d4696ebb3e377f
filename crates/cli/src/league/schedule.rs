//! `chuhe league schedule` (Berger round robins) and `chuhe league bracket` (knockout first round).

use super::args::{BracketArgs, RoundRobinFormat, ScheduleArgs, ScheduleFormat};
use anyhow::{Result, anyhow};
use chuhe_league::fixtures::{RoundRobinOptions, knockout_first_round, round_robin};
use serde::Serialize;

#[derive(Serialize)]
struct ScheduleJson {
    teams: u32,
    legs: u32,
    /// Round r's matches as `[first, second]` (1-based; first = Red on board 1).
    rounds: Vec<Vec<[u32; 2]>>,
    /// Round r's bye, or null.
    byes: Vec<Option<u32>>,
}

pub(super) fn schedule(a: &ScheduleArgs) -> Result<String> {
    let legs = if a.double { 2 } else { 1 };
    let rounds = round_robin(
        a.teams,
        RoundRobinOptions {
            legs,
            swap_last_two_rounds_of_first_leg: a.swap_last_two,
        },
    )
    .map_err(|e| anyhow!("--teams: {e}"))?;
    Ok(match a.format {
        RoundRobinFormat::Json | RoundRobinFormat::JsonFull => {
            let j = ScheduleJson {
                teams: a.teams,
                legs,
                rounds: rounds
                    .iter()
                    .map(|r| r.pairings.iter().map(|p| [p.first, p.second]).collect())
                    .collect(),
                byes: rounds.iter().map(|r| r.bye).collect(),
            };
            let mut s = if matches!(a.format, RoundRobinFormat::Json) {
                serde_json::to_string(&j.rounds)?
            } else {
                serde_json::to_string(&j)?
            };
            s.push('\n');
            s
        }
        RoundRobinFormat::Table => {
            let mut s = String::new();
            for r in &rounds {
                let games: Vec<String> = r
                    .pairings
                    .iter()
                    .map(|p| format!("{}-{}", p.first, p.second))
                    .collect();
                s.push_str(&format!("Round {}: {}", r.number, games.join(", ")));
                if let Some(b) = r.bye {
                    s.push_str(&format!(" (bye: {b})"));
                }
                s.push('\n');
            }
            s
        }
    })
}

#[derive(Serialize)]
struct BracketJson {
    teams: u32,
    size: u32,
    /// First-round matches in bracket order: `[higher seed, lower seed]`, `null` for a bye.
    matches: Vec<(u32, Option<u32>)>,
}

pub(super) fn bracket(a: &BracketArgs) -> Result<String> {
    let matches = knockout_first_round(a.teams).map_err(|e| anyhow!("--teams: {e}"))?;
    Ok(match a.format {
        ScheduleFormat::Json => {
            let mut s = serde_json::to_string(&BracketJson {
                teams: a.teams,
                size: a.teams.next_power_of_two(),
                matches,
            })?;
            s.push('\n');
            s
        }
        ScheduleFormat::Table => {
            let mut s = String::new();
            for (i, (hi, lo)) in matches.iter().enumerate() {
                match lo {
                    Some(lo) => s.push_str(&format!("Match {}: {hi}-{lo}\n", i + 1)),
                    None => s.push_str(&format!("Match {}: {hi} (bye)\n", i + 1)),
                }
            }
            s
        }
    })
}
