//! Game records in the forms the Xiangqi world uses (`chuhe-records`): one game, or every game
//! of an event, a round or a match, as Chinese-program PGN (Chinese, WXF or ICCS movetext),
//! XQF or a DhtmlXQ block. Who sees what is as for `GET /api/v1/games/{id}`: spectators see a
//! live game behind the broadcast delay.
//!
//! - `GET /api/v1/games/{id}/record?format=pgn|pgn-wxf|pgn-iccs|xqf|dhtmlxq`
//! - `GET /api/v1/leagues/{id}/records?format=…[&round=N[&table=T]]`

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chuhe_proto::v1::Result as WResult;
use chuhe_records::{Format, Game, GameResult, Notation};
use chuhe_rules::Move;

use crate::auth::{api_error, authenticate, bearer};
use crate::env::Env;
use crate::view::View;

/// These routes, the event feed (`feed_http`) and the embeddable board (`embed_http`).
pub fn router() -> Router<Env> {
    Router::new()
        .route("/api/v1/games/{id}/record", get(game_record))
        .route("/api/v1/leagues/{id}/records", get(league_records))
        .merge(crate::feed_http::router())
        .merge(crate::embed_http::router())
}

#[derive(serde::Deserialize)]
struct RecordQuery {
    format: Option<String>,
    notation: Option<String>,
    token: Option<String>,
    round: Option<u32>,
    table: Option<u32>,
}

fn format_of(q: &RecordQuery) -> Result<Format, Box<Response>> {
    let bad = || {
        Box::new(api_error(
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "format must be pgn, pgn-wxf, pgn-iccs, xqf or dhtmlxq (notation: chinese, wxf or iccs)",
        ))
    };
    let f = Format::parse(q.format.as_deref().unwrap_or("pgn")).ok_or_else(bad)?;
    match (f, q.notation.as_deref()) {
        (Format::Pgn(_), Some(n)) => Notation::parse(n).map(Format::Pgn).ok_or_else(bad),
        (f, _) => Ok(f),
    }
}

fn ext(f: Format) -> &'static str {
    match f {
        Format::Pgn(_) => "pgn",
        Format::Xqf => "xqf",
        Format::DhtmlXq => "txt",
    }
}

fn file_response(f: Format, name: &str, body: Vec<u8>) -> Response {
    let ct = match f {
        Format::Xqf => "application/octet-stream",
        _ => "text/plain; charset=utf-8",
    };
    (
        [
            (header::CONTENT_TYPE, ct.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}.{}\"", ext(f)),
            ),
        ],
        body,
    )
        .into_response()
}

fn unwritable(e: &chuhe_records::RecordError) -> Response {
    api_error(StatusCode::CONFLICT, "record_unwritable", &e.to_string())
}

/// The record of a game's view (the teams from its league, when it is a league game).
pub fn game_of(env: &Env, v: &View) -> Result<Game, chuhe_records::RecordError> {
    let info = &v.info;
    let mut moves = Vec::with_capacity(v.moves.len());
    for (i, m) in v.moves.iter().enumerate() {
        let mv = Move::from_iccs(&m.iccs).map_err(|e| chuhe_records::RecordError::BadMove {
            number: u32::try_from(i / 2 + 1).unwrap_or(u32::MAX),
            side: if i % 2 == 0 {
                chuhe_rules::Color::Red
            } else {
                chuhe_rules::Color::Black
            },
            text: m.iccs.clone(),
            place: format!("ply {}", i + 1),
            why: e.to_string(),
        })?;
        moves.push(mv);
    }
    let result = match WResult::try_from(v.result).unwrap_or(WResult::Unspecified) {
        WResult::RedWins => GameResult::RedWins,
        WResult::BlackWins => GameResult::BlackWins,
        WResult::Draw => GameResult::Draw,
        WResult::BothLose => GameResult::BothLose,
        WResult::Unspecified => GameResult::Unknown,
    };
    let mut g = Game {
        event: info.event.clone(),
        round: info.round.clone(),
        board: info.board.clone(),
        red: info.red_name.clone(),
        black: info.black_name.clone(),
        result,
        reason: v.end_reason.clone(),
        fen: if info.initial_fen.is_empty() {
            chuhe_rules::START_FEN.to_string()
        } else {
            info.initial_fen.clone()
        },
        moves,
        ..Game::default()
    };
    if !info.time_control.is_empty() {
        g.extra
            .push(("TimeControl".to_string(), info.time_control.clone()));
    }
    g.extra.push(("GameId".to_string(), info.game_id.clone()));
    if let Some(lb) = &info.league {
        if let Some(h) = lb.league_id.parse().ok().and_then(|id| env.leagues.get(id)) {
            let l = h.snapshot();
            if let Some(t) = l.table(lb.round, lb.table) {
                let game_id: i64 = info.game_id.parse().unwrap_or(0);
                let first_red = t
                    .boards
                    .get(lb.board.saturating_sub(1) as usize)
                    .and_then(|b| b.games.iter().find(|g| g.game == game_id))
                    .map(|g| g.first_colour == crate::league::core::ColourName::Red);
                if let Some(first_red) = first_red {
                    let name = |i: usize| l.teams.get(t.teams[i]).map(|t| t.name.clone());
                    let (r, b) = if first_red { (0, 1) } else { (1, 0) };
                    g.red_team = name(r).unwrap_or_default();
                    g.black_team = name(b).unwrap_or_default();
                }
            }
        }
    }
    Ok(g)
}

