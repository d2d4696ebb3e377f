//! Who is asking: the bearer token of an HTTP request or websocket upgrade, resolved to a
//! principal, and the JSON error answer every HTTP refusal uses.

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chuhe_proto::v1::ApiError;
use tracing::warn;

use crate::Env;
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
    // A token the store accepted within `token_cache` (see `token_cache`) is not asked again.
    let key = crate::token_cache::key_of(&token);
    let checked_ms = env.time.now_ms();
    let generation = env.tokens.generation();
    if let Some(account) = env.tokens.get(&key, checked_ms) {
        return Ok(Principal {
            account: Some(account),
        });
    }
    match crate::http::store_deadline(env, env.persist.authenticate(&token)).await {
        Ok(Some(account)) => {
            env.tokens.put(key, account.clone(), checked_ms, generation);
            Ok(Principal {
                account: Some(account),
            })
        }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use tokio::sync::{mpsc, watch};

    use super::*;
    use crate::persist::{MemoryPersist, Persist, Role};

    async fn env_with(ttl: Duration) -> (Env, Arc<MemoryPersist>, watch::Sender<bool>) {
        let persist = Arc::new(MemoryPersist::default());
        let (sd_tx, sd_rx) = watch::channel(false);
        let (done_tx, _done_rx) = mpsc::channel(1);
        let config = crate::Config {
            token_cache: ttl,
            ..crate::Config::default()
        };
        let env = Env::start(persist.clone(), config, sd_rx, done_tx);
        (env, persist, sd_tx)
    }

    fn id_of(r: &Result<Principal, Response>) -> Option<i64> {
        r.as_ref().ok().and_then(|p| p.id())
    }

    /// A token revoked behind this node's back (another node, the database directly) stops
    /// opening connections once `token_cache` has passed since it was last checked, and not
    /// later; until then the cache answers without the store. The clock is tokio's paused one.
    #[tokio::test(start_paused = true)]
    async fn a_token_revoked_elsewhere_stops_working_within_the_cache_ttl() {
        let (env, persist, _sd) = env_with(Duration::from_secs(10)).await;
        let acc = persist.create_account("Eve", Role::Player).await.unwrap();
        let (token, token_id) = persist.issue_token(acc.id, None).await.unwrap();
        assert_eq!(
            id_of(&authenticate(&env, Some(token.clone())).await),
            Some(acc.id)
        );
        assert_eq!(env.tokens.len(), 1);
        // Revoked in the store only, as another node or `chuhe admin` would.
        assert!(persist.revoke_token(token_id).await.unwrap());
        tokio::time::advance(Duration::from_millis(9_990)).await;
        assert_eq!(
            id_of(&authenticate(&env, Some(token.clone())).await),
            Some(acc.id),
            "within the ttl the cached answer stands"
        );
        tokio::time::advance(Duration::from_millis(10)).await;
        let r = authenticate(&env, Some(token.clone())).await;
        assert_eq!(
            r.as_ref().err().map(|r| r.status()),
            Some(StatusCode::UNAUTHORIZED)
        );
        // And a refusal is never cached: it stays refused.
        assert!(authenticate(&env, Some(token)).await.is_err());
    }

    /// A revocation through this node clears the cache: the token is refused at once.
    #[tokio::test(start_paused = true)]
    async fn clearing_the_cache_makes_a_revocation_count_at_once() {
        let (env, persist, _sd) = env_with(Duration::from_secs(10)).await;
        let acc = persist.create_account("Eve", Role::Player).await.unwrap();
        let (token, token_id) = persist.issue_token(acc.id, None).await.unwrap();
        assert!(authenticate(&env, Some(token.clone())).await.is_ok());
        assert!(persist.revoke_token(token_id).await.unwrap());
        env.tokens.clear();
        assert!(authenticate(&env, Some(token)).await.is_err());
    }

    /// With `token_cache` 0 every login asks the store.
    #[tokio::test(start_paused = true)]
    async fn a_zero_ttl_asks_the_store_every_time() {
        let (env, persist, _sd) = env_with(Duration::ZERO).await;
        let acc = persist.create_account("Eve", Role::Player).await.unwrap();
        let (token, token_id) = persist.issue_token(acc.id, None).await.unwrap();
        assert!(authenticate(&env, Some(token.clone())).await.is_ok());
        assert!(env.tokens.is_empty());
        assert!(persist.revoke_token(token_id).await.unwrap());
        assert!(authenticate(&env, Some(token)).await.is_err());
    }
}
