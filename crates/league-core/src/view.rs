//! What a league's state says: match results and live scores, standings with the criterion
//! that separated each rank, the games the driver must set up next, the next instant the
//! driver must look again.

use chuhe_league::matches::{MatchRecord, MatchResult, evaluate_match};
use chuhe_league::standings::{
    Fixture, Penalty, StandingsInput, System as StandingsSystem, TeamMatch, Withdrawal, standings,
};
use chuhe_league::{Points, standings::Standings};

use super::event::{BoardKey, ColourName, ForfeitBy, TeamSide};
use super::state::League;
use crate::spec::System;

/// A match's result once every board has one (or it was forfeited).
pub fn match_result(l: &League, round: u32, table: u32) -> Option<MatchResult> {
    let record = match_record(l, round, table)?;
    evaluate_match(&l.rules_of(round).event, &record).ok()
}

/// Whether a match's record is known, as `chuhe-league` reads it.
pub fn match_record(l: &League, round: u32, table: u32) -> Option<MatchRecord> {
    let t = l.table(round, table)?;
    if let Some(by) = t.forfeit {
        return Some(match by {
            ForfeitBy::First => MatchRecord::Forfeit {
                forfeited_by: chuhe_league::Side::First,
            },
            ForfeitBy::Second => MatchRecord::Forfeit {
                forfeited_by: chuhe_league::Side::Second,
            },
            ForfeitBy::Both => MatchRecord::DoubleForfeit,
        });
    }
    let mut boards = Vec::with_capacity(t.boards.len());
    for b in 1..=t.boards.len() as u32 {
        boards.push(l.board_record(BoardKey {
            round,
            table,
            board: b,
        })?);
    }
    let record = MatchRecord::Played(boards);
    evaluate_match(&l.rules_of(round).event, &record)
        .ok()
        .map(|_| record)
}

/// Whether a stage has played everything its system plays: a round robin's every round, a
/// Swiss's number of rounds, a knockout's final.
pub fn stage_complete(l: &League, stage: u32) -> bool {
    let rounds: Vec<_> = l.stage_rounds(stage).collect();
    let Some(last) = rounds.last() else {
        return false;
    };
    if rounds.iter().any(|r| !r.completed) {
        return false;
    }
    match l.rules.stage(stage).system {
        System::RoundRobin { .. } => true,
        System::Swiss { rounds: n } => rounds.len() as u32 >= n,
        System::Knockout => last.tables.len() + last.byes.len() <= 1,
    }
}

/// The live 局分 of a match: the points of the boards decided so far, [first, second].
pub fn live_score(l: &League, round: u32, table: u32) -> [Points; 2] {
    if let Some(m) = match_result(l, round, table) {
        return m.game_points;
    }
    let Some(t) = l.table(round, table) else {
        return [Points::ZERO; 2];
    };
    let mut sum = [Points::ZERO; 2];
    for b in 1..=t.boards.len() as u32 {
        let at = BoardKey {
            round,
            table,
            board: b,
        };
        if let Some(rec) = l.board_record(at) {
            let rules = &l.rules_of(round).event;
            if let Ok(r) =
                chuhe_league::chain::evaluate_board(&rules.chain, &rules.game_scoring, b, &rec)
            {
                sum[0] += r.points[0];
                sum[1] += r.points[1];
            }
        }
    }
    sum
}

/// A stage's standings and what its printouts need, in the stage's own numbering: team `i`
/// is `teams[i]` of the league (its `i`-th seed), round `k` the stage's `k`-th.
#[derive(Debug, Clone)]
pub struct StageTables {
    pub stage: u32,
    /// The stage's teams (league indices) by local index.
    pub teams: Vec<usize>,
    /// The league's round number of each of the stage's rounds, by local number − 1.
    pub rounds: Vec<u32>,
    pub standings: Standings,
    pub matches: Vec<TeamMatch>,
    /// Swiss byes (local round, local team).
    pub byes: Vec<(u32, usize)>,
}

