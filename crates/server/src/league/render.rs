//! The league's views as JSON, from a snapshot of the league alone: a match as a viewer may see
//! it, the standings' JSON body, a decided match's result. The HTTP routes (`api.rs`) answer
//! with them, and the event feeds (`GET …/feed` in `feed_http.rs`, `leagueSubscribe` with
//! `feed` in `ws.rs`) send them after the entries that call for them.

use serde_json::{Value, json};

use super::core::{
    BoardKey, ColourName, League, Revealed, StageTables, TeamSide, TotalScoreTables, live_score,
    match_result, stage_tables, standings_stage, total_score_tables,
};
use super::datetime::format_instant;
use crate::persist::Role;
use crate::request::Principal;

pub(super) fn is_official(l: &League, p: &Principal) -> bool {
    match p.role() {
        Some(Role::Organizer) => true,
        Some(Role::Arbiter) => p.id().is_some_and(|id| l.arbiters.contains(&id)),
        _ => false,
    }
}

/// The team whose captain `p` is, if any.
fn captain_of(l: &League, p: &Principal) -> Option<usize> {
    let id = p.id()?;
    l.teams
        .iter()
        .position(|t| t.accounts.captains.contains(&id))
}

pub(super) fn side_name(s: TeamSide) -> &'static str {
    match s {
        TeamSide::First => "first",
        TeamSide::Second => "second",
    }
}

pub(super) fn colour_name(c: ColourName) -> &'static str {
    match c {
        ColourName::Red => "red",
        ColourName::Black => "black",
    }
}

/// A match as `viewer` may see it: the lineups once revealed (a captain also sees its own
/// sealed one), every board's games and results, the live score.
pub(super) fn table_json(
    l: &League,
    round: u32,
    table: u32,
    viewer: Option<&Principal>,
) -> Option<Value> {
    let r = l.round(round)?;
    let t = l.table(round, table)?;
    let own = viewer.and_then(|p| captain_of(l, p));
    let official = viewer.is_some_and(|p| is_official(l, p));
    let lineups: Vec<Value> = (0..2)
        .map(|i| match &t.revealed {
            Some(rev) => match &rev[i] {
                Revealed::Submitted { players } => {
                    json!({"revealed": true, "how": "submitted", "players": players})
                }
                Revealed::RegisteredOrder { players } => {
                    json!({"revealed": true, "how": "registered_order", "players": players})
                }
                Revealed::Forfeit => json!({"revealed": true, "how": "forfeit", "players": []}),
            },
            // Sealed: only the team's own captain (or an official) sees it — and nobody else
            // learns even whether it was submitted.
            None if own == Some(t.teams[i]) || official => json!({
                "revealed": false,
                "submitted": t.submitted[i].is_some(),
                "players": t.submitted[i].clone().unwrap_or_default(),
            }),
            None => json!({"revealed": false}),
        })
        .collect();
    let boards: Vec<Value> = t
        .boards
        .iter()
        .enumerate()
        .map(|(bi, b)| {
            let at = BoardKey { round, table, board: bi as u32 + 1 };
            let games: Vec<Value> = b
                .games
                .iter()
                .map(|g| {
                    json!({
                        "stage": g.stage,
                        "stageName": l.rules_of(round).event.chain.stages().get(g.stage as usize).map(|s| s.name.clone()),
                        "gameId": g.game.to_string(),
                        "firstColour": colour_name(g.first_colour),
                        "redId": g.red.to_string(),
                        "blackId": g.black.to_string(),
                        "startsAt": format_instant(g.start_ms),
                        "result": g.finished.as_ref().map(|f| json!({
                            "outcome": f.outcome,
                            "reason": f.reason,
                            "fouls": f.fouls,
                        })),
                    })
                })
                .collect();
            let result = l.board_record(at).and_then(|rec| {
                let rules = &l.rules_of(round).event;
                chuhe_league::chain::evaluate_board(&rules.chain, &rules.game_scoring, at.board, &rec).ok()
            });
            json!({
                "board": at.board,
                "games": games,
                "choice": b.choice.as_ref().map(|c| json!({
                    "stage": c.stage,
                    "chooser": side_name(c.chooser),
                    "deadline": format_instant(c.deadline_ms),
                    "chooserColour": c.chooser_colour.map(colour_name),
                })),
                "setByArbiter": b.set.is_some(),
                "points": result.as_ref().map(|r| [r.points[0].to_decimal(), r.points[1].to_decimal()]),
                "winner": result.as_ref().and_then(|r| r.winner).map(|s| side_name(TeamSide::of_league(s))),
            })
        })
        .collect();
    let score = live_score(l, round, table);
    let m = match_result(l, round, table);
    Some(json!({
        "round": round,
        "stage": r.stage,
        "table": table,
        "startsAt": format_instant(r.start_ms),
        "lineupDeadline": format_instant(r.deadline_ms),
        "first": {"team": t.teams[0], "name": l.teams[t.teams[0]].name},
        "second": {"team": t.teams[1], "name": l.teams[t.teams[1]].name},
        "lineups": lineups,
        "forfeit": t.forfeit,
        "boards": boards,
        "gamePoints": [score[0].to_decimal(), score[1].to_decimal()],
        "matchPoints": m.as_ref().map(|m| [m.match_points[0].to_decimal(), m.match_points[1].to_decimal()]),
        "finished": m.is_some(),
    }))
}

/// The tables the standings are drawn from: a 12.5 total-score stage's, or a stage's standings
/// and matches.
pub(super) enum Standings {
    TotalScore(TotalScoreTables),
    Stage(StageTables),
}

