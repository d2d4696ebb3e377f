//! HTTP routes: health, metrics, game records, the organiser API; the browser client (`web`).

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chuhe_proto::v1::{
    CreateGameRequest, CreateGameResponse, CreatePlayerRequest, GameList, IssueTokenRequest,
    IssueTokenResponse, Player, RevokeTokenRequest,
};
use serde::de::DeserializeOwned;

use crate::admin::{self, AdminError};
use crate::auth::{api_error, bearer, organizer, store_deadline, timed_out};
use crate::conn;
use crate::env::Env;
use crate::persist::Role;
use crate::record::{self, Notation};
use crate::records_http::{TokenQuery, record_view};

pub fn router(env: Env) -> Router {
    Router::new()
        .merge(crate::web::router())
        .route("/ws", get(conn::ws_handler))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/api/v1/games", get(list_games).post(create_game))
        .route("/api/v1/games/{id}", get(game_json))
        .route("/api/v1/games/{id}/pgn", get(game_pgn))
        .route("/api/v1/players", post(create_player))
        .route("/api/v1/tokens", post(issue_token))
        .route("/api/v1/tokens/revoke", post(revoke_token))
        .merge(crate::league::api::router())
        .merge(crate::league::import::router())
        .merge(crate::records_http::router())
        .merge(crate::calls::router())
        .merge(crate::league::pages_api::router())
        .merge(crate::challenge_http::router())
        .layer(axum::middleware::from_fn_with_state(
            env.clone(),
            crate::node::forward_league,
        ))
        .layer(axum::middleware::from_fn_with_state(
            env.clone(),
            crate::node::forward_challenges,
        ))
        .layer(axum::middleware::map_response_with_state(
            (),
            |State(()): State<()>, uri: axum::http::Uri, r: Response| json_errors(uri, r),
        ))
        .with_state(env)
}

/// Every error answer under `/api/` is the documented JSON `{code, message}`: the refusals
/// axum's extractors and router produce themselves (an undecodable path segment, a
/// duplicated or malformed query parameter, an unknown route, a wrong method, a body that is
/// not JSON) are plain text or empty; they are rewritten here with a code for their status.
async fn json_errors(uri: axum::http::Uri, r: Response) -> Response {
    let status = r.status();
    let is_json = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !uri.path().starts_with("/api/")
        || !(status.is_client_error() || status.is_server_error())
        || is_json
    {
        return r;
    }
    let code = match status {
        StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => "invalid_argument",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::UNAUTHORIZED => "unauthenticated",
        StatusCode::FORBIDDEN => "permission_denied",
        s if s.is_server_error() => "internal",
        _ => "invalid_argument",
    };
    let text = axum::body::to_bytes(r.into_body(), 4096)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let message = if text.is_empty() {
        match status {
            StatusCode::NOT_FOUND => format!("no route {}", uri.path()),
            s => s.canonical_reason().unwrap_or("refused").to_string(),
        }
    } else {
        text
    };
    api_error(status, code, &message)
}

fn json<M: serde::Serialize>(status: StatusCode, m: &M) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        chuhe_proto::encode_json(m),
    )
        .into_response()
}

fn admin_err(e: AdminError) -> Response {
    api_error(e.status(), e.code(), &e.to_string())
}

async fn healthz(State(env): State<Env>) -> Response {
    if *env.shutdown.borrow() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    (StatusCode::OK, "ok\n").into_response()
}

/// Readiness (as orchestrators probe it): 200 while the store answers and the server is not
/// shutting down; 503 with the JSON error otherwise. `/healthz` is liveness: 200 while the
/// process serves at all, whatever the store does.
async fn readyz(State(env): State<Env>) -> Response {
    if *env.shutdown.borrow() {
        return api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            "the server is shutting down",
        );
    }
    if crate::node::cut_off(&env) {
        // Several nodes: without the coordination service this node cannot reach the owners
        // of the games it does not run, nor take any game over.
        tracing::warn!("not ready: the coordination service (Redis) is unreachable");
        return api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "cluster_unavailable",
            "not ready: this node cannot reach the coordination service (Redis)",
        );
    }
    match store_deadline(&env, env.persist.ping()).await {
        Ok(()) if env.node.is_some() => json(
            StatusCode::OK,
            &serde_json::json!({"status": "ready", "store": "ok", "cluster": "ok"}),
        ),
        Ok(()) => json(
            StatusCode::OK,
            &serde_json::json!({"status": "ready", "store": "ok"}),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "not ready: the store does not answer");
            api_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                &format!("not ready: {e}"),
            )
        }
    }
}

/// `/metrics` is for operators: it counts every move at once, so an anonymous reader could
/// time the moves of a game whose public view is still behind its broadcast delay. It needs
/// the operator token (`Config::metrics_token`, for a Prometheus scraper) or an organizer's
/// token, as `Authorization: Bearer …`; anonymous readers get 401, other roles 403.
async fn metrics(State(env): State<Env>, headers: HeaderMap) -> Response {
    let token = bearer(&headers, None);
    let operator = match (&env.config.metrics_token, &token) {
        (Some(want), Some(got)) => constant_time_eq(want.as_bytes(), got.as_bytes()),
        _ => false,
    };
    if !operator {
        if token.is_none() {
            return api_error(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "/metrics needs the operator's metrics token or an organizer token (Authorization: Bearer …)",
            );
        }
        if let Err(r) = organizer(&env, &headers).await {
            return r;
        }
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        env.metrics.render(env.persist.commit_stats()),
    )
        .into_response()
}