/// A 12.5 (队员总分制) stage's ranking: every entrant's individual standing from its games,
/// and the teams by the sum of their entrants' individual ranks (1999 15.5, 2011 14.8) —
/// `chuhe_league::lineup::rank_total_score`. Indices are the stage's, as in [`StageTables`].
#[derive(Debug, Clone)]
pub struct TotalScoreTables {
    pub stage: u32,
    /// The stage's teams (league indices) by local index.
    pub teams: Vec<usize>,
    /// Every entrant: (local team, name), by individual index.
    pub players: Vec<(usize, String)>,
    pub individual: Vec<chuhe_league::individual::IndividualRow>,
    pub rows: Vec<chuhe_league::lineup::TotalScoreRow>,
}

/// A 12.5 stage's individual and team rankings (None: not a 12.5 event, or a knockout).
pub fn total_score_tables(l: &League, stage: u32) -> Option<Result<TotalScoreTables, String>> {
    use chuhe_league::chain::{BoardRecord, GameResult};
    use chuhe_league::individual::{
        IndividualGame, IndividualInput, IndividualResult, chains, individual_standings,
    };
    if l.rules.lineup.system != chuhe_league::lineup::LineupSystem::TotalScore {
        return None;
    }
    let rules = l.rules.stage(stage);
    let criteria = match rules.system {
        System::RoundRobin { .. } => chains::ROUND_ROBIN_2011,
        System::Swiss { .. } => chains::SWISS_2011_OPPONENTS,
        System::Knockout => return None,
    };
    let teams = l.stages.get(stage.checked_sub(1)? as usize)?.clone();
    let mut players = Vec::new();
    let mut index = std::collections::BTreeMap::new();
    for (k, &team) in teams.iter().enumerate() {
        for p in l.rules.rosters[team].players() {
            index.insert((team, p.name.clone()), players.len());
            players.push((k, p.name.clone()));
        }
    }
    let mut games = Vec::new();
    for (ri, r) in l.stage_rounds(stage).enumerate() {
        for (k, t) in r.tables.iter().enumerate() {
            let table = k as u32 + 1;
            for board in 1..=t.boards.len() as u32 {
                let at = BoardKey {
                    round: r.number,
                    table,
                    board,
                };
                let (Some(record), Some(first), Some(second)) = (
                    l.board_record(at),
                    l.player_of(t, TeamSide::First, board),
                    l.player_of(t, TeamSide::Second, board),
                ) else {
                    continue;
                };
                let (Some(&a), Some(&b)) = (
                    index.get(&(t.teams[0], first.1)),
                    index.get(&(t.teams[1], second.1)),
                ) else {
                    continue;
                };
                // Each game counts in the individual event; a forfeited board is one game
                // won by forfeit (or, forfeited by both, lost by both) with 13.2's colours.
                let game = |first_colour: chuhe_league::Colour, result, fouls: [u32; 2]| {
                    let (red, black) = match first_colour {
                        chuhe_league::Colour::Red => (a, b),
                        chuhe_league::Colour::Black => (b, a),
                    };
                    let f = match first_colour {
                        chuhe_league::Colour::Red => fouls,
                        chuhe_league::Colour::Black => [fouls[1], fouls[0]],
                    };
                    IndividualGame {
                        round: ri as u32 + 1,
                        red,
                        black,
                        result,
                        fouls: f,
                    }
                };
                match record {
                    BoardRecord::Played(_) => {
                        // Each game as scored by its stage's draw rule (a drawn armageddon is
                        // Black's win).
                        let Ok(evaluated) = chuhe_league::chain::evaluate_board(
                            &rules.event.chain,
                            &rules.event.game_scoring,
                            board,
                            &record,
                        ) else {
                            continue;
                        };
                        for sg in evaluated.games {
                            let g = sg.game;
                            let first_red = g.first_colour == chuhe_league::Colour::Red;
                            let result = match (sg.scored, first_red) {
                                (GameResult::Draw, _) => IndividualResult::Draw,
                                (GameResult::FirstWins, true) | (GameResult::SecondWins, false) => {
                                    IndividualResult::RedWins
                                }
                                _ => IndividualResult::BlackWins,
                            };
                            games.push(game(g.first_colour, result, g.fouls));
                        }
                    }
                    BoardRecord::Forfeit { forfeited_by } => {
                        let colour =
                            chuhe_league::colour::side_colour(chuhe_league::Side::First, board);
                        let first_forfeits = forfeited_by == chuhe_league::Side::First;
                        let red_forfeits = first_forfeits == (colour == chuhe_league::Colour::Red);
                        let result = if red_forfeits {
                            IndividualResult::RedForfeits
                        } else {
                            IndividualResult::BlackForfeits
                        };
                        games.push(game(colour, result, [0, 0]));
                    }
                    // Both forfeited the board, or both lost its game (21.3 双方弃: both past
                    // the lateness limit): a game lost by both, each `-`.
                    BoardRecord::DoubleForfeit => {
                        let colour =
                            chuhe_league::colour::side_colour(chuhe_league::Side::First, board);
                        games.push(game(colour, IndividualResult::BothForfeit, [0, 0]));
                    }
                }
            }
        }
    }
    let individual = match individual_standings(IndividualInput {
        player_count: players.len(),
        scoring: rules.event.game_scoring,
        criteria,
        games,
        byes: Vec::new(),
        penalties: std::collections::BTreeMap::new(),
    }) {
        Ok(rows) => rows,
        Err(e) => return Some(Err(e.to_string())),
    };
    let mut ranks = vec![Vec::new(); teams.len()];
    let mut fouls = vec![0u32; teams.len()];
    for row in &individual {
        let team = players[row.player].0;
        ranks[team].push(row.rank);
        fouls[team] += row.fouls;
    }
    let rows = chuhe_league::lineup::rank_total_score(&ranks, &fouls);
    Some(Ok(TotalScoreTables {
        stage,
        teams,
        players,
        individual,
        rows,
    }))
}

