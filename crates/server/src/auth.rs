//! Who is asking: the bearer token of an HTTP request or websocket upgrade, resolved to a
//! principal, and the JSON error answer every HTTP refusal uses.

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chuhe_proto::v1::ApiError;
use tracing::warn;

use crate::env::Env;
use crate::request::Principal;

/// A JSON error body `{"code": …, "message": …}` with a status.
pub fn api_error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = chuhe_proto::encode_json(&ApiError {
        code: code.into(),
        message: message.into(),
    });
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The bearer token of a request: `Authorization: Bearer …` or `?token=…`
/// (browsers cannot set headers on websockets).
pub fn bearer(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    if let Some(v) = headers.get(axum::http::header::AUTHORIZATION) {
        if let Ok(s) = v.to_str() {
            if let Some(t) = s
                .strip_prefix("Bearer ")
                .or_else(|| s.strip_prefix("bearer "))
            {
                return Some(t.trim().to_string());
            }
        }
    }
    query.map(|s| s.to_string()).filter(|s| !s.is_empty())
}

/// Resolves a bearer token: Ok(None) = anonymous, Err = an HTTP error answer.
pub async fn authenticate(env: &Env, token: Option<String>) -> Result<Principal, Response> {
    let Some(token) = token else {
        return Ok(Principal { account: None });
    };
    match crate::http::store_deadline(env, env.persist.authenticate(&token)).await {
        Ok(Some(account)) => Ok(Principal {
            account: Some(account),
        }),
        Ok(None) => Err(api_error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "unknown or revoked token",
        )),
        Err(e) => {
            warn!(error = %e, "authentication failed");
            Err(api_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                "cannot check the token now",
            ))
        }
    }
}
