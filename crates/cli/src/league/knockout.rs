//! `chuhe league knockout`: the bracket after the matches played (ties of one or two matches,
//! the tiebreak match, third place) and the next round's pairings.

use super::args::{KnockoutArgs, ScheduleFormat};
use super::season::Season;
use anyhow::{Result, anyhow, bail};
use chuhe_league::colour::Side;
use chuhe_league::knockout::{Leg, PlayedMatch, Tie, TieState, knockout_bracket};
use serde::Serialize;

#[derive(Serialize)]
struct BracketOut {
    teams: u32,
    size: u32,
    legs: u32,
    rounds: Vec<RoundOut>,
    third_place: Option<TieOut>,
    champion: Option<String>,
    next_round: Option<NextOut>,
}

#[derive(Serialize)]
struct RoundOut {
    round: u32,
    ties: Vec<TieOut>,
}

#[derive(Serialize)]
struct TieOut {
    /// `[higher seed, lower seed]`, `null` for a bye.
    seeds: (u32, Option<u32>),
    names: (String, Option<String>),
    /// `decided`, `needs_leg`, `needs_tiebreak`.
    state: &'static str,
    winner: Option<String>,
    decided_by: Option<String>,
    /// The next leg to play (with `needs_leg`).
    next_leg: Option<u32>,
    legs: Vec<LegOut>,
    tiebreak: Option<LegOut>,
}

#[derive(Serialize)]
struct LegOut {
    first: String,
    second: String,
    game_points: [f64; 2],
    match_points: [f64; 2],
}

#[derive(Serialize)]
struct NextOut {
    round: u32,
    /// `[higher seed, lower seed]`; colours by the lot (13.4).
    pairings: Vec<(u32, Option<u32>)>,
    names: Vec<(String, Option<String>)>,
}

impl Season {
    pub(super) fn knockout(&self, a: &KnockoutArgs) -> Result<String> {
        let Some(options) = self.knockout else {
            bail!("knockout is for a knockout file (\"system\": \"knockout\")");
        };
        let seed = |t: usize| t as u32 + 1;
        let mut played = Vec::new();
        for m in &self.matches {
            let Some(result) = &m.result else { continue };
            played.push(PlayedMatch {
                round: m.round,
                leg: Leg {
                    first: seed(m.first),
                    second: seed(m.second),
                    result: result.clone(),
                },
                tiebreak: m.tiebreak,
                third_place: m.third_place,
            });
        }
        let b = knockout_bracket(self.teams.len() as u32, options, &played).map_err(|e| {
            let named = self.seed_names(&e.to_string());
            anyhow!("{named}")
        })?;
        let name = |s: u32| self.teams.get(s as usize - 1).cloned().unwrap_or_default();
        let leg_out = |l: &Leg| LegOut {
            first: name(l.first),
            second: name(l.second),
            game_points: [
                l.result.game_points[0].as_f64(),
                l.result.game_points[1].as_f64(),
            ],
            match_points: [
                l.result.match_points[Side::First.index()].as_f64(),
                l.result.match_points[Side::Second.index()].as_f64(),
            ],
        };
        let tie_out = |t: &Tie| {
            let (state, winner, by, next_leg) = match t.state {
                TieState::Decided { winner, by, .. } => {
                    ("decided", Some(name(winner)), Some(by.code()), None)
                }
                TieState::NeedsLeg(n) => ("needs_leg", None, None, Some(n)),
                TieState::NeedsTiebreak => ("needs_tiebreak", None, None, None),
            };
            TieOut {
                seeds: t.seeds,
                names: (name(t.seeds.0), t.seeds.1.map(name)),
                state,
                winner,
                decided_by: by,
                next_leg,
                legs: t.legs.iter().map(leg_out).collect(),
                tiebreak: t.tiebreak.as_ref().map(leg_out),
            }
        };
        let next = b.next_round();
        Ok(match a.format {
            ScheduleFormat::Json => {
                let out = BracketOut {
                    teams: self.teams.len() as u32,
                    size: b.size,
                    legs: options.legs,
                    rounds: b
                        .rounds
                        .iter()
                        .enumerate()
                        .map(|(i, r)| RoundOut {
                            round: i as u32 + 1,
                            ties: r.iter().map(tie_out).collect(),
                        })
                        .collect(),
                    third_place: b.third_place.as_ref().map(tie_out),
                    champion: b.champion.map(name),
                    next_round: next.as_ref().map(|(round, pairs)| NextOut {
                        round: *round,
                        pairings: pairs.clone(),
                        names: pairs.iter().map(|&(x, y)| (name(x), y.map(name))).collect(),
                    }),
                };
                let mut s = serde_json::to_string(&out)?;
                s.push('\n');
                s
            }
            ScheduleFormat::Table => {
                let mut s = String::new();
                let line = |t: &Tie| {
                    let who = match t.seeds.1 {
                        Some(lo) => format!(
                            "{} ({}) - {} ({})",
                            name(t.seeds.0),
                            t.seeds.0,
                            name(lo),
                            lo
                        ),
                        None => format!("{} ({}) bye", name(t.seeds.0), t.seeds.0),
                    };
                    let legs: Vec<String> = t
                        .legs
                        .iter()
                        .chain(&t.tiebreak)
                        .map(|l| {
                            format!(
                                "{} {}:{} {}",
                                name(l.first),
                                l.result.game_points[0],
                                l.result.game_points[1],
                                name(l.second)
                            )
                        })
                        .collect();
                    let state = match t.state {
                        TieState::Decided { winner, by, .. } => {
                            format!("→ {} ({})", name(winner), by.code())
                        }
                        TieState::NeedsLeg(n) => format!("match {n} to play"),
                        TieState::NeedsTiebreak => "level: tiebreak match to play".to_string(),
                    };
                    if legs.is_empty() {
                        format!("  {who}  {state}\n")
                    } else {
                        format!("  {who}: {}  {state}\n", legs.join(", "))
                    }
                };
                for (i, r) in b.rounds.iter().enumerate() {
                    s.push_str(&format!("Round {}\n", i + 1));
                    for t in r {
                        s.push_str(&line(t));
                    }
                }
                if let Some(t) = &b.third_place {
                    s.push_str("Third place\n");
                    s.push_str(&line(t));
                }
                if let Some(c) = b.champion {
                    s.push_str(&format!("Champion: {} ({c})\n", name(c)));
                }
                if let Some((round, pairs)) = next {
                    s.push_str(&format!("Next: round {round}\n"));
                    for (hi, lo) in pairs {
                        match lo {
                            Some(lo) => s.push_str(&format!(
                                "  {} ({hi}) - {} ({lo})\n",
                                name(hi),
                                name(lo)
                            )),
                            None => s.push_str(&format!("  {} ({hi}) bye\n", name(hi))),
                        }
                    }
                }
                s
            }
        })
    }

    /// A knockout error with team names after the seed numbers.
    fn seed_names(&self, msg: &str) -> String {
        let mut out = String::new();
        let mut words = msg.split(' ').peekable();
        let mut prev = "";
        while let Some(w) = words.next() {
            out.push_str(w);
            let digits = w.trim_end_matches([',', ';', ')', ':']);
            if matches!(prev, "seed" | "seeds" | "and") {
                if let Ok(n) = digits.parse::<usize>() {
                    if let Some(t) = n.checked_sub(1).and_then(|i| self.teams.get(i)) {
                        out.truncate(out.len() - w.len());
                        out.push_str(&format!("{digits} ({t:?}){}", &w[digits.len()..]));
                    }
                }
            }
            prev = w;
            if words.peek().is_some() {
                out.push(' ');
            }
        }
        out
    }
}
