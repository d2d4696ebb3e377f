//! Loading a board played elsewhere into an event as played games:
//! `POST /api/v1/leagues/{id}/rounds/{round}/tables/{table}/boards/{board}/import`.
//!
//! The body is a record file (`?format=pgn`, the default: Chinese, WXF or ICCS movetext, UTF-8
//! or GBK; `?format=xqf`; or `?format=dhtmlxq`, the forums' UBB blocks); its games are the board's chain in order. Everything is checked
//! before anything is stored: each game's teams and players against the match, each move by
//! the game rules (the same core that plays live games, so the game log is a played game's),
//! the result against the position, and the chain against the event's result chain. Then the
//! games are stored (their rows by a key made from the board and the file, so a retry after a
//! failure finds them), and one league command records them on the board with their results;
//! the board is refused if it has a game or a result. A game page replays an imported game
//! and the record routes export it like any other.

// The helpers return the HTTP answer itself as their error, as every handler does.
#![allow(clippy::result_large_err)]

use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use chuhe_game::types::{ArbiterAction, GameResult as DResult, Kind};
use chuhe_game::{self as game, Actor, Command, Event};
use chuhe_proto::v1::{self as w, StoredEvent};
use chuhe_records::{Format, Game, GameResult};
use prost::Message as _;
use serde::Deserialize;
use serde_json::json;

use super::core::{
    BoardKey, ColourName, ImportedGame, League, LeagueCommand, Outcome, TeamSide,
    board_open_for_import,
};
use crate::auth::api_error;
use crate::env::Env;
use crate::persist::{EventRow, FinishRow, NewGame, Role};
use chuhe_game::board::Board;

pub fn router() -> Router<Env> {
    Router::new().route(
        "/api/v1/leagues/{id}/rounds/{round}/tables/{table}/boards/{board}/import",
        post(import),
    )
}

#[derive(Deserialize)]
struct ImportQuery {
    format: Option<String>,
    reason: Option<String>,
}

/// Why an import was refused, before anything was stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("{0}")]
    Unreadable(String),
    #[error("the file holds no game")]
    NoGames,
    #[error("game {game}: {why}")]
    TeamUnknown { game: usize, why: String },
    #[error("game {game}: {why}")]
    PlayerUnknown { game: usize, why: String },
    #[error("game {game}: the starting position: {why}")]
    BadPosition { game: usize, why: String },
    #[error("game {game}, move {number} ({mv}): {why}")]
    IllegalMove {
        game: usize,
        /// The move's number as a record counts it (a Red and a Black move share one).
        number: u32,
        /// Its ply (1 = the first move of the game).
        ply: u32,
        mv: String,
        why: String,
    },
    #[error("game {game}: {why}")]
    ResultMismatch { game: usize, why: String },
    #[error("game {game}: no result (`*`): not a played game")]
    NoResult { game: usize },
}

impl ImportError {
    pub fn code(&self) -> &'static str {
        match self {
            ImportError::Unreadable(_) => "record_unreadable",
            ImportError::NoGames => "record_empty",
            ImportError::TeamUnknown { .. } => "team_unknown",
            ImportError::PlayerUnknown { .. } => "player_unknown",
            ImportError::BadPosition { .. } => "bad_position",
            ImportError::IllegalMove { .. } => "illegal_move",
            ImportError::ResultMismatch { .. } => "result_mismatch",
            ImportError::NoResult { .. } => "no_result",
        }
    }

    fn response(&self) -> Response {
        let mut body = json!({"code": self.code(), "message": self.to_string()});
        match self {
            ImportError::IllegalMove {
                game,
                number,
                ply,
                mv,
                ..
            } => {
                body["game"] = json!(game);
                body["move"] = json!(number);
                body["ply"] = json!(ply);
                body["notation"] = json!(mv);
            }
            ImportError::TeamUnknown { game, .. }
            | ImportError::PlayerUnknown { game, .. }
            | ImportError::BadPosition { game, .. }
            | ImportError::ResultMismatch { game, .. }
            | ImportError::NoResult { game } => body["game"] = json!(game),
            ImportError::Unreadable(_) | ImportError::NoGames => {}
        }
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    }
}

use axum::response::IntoResponse as _;

