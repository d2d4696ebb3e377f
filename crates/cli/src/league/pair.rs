//! `chuhe league pair`: the next round of a team Swiss (积分编排制).

use super::args::{LotArg, PairArgs, ScheduleFormat, SplitArg};
use super::season::Season;
use anyhow::{Result, anyhow, bail};
use chuhe_league::colour::Side;
use chuhe_league::matches::{MatchRecord, evaluate_match};
use chuhe_league::standings::System;
use chuhe_league::swiss::{FirstRoundSplit, SwissOptions, SwissRound, SwissTeam, pair_next_round};
use serde::Serialize;

impl Season {
    /// Pairs the next Swiss round.
    pub(super) fn pair(&self, a: &PairArgs) -> Result<String> {
        if self.system != System::Swiss || self.knockout.is_some() {
            bail!(
                "pair is for a Swiss (\"system\": \"swiss\"); a round robin's rounds come from `chuhe league schedule`"
            );
        }
        if let Some(m) = self.matches.iter().find(|m| m.result.is_none()) {
            bail!(
                "round {} has a pending match ({} - {}): record its result before pairing the next round",
                m.round,
                self.teams[m.first],
                self.teams[m.second]
            );
        }
        let last = self
            .matches
            .iter()
            .map(|m| m.round)
            .chain(self.byes.iter().map(|b| b.0))
            .max()
            .unwrap_or(0);
        let bye_points = evaluate_match(
            &self.rules,
            &MatchRecord::Forfeit {
                forfeited_by: Side::Second,
            },
        )?
        .match_points[0];
        let mut rounds = Vec::with_capacity(last as usize);
        for r in 1..=last {
            let pairings: Vec<_> = self
                .matches
                .iter()
                .filter(|m| m.round == r)
                .filter_map(|m| Some((m.first, m.second, m.result.as_ref()?.match_points)))
                .collect();
            let byes: Vec<usize> = self.byes.iter().filter(|b| b.0 == r).map(|b| b.1).collect();
            if pairings.is_empty() && byes.is_empty() {
                bail!("round {r} has no matches: Swiss rounds must be recorded in order");
            }
            if byes.len() > 1 {
                bail!(
                    "round {r} has {} byes; a Swiss round has at most one",
                    byes.len()
                );
            }
            rounds.push(SwissRound {
                pairings,
                bye: byes.first().map(|&t| (t, bye_points)),
            });
        }
        let withdrawn: Vec<usize> = self.withdrawals.iter().map(|w| w.team).collect();
        let teams: Vec<SwissTeam> = self
            .units
            .iter()
            .enumerate()
            .map(|(i, u)| SwissTeam {
                seed: i as u32 + 1,
                unit: u.clone(),
                withdrawn: withdrawn.contains(&i),
            })
            .collect();
        let options = SwissOptions {
            split: match a.split {
                SplitArg::OddEven => FirstRoundSplit::OddEven,
                SplitArg::TopBottom => FirstRoundSplit::TopBottom,
            },
            avoid_same_unit_in_round_1: !a.no_unit_avoidance,
            upper_moves_first_on_table_1: matches!(a.lot, LotArg::Upper),
        };
        let p = pair_next_round(&teams, &rounds, options).map_err(|e| anyhow!("{e}"))?;
        let round = last + 1;
        Ok(match a.format {
            ScheduleFormat::Json => {
                let j = PairOut {
                    round,
                    pairings: p
                        .tables
                        .iter()
                        .map(|&(x, y)| [x as u32 + 1, y as u32 + 1])
                        .collect(),
                    names: p
                        .tables
                        .iter()
                        .map(|&(x, y)| [self.teams[x].clone(), self.teams[y].clone()])
                        .collect(),
                    bye: p.bye.map(|b| b as u32 + 1),
                    bye_name: p.bye.map(|b| self.teams[b].clone()),
                };
                let mut s = serde_json::to_string(&j)?;
                s.push('\n');
                s
            }
            ScheduleFormat::Table => {
                let mut s = format!("Round {round}\n");
                for (k, &(x, y)) in p.tables.iter().enumerate() {
                    s.push_str(&format!(
                        "  table {}: {} ({}) - {} ({})\n",
                        k + 1,
                        self.teams[x],
                        x + 1,
                        self.teams[y],
                        y + 1
                    ));
                }
                if let Some(b) = p.bye {
                    s.push_str(&format!("  bye: {} ({})\n", self.teams[b], b + 1));
                }
                s
            }
        })
    }
}

#[derive(Serialize)]
struct PairOut {
    round: u32,
    /// `[first, second]` draw numbers (1-based, team order in the file); first moves first.
    pairings: Vec<[u32; 2]>,
    names: Vec<[String; 2]>,
    bye: Option<u32>,
    bye_name: Option<String>,
}
