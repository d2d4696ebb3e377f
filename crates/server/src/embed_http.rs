//! The embeddable live board: pages made for an `<iframe>` on another site, and the script tag
//! that inserts one.
//!
//! - `GET /embed/game/{id}` and `GET /embed/league/{id}/match/{round}/{table}`: the page (live
//!   behind the event's broadcast delay, no sign-in, no controls but review, `?lang=zh|en`),
//!   with `Content-Security-Policy: frame-ancestors …` from `Config::embed_ancestors`
//!   (`chuhe serve --embed-ancestors`).
//! - `GET /embed/page.js`: its module (it imports the client's modules from `/assets/`).
//! - `GET /embed.js`: the script a host page includes to insert the iframe.

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::env::Env;

const PAGE: &str = include_str!("../web/embed/embed.html");
const PAGE_JS: &str = include_str!("../web/embed/page.js");
const LOADER_JS: &str = include_str!("../web/embed/embed.js");

pub fn router() -> Router<Env> {
    Router::new()
        .route("/embed/game/{id}", get(page))
        .route("/embed/league/{id}/match/{round}/{table}", get(page))
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

async fn page(State(env): State<Env>) -> Response {
    let csp = format!("frame-ancestors {}", env.config.embed_ancestors);
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
