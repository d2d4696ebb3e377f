//! The browser client, served by the server itself: the page shell for every client URL, the
//! ES modules and CSS it is made of (embedded in the binary from `crates/server/web/`, nothing
//! fetched from elsewhere), and the small read-only HTTP API the client needs beyond the
//! websocket: who a token is (`/api/v1/me`), legal-move hints (`/api/v1/legal`) and a game's
//! audit log for arbiters (`/api/v1/games/{id}/events`).

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chuhe_proto::v1::{self as w, GameEventLog, LegalMove, LegalMoves, Player, StoredEvent};
use prost::Message as _;

use crate::auth::{api_error, authenticate, bearer};
use crate::env::Env;

/// The client's URLs; each answers with the page shell, whose modules route on the path.
/// A new page (a match page, a lineup page) adds its path here and a module in `web/pages/`.
const PAGES: &[&str] = &[
    "/",
    "/game/{id}",
    "/signin",
    "/arbiter",
    "/arbiter/{id}",
    "/league/{id}",
    "/league/{id}/match/{round}/{table}",
    "/league/{id}/lineup",
    "/league/{id}/lineup/{round}/{table}",
    // The people of a match day: my games, a round, the event console, organising.
    "/me",
    "/league/{id}/round/{round}",
    "/arbiter/league/{id}",
    "/organize",
    "/organize/{id}",
    "/play",
    "/challenge/{id}",
];

/// The page shell.
const SHELL: &str = include_str!("../web/index.html");

/// Every embedded asset: its name under `/assets/` and its text.
macro_rules! assets {
    ($($name:literal),* $(,)?) => {
        const ASSETS: &[(&str, &str)] = &[$(($name, include_str!(concat!("../web/", $name)))),*];
    };
}

assets!(
    "style.css",
    "app.js",
    "api.js",
    "board.js",
    "clock.js",
    "dom.js",
    "fen.js",
    "gameview.js",
    "i18n.js",
    "league.js",
    "matchview.js",
    "model.js",
    "notation.js",
    "phrases.js",
    "calls.js",
    "strings-calls.js",
    "pages/arbiter.js",
    "pages/event.js",
    "pages/game.js",
    "pages/lineup.js",
    "pages/lobby.js",
    "pages/match.js",
    "pages/notfound.js",
    "pages/play.js",
    "pages/challenge.js",
    "challenges.js",
    "pages/signin.js",
    "matchday.js",
    "pages/me.js",
    "pages/round.js",
    "pages/console.js",
    "pages/organize.js",
);

/// The routes of the browser client; `http::router` merges them.
pub fn router() -> Router<Env> {
    let mut r = Router::new();
    for p in PAGES {
        r = r.route(p, get(shell));
    }
    r.route("/assets/{*path}", get(asset))
        .route("/api/v1/me", get(me))
        .route("/api/v1/legal", get(legal))
        .route("/api/v1/games/{id}/events", get(events))
        .fallback(not_found)
}

/// Any path no route serves: under `/api/` the JSON `{code, message}` 404; elsewhere the page
/// shell with status 404, whose router shows the client's not-found page.
async fn not_found(uri: axum::http::Uri) -> Response {
    if uri.path().starts_with("/api/") {
        return api_error(
            StatusCode::NOT_FOUND,
            "not_found",
            &format!("no route {}", uri.path()),
        );
    }
    let mut r = shell().await;
    *r.status_mut() = StatusCode::NOT_FOUND;
    r
}

async fn shell() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        SHELL,
    )
        .into_response()
}

/// The asset called `path`, if embedded.
pub fn find_asset(path: &str) -> Option<&'static str> {
    ASSETS.iter().find(|(n, _)| *n == path).map(|(_, t)| *t)
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    }
}

async fn asset(Path(path): Path<String>) -> Response {
    match find_asset(&path) {
        Some(text) => (
            [
                (header::CONTENT_TYPE, content_type(&path)),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            text,
        )
            .into_response(),
        None => api_error(StatusCode::NOT_FOUND, "not_found", "no such asset"),
    }
}

fn json<M: serde::Serialize>(m: &M) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        chuhe_proto::encode_json(m),
    )
        .into_response()
}

#[derive(serde::Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

