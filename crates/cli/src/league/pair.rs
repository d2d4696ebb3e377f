//! `chuhe league pair`: the next round of a team Swiss (积分编排制).

use super::args::{LotArg, PairArgs, ScheduleFormat, SplitArg};
use super::season::Season;
use anyhow::{Result, anyhow, bail};
use chuhe_league::colour::Side;
use chuhe_league::matches::{MatchRecord, evaluate_match};
use chuhe_league::standings::System;
use chuhe_league::swiss::{
    FirstRoundSplit, PairingOption, PairingOverride, PairingProblem, SwissError, SwissOptions,
    SwissPairing, SwissRound, SwissTeam, check_pairing, least_bad_pairings, pair_next_round,
};
use serde::Serialize;

impl Season {
    /// Pairs the next Swiss round.
    pub(super) fn pair(&self, a: &PairArgs) -> Result<PairOutcome> {
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
        let mut rounds = Vec::new();
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
            lookahead: true,
        };
        let round = last + 1;
        let computed = match pair_next_round(&teams, &rounds, options) {
            Ok(p) => Some(p),
            Err(SwissError::NoPairing(_)) => None,
            Err(e) => bail!("{e}"),
        };
        if let Some(spec) = &a.r#override {
            let Some(reason) = a.reason.clone().filter(|r| !r.trim().is_empty()) else {
                bail!("--override needs --reason: every override is logged with its reason");
            };
            let chosen = self.parse_override(spec, a.bye.as_deref())?;
            let problems = check_pairing(&teams, &rounds, &chosen)?;
            let (breaches, structural): (Vec<_>, Vec<_>) =
                problems.iter().cloned().partition(|p| p.is_rule_breach());
            let say = |ps: &[PairingProblem]| {
                ps.iter()
                    .map(|p| p.describe(&self.teams))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            if !structural.is_empty() {
                bail!(
                    "--override: not a pairing of round {round}: {}",
                    say(&structural)
                );
            }
            if !breaches.is_empty() && !a.allow_problems {
                bail!(
                    "--override breaks the pairing rules: {} (add --allow-problems to accept this knowingly; it is logged)",
                    say(&breaches)
                );
            }
            let record = PairingOverride {
                round: round as usize,
                computed: computed.clone(),
                chosen: chosen.clone(),
                problems: breaches,
                by: a.by.clone(),
                reason,
            };
            let log = record.log_line(&self.teams);
            return Ok(PairOutcome {
                out: self.pairing_out(round, &chosen, a.format, Some(&record))?,
                log: Some(log),
                error: None,
            });
        }
        match computed {
            Some(p) => Ok(PairOutcome {
                out: self.pairing_out(round, &p, a.format, None)?,
                log: None,
                error: None,
            }),
            None => {
                let options = least_bad_pairings(&teams, &rounds, 3)?;
                Ok(PairOutcome {
                    out: self.no_pairing_out(round, &options, a.format)?,
                    log: None,
                    error: Some(format!(
                        "round {round} cannot be paired without a rematch or breaking the colour limits; the least-bad options are printed: choose one with --override \"first-second,…\" --allow-problems --reason \"…\""
                    )),
                })
            }
        }
    }

    /// `2-1,5-3` (draw numbers, first moves first) and the bye's draw number.
    fn parse_override(&self, spec: &str, bye: Option<&str>) -> Result<SwissPairing> {
        let n = self.teams.len();
        let num = |s: &str| -> Result<usize> {
            match s.trim().parse::<usize>() {
                Ok(k) if (1..=n).contains(&k) => Ok(k - 1),
                _ => bail!("--override: {s:?} is not a draw number 1–{n}"),
            }
        };
        let mut tables = Vec::new();
        for t in spec.split(',').filter(|t| !t.trim().is_empty()) {
            let Some((x, y)) = t.split_once('-') else {
                bail!("--override: {t:?} is not a table `first-second` (draw numbers)");
            };
            tables.push((num(x)?, num(y)?));
        }
        if tables.is_empty() {
            bail!("--override: no tables given");
        }
        let bye = match bye {
            Some(b) => Some(
                num(b).map_err(|e| anyhow!("{}", e.to_string().replace("--override", "--bye")))?,
            ),
            None => None,
        };
        Ok(SwissPairing { tables, bye })
    }

    fn pairing_out(
        &self,
        round: u32,
        p: &SwissPairing,
        format: ScheduleFormat,
        record: Option<&PairingOverride>,
    ) -> Result<String> {
        Ok(match format {
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
                    r#override: record.map(|r| OverrideOut {
                        by: r.by.clone(),
                        reason: r.reason.clone(),
                        computed: r.computed.as_ref().map(|c| {
                            c.tables
                                .iter()
                                .map(|&(x, y)| [x as u32 + 1, y as u32 + 1])
                                .collect()
                        }),
                        accepted: r.problems.iter().map(|p| self.problem_out(p)).collect(),
                        log: r.log_line(&self.teams),
                    }),
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
                if let Some(r) = record {
                    s.push_str(&format!("  {}\n", r.log_line(&self.teams)));
                }
                s
            }
        })
    }

    fn problem_out(&self, p: &PairingProblem) -> ProblemOut {
        ProblemOut {
            code: p.code(),
            message: p.describe(&self.teams),
        }
    }

    fn no_pairing_out(
        &self,
        round: u32,
        options: &[PairingOption],
        format: ScheduleFormat,
    ) -> Result<String> {
        let flat = |p: &SwissPairing| -> String {
            p.tables
                .iter()
                .map(|&(x, y)| format!("{}-{}", x + 1, y + 1))
                .collect::<Vec<_>>()
                .join(",")
        };
        Ok(match format {
            ScheduleFormat::Json => {
                let j = NoPairingOut {
                    round,
                    pairings: None,
                    options: options
                        .iter()
                        .map(|o| OptionOut {
                            pairings: o
                                .pairing
                                .tables
                                .iter()
                                .map(|&(x, y)| [x as u32 + 1, y as u32 + 1])
                                .collect(),
                            names: o
                                .pairing
                                .tables
                                .iter()
                                .map(|&(x, y)| [self.teams[x].clone(), self.teams[y].clone()])
                                .collect(),
                            bye: o.pairing.bye.map(|b| b as u32 + 1),
                            problems: o.problems.iter().map(|p| self.problem_out(p)).collect(),
                            cost: o.cost,
                            r#override: flat(&o.pairing),
                        })
                        .collect(),
                };
                let mut s = serde_json::to_string(&j)?;
                s.push('\n');
                s
            }
            ScheduleFormat::Table => {
                let mut s = format!(
                    "Round {round}: no pairing without a rematch within the colour limits\n"
                );
                for (i, o) in options.iter().enumerate() {
                    s.push_str(&format!(
                        "Option {} (--override {}",
                        i + 1,
                        flat(&o.pairing)
                    ));
                    if let Some(b) = o.pairing.bye {
                        s.push_str(&format!(" --bye {}", b + 1));
                    }
                    s.push_str(")\n");
                    for (k, &(x, y)) in o.pairing.tables.iter().enumerate() {
                        s.push_str(&format!(
                            "  table {}: {} ({}) - {} ({})\n",
                            k + 1,
                            self.teams[x],
                            x + 1,
                            self.teams[y],
                            y + 1
                        ));
                    }
                    if let Some(b) = o.pairing.bye {
                        s.push_str(&format!("  bye: {} ({})\n", self.teams[b], b + 1));
                    }
                    for p in &o.problems {
                        s.push_str(&format!("  breaks: {}\n", p.describe(&self.teams)));
                    }
                }
                s
            }
        })
    }
}