/// The reader's refusal: a bad move is `illegal_move` with its game and number (the reader
/// checks every move against the position), anything else `record_unreadable`.
fn unreadable(e: &chuhe_records::RecordError) -> ImportError {
    if let chuhe_records::RecordError::BadMove {
        number,
        side,
        text,
        place,
        why,
    } = e
    {
        // `game 2, line 14, column 3` (PGN) or `byte 1048` (XQF, one game).
        let game = place
            .strip_prefix("game ")
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        let black = *side == chuhe_rules::Color::Black;
        return ImportError::IllegalMove {
            game,
            number: *number,
            ply: number.saturating_sub(1) * 2 + 1 + u32::from(black),
            mv: text.clone(),
            why: format!("{why} (at {place})"),
        };
    }
    ImportError::Unreadable(format!("{e} ({})", e.code()))
}

/// A game of the file, placed on the board: who plays it, as the match says.
#[derive(Debug, Clone)]
pub struct Placed {
    pub first_colour: ColourName,
    pub red: (i64, String),
    pub black: (i64, String),
}

fn same(a: &str, b: &str) -> bool {
    !a.trim().is_empty() && a.trim() == b.trim()
}

/// Which colour the match's first team had in game `n` (1-based) of the file, and its
/// players: the teams by the file's RedTeam/BlackTeam (or, without them, by its players'
/// names on the rosters); the players by the revealed lineups, or else by the file's names on
/// the teams' rosters.
pub fn place(l: &League, at: BoardKey, n: usize, g: &Game) -> Result<Placed, ImportError> {
    let t = l
        .table(at.round, at.table)
        .ok_or(ImportError::TeamUnknown {
            game: n,
            why: format!("{at}: no such match"),
        })?;
    let names = [&l.teams[t.teams[0]].name, &l.teams[t.teams[1]].name];
    let roster = |side: usize, player: &str| {
        l.rules
            .rosters
            .get(t.teams[side])
            .and_then(|r| r.position(player.trim()))
    };
    let by_team = (
        same(&g.red_team, names[0]) || same(&g.black_team, names[1]),
        same(&g.black_team, names[0]) || same(&g.red_team, names[1]),
    );
    let no_teams = g.red_team.trim().is_empty() && g.black_team.trim().is_empty();
    let first_red = match by_team {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ if !no_teams => None,
        _ => match (
            roster(0, &g.red).is_some() && roster(1, &g.black).is_some(),
            roster(0, &g.black).is_some() && roster(1, &g.red).is_some(),
        ) {
            (true, false) => Some(true),
            (false, true) => Some(false),
            _ => None,
        },
    };
    let first_red = match first_red {
        Some(r) => r,
        None => {
            return Err(ImportError::TeamUnknown {
                game: n,
                why: format!(
                    "RedTeam {:?} / BlackTeam {:?} (and players {:?} / {:?}) do not say which \
                         side {:?} (the match's first team, against {:?}) played",
                    g.red_team, g.black_team, g.red, g.black, names[0], names[1]
                ),
            });
        }
    };
    let player = |side: TeamSide, file_name: &str| -> Result<(i64, String), ImportError> {
        if let Some(p) = l.player_of(t, side, at.board) {
            return Ok(p);
        }
        let team = t.teams[side.index()];
        roster(side.index(), file_name)
            .and_then(|pos| l.teams[team].accounts.players.get(pos).copied())
            .map(|id| (id, file_name.trim().to_string()))
            .ok_or_else(|| ImportError::PlayerUnknown {
                game: n,
                why: format!(
                    "{file_name:?} is not on {:?}'s roster (and the match's lineups are not \
                     revealed to say who plays board {})",
                    l.teams[team].name, at.board
                ),
            })
    };
    let (red_side, black_side) = if first_red {
        (TeamSide::First, TeamSide::Second)
    } else {
        (TeamSide::Second, TeamSide::First)
    };
    Ok(Placed {
        first_colour: if first_red {
            ColourName::Red
        } else {
            ColourName::Black
        },
        red: player(red_side, &g.red)?,
        black: player(black_side, &g.black)?,
    })
}