async fn game_record(
    State(env): State<Env>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<RecordQuery>,
) -> Response {
    let f = match format_of(&q) {
        Ok(f) => f,
        Err(r) => return *r,
    };
    let tq = TokenQuery {
        token: q.token.clone(),
        notation: None,
    };
    let v = match record_view(&env, &headers, &tq, &id).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let g = match game_of(&env, &v) {
        Ok(g) => g,
        Err(e) => return unwritable(&e),
    };
    match chuhe_records::export(f, std::slice::from_ref(&g)) {
        Ok(b) => file_response(f, &format!("game-{id}"), b),
        Err(e) => unwritable(&e),
    }
}

async fn league_records(
    State(env): State<Env>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<RecordQuery>,
) -> Response {
    let f = match format_of(&q) {
        Ok(f) => f,
        Err(r) => return *r,
    };
    let h = match crate::league::api::league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let l = h.snapshot();
    let mut ids: Vec<(i64, (u32, u32, u32, u32))> = l
        .games
        .iter()
        .filter(|(_, (at, _))| {
            q.round.is_none_or(|r| r == at.round) && q.table.is_none_or(|t| t == at.table)
        })
        .map(|(&g, (at, stage))| (g, (at.round, at.table, at.board, *stage)))
        .collect();
    ids.sort_by_key(|&(g, k)| (k, g));
    if ids.is_empty() {
        return api_error(
            StatusCode::NOT_FOUND,
            "not_found",
            "no game of this event matches",
        );
    }
    let tq = TokenQuery {
        token: q.token.clone(),
        notation: None,
    };
    let mut games = Vec::with_capacity(ids.len());
    for (g, _) in ids {
        let v = match record_view(&env, &headers, &tq, &g.to_string()).await {
            Ok(v) => v,
            Err(r) => return r,
        };
        match game_of(&env, &v) {
            Ok(g) => games.push(g),
            Err(e) => return unwritable(&e),
        }
    }
    let body = match f {
        // Several DhtmlXQ blocks, one after another, as a forum post holds them.
        Format::DhtmlXq => {
            let mut out = Vec::new();
            for g in &games {
                match chuhe_records::dhtmlxq::write(g) {
                    Ok(t) => {
                        out.extend_from_slice(t.as_bytes());
                        out.push(b'\n');
                    }
                    Err(e) => return unwritable(&e),
                }
            }
            out
        }
        Format::Xqf if games.len() > 1 => {
            return api_error(
                StatusCode::BAD_REQUEST,
                "one_game_format",
                &format!(
                    "XQF holds one game and {} match: ask for one game (GET /api/v1/games/{{id}}/record?format=xqf) or for PGN",
                    games.len()
                ),
            );
        }
        _ => match chuhe_records::export(f, &games) {
            Ok(b) => b,
            Err(e) => return unwritable(&e),
        },
    };
    let name = match (q.round, q.table) {
        (Some(r), Some(t)) => format!("league-{id}-round-{r}-table-{t}"),
        (Some(r), None) => format!("league-{id}-round-{r}"),
        _ => format!("league-{id}"),
    };
    file_response(f, &name, body)
}

#[derive(serde::Deserialize)]
pub(crate) struct TokenQuery {
    pub(crate) token: Option<String>,
    pub(crate) notation: Option<String>,
}

/// Arbiters and organisers see live games live; everyone else behind the delay.
pub(crate) async fn record_view(
    env: &Env,
    headers: &HeaderMap,
    q: &TokenQuery,
    id: &str,
) -> Result<crate::view::View, Response> {
    let who = authenticate(env, bearer(headers, q.token.as_deref())).await?;
    let id: i64 = id
        .parse()
        .map_err(|_| api_error(StatusCode::NOT_FOUND, "game_not_found", "no such game"))?;
    let h = env.registry.get_or_load(id).await.map_err(|e| {
        let status = if e.code() == "game_not_found" {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        api_error(status, e.code(), &e.to_string())
    })?;
    let public = !who.sees_live();
    let arbiter = who
        .id()
        .filter(|_| who.role() == Some(crate::persist::Role::Arbiter));
    h.record_for(public, arbiter)
        .await
        .map(|r| r.view)
        .ok_or_else(|| {
            api_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                "the game is unloading; retry",
            )
        })
}
