//! The results file turned into domain values: teams, evaluated matches, byes, penalties,
//! withdrawals, with every error naming its JSON path and line.

use super::chain::{parse_board, parse_chain};
use super::file::*;
use super::lines::{Lines, json_lines};
use anyhow::{Result, anyhow, bail};
use chuhe_league::chain::GameScoring;
use chuhe_league::colour::Side;
use chuhe_league::fixtures::{RoundRobinOptions, round_robin};
use chuhe_league::knockout::KnockoutOptions;
use chuhe_league::matches::{EventRules, MatchRecord, MatchResult, MatchScoring, evaluate_match};
use chuhe_league::points::Points;
use chuhe_league::standings::{
    Fixture, Penalty, PenaltyKind, Standings, StandingsError, StandingsInput, System,
    TeamCriterion, TeamMatch, Withdrawal, chains, standings,
};
use chuhe_league::text::parse_date;
use std::collections::BTreeMap;

/// A parsed and validated results file.
pub(super) struct Season {
    pub(super) event: String,
    pub(super) system: System,
    pub(super) criteria: Vec<TeamCriterion>,
    pub(super) criteria_label: String,
    pub(super) rules: EventRules,
    pub(super) teams: Vec<String>,
    /// Each team's unit (参赛单位) as printed on score sheets; defaults to the team name.
    pub(super) units: Vec<String>,
    pub(super) matches: Vec<ParsedMatch>,
    pub(super) byes: Vec<(u32, usize)>,
    pub(super) penalties: Vec<Penalty>,
    pub(super) withdrawals: Vec<Withdrawal>,
    /// Knockout options, for a knockout file.
    pub(super) knockout: Option<KnockoutOptions>,
    /// The round robin's schedule, when the file gives it.
    pub(super) schedule: Option<Vec<Fixture>>,
    pub(super) lines: Lines,
}

pub(super) struct ParsedMatch {
    pub(super) round: u32,
    pub(super) table: Option<u32>,
    pub(super) date: String,
    pub(super) first: usize,
    pub(super) second: usize,
    pub(super) players: Vec<(String, String)>,
    /// `None` for a pending match (scheduled, not played).
    pub(super) result: Option<MatchResult>,
    /// Knockout: a tie's tiebreak match.
    pub(super) tiebreak: bool,
    /// Knockout: the third-place match.
    pub(super) third_place: bool,
}

/// Rounds are numbered 1 to this (a double round robin of 1,000 teams has 1,998 rounds).
const MAX_ROUND: u32 = 10_000;
const ROUND_RANGE: &str = "rounds are numbered from 1 to 10000";

pub(super) fn half_points(lines: &Lines, path: &str, v: f64) -> Result<Points> {
    let h = v * 2.0;
    if !h.is_finite() || h.fract() != 0.0 || h.abs() > 1e6 {
        return Err(lines.err(path, format!("{v} is not a whole or half point")));
    }
    Ok(Points::from_halves(h as i32))
}

