//! Who is asking: the bearer token of an HTTP request or websocket upgrade, resolved to a
//! principal (the JSON error answer, [`api_error`], is the error module's).

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use tracing::warn;

use crate::env::Env;
pub use crate::error::api_error;
use crate::persist::Role;
use crate::request::Principal;

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
    match store_deadline(env, env.persist.authenticate(&token)).await {
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

/// Runs a store request with the configured deadline (`Config::store_timeout`): during an
/// outage the caller is answered `store_unavailable` at once instead of waiting for the
/// database's own timeouts.
pub(crate) fn timed_out(env: &Env) -> crate::persist::PersistError {
    crate::persist::PersistError::unavailable(format!(
        "no answer within {} ms",
        env.config.store_timeout.as_millis()
    ))
}

pub(crate) async fn store_deadline<T>(
    env: &Env,
    fut: impl std::future::Future<Output = Result<T, crate::persist::PersistError>>,
) -> Result<T, crate::persist::PersistError> {
    tokio::time::timeout(env.config.store_timeout, fut)
        .await
        .unwrap_or_else(|_| Err(timed_out(env)))
}

/// The request's principal if it is the organizer; else 401, or 403 `permission_denied`.
pub(crate) async fn organizer(
    env: &Env,
    headers: &HeaderMap,
) -> Result<crate::request::Principal, Response> {
    let who = authenticate(env, bearer(headers, None)).await?;
    if who.role() != Some(Role::Organizer) {
        return Err(api_error(
            StatusCode::FORBIDDEN,
            "permission_denied",
            "this needs an organizer token",
        ));
    }
    Ok(who)
}