async fn me(State(env): State<Env>, headers: HeaderMap, Query(q): Query<TokenQuery>) -> Response {
    let who = match authenticate(&env, bearer(&headers, q.token.as_deref())).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let Some(a) = who.account.as_ref() else {
        return api_error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "no token given (Authorization: Bearer … or ?token=…)",
        );
    };
    json(&Player {
        id: a.id.to_string(),
        display_name: a.name.clone(),
        role: who.wire_role() as i32,
    })
}

/// Longest FEN accepted by `/api/v1/legal` (a real one is under 100 bytes).
const MAX_FEN: usize = 256;

/// The legal moves of a position with their notations. Pure.
pub fn legal_moves(fen: &str) -> Result<LegalMoves, String> {
    let fen = fen.trim();
    if fen.is_empty() {
        return Err("fen is missing (GET /api/v1/legal?fen=…)".into());
    }
    if fen.len() > MAX_FEN {
        return Err(format!("fen is longer than {MAX_FEN} bytes"));
    }
    let text = if fen == "startpos" {
        chuhe_rules::START_FEN
    } else {
        fen
    };
    let pos = chuhe_rules::Position::from_fen(text).map_err(|e| format!("bad fen: {e}"))?;
    let moves = pos
        .legal_moves()
        .iter()
        .map(|&m| LegalMove {
            iccs: m.to_iccs(),
            chinese: pos.to_chinese(m).unwrap_or_default(),
            wxf: pos.to_wxf(m).unwrap_or_default(),
        })
        .collect();
    Ok(LegalMoves {
        fen: pos.to_fen(),
        to_move: crate::game_wire::side(chuhe_game::side::from_color(pos.side_to_move())) as i32,
        check: pos.is_check(),
        moves,
    })
}

#[derive(serde::Deserialize)]
struct FenQuery {
    fen: Option<String>,
}

async fn legal(Query(q): Query<FenQuery>) -> Response {
    match legal_moves(q.fen.as_deref().unwrap_or("")) {
        Ok(l) => json(&l),
        Err(why) => api_error(StatusCode::BAD_REQUEST, "invalid_argument", &why),
    }
}

async fn events(
    State(env): State<Env>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<TokenQuery>,
) -> Response {
    let who = match authenticate(&env, bearer(&headers, q.token.as_deref())).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    if !who.sees_live() {
        return api_error(
            StatusCode::FORBIDDEN,
            "permission_denied",
            "a game's event log needs an arbiter or organizer token",
        );
    }
    let not_found = || api_error(StatusCode::NOT_FOUND, "game_not_found", "no such game");
    let Ok(gid) = id.trim().parse::<i64>() else {
        return not_found();
    };
    let unavailable = |e: crate::persist::PersistError| {
        api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            &format!("cannot read the game now: {e}"),
        )
    };
    let stored = match env.persist.game(gid).await {
        Ok(Some(g)) => g,
        Ok(None) => return not_found(),
        Err(e) => return unavailable(e),
    };
    // A league's game: its event's arbiters (and organizers) only.
    if let (Some(board), Some(crate::persist::Role::Arbiter), Some(me)) = (
        stored.key.as_deref().and_then(crate::adopt::league_board),
        who.role(),
        who.id(),
    ) && !env.leagues.arbiter_of(&board.league_id, me)
    {
        return api_error(
            StatusCode::FORBIDDEN,
            "permission_denied",
            "this game is a league's: only its event's arbiters read its event log",
        );
    }
    let log = match env.persist.events(gid).await {
        Ok(l) => l,
        Err(e) => return unavailable(e),
    };
    match decode_log(gid, &log) {
        Ok(l) => json(&l),
        Err(why) => api_error(StatusCode::INTERNAL_SERVER_ERROR, "internal", &why),
    }
}