impl Season {
    pub(super) fn parse(text: &str) -> Result<Season> {
        let file: ResultsFile =
            serde_json::from_str(text).map_err(|e| anyhow!("invalid results file: {e}"))?;
        let lines = Lines(json_lines(text));
        if file.boards == 0 || file.boards > 64 {
            return Err(lines.err("boards", "must be 1–64"));
        }
        let system = match file.system {
            SystemJson::RoundRobin => {
                let legs = file.legs.unwrap_or(1);
                if !(1..=2).contains(&legs) {
                    return Err(lines.err("legs", "a round robin has 1 or 2 legs"));
                }
                System::RoundRobin { legs }
            }
            SystemJson::Swiss => {
                if file.legs.is_some() {
                    return Err(lines.err("legs", "only for round robins and knockouts"));
                }
                System::Swiss
            }
            SystemJson::Knockout => {
                let legs = file.legs.unwrap_or(1);
                if !(1..=2).contains(&legs) {
                    return Err(lines.err("legs", "a knockout tie has 1 or 2 matches"));
                }
                // Standings do not apply; the knockout command reads `knockout` below.
                System::RoundRobin { legs }
            }
        };
        if file.system != SystemJson::Knockout
            && (file.third_place || file.tiebreak_chain.is_some())
        {
            let field = if file.third_place {
                "third_place"
            } else {
                "tiebreak_chain"
            };
            return Err(lines.err(field, "only for knockouts"));
        }
        let knockout = (file.system == SystemJson::Knockout).then(|| KnockoutOptions {
            legs: file.legs.unwrap_or(1),
            third_place: file.third_place,
        });
        let (criteria, criteria_label) = match (&file.ranking, file.system) {
            (_, SystemJson::Knockout) => (vec![], "knockout".to_string()),
            (None, SystemJson::RoundRobin) => {
                (chains::ROUND_ROBIN_2011.to_vec(), "2011 14.5".to_string())
            }
            (None, SystemJson::Swiss) => (chains::SWISS_2011.to_vec(), "2011 14.6".to_string()),
            (Some(RankingJson::Preset(p)), sys) => match (p.as_str(), sys) {
                ("2011", SystemJson::RoundRobin) => {
                    (chains::ROUND_ROBIN_2011.to_vec(), "2011 14.5".into())
                }
                ("2011", SystemJson::Swiss) => (chains::SWISS_2011.to_vec(), "2011 14.6".into()),
                ("1999", SystemJson::RoundRobin) => {
                    (chains::ROUND_ROBIN_1999.to_vec(), "1999 15.3".into())
                }
                ("1999", SystemJson::Swiss) => (chains::SWISS_1999.to_vec(), "1999 15.4".into()),
                ("2011-game-points", SystemJson::Swiss) => {
                    (chains::SWISS_2011_GAME_POINTS.to_vec(), "2011 14.7".into())
                }
                _ => {
                    return Err(lines.err(
                        "ranking",
                        format!("unknown preset {p:?} for this system (use \"2011\", \"1999\", \"2011-game-points\" for Swiss, or a list of criteria)"),
                    ));
                }
            },
            (Some(RankingJson::Criteria(list)), _) => {
                let mut v = Vec::new();
                for (i, c) in list.iter().enumerate() {
                    let crit = TeamCriterion::from_code(c).ok_or_else(|| {
                        lines.err(&format!("ranking[{i}]"), format!("unknown criterion {c:?}"))
                    })?;
                    v.push(crit);
                }
                if v.is_empty() {
                    return Err(lines.err("ranking", "needs at least one criterion"));
                }
                (v, "custom".into())
            }
        };
        let game_scoring = match &file.game_scoring {
            None => GameScoring::TWO_ONE_ZERO,
            Some(GameScoringJson::Preset(p)) => match p.as_str() {
                "2-1-0" => GameScoring::TWO_ONE_ZERO,
                "3-1-0" => GameScoring::THREE_ONE_ZERO,
                "3-0-asymmetric" => GameScoring::THREE_ZERO_ASYMMETRIC,
                "1-0.5-0" => GameScoring::ONE_HALF_ZERO,
                _ => {
                    return Err(lines.err(
                        "game_scoring",
                        format!("unknown preset {p:?} (use \"2-1-0\", \"3-1-0\", \"3-0-asymmetric\", \"1-0.5-0\" or an object)"),
                    ));
                }
            },
            Some(GameScoringJson::Custom(c)) => GameScoring {
                win: half_points(&lines, "game_scoring.win", c.win)?,
                loss: half_points(&lines, "game_scoring.loss", c.loss)?,
                draw_red: half_points(&lines, "game_scoring.draw_red", c.draw_red)?,
                draw_black: half_points(&lines, "game_scoring.draw_black", c.draw_black)?,
            },
        };
        let mut match_scoring = MatchScoring::default();
        if let Some(mp) = &file.match_points {
            let set = |v: Option<f64>, name: &str, slot: &mut Points| -> Result<()> {
                if let Some(v) = v {
                    *slot = half_points(&lines, &format!("match_points.{name}"), v)?;
                }
                Ok(())
            };
            set(mp.win, "win", &mut match_scoring.win)?;
            set(mp.draw, "draw", &mut match_scoring.draw)?;
            set(mp.loss, "loss", &mut match_scoring.loss)?;
            set(
                mp.forfeit_win,
                "forfeit_win",
                &mut match_scoring.forfeit_win,
            )?;
            set(
                mp.forfeit_loss,
                "forfeit_loss",
                &mut match_scoring.forfeit_loss,
            )?;
            set(
                mp.double_forfeit,
                "double_forfeit",
                &mut match_scoring.double_forfeit,
            )?;
        }
        if let Some(f) = &file.forfeits {
            if let Some([w, l]) = f.board {
                let w = half_points(&lines, "forfeits.board[0]", w)?;
                let l = half_points(&lines, "forfeits.board[1]", l)?;
                if l > w {
                    return Err(
                        lines.err("forfeits.board", "the loser's points exceed the winner's")
                    );
                }
                match_scoring.forfeit_board = Some([w, l]);
            }
            match &f.match_game_points {
                None => {}
                Some(MatchGamePointsJson::Preset(p)) if p == "boards" => {}
                Some(MatchGamePointsJson::Preset(p)) => {
                    return Err(lines.err(
                        "forfeits.match_game_points",
                        format!("unknown {p:?} (use \"boards\" or [winner, loser])"),
                    ));
                }
                Some(MatchGamePointsJson::Fixed([w, l])) => {
                    let w = half_points(&lines, "forfeits.match_game_points[0]", *w)?;
                    let l = half_points(&lines, "forfeits.match_game_points[1]", *l)?;
                    if l > w {
                        return Err(lines.err(
                            "forfeits.match_game_points",
                            "the loser's 局分 exceed the winner's",
                        ));
                    }
                    match_scoring.forfeit_match_game_points = Some([w, l]);
                }
            }
        }
        let chain = parse_chain(&lines, "result_chain", file.result_chain.as_ref())?;
        let rules = EventRules {
            boards: file.boards,
            game_scoring,
            chain,
            match_scoring,
        };
        let tiebreak_rules = match &file.tiebreak_chain {
            None => rules.clone(),
            Some(c) => EventRules {
                chain: parse_chain(&lines, "tiebreak_chain", Some(c))?,
                ..rules.clone()
            },
        };

        let mut teams: Vec<String> = Vec::new();
        let mut units: Vec<String> = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        if file.teams.len() < 2 {
            return Err(lines.err("teams", "at least 2 teams are needed"));
        }
        for (i, t) in file.teams.iter().enumerate() {
            let (name, unit) = match t {
                TeamJson::Name(n) => (n, None),
                TeamJson::Full { name, unit } => (name, unit.as_ref()),
            };
            let name = name.trim().to_string();
            units.push(unit.map_or_else(|| name.clone(), |u| u.trim().to_string()));
            let path = format!("teams[{i}]");
            if name.is_empty() {
                return Err(lines.err(&path, "team name is empty"));
            }
            if index.insert(name.clone(), i).is_some() {
                return Err(lines.err(&path, format!("team {name:?} is listed twice")));
            }
            teams.push(name);
        }
        let team = |path: &str, name: &str| -> Result<usize> {
            index
                .get(name.trim())
                .copied()
                .ok_or_else(|| lines.err(path, format!("unknown team {name:?}")))
        };
        // A meeting at `p`: its round checked, its two teams resolved and distinct.
        let meeting = |p: &str, round: u32, first: &str, second: &str| -> Result<(usize, usize)> {
            if !(1..=MAX_ROUND).contains(&round) {
                return Err(lines.err(&format!("{p}.round"), ROUND_RANGE));
            }
            let a = team(&format!("{p}.first"), first)?;
            let b = team(&format!("{p}.second"), second)?;
            if a == b {
                return Err(lines.err(p, "a team cannot play itself"));
            }
            Ok((a, b))
        };

        let mut matches = Vec::with_capacity(file.matches.len());
        for (i, m) in file.matches.iter().enumerate() {
            let p = format!("matches[{i}]");
            let (first, second) = meeting(&p, m.round, &m.first, &m.second)?;
            let date = m.date.clone().unwrap_or_default();
            if !date.is_empty() && parse_date(&date).is_none() {
                return Err(lines.err(
                    &format!("{p}.date"),
                    format!("{date:?} is not a date of the form YYYY-MM-DD"),
                ));
            }
            if m.pending {
                if m.forfeited_by.is_some() {
                    return Err(lines.err(
                        &p,
                        "a pending match has no result: drop \"forfeited_by\" or \"pending\"",
                    ));
                }
                let mut players = vec![(String::new(), String::new()); file.boards as usize];
                if let Some(boards) = &m.boards {
                    if boards.len() as u32 != file.boards {
                        return Err(lines.err(
                            &format!("{p}.boards"),
                            format!(
                                "{} boards given, the event has {}",
                                boards.len(),
                                file.boards
                            ),
                        ));
                    }
                    for (j, b) in boards.iter().enumerate() {
                        if b.games.is_some() || b.forfeited_by.is_some() {
                            return Err(lines.err(
                                &format!("{p}.boards[{j}]"),
                                "a pending match has no results: give the players only",
                            ));
                        }
                        players[j] = (
                            b.first_player.clone().unwrap_or_default(),
                            b.second_player.clone().unwrap_or_default(),
                        );
                    }
                }
                matches.push(ParsedMatch {
                    round: m.round,
                    table: m.table,
                    date,
                    first,
                    second,
                    players,
                    result: None,
                    tiebreak: m.tiebreak,
                    third_place: m.third_place,
                });
                continue;
            }
            let (record, players) = match (&m.boards, m.forfeited_by) {
                (Some(_), Some(_)) => {
                    return Err(
                        lines.err(&p, "give either \"boards\" or \"forfeited_by\", not both")
                    );
                }
                (None, None) => {
                    return Err(lines.err(
                        &p,
                        "needs \"boards\" (played), \"forfeited_by\" (whole-match forfeit) or \"pending\": true (not played yet)",
                    ));
                }
                (None, Some(f)) => (
                    match f {
                        ForfeitJson::First => MatchRecord::Forfeit {
                            forfeited_by: Side::First,
                        },
                        ForfeitJson::Second => MatchRecord::Forfeit {
                            forfeited_by: Side::Second,
                        },
                        ForfeitJson::Both => MatchRecord::DoubleForfeit,
                    },
                    vec![(String::new(), String::new()); file.boards as usize],
                ),
                (Some(boards), None) => {
                    if boards.len() as u32 != file.boards {
                        return Err(lines.err(
                            &format!("{p}.boards"),
                            format!(
                                "{} boards given, the event has {}",
                                boards.len(),
                                file.boards
                            ),
                        ));
                    }
                    let mut recs = Vec::with_capacity(boards.len());
                    let mut players = Vec::with_capacity(boards.len());
                    for (j, b) in boards.iter().enumerate() {
                        let bp = format!("{p}.boards[{j}]");
                        let chain = if m.tiebreak {
                            &tiebreak_rules.chain
                        } else {
                            &rules.chain
                        };
                        recs.push(parse_board(&lines, &bp, chain, j as u32 + 1, b)?);
                        players.push((
                            b.first_player.clone().unwrap_or_default(),
                            b.second_player.clone().unwrap_or_default(),
                        ));
                    }
                    (MatchRecord::Played(recs), players)
                }
            };
            if (m.tiebreak || m.third_place) && knockout.is_none() {
                let field = if m.tiebreak {
                    "tiebreak"
                } else {
                    "third_place"
                };
                return Err(lines.err(&format!("{p}.{field}"), "only for knockouts"));
            }
            let match_rules = if m.tiebreak { &tiebreak_rules } else { &rules };
            let result = evaluate_match(match_rules, &record).map_err(|e| lines.err(&p, e))?;
            matches.push(ParsedMatch {
                round: m.round,
                table: m.table,
                date,
                first,
                second,
                players,
                result: Some(result),
                tiebreak: m.tiebreak,
                third_place: m.third_place,
            });
        }
        let mut byes = Vec::new();
        for (i, b) in file.byes.iter().enumerate() {
            let p = format!("byes[{i}]");
            if file.system == SystemJson::RoundRobin {
                return Err(lines.err(
                    &p,
                    "byes are only recorded in a Swiss (round-robin byes score nothing)",
                ));
            }
            if !(1..=MAX_ROUND).contains(&b.round) {
                return Err(lines.err(&format!("{p}.round"), ROUND_RANGE));
            }
            byes.push((b.round, team(&format!("{p}.team"), &b.team)?));
        }
        let mut penalties = Vec::new();
        let mut withdrawals = Vec::new();
        let mut withdrawn = BTreeMap::new();
        for (i, pj) in file.penalties.iter().enumerate() {
            let _ = (&pj.round, &pj.note);
            let p = format!("penalties[{i}]");
            let t = team(&format!("{p}.team"), &pj.team)?;
            let kind = match (pj.kind, pj.after_round) {
                (PenaltyKindJson::Warning, None) => PenaltyKind::Warning,
                (PenaltyKindJson::Disqualification, None) => PenaltyKind::Disqualification,
                (PenaltyKindJson::Expulsion, Some(after_round)) => {
                    if after_round > MAX_ROUND {
                        return Err(lines.err(&format!("{p}.after_round"), ROUND_RANGE));
                    }
                    // 18.3: 对除名者,按退出处理 — an expulsion is a withdrawal, shown apart.
                    if withdrawn.insert(t, ()).is_some() {
                        return Err(lines.err(&p, format!("team {:?} is expelled twice", pj.team)));
                    }
                    withdrawals.push(Withdrawal {
                        team: t,
                        after_round,
                        expelled: true,
                    });
                    continue;
                }
                (PenaltyKindJson::Expulsion, None) => {
                    return Err(lines.err(
                        &p,
                        "an expulsion (18.3) needs \"after_round\": the team's last round",
                    ));
                }
                (_, Some(_)) => {
                    return Err(lines.err(
                        &format!("{p}.after_round"),
                        "only an expulsion has a last round",
                    ));
                }
            };
            penalties.push(Penalty { team: t, kind });
        }
        for (i, w) in file.withdrawals.iter().enumerate() {
            let p = format!("withdrawals[{i}]");
            let t = team(&format!("{p}.team"), &w.team)?;
            if withdrawn.insert(t, ()).is_some() {
                return Err(lines.err(
                    &p,
                    format!("team {:?} withdraws twice (or is also expelled)", w.team),
                ));
            }
            if w.after_round > MAX_ROUND {
                return Err(lines.err(&format!("{p}.after_round"), ROUND_RANGE));
            }
            withdrawals.push(Withdrawal {
                team: t,
                after_round: w.after_round,
                expelled: false,
            });
        }
        let schedule = match &file.schedule {
            None => None,
            Some(sj) => {
                let System::RoundRobin { legs } = system else {
                    return Err(lines.err("schedule", "only for round robins"));
                };
                Some(match sj {
                    ScheduleJson::Preset(p) => {
                        let swap = match p.as_str() {
                            "berger" => false,
                            "berger-swap-last-two" => true,
                            _ => {
                                return Err(lines.err(
                                    "schedule",
                                    format!("unknown schedule {p:?} (use \"berger\", \"berger-swap-last-two\" or a list of {{\"round\", \"first\", \"second\"}})"),
                                ));
                            }
                        };
                        let rounds = round_robin(
                            teams.len() as u32,
                            RoundRobinOptions {
                                legs,
                                swap_last_two_rounds_of_first_leg: swap,
                            },
                        )
                        .map_err(|e| lines.err("schedule", e))?;
                        rounds
                            .iter()
                            .flat_map(|r| {
                                r.pairings.iter().map(|p| Fixture {
                                    round: r.number,
                                    first: p.first as usize - 1,
                                    second: p.second as usize - 1,
                                })
                            })
                            .collect()
                    }
                    ScheduleJson::Fixtures(list) => {
                        let mut out = Vec::with_capacity(list.len());
                        for (i, f) in list.iter().enumerate() {
                            let p = format!("schedule[{i}]");
                            let (first, second) = meeting(&p, f.round, &f.first, &f.second)?;
                            out.push(Fixture {
                                round: f.round,
                                first,
                                second,
                            });
                        }
                        out
                    }
                })
            }
        };
        Ok(Season {
            knockout,
            schedule,
            event: file.event,
            system,
            criteria,
            criteria_label,
            rules,
            teams,
            units,
            matches,
            byes,
            penalties,
            withdrawals,
            lines,
        })
    }

