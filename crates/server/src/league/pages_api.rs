//! The league routes the browser's people pages need beyond the league API (documented in
//! docs/league.md with the others):
//!
//! * `GET /api/v1/me/leagues`: the signed-in principal's league boards and games (next, live,
//!   finished), the teams it captains and the events it arbitrates — a player's "my games".
//! * `POST /api/v1/leagues/upload`: an organiser's event file as TOML or JSON; checked (and with
//!   `?check=true` only checked), refusals carrying the line and column they are about.
//! * `GET /api/v1/names?ids=1,2`: the display names of principals (logs show names, not ids).
//! * `POST /api/v1/qr`: a text (a sign-in link) as a QR code in SVG, for the tokens sheet (in
//!   the body, so that a token never shows in a URL).

// The helpers return the HTTP answer itself as their error, as every handler does.
#![allow(clippy::result_large_err)]

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::ok;
use super::core::{BoardKey, League, Outcome, TeamSide, match_result};
use super::datetime::format_instant;
use super::render::side_name;
use super::runner;
use super::spec::EventSpec;
use crate::auth::{api_error, authenticate, bearer};
use crate::env::Env;
pub use chuhe_league_core::file::parse_event_file;
use chuhe_league_core::file::{self, FileError};

pub fn router() -> Router<Env> {
    Router::new()
        .route("/api/v1/me/leagues", get(my_leagues))
        .route("/api/v1/leagues/upload", post(upload))
        .route("/api/v1/names", get(names))
        .route("/api/v1/qr", post(qr))
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::First => "first",
        Outcome::Second => "second",
        Outcome::Draw => "draw",
        Outcome::BothLose => "both_lose",
    }
}

/// A game's result for the player of `side`: `win`, `loss`, `draw` or `both_lose`.
fn result_for(o: Outcome, side: TeamSide) -> &'static str {
    match (o, side) {
        (Outcome::Draw, _) => "draw",
        (Outcome::BothLose, _) => "both_lose",
        (Outcome::First, TeamSide::First) | (Outcome::Second, TeamSide::Second) => "win",
        _ => "loss",
    }
}

/// Every board of `league` that principal `me` plays or is to play, and the matches of its
/// team whose lineups are not yet revealed. Pure: from the league's state.
pub fn boards_of(l: &League, me: i64) -> Vec<Value> {
    let mut out = Vec::new();
    for r in &l.rounds {
        for (ti, t) in r.tables.iter().enumerate() {
            let table = ti as u32 + 1;
            for side in [TeamSide::First, TeamSide::Second] {
                let team = t.teams[side.index()];
                if !l.teams[team].accounts.players.contains(&me) {
                    continue;
                }
                let other = t.teams[1 - side.index()];
                let base = json!({
                    "leagueId": l.id.to_string(),
                    "league": l.spec.name,
                    "round": r.number,
                    "table": table,
                    "side": side_name(side),
                    "team": team,
                    "teamName": l.teams[team].name,
                    "opponentTeam": other,
                    "opponentTeamName": l.teams[other].name,
                    "startsAt": format_instant(r.start_ms),
                    "lineupDeadline": format_instant(r.deadline_ms),
                    "matchFinished": match_result(l, r.number, table).is_some(),
                    "forfeit": t.forfeit.is_some(),
                });
                if t.revealed.is_none() {
                    if !r.completed {
                        let mut v = base;
                        v["revealed"] = json!(false);
                        out.push(v);
                    }
                    continue;
                }
                let n = t.boards.len() as u32;
                for board in 1..=n {
                    if l.player_of(t, side, board).map(|(id, _)| id) != Some(me) {
                        continue;
                    }
                    let at = BoardKey {
                        round: r.number,
                        table,
                        board,
                    };
                    out.push(board_json(l, base.clone(), at, side));
                }
            }
        }
    }
    out
}