/// Compares two secrets in time that depends only on their lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn list_games(State(env): State<Env>) -> Response {
    json(
        StatusCode::OK,
        &GameList {
            games: env.registry.live_games_of(),
        },
    )
}

async fn game_json(
    State(env): State<Env>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<TokenQuery>,
) -> Response {
    match record_view(&env, &headers, &q, &id).await {
        Ok(v) => json(StatusCode::OK, &v.snapshot()),
        Err(r) => r,
    }
}

async fn game_pgn(
    State(env): State<Env>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<TokenQuery>,
) -> Response {
    let Some(notation) = Notation::parse(q.notation.as_deref().unwrap_or("")) else {
        return api_error(
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "notation must be chinese, wxf or iccs",
        );
    };
    match record_view(&env, &headers, &q, &id).await {
        Ok(v) => (
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            record::pgn(&v, notation),
        )
            .into_response(),
        Err(r) => r,
    }
}

/// Decodes an API request body (canonical JSON of the request message; empty = `{}`): a body
/// that is not UTF-8 or not the message is the JSON error 400 `malformed_body`.
pub(crate) fn body<M: DeserializeOwned>(b: &Bytes) -> Result<M, Box<Response>> {
    let text = std::str::from_utf8(b).map_err(|_| {
        api_error(
            StatusCode::BAD_REQUEST,
            "malformed_body",
            "the body is not UTF-8",
        )
    })?;
    chuhe_proto::decode_json(if text.trim().is_empty() { "{}" } else { text }).map_err(|e| {
        Box::new(api_error(
            StatusCode::BAD_REQUEST,
            "malformed_body",
            &e.to_string(),
        ))
    })
}

async fn create_player(State(env): State<Env>, headers: HeaderMap, b: Bytes) -> Response {
    if let Err(r) = organizer(&env, &headers).await {
        return r;
    }
    let req: CreatePlayerRequest = match body(&b) {
        Ok(r) => r,
        Err(r) => return *r,
    };
    let role = match chuhe_proto::v1::Role::try_from(req.role) {
        Ok(chuhe_proto::v1::Role::Arbiter) => Role::Arbiter,
        Ok(chuhe_proto::v1::Role::Organizer) => Role::Organizer,
        Ok(chuhe_proto::v1::Role::Player | chuhe_proto::v1::Role::Unspecified) => Role::Player,
        _ => {
            return api_error(
                StatusCode::BAD_REQUEST,
                "invalid_argument",
                "role must be ROLE_PLAYER, ROLE_ARBITER or ROLE_ORGANIZER",
            );
        }
    };
    let given = Some(req.id.trim()).filter(|id| !id.is_empty());
    let made = tokio::time::timeout(
        env.config.store_timeout,
        admin::create_player_as(env.persist.as_ref(), given, &req.display_name, role),
    )
    .await
    .unwrap_or_else(|_| Err(AdminError::Store(timed_out(&env))));
    match made {
        Ok(a) => json(
            StatusCode::CREATED,
            &Player {
                id: given.map_or_else(|| a.id.to_string(), str::to_string),
                display_name: a.name,
                role: admin::wire_role(a.role) as i32,
            },
        ),
        Err(e) => admin_err(e),
    }
}

async fn issue_token(State(env): State<Env>, headers: HeaderMap, b: Bytes) -> Response {
    if let Err(r) = organizer(&env, &headers).await {
        return r;
    }
    let req: IssueTokenRequest = match body(&b) {
        Ok(r) => r,
        Err(r) => return *r,
    };
    let label = (!req.label.trim().is_empty()).then(|| req.label.trim().to_string());
    let p = env.persist.as_ref();
    let issued = tokio::time::timeout(env.config.store_timeout, async {
        let holder = admin::named_account(p, &req.player_id, "playerId").await?;
        admin::issue_token(p, holder.id, label).await
    })
    .await
    .unwrap_or_else(|_| Err(AdminError::Store(timed_out(&env))));
    match issued {
        Ok((token, id)) => json(
            StatusCode::CREATED,
            &IssueTokenResponse {
                token,
                token_id: id.to_string(),
            },
        ),
        Err(e) => admin_err(e),
    }
}

async fn revoke_token(State(env): State<Env>, headers: HeaderMap, b: Bytes) -> Response {
    if let Err(r) = organizer(&env, &headers).await {
        return r;
    }
    let req: RevokeTokenRequest = match body(&b) {
        Ok(r) => r,
        Err(r) => return *r,
    };
    let Ok(id) = req.token_id.trim().parse::<i64>() else {
        return api_error(
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "tokenId must be an id",
        );
    };
    let revoked = store_deadline(&env, env.persist.revoke_token(id)).await;
    // Whatever the answer (a timeout may still have revoked it): no token checked before the
    // revocation is taken from the cache any more.
    env.tokens.clear();
    match revoked {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => api_error(
            StatusCode::NOT_FOUND,
            "not_found",
            "no live token with that id",
        ),
        Err(e) => admin_err(e.into()),
    }
}

async fn create_game(State(env): State<Env>, headers: HeaderMap, b: Bytes) -> Response {
    if let Err(r) = organizer(&env, &headers).await {
        return r;
    }
    let req: CreateGameRequest = match body(&b) {
        Ok(r) => r,
        Err(r) => return *r,
    };
    match admin::create_game(&env, &req).await {
        Ok(info) => json(
            StatusCode::CREATED,
            &CreateGameResponse { info: Some(info) },
        ),
        Err(e) => admin_err(e),
    }
}