/// A played game's log, decided by the game core: created (clocks running), every move by its
/// player, then — unless the moves ended it — the result recorded by `arbiter` with `reason`.
/// The result must be the one the rules give when the moves end the game.
pub fn played_log(
    info: &w::GameInfo,
    n: usize,
    g: &Game,
    arbiter: i64,
    now: u64,
) -> Result<(Vec<Event>, w::Result, String), ImportError> {
    let wanted = match g.result {
        GameResult::RedWins => DResult::RedWins,
        GameResult::BlackWins => DResult::BlackWins,
        GameResult::Draw => DResult::Draw,
        GameResult::BothLose => DResult::BothLose,
        GameResult::Unknown => return Err(ImportError::NoResult { game: n }),
    };
    let bad = |why: String| ImportError::BadPosition { game: n, why };
    let (mut st, mut decided) = game::create(&crate::game_wire::info_of(info.clone()), now)
        .map_err(|e| bad(e.to_string()))?;
    let mut log = Vec::new();
    game::apply(&mut st, &mut decided).map_err(|e| bad(e.to_string()))?;
    log.append(&mut decided.events);
    let red: i64 = info.red_id.parse().unwrap_or(0);
    let black: i64 = info.black_id.parse().unwrap_or(0);
    let first_ply_black = st.board.to_move() == game::Side::Black;
    for (i, m) in g.moves.iter().enumerate() {
        let ply = i as u32 + 1;
        let iccs = m.to_iccs();
        let number = (i as u32 + u32::from(first_ply_black)) / 2 + 1;
        let illegal = |why: String| ImportError::IllegalMove {
            game: n,
            number,
            ply,
            mv: iccs.clone(),
            why,
        };
        if st.is_finished() {
            let why = st.result.as_ref().map_or("", |r| r.1.as_str());
            return Err(illegal(format!(
                "the game was over before it ({why}): the file has moves after its end"
            )));
        }
        let mover = if st.board.to_move() == game::Side::Red {
            red
        } else {
            black
        };
        let actor = Actor {
            id: Some(mover),
            role: Some(Role::Player),
        };
        let cmd = Command::Move {
            ply,
            mv: iccs.clone(),
            offer_draw: false,
            think_ms: Some(0),
            lag: Duration::ZERO,
        };
        let mut d = game::decide(&st, &cmd, &actor, now).map_err(|e| illegal(e.to_string()))?;
        if let game::Answer::Error(e) = &d.answer {
            return Err(illegal(e.to_string()));
        }
        game::apply(&mut st, &mut d).map_err(|e| illegal(e.to_string()))?;
        log.append(&mut d.events);
    }
    if let Some((got, end)) = st.result.clone() {
        if got != wanted {
            return Err(ImportError::ResultMismatch {
                game: n,
                why: format!(
                    "the moves end the game {} ({end}), the file says {}",
                    game::types::result_text(Some(got)),
                    game::types::result_text(Some(wanted))
                ),
            });
        }
        return Ok((log, crate::game_wire::result(Some(got)), end));
    }
    let why = if g.reason.trim().is_empty() {
        format!(
            "imported record: {}",
            game::types::result_text(Some(wanted))
        )
    } else {
        format!(
            "imported record: {} ({})",
            game::types::result_text(Some(wanted)),
            g.reason.trim()
        )
    };
    let cmd = Command::Arbiter {
        reason: why,
        action: ArbiterAction::SetResult {
            result: Some(wanted),
        },
    };
    let actor = Actor {
        id: Some(arbiter),
        role: Some(Role::Arbiter),
    };
    let mut d = game::decide(&st, &cmd, &actor, now).map_err(|e| ImportError::ResultMismatch {
        game: n,
        why: e.to_string(),
    })?;
    game::apply(&mut st, &mut d).map_err(|e| bad(e.to_string()))?;
    log.append(&mut d.events);
    Ok((
        log,
        crate::game_wire::result(Some(wanted)),
        "imported".into(),
    ))
}

/// The stored form of a game's log: its rows and its finish.
fn rows(log: &[Event]) -> (Vec<EventRow>, Option<FinishRow>) {
    let mut rows = Vec::with_capacity(log.len());
    let mut finish = None;
    for ev in log {
        if let Some(Kind::Ended(e)) = ev.kind() {
            finish = Some(FinishRow {
                result: game::types::result_text(e.result).to_string(),
                reason: e.reason.clone(),
                at_ms: ev.event.at_ms,
            });
        }
        let stored = StoredEvent {
            event: Some(crate::game_wire::event(ev.event.clone())),
            clock_snapshot: String::new(),
            clock: ev.clock.as_ref().map(crate::snapshot::to_wire),
        };
        rows.push(EventRow {
            seq: ev.event.seq,
            kind: ev.kind().map_or("unknown", Kind::label),
            payload: stored.encode_to_vec(),
            at_ms: ev.event.at_ms,
            actor: ev.actor,
            reason: ev.reason.clone(),
        });
    }
    (rows, finish)
}