/// Teams (league indices), best first, with their ranks (shared when tied; None: unranked).
pub type Ranking = Vec<(usize, Option<u32>)>;

/// A stage's teams best first with their ranks, by its standings — or, in a 12.5 event, by its
/// rank sums.
pub fn stage_ranking(l: &League, stage: u32) -> Option<Result<Ranking, String>> {
    if let Some(t) = total_score_tables(l, stage) {
        return Some(t.map(|t| {
            t.rows
                .iter()
                .map(|r| (t.teams[r.team], Some(r.rank)))
                .collect()
        }));
    }
    let t = stage_tables(l, stage)?;
    Some(t.map(|t| {
        t.standings
            .rows
            .iter()
            .map(|r| (t.teams[r.team], r.rank))
            .collect()
    }))
}

/// The stage whose standings are shown by default: the one being played, or, if it is a
/// knockout, the last one before it with standings (None: there is none).
pub fn standings_stage(l: &League) -> Option<u32> {
    (1..=l.current_stage())
        .rev()
        .find(|s| l.rules.stage(*s).system != System::Knockout)
}

/// A stage's standings from every match with a result so far (withdrawals and byes applied
/// as the rules say). A knockout has a bracket, not standings: None.
pub fn stage_tables(l: &League, stage: u32) -> Option<Result<StageTables, String>> {
    let rules = l.rules.stage(stage);
    let system = match rules.system {
        System::RoundRobin { legs } => StandingsSystem::RoundRobin { legs },
        System::Swiss { .. } => StandingsSystem::Swiss,
        System::Knockout => return None,
    };
    let teams = l.stages.get(stage.checked_sub(1)? as usize)?.clone();
    let local = |team: usize| teams.iter().position(|t| *t == team);
    let rounds: Vec<&super::state::Round> = l.stage_rounds(stage).collect();
    let mut matches = Vec::new();
    let mut schedule = Vec::new();
    let mut byes = Vec::new();
    for (i, r) in rounds.iter().enumerate() {
        let number = i as u32 + 1;
        for (k, t) in r.tables.iter().enumerate() {
            let (Some(first), Some(second)) = (local(t.teams[0]), local(t.teams[1])) else {
                return Some(Err(format!(
                    "round {} has a team outside stage {stage}",
                    r.number
                )));
            };
            schedule.push(Fixture {
                round: number,
                first,
                second,
            });
            // A withdrawn team's later matches count once their forfeit is entered, when
            // their round comes (`settle`), so the table after round N holds rounds ≤ N only.
            if let Some(result) = match_result(l, r.number, k as u32 + 1) {
                matches.push(TeamMatch {
                    round: number,
                    first,
                    second,
                    result,
                });
            }
        }
        byes.extend(r.byes.iter().filter_map(|b| local(*b)).map(|b| (number, b)));
    }
    // A withdrawal's round in the stage's numbering: the stage's rounds played before it left.
    let withdrawals: Vec<Withdrawal> = l
        .withdrawals
        .iter()
        .filter_map(|w| {
            Some(Withdrawal {
                team: local(w.team)?,
                after_round: rounds.iter().filter(|r| r.number <= w.after_round).count() as u32,
                expelled: w.expelled,
            })
        })
        .collect();
    let penalties: Vec<Penalty> = Vec::new();
    let swiss = matches!(system, StandingsSystem::Swiss);
    let byes = if swiss { byes } else { Vec::new() };
    Some(
        standings(StandingsInput {
            team_count: teams.len(),
            system,
            rules: &rules.event,
            criteria: &rules.criteria,
            matches: matches.clone(),
            byes: byes.clone(),
            penalties,
            withdrawals,
            schedule: Some(schedule),
        })
        .map(|standings| StageTables {
            stage,
            rounds: rounds.iter().map(|r| r.number).collect(),
            teams: teams.clone(),
            standings,
            matches,
            byes,
        })
        .map_err(|e| e.to_string()),
    )
}