/// The wire events of a stored log (each payload a `StoredEvent`).
pub fn decode_log(game: i64, log: &[(u64, Vec<u8>)]) -> Result<GameEventLog, String> {
    let mut events: Vec<w::GameEvent> = Vec::with_capacity(log.len());
    for (seq, payload) in log {
        let s = StoredEvent::decode(payload.as_slice())
            .map_err(|e| format!("stored event {seq} cannot be decoded: {e}"))?;
        let mut e = s
            .event
            .ok_or_else(|| format!("stored event {seq} has no event"))?;
        e.seq = *seq;
        events.push(e);
    }
    Ok(GameEventLog {
        game_id: game.to_string(),
        events,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unknown_page_is_the_shell_with_404_and_an_unknown_api_route_json() {
        let page = not_found("/league/1/nowhere".parse().unwrap()).await;
        assert_eq!(page.status(), StatusCode::NOT_FOUND);
        let ct = page.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .to_string();
        assert!(ct.starts_with("text/html"), "{ct}");
        let body = axum::body::to_bytes(page.into_body(), 1 << 20)
            .await
            .unwrap();
        assert_eq!(body, SHELL.as_bytes());
        let api = not_found("/api/v1/nowhere".parse().unwrap()).await;
        assert_eq!(api.status(), StatusCode::NOT_FOUND);
        let body = axum::body::to_bytes(api.into_body(), 1 << 20)
            .await
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["code"], "not_found");
        assert!(v["message"].as_str().unwrap().contains("/api/v1/nowhere"));
    }

    #[test]
    fn legal_moves_of_the_start_position() {
        let l = legal_moves("startpos").unwrap();
        assert_eq!(l.moves.len(), 44);
        assert_eq!(l.to_move, w::Side::Red as i32);
        assert!(!l.check);
        let c = l.moves.iter().find(|m| m.iccs == "h2e2").unwrap();
        assert_eq!(c.chinese, "炮二平五");
        assert_eq!(c.wxf, "C2=5");
    }

    #[test]
    fn legal_moves_in_check_and_refusals() {
        // Black king e9 checked by the rook on e5; Black to move.
        let l = legal_moves("4k4/9/9/9/4R4/9/9/9/9/3K5 b - - 0 1").unwrap();
        assert!(l.check);
        assert!(l.moves.iter().all(|m| m.iccs.starts_with("e9")));
        assert!(!l.moves.is_empty());
        assert!(legal_moves("").unwrap_err().contains("missing"));
        assert!(legal_moves("not a fen").unwrap_err().starts_with("bad fen"));
        assert!(
            legal_moves(&"r".repeat(300))
                .unwrap_err()
                .contains("longer")
        );
    }

    /// Every module the client imports, and every asset the shell names, is embedded: a file
    /// added to `web/` but not to `assets!` would be a 404 in the browser.
    #[test]
    fn every_import_resolves_to_an_embedded_asset() {
        let mut wanted: Vec<String> = Vec::new();
        for cap in SHELL.split("/assets/").skip(1) {
            let name: String = cap.chars().take_while(|c| *c != '"').collect();
            wanted.push(name);
        }
        for (name, text) in ASSETS {
            if !name.ends_with(".js") {
                continue;
            }
            let dir = name.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            for part in text.split("from '").skip(1) {
                let rel: String = part.chars().take_while(|c| *c != '\'').collect();
                wanted.push(resolve(dir, &rel).unwrap_or_else(|| panic!("{name}: {rel}")));
            }
        }
        assert!(wanted.len() > ASSETS.len(), "the scan found the imports");
        for w in wanted {
            assert!(find_asset(&w).is_some(), "{w} is imported but not embedded");
        }
    }

    fn resolve(dir: &str, rel: &str) -> Option<String> {
        let mut parts: Vec<&str> = if dir.is_empty() {
            Vec::new()
        } else {
            dir.split('/').collect()
        };
        for seg in rel.split('/') {
            match seg {
                "." => {}
                ".." => {
                    parts.pop()?;
                }
                s => parts.push(s),
            }
        }
        Some(parts.join("/"))
    }

    #[test]
    fn the_shell_is_served_for_every_page_and_assets_have_types() {
        assert!(SHELL.contains("/assets/app.js"));
        assert_eq!(
            content_type("pages/game.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("style.css"), "text/css; charset=utf-8");
        assert!(find_asset("../Cargo.toml").is_none());
    }

    #[test]
    fn a_stored_log_decodes_to_its_wire_events() {
        let ev = w::GameEvent {
            game_id: "7".into(),
            seq: 1,
            at_ms: 5,
            kind: Some(w::game_event::Kind::Paused(w::GamePaused {
                clock: None,
                arbiter: Some(w::ArbiterNote {
                    arbiter_id: "2".into(),
                    reason: "network".into(),
                }),
            })),
        };
        let stored = StoredEvent {
            event: Some(ev.clone()),
            ..StoredEvent::default()
        };
        let l = decode_log(7, &[(1, stored.encode_to_vec())]).unwrap();
        assert_eq!(l.events, vec![ev]);
        assert!(decode_log(7, &[(2, vec![0xff, 0xff])]).is_err());
    }
}
