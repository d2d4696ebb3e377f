//! League API requests for a league another node runs, forwarded to it over its channel; the
//! casual-challenge routes, forwarded to the node holding the challenges' lease.

use super::*;
use crate::env::Env;

/// Marks a league API request forwarded from another node (it is never forwarded again).
const FORWARDED: &str = "x-chuhe-forwarded";

/// The league id of a league API path (`/api/v1/leagues/<id>…`).
fn league_in_path(path: &str) -> Option<i64> {
    // The event feed (SSE) is a stream, not one answer: it follows the league's stream
    // through the websocket relay (`feed_http.rs`) instead.
    if path.ends_with("/feed") {
        return None;
    }
    path.strip_prefix("/api/v1/leagues/")?
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// Several nodes: a league API request for a league another node runs is answered by that
/// node (forwarded over its channel; `unavailable` 503 when it does not answer in time).
pub async fn forward_league(
    axum::extract::State(env): axum::extract::State<Env>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let Some(link) = env.node.clone() else {
        return next.run(req).await;
    };
    let Some(id) = league_in_path(req.uri().path()) else {
        return next.run(req).await;
    };
    if env.leagues.get(id).is_some() || req.headers().contains_key(FORWARDED) {
        return next.run(req).await;
    }
    let holder = match link.cluster.holder(&league_key(id)).await {
        Ok(Some(h)) if h != link.id => h,
        _ => return next.run(req).await,
    };
    forward(&env, &link, &holder, req).await
}

/// The lease naming the node that holds the casual challenges (`challenge.rs`).
pub const CHALLENGES_KEY: &str = "challenges";

/// Several nodes: the casual challenges live on one node, the holder of the `challenges`
/// lease (the first node asked takes it); a challenge request to any other node is answered
/// by that one. A Redis outage answers `unavailable` rather than keep challenges apart.
pub async fn forward_challenges(
    axum::extract::State(env): axum::extract::State<Env>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let Some(link) = env.node.clone() else {
        return next.run(req).await;
    };
    let path = req.uri().path();
    if !(path == "/api/v1/challenges" || path.starts_with("/api/v1/challenges/"))
        || req.headers().contains_key(FORWARDED)
    {
        return next.run(req).await;
    }
    match link.cluster.acquire(CHALLENGES_KEY).await {
        Ok(None) => next.run(req).await,
        Ok(Some(holder)) => forward(&env, &link, &holder, req).await,
        Err(_) => crate::error::api_error(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            ClientError::Unavailable.code(),
            &ClientError::Unavailable.to_string(),
        ),
    }
}

/// Sends an HTTP request to node `holder` over its channel and answers with its answer
/// (`unavailable` 503 when it does not answer in time).
async fn forward(
    env: &Env,
    link: &Arc<Link>,
    holder: &str,
    req: axum::extract::Request,
) -> axum::response::Response {
    let (parts, body) = req.into_parts();
    let Ok(body) = axum::body::to_bytes(body, 1 << 20).await else {
        return crate::error::api_error(
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_argument",
            "the body is too large",
        );
    };
    let header = |name: axum::http::HeaderName| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let call = link
        .next_http_call
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (tx, rx) = tokio::sync::oneshot::channel();
    if let Ok(mut calls) = link.http_calls.lock() {
        calls.insert(call, tx);
    }
    let msg = NodeMessage {
        kind: Some(node_message::Kind::HttpRequest(w::NodeHttpRequest {
            origin: link.id.clone(),
            call,
            method: parts.method.to_string(),
            path: parts
                .uri
                .path_and_query()
                .map(|p| p.to_string())
                .unwrap_or_default(),
            authorization: header(axum::http::header::AUTHORIZATION),
            content_type: header(axum::http::header::CONTENT_TYPE),
            body: body.to_vec(),
        })),
    };
    link.send_to(holder, &msg);
    let answer = tokio::time::timeout(env.config.remote_timeout, rx).await;
    if let Ok(mut calls) = link.http_calls.lock() {
        calls.remove(&call);
    }
    match answer {
        Ok(Ok(r)) => {
            let status = axum::http::StatusCode::from_u16(r.status as u16)
                .unwrap_or(axum::http::StatusCode::BAD_GATEWAY);
            let mut resp = axum::response::Response::new(axum::body::Body::from(r.body));
            *resp.status_mut() = status;
            if let Ok(v) = axum::http::HeaderValue::from_str(&r.content_type) {
                resp.headers_mut()
                    .insert(axum::http::header::CONTENT_TYPE, v);
            }
            resp
        }
        _ => crate::error::api_error(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            ClientError::Unavailable.code(),
            &ClientError::Unavailable.to_string(),
        ),
    }
}

/// Answers a league API request another node forwarded, through this node's own routes.
pub(super) async fn serve_http(link: Arc<Link>, r: w::NodeHttpRequest) {
    let mut req = axum::http::Request::builder()
        .method(r.method.as_str())
        .uri(r.path.as_str())
        .header(FORWARDED, "1");
    if !r.authorization.is_empty() {
        req = req.header(axum::http::header::AUTHORIZATION, r.authorization.as_str());
    }
    if !r.content_type.is_empty() {
        req = req.header(axum::http::header::CONTENT_TYPE, r.content_type.as_str());
    }
    let routes = link.routes();
    let (status, content_type, body) = match (req.body(axum::body::Body::from(r.body)), routes) {
        (Ok(_), None) => (503, String::new(), Vec::new()),
        (Ok(req), Some(mut router)) => {
            let resp = match tower_service::Service::call(&mut router, req).await {
                Ok(resp) => resp,
                Err(never) => match never {},
            };
            let status = resp.status().as_u16();
            let ct = resp
                .headers()
                .get(axum::http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let body = axum::body::to_bytes(resp.into_body(), 16 << 20)
                .await
                .map(|b| b.to_vec())
                .unwrap_or_default();
            (status, ct, body)
        }
        (Err(_), _) => (400, String::new(), Vec::new()),
    };
    let msg = NodeMessage {
        kind: Some(node_message::Kind::HttpResponse(w::NodeHttpResponse {
            call: r.call,
            status: u32::from(status),
            content_type,
            body,
        })),
    };
    link.send_to(&r.origin, &msg);
}