/// The standings shown by default ([`standings_stage`]'s), their teams as the league's
/// indices. A knockout has a bracket, not standings: None.
pub fn table_standings(l: &League) -> Option<Result<Standings, String>> {
    let t = stage_tables(l, standings_stage(l)?)?;
    Some(t.map(|t| {
        let mut st = t.standings;
        for r in &mut st.rows {
            r.team = t.teams[r.team];
        }
        st
    }))
}

/// The winner of a knockout stage, once its final has one.
pub fn knockout_winner(l: &League, stage: u32) -> Option<usize> {
    if l.rules.stage(stage).system != System::Knockout || !stage_complete(l, stage) {
        return None;
    }
    let last = l.stage_rounds(stage).last()?;
    if let ([t], []) = (last.tables.as_slice(), last.byes.as_slice()) {
        let m = match_result(l, last.number, 1)?;
        let side = TeamSide::of_league(m.winner?);
        return Some(t.teams[side.index()]);
    }
    None
}

/// A chain game the driver must set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameWant {
    pub at: BoardKey,
    pub stage: u32,
    pub first_colour: ColourName,
    pub red: (i64, String),
    pub black: (i64, String),
    /// The instant its clocks start (a scheduled start).
    pub start_ms: u64,
    pub time_control: String,
    /// How often the board was ordered replayed (part of its games' keys).
    pub replays: u32,
}

impl GameWant {
    /// The idempotency key of its game in the store: one game per board, stage and replay,
    /// however often the driver tries (a restart between creating it and recording it).
    pub fn key(&self, league: i64) -> String {
        format!(
            "league/{league}/r{}/t{}/b{}/g{}/p{}",
            self.at.round, self.at.table, self.at.board, self.stage, self.replays
        )
    }
}

