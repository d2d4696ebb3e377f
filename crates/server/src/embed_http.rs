//! The embeddable live board: pages made for an `<iframe>` on another site, and the script tag
//! that inserts one.
//!
//! - `GET /embed/game/{id}` and `GET /embed/league/{id}/match/{round}/{table}`: the page (live
//!   behind the event's broadcast delay, no sign-in, no controls but review, `?lang=zh|en`),
//!   with `Content-Security-Policy: frame-ancestors …`: the event's
//!   `broadcast.embed_ancestors` within the operator's `Config::embed_ancestors`
//!   (`chuhe serve --embed-ancestors`), see `chuhe_league_core::ancestors`.
//! - `GET /embed/page.js`: its module (it imports the client's modules from `/assets/`).
//! - `GET /embed.js`: the script a host page includes to insert the iframe.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use chuhe_league_core::ancestors::ancestors;

use crate::env::Env;

const PAGE: &str = include_str!("../web/embed/embed.html");
const PAGE_JS: &str = include_str!("../web/embed/page.js");
const LOADER_JS: &str = include_str!("../web/embed/embed.js");

pub fn router() -> Router<Env> {
    Router::new()
        .route("/embed/game/{id}", get(game_page))
        .route("/embed/league/{id}/match/{round}/{table}", get(match_page))
        .route("/embed/page.js", get(|| async { js(PAGE_JS) }))
        .route("/embed.js", get(|| async { js(LOADER_JS) }))
}

fn js(text: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        text,
    )
        .into_response()
}

/// A game's page: the event's sources when the game is a league board's (its league running
/// on this node), else the operator's.
async fn game_page(State(env): State<Env>, Path(id): Path<String>) -> Response {
    let league = match id.parse::<i64>() {
        Ok(g) => env
            .persist
            .game(g)
            .await
            .ok()
            .flatten()
            .and_then(|row| row.key)
            .and_then(|k| crate::adopt::league_board(&k))
            .map(|b| b.league_id),
        Err(_) => None,
    };
    page(&env, league.as_deref())
}

async fn match_page(
    State(env): State<Env>,
    Path((id, _round, _table)): Path<(String, String, String)>,
) -> Response {
    page(&env, Some(&id))
}

fn page(env: &Env, league: Option<&str>) -> Response {
    let event = league
        .and_then(|id| id.parse::<i64>().ok())
        .and_then(|id| env.leagues.get(id))
        .and_then(|h| {
            h.snapshot()
                .spec
                .broadcast
                .as_ref()
                .and_then(|b| b.embed_ancestors.clone())
        });
    let csp = format!(
        "frame-ancestors {}",
        ancestors(&env.config.embed_ancestors, event.as_deref())
    );
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
            (header::CACHE_CONTROL, "no-cache".to_string()),
            (header::CONTENT_SECURITY_POLICY, csp),
        ],
        PAGE,
    )
        .into_response()
}