fn board_json(l: &League, mut v: Value, at: BoardKey, side: TeamSide) -> Value {
    let stages = l.rules_of(at.round).event.chain.stages();
    let stage_name = |s: u32| stages.get(s as usize).map(|x| x.name.clone());
    let opponent = l
        .table(at.round, at.table)
        .and_then(|t| l.player_of(t, side.other(), at.board));
    let b = l.board(at);
    let games: Vec<Value> = b
        .map(|b| {
            b.games
                .iter()
                .map(|g| {
                    let my_colour = if g.first_colour == super::core::ColourName::Red
                        && side == TeamSide::First
                        || g.first_colour == super::core::ColourName::Black
                            && side == TeamSide::Second
                    {
                        "red"
                    } else {
                        "black"
                    };
                    json!({
                        "stage": g.stage,
                        "stageName": stage_name(g.stage),
                        "gameId": g.game.to_string(),
                        "colour": my_colour,
                        "startsAt": format_instant(g.start_ms),
                        "result": g.finished.as_ref().map(|f| result_for(f.outcome, side)),
                        "outcome": g.finished.as_ref().map(|f| outcome_name(f.outcome)),
                        "reason": g.finished.as_ref().map(|f| f.reason.clone()),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    // The colour of the first game before it is set up: 13.2's for the board.
    let scheduled = l.stage_colour(at, 0).map(|c| {
        let first_red = c == super::core::ColourName::Red;
        if first_red == (side == TeamSide::First) {
            "red"
        } else {
            "black"
        }
    });
    let record = l.board_record(at).and_then(|rec| {
        let rules = &l.rules_of(at.round).event;
        chuhe_league::chain::evaluate_board(&rules.chain, &rules.game_scoring, at.board, &rec).ok()
    });
    let current = b
        .and_then(|b| b.games.last())
        .filter(|g| g.finished.is_none() && record.is_none())
        .map(|g| g.game.to_string());
    let choice = b
        .and_then(|b| b.choice.as_ref())
        .filter(|c| c.chooser_colour.is_none() && record.is_none());
    v["revealed"] = json!(true);
    v["board"] = json!(at.board);
    v["opponent"] = json!(opponent.map(|(id, name)| json!({"id": id.to_string(), "name": name})));
    v["colour"] = json!(scheduled);
    v["games"] = json!(games);
    v["current"] = json!(current);
    v["choice"] = json!(choice.map(|c| json!({
        "stage": c.stage,
        "stageName": stage_name(c.stage),
        "mine": c.chooser == side,
        "deadline": format_instant(c.deadline_ms),
    })));
    v["finished"] = json!(record.is_some());
    v["points"] = json!(record.as_ref().map(|r| {
        let (mine, theirs) = match side {
            TeamSide::First => (r.points[0], r.points[1]),
            TeamSide::Second => (r.points[1], r.points[0]),
        };
        [mine.to_decimal(), theirs.to_decimal()]
    }));
    v
}

async fn my_leagues(State(env): State<Env>, headers: HeaderMap) -> Response {
    let who = match authenticate(&env, bearer(&headers, None)).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let Some(me) = who.id() else {
        return api_error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "this needs a token (Authorization: Bearer …)",
        );
    };
    let mut boards = Vec::new();
    let mut captain = Vec::new();
    let mut arbiter = Vec::new();
    let mut all = env.leagues.all();
    all.sort_by_key(|h| h.id);
    for h in all {
        let l = h.snapshot();
        if !l.published {
            continue;
        }
        boards.extend(boards_of(&l, me));
        for (i, t) in l.teams.iter().enumerate() {
            if t.accounts.captains.contains(&me) {
                captain.push(json!({
                    "leagueId": l.id.to_string(), "league": l.spec.name,
                    "team": i, "teamName": t.name,
                }));
            }
        }
        if l.arbiters.contains(&me) {
            arbiter.push(json!({"leagueId": l.id.to_string(), "league": l.spec.name}));
        }
    }
    ok(json!({
        "principalId": me.to_string(),
        "boards": boards,
        "captainOf": captain,
        "arbiterOf": arbiter,
    }))
}

#[derive(Deserialize)]
struct UploadQuery {
    #[serde(default)]
    check: Option<bool>,
    /// `toml` or `json`; by default from the Content-Type, else from the text itself.
    #[serde(default)]
    format: Option<String>,
}

/// The event's checks, as creating it would make them (without creating anything): what it
/// would be.
pub fn check_event(text: &str, spec: &EventSpec) -> Result<Value, FileError> {
    let c = file::check_event(text, spec)?;
    Ok(json!({
        "name": spec.name,
        "teams": spec.teams.len(),
        "boards": c.rules.lineup.boards,
        "rounds": c.rules.planned_rounds(),
        "firstRound": c.rounds.first().map(|t| format_instant(t.0)),
    }))
}

fn file_error(e: FileError) -> Response {
    let body = json!({
        "code": "invalid_event",
        "message": e.message,
        "field": e.field,
        "line": e.line,
        "column": e.column,
    });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

async fn upload(
    State(env): State<Env>,
    headers: HeaderMap,
    Query(q): Query<UploadQuery>,
    b: Bytes,
) -> Response {
    let p = match crate::auth::organizer(&env, &headers).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let Ok(text) = std::str::from_utf8(&b) else {
        return api_error(
            StatusCode::BAD_REQUEST,
            "malformed_body",
            "the event file is not UTF-8 text",
        );
    };
    let ctype = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let format = q.format.clone().or_else(|| {
        if ctype.contains("json") {
            Some("json".into())
        } else if ctype.contains("toml") {
            Some("toml".into())
        } else {
            None
        }
    });
    let spec = match parse_event_file(text, format.as_deref()) {
        Ok(s) => s,
        Err(e) => return file_error(e),
    };
    let checked = match check_event(text, &spec) {
        Ok(v) => v,
        Err(e) => return file_error(e),
    };
    if q.check == Some(true) {
        return ok(json!({"ok": true, "event": checked}));
    }
    match runner::create(&env.league_deps(), spec, p.id()).await {
        Ok(h) => {
            let l = h.snapshot();
            (
                StatusCode::CREATED,
                axum::Json(super::api::summary(&l, None)),
            )
                .into_response()
        }
        Err(runner::CreateError::Spec(e)) => file_error(file::refused(text, e)),
        Err(runner::CreateError::Store(e)) if e.is_client_error() => {
            api_error(StatusCode::CONFLICT, "conflict", &e.to_string())
        }
        Err(runner::CreateError::Store(e)) => api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            &e.to_string(),
        ),
    }
}

#[derive(Deserialize)]
struct NamesQuery {
    #[serde(default)]
    ids: String,
}

/// At most this many ids in one `names` request.
const MAX_NAMES: usize = 200;

async fn names(State(env): State<Env>, Query(q): Query<NamesQuery>) -> Response {
    let ids: Vec<i64> = q
        .ids
        .split(',')
        .filter_map(|s| s.trim().parse::<i64>().ok())
        .collect();
    if ids.len() > MAX_NAMES {
        return api_error(
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            &format!("at most {MAX_NAMES} ids"),
        );
    }
    let mut out = serde_json::Map::new();
    for id in ids {
        match env.persist.account(id).await {
            Ok(Some(a)) => {
                out.insert(id.to_string(), json!(a.name));
            }
            Ok(None) => {}
            Err(e) => {
                return api_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    &e.to_string(),
                );
            }
        }
    }
    ok(json!({ "names": out }))
}

/// The longest text `qr` encodes (a sign-in link is about 120 bytes).
const MAX_QR: usize = 1024;

/// A text as a QR code, SVG. Pure.
pub fn qr_svg(text: &str) -> Result<String, String> {
    if text.is_empty() || text.len() > MAX_QR {
        return Err(format!("the text must be 1 to {MAX_QR} bytes"));
    }
    let code = qrcode::QrCode::with_error_correction_level(text.as_bytes(), qrcode::EcLevel::M)
        .map_err(|e| format!("cannot encode: {e}"))?;
    Ok(code
        .render::<qrcode::render::svg::Color<'_>>()
        .min_dimensions(160, 160)
        .build())
}

async fn qr(b: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&b) else {
        return api_error(
            StatusCode::BAD_REQUEST,
            "malformed_body",
            "the body is not UTF-8 text",
        );
    };
    match qr_svg(text) {
        Ok(svg) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "image/svg+xml"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            svg,
        )
            .into_response(),
        Err(why) => api_error(StatusCode::BAD_REQUEST, "invalid_argument", &why),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const TOML: &str = r#"name = "测试联赛"
system = "round_robin"
legs = 1
boards = 2
result_chain = { preset = "single", time_control = "10m+5s" }

[[teams]]
name = "红队"
players = ["红一", "红二"]

[[teams]]
name = "黑队"
players = ["黑一"]

[schedule]
first_round = "2027-03-06T14:00:00+08:00"
every = "7d"
"#;

    #[test]
    fn a_toml_file_is_read_and_its_checks_point_at_the_line() {
        let spec = parse_event_file(TOML, None).unwrap();
        assert_eq!(spec.teams.len(), 2);
        let e = check_event(TOML, &spec).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("teams[1].players"));
        // The second team's `players` key, on line 13.
        assert_eq!(e.line, Some(13), "{e:?}");
        assert_eq!(e.column, Some(1));
    }

    #[test]
    fn a_good_file_passes_the_checks() {
        let good = TOML.replace("players = [\"黑一\"]", "players = [\"黑一\", \"黑二\"]");
        let spec = parse_event_file(&good, Some("toml")).unwrap();
        let v = check_event(&good, &spec).unwrap();
        assert_eq!(v["rounds"], 1);
        assert_eq!(v["boards"], 2);
    }

    #[test]
    fn a_sign_in_link_as_a_qr_code() {
        let svg =
            qr_svg("http://127.0.0.1:8080/signin#token=chuhe_0123456789abcdef&next=/me").unwrap();
        assert!(svg.starts_with("<?xml") && svg.contains("<svg"), "{svg}");
        assert!(qr_svg("").is_err());
        assert!(qr_svg(&"x".repeat(MAX_QR + 1)).is_err());
    }
}