/// Every game that should exist by `now` and does not: a round's first games from
/// `games_open_before` its start (once the lineups are revealed), and the next game of a
/// board whose game ended without deciding it (colours known).
pub fn wanted_games(l: &League, now: u64) -> Vec<GameWant> {
    let mut out = Vec::new();
    if !l.published {
        return out;
    }
    for r in &l.rounds {
        for (k, t) in r.tables.iter().enumerate() {
            let table = k as u32 + 1;
            if t.revealed.is_none()
                || t.forfeit.is_some()
                || t.teams
                    .iter()
                    .any(|&team| l.withdrawn_before(team, r.number))
            {
                continue;
            }
            for (bi, b) in t.boards.iter().enumerate() {
                let at = BoardKey {
                    round: r.number,
                    table,
                    board: bi as u32 + 1,
                };
                if b.set.is_some() || l.board_record(at).is_some() {
                    continue;
                }
                let (stage, start_ms) = match b.games.last() {
                    None => {
                        let start = b
                            .replayed_at_ms
                            .map_or(r.start_ms, |t| (t + l.rules.break_ms).max(r.start_ms));
                        // 12.4: a sub-round's games follow, a break later, once every game of
                        // the sub-round before has decided its board.
                        let n = l.rules.lineup.boards as usize;
                        let sub_round = bi / n.max(1);
                        if t.pairs.is_some() && sub_round > 0 {
                            let Some(done) = sub_round_decided(l, r.number, table, sub_round - 1)
                            else {
                                continue;
                            };
                            (0, start.max(done + l.rules.break_ms))
                        } else {
                            if now + l.rules.open_before_ms < start {
                                continue;
                            }
                            (0, start)
                        }
                    }
                    Some(last) => {
                        let Some(f) = &last.finished else { continue };
                        let next = last.stage + 1;
                        if next as usize >= l.rules_of(r.number).event.chain.stages().len() {
                            continue;
                        }
                        let mut start = f.at_ms + l.rules.break_ms;
                        if let Some(c) = b.choice.as_ref().filter(|c| c.stage == next) {
                            if c.chooser_colour.is_none() {
                                continue;
                            }
                            start = start.max(c.chosen_at_ms);
                        }
                        (next, start)
                    }
                };
                let Some(first_colour) = l.stage_colour(at, stage) else {
                    continue;
                };
                let (Some(first), Some(second)) = (
                    l.player_of(t, TeamSide::First, at.board),
                    l.player_of(t, TeamSide::Second, at.board),
                ) else {
                    continue;
                };
                let (red, black) = match first_colour {
                    ColourName::Red => (first, second),
                    ColourName::Black => (second, first),
                };
                let time_control = l.rules_of(r.number).event.chain.stages()[stage as usize]
                    .time_control
                    .as_str()
                    .to_string();
                out.push(GameWant {
                    at,
                    stage,
                    first_colour,
                    red,
                    black,
                    start_ms,
                    time_control,
                    replays: b.replays,
                });
            }
        }
    }
    out
}

/// 12.4: when sub-round `sub_round` (0-based) of a match had decided every one of its boards
/// (its last game's end; a board set by an arbiter counts from the round's start), or None
/// while one is still being played.
fn sub_round_decided(l: &League, round: u32, table: u32, sub_round: usize) -> Option<u64> {
    let n = l.rules.lineup.boards as usize;
    let t = l.table(round, table)?;
    let start = l.round(round)?.start_ms;
    let mut done = start;
    for bi in sub_round * n..(sub_round + 1) * n {
        let at = BoardKey {
            round,
            table,
            board: bi as u32 + 1,
        };
        l.board_record(at)?;
        let b = t.boards.get(bi)?;
        if let Some(f) = b.games.last().and_then(|g| g.finished.as_ref()) {
            done = done.max(f.at_ms);
        }
    }
    Some(done)
}

/// The next instant something becomes due (a deadline, a choice's deadline, a round's games
/// to set up), after `now`.
pub fn next_due(l: &League, now: u64) -> Option<u64> {
    if !l.published {
        return None;
    }
    let mut next: Option<u64> = None;
    let mut at = |t: u64| {
        if t > now {
            next = Some(next.map_or(t, |n| n.min(t)));
        }
    };
    for r in &l.rounds {
        for t in &r.tables {
            if t.revealed.is_none() {
                at(r.deadline_ms);
            }
            for b in &t.boards {
                if let Some(c) = b.choice.as_ref().filter(|c| c.chooser_colour.is_none()) {
                    at(c.deadline_ms);
                }
            }
        }
        if !r.started && !r.completed {
            at(r.start_ms);
        }
        if r.tables
            .iter()
            .any(|t| t.boards.iter().any(|b| b.games.is_empty()))
        {
            at(r.start_ms.saturating_sub(l.rules.open_before_ms));
        }
    }
    next
}