/// Why a stage has no standings.
pub(super) enum NoStandings {
    /// No stage with that number; the event has this many.
    NoStage(u32, usize),
    /// The stage has not begun.
    NotBegun,
    /// A knockout: a bracket, not standings.
    Knockout,
    /// Computing them failed.
    Failed(String),
}

/// The standings of stage `stage` (default: the stage being played, or the last one before it
/// with standings).
pub(super) fn standings_tables(l: &League, stage: Option<u32>) -> Result<Standings, NoStandings> {
    let stage = match stage {
        Some(s) if s == 0 || s as usize > l.rules.stages.len() => {
            return Err(NoStandings::NoStage(s, l.rules.stages.len()));
        }
        Some(s) => Some(s),
        None => standings_stage(l),
    };
    if let Some(t) = stage.and_then(|s| total_score_tables(l, s)) {
        return t.map(Standings::TotalScore).map_err(NoStandings::Failed);
    }
    match stage.and_then(|s| stage_tables(l, s)) {
        None if stage.is_some_and(|s| s > l.current_stage()) => Err(NoStandings::NotBegun),
        None => Err(NoStandings::Knockout),
        Some(Err(e)) => Err(NoStandings::Failed(e)),
        Some(Ok(t)) => Ok(Standings::Stage(t)),
    }
}

/// A 12.5 total-score tie-break's code (empty when the rank sum alone decides).
pub(super) fn decided_code(c: Option<chuhe_league::lineup::TotalScoreCriterion>) -> String {
    use chuhe_league::lineup::TotalScoreCriterion;
    match c {
        None => String::new(),
        Some(TotalScoreCriterion::RankSum) => "rank_sum".into(),
        Some(TotalScoreCriterion::BestRank(n)) => format!("best_rank_{n}"),
        Some(TotalScoreCriterion::Fouls) => "fouls".into(),
    }
}

/// A stage's standings as JSON (`GET …/standings` without `format`).
pub(super) fn stage_standings_json(l: &League, t: &StageTables) -> Value {
    // The stage's teams, in its own numbering.
    let names: Vec<String> = t.teams.iter().map(|i| l.teams[*i].name.clone()).collect();
    let rules = l.rules.stage(t.stage);
    let rows: Vec<Value> = t
        .standings
        .rows
        .iter()
        .map(|r| {
            json!({
                "team": t.teams[r.team],
                "name": names[r.team],
                "rank": r.rank,
                "decidedBy": r.decided_by.map(|c| c.code()),
                "played": r.played,
                "won": r.won,
                "drawn": r.drawn,
                "lost": r.lost,
                "matchPoints": r.match_points.to_decimal(),
                "gamePoints": r.game_points.to_decimal(),
                "gameWins": r.game_wins,
                "fouls": r.fouls,
                "blackWins": r.black_wins,
                "blackGames": r.black_games,
                "withdrawn": r.withdrawal.is_some(),
                "expelled": r.expelled,
            })
        })
        .collect();
    json!({
        "league": l.id.to_string(),
        "stage": t.stage,
        "criteria": rules.criteria.iter().map(|c| c.code()).collect::<Vec<_>>(),
        "rows": rows,
        "completedRounds": l.stage_rounds(t.stage).filter(|r| r.completed).count(),
    })
}

/// A 12.5 total-score stage's standings as JSON: the teams by their entrants' rank sums, and
/// the individual table they come from.
pub(super) fn total_score_json(l: &League, t: &TotalScoreTables) -> Value {
    let decided = decided_code;
    let rows: Vec<Value> = t
        .rows
        .iter()
        .map(|r| {
            json!({
                "team": t.teams[r.team],
                "name": l.teams[t.teams[r.team]].name,
                "rank": r.rank,
                "rankSum": r.rank_sum,
                "decidedBy": r.decided_by.map(|c| decided(Some(c))),
            })
        })
        .collect();
    let players: Vec<Value> = t
        .individual
        .iter()
        .map(|r| {
            let (team, name) = &t.players[r.player];
            json!({
                "rank": r.rank,
                "player": name,
                "team": t.teams[*team],
                "games": r.games,
                "points": r.points.to_decimal(),
                "wins": r.wins,
                "fouls": r.fouls,
                "decidedBy": r.decided_by.map(|c| c.code()),
            })
        })
        .collect();
    json!({
        "league": l.id.to_string(),
        "stage": t.stage,
        "lineupSystem": "total_score",
        "criteria": ["rank_sum", "best_rank", "fouls"],
        "rows": rows,
        "players": players,
        "completedRounds": l.stage_rounds(t.stage).filter(|r| r.completed).count(),
    })
}

/// The standings as `GET /api/v1/leagues/{id}/standings` answers them (JSON text) for `l`, for
/// the event feeds; None when the event has none.
pub(crate) fn standings_json(l: &League) -> Option<String> {
    let v = match standings_tables(l, None).ok()? {
        Standings::TotalScore(t) => total_score_json(l, &t),
        Standings::Stage(t) => stage_standings_json(l, &t),
    };
    Some(v.to_string())
}

/// A match's result for the event feeds once it is decided: the teams, 局分 and 场分 (as in
/// `GET …/rounds/{round}/tables/{table}`); None while it is not.
pub(crate) fn match_result_json(l: &League, round: u32, table: u32) -> Option<Value> {
    let v = table_json(l, round, table, None)?;
    if v["finished"] != true {
        return None;
    }
    Some(json!({
        "round": round,
        "table": table,
        "first": v["first"],
        "second": v["second"],
        "gamePoints": v["gamePoints"],
        "matchPoints": v["matchPoints"],
        "forfeit": v["forfeit"],
    }))
}