/// FNV-1a of the file: the games' keys are the board's and the file's, so the same import
/// retried after a failure finds the games it stored.
fn digest(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// One game of the imported board before its check: who played it with which colour, its start
/// position, its stage's time control and its record.
struct GameToImport {
    placed: Placed,
    fen: String,
    time_control: String,
    game: Game,
}

fn outcome(result: w::Result, first_colour: ColourName) -> Outcome {
    let first_red = first_colour == ColourName::Red;
    match (result, first_red) {
        (w::Result::RedWins, true) | (w::Result::BlackWins, false) => Outcome::First,
        (w::Result::RedWins, false) | (w::Result::BlackWins, true) => Outcome::Second,
        (w::Result::BothLose, _) => Outcome::BothLose,
        _ => Outcome::Draw,
    }
}

#[allow(clippy::too_many_arguments)]
fn info(
    env: &Env,
    l: &League,
    at: BoardKey,
    stage: u32,
    id: i64,
    p: &GameToImport,
    now: u64,
) -> w::GameInfo {
    w::GameInfo {
        game_id: id.to_string(),
        red_id: p.placed.red.0.to_string(),
        red_name: p.placed.red.1.clone(),
        black_id: p.placed.black.0.to_string(),
        black_name: p.placed.black.1.clone(),
        time_control: p.time_control.clone(),
        ruleset: "cxa".into(),
        initial_fen: p.fen.clone(),
        event: l.spec.name.clone(),
        round: at.round.to_string(),
        board: at.board.to_string(),
        delay: Some(w::BroadcastDelay {
            plies: l.rules.delay.plies,
            seconds: l.rules.delay.seconds,
        }),
        move_limit_plies: env.config.move_limit_plies,
        created_at_ms: now,
        start_mode: w::StartMode::Now as i32,
        scheduled_start_ms: 0,
        lateness_limit_ms: 0,
        league: Some(w::LeagueBoard {
            league_id: l.id.to_string(),
            round: at.round,
            table: at.table,
            board: at.board,
            stage,
        }),
        calls: Some(super::call_settings(l.spec.arbiter_calls.as_ref())),
    }
}

async fn import(
    State(env): State<Env>,
    Path((id, round, table, board)): Path<(String, u32, u32, u32)>,
    Query(q): Query<ImportQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let h = match super::api::league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let p = match super::api::who(&env, &headers).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let l = h.snapshot();
    if p.account.is_none() {
        return api_error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "this needs the organizer's or an arbiter's token",
        );
    }
    if !super::render::is_official(&l, &p) {
        return api_error(
            StatusCode::FORBIDDEN,
            "permission_denied",
            "this needs an arbiter of this event (or the organizer)",
        );
    }
    let at = BoardKey {
        round,
        table,
        board,
    };
    if let Err(e) = board_open_for_import(&l, at) {
        return super::api::run_err(e.into());
    }
    let format = match q.format.as_deref().unwrap_or("pgn") {
        "pgn" => Format::Pgn(chuhe_records::Notation::Chinese),
        "xqf" => Format::Xqf,
        "dhtmlxq" | "ubb" => Format::DhtmlXq,
        other => {
            return api_error(
                StatusCode::BAD_REQUEST,
                "invalid_argument",
                &format!("format {other:?}: pgn, xqf or dhtmlxq"),
            );
        }
    };
    let games = match format {
        Format::Pgn(_) => chuhe_records::pgn::parse_all(&chuhe_records::pgn::decode(&body)),
        f => chuhe_records::import(f, &body),
    };
    let games = match games {
        Ok(g) if g.is_empty() => return ImportError::NoGames.response(),
        Ok(g) => g,
        Err(e) => return unreadable(&e).response(),
    };
    let reason = q
        .reason
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(|| {
            format!(
                "imported from a {} record",
                q.format.as_deref().unwrap_or("pgn")
            )
        });
    let arbiter = p.id().unwrap_or(0);
    let now = env.time.now_ms();
    let stages = l.rules_of(round).event.chain.stages().to_vec();
    // Everything checked first, with a stand-in id: nothing is stored for a bad file.
    let mut prepared = Vec::with_capacity(games.len());
    let mut dry = Vec::with_capacity(games.len());
    for (i, g) in games.into_iter().enumerate() {
        let n = i + 1;
        let placed = match place(&l, at, n, &g) {
            Ok(p) => p,
            Err(e) => return e.response(),
        };
        let limit = match env.config.move_limit_plies {
            0 => game::DEFAULT_MOVE_LIMIT_PLIES,
            n => n,
        };
        let fen = match Board::new(&g.fen, "cxa", limit) {
            Ok(b) => b.fen(),
            Err(why) => return ImportError::BadPosition { game: n, why }.response(),
        };
        let time_control = stages
            .get(i)
            .or(stages.last())
            .map(|s| s.time_control.as_str().to_string())
            .unwrap_or_default();
        let p = GameToImport {
            placed,
            fen,
            time_control,
            game: g,
        };
        let info = info(&env, &l, at, i as u32, 0, &p, now);
        let (result, end) = match played_log(&info, n, &p.game, arbiter, now) {
            Ok((_, result, end)) => (result, end),
            Err(e) => return e.response(),
        };
        dry.push(ImportedGame {
            game: -(n as i64),
            first_colour: p.placed.first_colour,
            red: p.placed.red.0,
            black: p.placed.black.0,
            outcome: outcome(result, p.placed.first_colour),
            reason: end,
            start_ms: now,
        });
        prepared.push(p);
    }
    // And the board's chain (the colours of 13.2, a decided result), as the league will.
    let cmd = LeagueCommand::ImportBoard { at, games: dry };
    if let Err(e) = super::core::decide(
        &l,
        &cmd,
        &super::runner::league_actor(&p.actor()),
        Some(&reason),
        now,
    ) {
        return super::api::run_err(e.into());
    }
    if prepared.len() > stages.len() {
        return api_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_argument",
            &format!(
                "the file holds {} games; {at}'s chain has at most {}",
                prepared.len(),
                stages.len()
            ),
        );
    }
    // The rows, in one transaction; then each game's log.
    let key = digest(&body);
    let news = prepared
        .iter()
        .enumerate()
        .map(|(i, p)| NewGame {
            red: chuhe_store::PrincipalId(p.placed.red.0),
            black: chuhe_store::PrincipalId(p.placed.black.0),
            time_control: p.time_control.clone(),
            ruleset: "cxa".into(),
            start_fen: p.fen.clone(),
            broadcast_delay: chuhe_store::BroadcastDelay {
                moves: l.rules.delay.plies,
                millis: u64::from(l.rules.delay.seconds) * 1000,
            },
            event: Some(l.spec.name.clone()),
            round: Some(round.to_string()),
            board: Some(board),
            scheduled_start_ms: None,
            created_at_ms: now as i64,
            start_mode: "now".into(),
            lateness_limit_ms: 0,
            key: Some(format!(
                "league/{}/r{round}/t{table}/b{board}/g{i}/p{}/import-{key:016x}",
                l.id,
                l.board(at).map_or(0, |b| b.replays)
            )),
        })
        .collect();
    let stored = match env.persist.create_games(news).await {
        Ok(rows) => rows,
        Err(e) => {
            return api_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                &e.to_string(),
            );
        }
    };
    let mut imported = Vec::with_capacity(prepared.len());
    for (i, (p, row)) in prepared.iter().zip(&stored).enumerate() {
        let gid = row.id.0;
        let info = info(&env, &l, at, i as u32, gid, p, now);
        let (log, result, reason_code) = match played_log(&info, i + 1, &p.game, arbiter, now) {
            Ok(v) => v,
            Err(e) => return e.response(),
        };
        let has = match env.persist.events(gid).await {
            Ok(ev) => !ev.is_empty(),
            Err(e) => {
                return api_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    &e.to_string(),
                );
            }
        };
        // A retry of the same file finds the game stored by the try before.
        if !has {
            let (events, finish) = rows(&log);
            if let Err(e) = env.persist.append(gid, events, finish).await {
                return api_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    &e.to_string(),
                );
            }
        }
        imported.push(ImportedGame {
            game: gid,
            first_colour: p.placed.first_colour,
            red: p.placed.red.0,
            black: p.placed.black.0,
            outcome: outcome(result, p.placed.first_colour),
            reason: reason_code,
            start_ms: now,
        });
    }
    let ids: Vec<String> = imported.iter().map(|g| g.game.to_string()).collect();
    let cmd = LeagueCommand::ImportBoard {
        at,
        games: imported,
    };
    match h.command(cmd, p.actor(), Some(reason)).await {
        Ok(entries) => super::api::ok(json!({
            "ok": true,
            "games": ids,
            "entries": entries.iter().filter(|e| e.event.is_public()).count(),
        })),
        Err(e) => super::api::run_err(e),
    }
}
