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
    // A token the store accepted within `token_cache` (see `token_cache`) is not asked again.
    let key = crate::token_cache::key_of(&token);
    let checked_ms = env.time.now_ms();
    let generation = env.tokens.generation();
    if let Some(account) = env.tokens.get(&key, checked_ms) {
        return Ok(Principal {
            account: Some(account),
        });
    }
    match store_deadline(env, env.persist.authenticate(&token)).await {
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