    pub(super) fn standings(&self) -> Result<Standings> {
        if self.knockout.is_some() {
            bail!("a knockout has no standings table: use `chuhe league knockout`");
        }
        standings(StandingsInput {
            team_count: self.teams.len(),
            system: self.system,
            rules: &self.rules,
            criteria: &self.criteria,
            matches: self.team_matches(),
            byes: self.byes.clone(),
            penalties: self.penalties.clone(),
            withdrawals: self.withdrawals.clone(),
            schedule: self.schedule.clone(),
        })
        .map_err(|e| self.standings_error(e))
    }

    /// The file's matches as the library sees them.
    pub(super) fn team_matches(&self) -> Vec<TeamMatch> {
        self.matches
            .iter()
            .filter_map(|m| {
                Some(TeamMatch {
                    round: m.round,
                    first: m.first,
                    second: m.second,
                    result: m.result.clone()?,
                })
            })
            .collect()
    }

    /// A library error, with team names, the offending match's path and its line.
    fn standings_error(&self, e: StandingsError) -> anyhow::Error {
        let name = |t: usize| {
            self.teams
                .get(t)
                .map_or_else(|| t.to_string(), |n| format!("{n:?}"))
        };
        // The last match (in file order) satisfying `f`, as a path.
        let find = |f: &dyn Fn(&ParsedMatch) -> bool| {
            self.matches
                .iter()
                .rposition(f)
                .map_or_else(|| "matches".to_string(), |i| format!("matches[{i}]"))
        };
        match e {
            StandingsError::TwiceInRound { team, round } => {
                let in_matches = self
                    .matches
                    .iter()
                    .filter(|m| m.round == round && (m.first == team || m.second == team))
                    .count();
                let path = if in_matches >= 2 {
                    find(&|m| m.round == round && (m.first == team || m.second == team))
                } else {
                    self.byes
                        .iter()
                        .position(|&(r, t)| r == round && t == team)
                        .map_or_else(|| "byes".to_string(), |i| format!("byes[{i}]"))
                };
                self.lines.err(
                    &path,
                    format!("team {} plays more than once in round {round}", name(team)),
                )
            }
            StandingsError::TooManyMeetings { a, b, times, legs } => {
                let path =
                    find(&|m| (m.first == a && m.second == b) || (m.first == b && m.second == a));
                self.lines.err(
                    &path,
                    format!("teams {} and {} meet {times} times; a {legs}-leg round robin allows {legs}", name(a), name(b)),
                )
            }
            StandingsError::AfterWithdrawal {
                team,
                after_round,
                round,
            } => {
                let path = find(&|m| m.round == round && (m.first == team || m.second == team));
                self.lines.err(
                    &path,
                    format!(
                        "team {} withdrew after round {after_round} but plays in round {round}",
                        name(team)
                    ),
                )
            }
            StandingsError::MeetingRoundUnknown { a, b, after } => self.lines.err(
                "withdrawals",
                format!(
                    "teams {} and {} withdrew (after rounds {} and {}) without meeting; give \"schedule\" (\"berger\" or the list of fixtures) so the rules can tell whether their meeting was due before {} left (a forfeit win for {}) or after (no result)",
                    name(a),
                    name(b),
                    after[0],
                    after[1],
                    name(b),
                    name(b)
                ),
            ),
            StandingsError::NotScheduled { a, b } => {
                let path =
                    find(&|m| (m.first == a && m.second == b) || (m.first == b && m.second == a));
                self.lines.err(
                    &path,
                    format!(
                        "teams {} and {} meet more often than the schedule has them meet",
                        name(a),
                        name(b)
                    ),
                )
            }
            other => anyhow!("{other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The results file is the input every `chuhe league` command reads from a user: any bytes
    //! give a season or a typed error, never a panic, and whatever parses can be rendered.
    use super::*;
    use proptest::prelude::*;

    const EXAMPLE: &str = include_str!("../../../league/examples/season.json");

    /// Runs everything a parsed season feeds: no panic allowed (errors are fine).
    fn exercise(season: &Season) {
        if let Ok(table) = season.standings() {
            let _ = season.standings_json(&table, Some(1));
        }
        let _ = season.sheets(None, false);
        let _ = season.sheets(Some(1), true);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
            if let Ok(s) = Season::parse(&String::from_utf8_lossy(&bytes)) {
                exercise(&s);
            }
        }

        /// The example with a few bytes replaced, inserted or cut: near-valid files reach every
        /// check of the parser.
        #[test]
        fn mutated_example_never_panics(
            edits in prop::collection::vec((0usize..EXAMPLE.len(), 0usize..3, prop::sample::select(vec![
                "0", "1", "9", "-1", "4294967295", "1e9", "0.25", "\"", ",", "{", "}", "[", "]",
                ":", "null", "true", "\"first\"", "\"both\"", "\"black\"", "\"swiss\"",
                "\"knockout\"", "\"2011-game-points\"", "\"\"", "\"\\u0000\"", "\"=1+1\"",
            ])), 1..6),
        ) {
            let mut text = EXAMPLE.as_bytes().to_vec();
            for (at, kind, token) in edits {
                let at = at.min(text.len());
                match kind {
                    0 => {
                        let end = (at + token.len()).min(text.len());
                        text.splice(at..end, token.bytes());
                    }
                    1 => {
                        text.splice(at..at, token.bytes());
                    }
                    _ => {
                        let end = (at + 8).min(text.len());
                        text.drain(at..end);
                    }
                }
            }
            if let Ok(s) = Season::parse(&String::from_utf8_lossy(&text)) {
                exercise(&s);
            }
        }
    }

    #[test]
    fn the_example_parses() {
        let s = Season::parse(EXAMPLE);
        assert!(s.is_ok());
        if let Ok(s) = s {
            exercise(&s);
        }
    }
}