/// What `pair` prints, the override's log line (stderr), and an error after printing.
pub(super) struct PairOutcome {
    pub(super) out: String,
    pub(super) log: Option<String>,
    pub(super) error: Option<String>,
}

#[derive(Serialize)]
struct PairOut {
    round: u32,
    /// `[first, second]` draw numbers (1-based, team order in the file); first moves first.
    pairings: Vec<[u32; 2]>,
    names: Vec<[String; 2]>,
    bye: Option<u32>,
    bye_name: Option<String>,
    /// Present only for an organiser's override.
    #[serde(skip_serializing_if = "Option::is_none")]
    r#override: Option<OverrideOut>,
}

#[derive(Serialize)]
struct OverrideOut {
    by: String,
    reason: String,
    /// The engine's pairing, `null` when it found none.
    computed: Option<Vec<[u32; 2]>>,
    /// Rule breaches accepted with --allow-problems.
    accepted: Vec<ProblemOut>,
    log: String,
}

#[derive(Serialize)]
struct ProblemOut {
    code: &'static str,
    message: String,
}

#[derive(Serialize)]
struct NoPairingOut {
    round: u32,
    /// Always `null`: no valid pairing.
    pairings: Option<()>,
    options: Vec<OptionOut>,
}

#[derive(Serialize)]
struct OptionOut {
    pairings: Vec<[u32; 2]>,
    names: Vec<[String; 2]>,
    bye: Option<u32>,
    problems: Vec<ProblemOut>,
    cost: u64,
    /// The `--override` argument that chooses this option.
    r#override: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The --override and --bye texts: a pairing or a typed error, never a panic.
        #[test]
        fn override_text_never_panics(spec in ".{0,40}", bye in proptest::option::of(".{0,6}")) {
            let season = Season::parse(include_str!("../../../league/examples/season.json"));
            prop_assert!(season.is_ok());
            if let Ok(s) = season {
                if let Ok(p) = s.parse_override(&spec, bye.as_deref()) {
                    prop_assert!(p.tables.iter().all(|&(a, b)| a < s.teams.len() && b < s.teams.len()));
                }
            }
        }
    }

    #[test]
    fn override_text() {
        let Ok(s) = Season::parse(include_str!("../../../league/examples/season.json")) else {
            panic!("example");
        };
        let p = s.parse_override(" 2-1, 4-3 ", Some("1"));
        assert!(
            matches!(p, Ok(SwissPairing { ref tables, bye: Some(0) }) if tables == &[(1, 0), (3, 2)])
        );
        let e = |spec: &str| {
            s.parse_override(spec, None)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(e("2:1").contains("not a table"));
        assert!(e("2-9").contains("not a draw number 1–4"));
        assert!(e("").contains("no tables"));
    }
}
