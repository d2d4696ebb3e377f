//! Game id → handle. Touched when a connection first names a game, when a
//! game is created or unloaded — never per move (connections cache handles).

use std::sync::Mutex;

use chuhe_proto::v1::GameSummary;

use crate::adopt::{self, GameSeed};
use crate::env::Env;
use crate::error::ClientError;
use crate::handle::GameHandle;
use crate::node;

#[derive(Default)]
pub struct Registry {
    games: Mutex<chuhe_store::IdMap<i64, GameHandle>>,
    /// Serialises loads so one game is never loaded twice (one owner per game).
    loading: tokio::sync::Mutex<()>,
}

impl Registry {
    fn map(&self) -> std::sync::MutexGuard<'_, chuhe_store::IdMap<i64, GameHandle>> {
        match self.games.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    pub fn get(&self, id: i64) -> Option<GameHandle> {
        self.map().get(&id).filter(|h| h.is_alive()).cloned()
    }

    pub fn insert(&self, h: GameHandle) {
        self.map().insert(h.id, h);
    }

    pub fn remove_dead(&self, id: i64) {
        let mut m = self.map();
        if m.get(&id).is_some_and(|h| !h.is_alive()) {
            m.remove(&id);
        }
    }

    pub fn len(&self) -> usize {
        self.map().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Summaries of unfinished games, by id — with several nodes, the whole cluster's (the
    /// other nodes' as they published them within the last seconds).
    pub fn live_games_of(&self, env: &Env) -> Vec<GameSummary> {
        let mut v = self.local_games();
        if let Some(link) = &env.node {
            let mine: std::collections::HashSet<String> =
                v.iter().map(|s| s.game_id.clone()).collect();
            let mut others = link.others_games();
            others.retain(|s| !mine.contains(&s.game_id));
            others.sort_by(|a, b| a.game_id.cmp(&b.game_id));
            others.dedup_by(|a, b| a.game_id == b.game_id);
            v.extend(others);
            v.sort_by_key(|s| s.game_id.parse::<i64>().unwrap_or(i64::MAX));
        }
        v
    }

    /// Summaries of the unfinished games this node runs, by id.
    pub fn local_games(&self) -> Vec<GameSummary> {
        let handles: Vec<GameHandle> = self.map().values().cloned().collect();
        let mut v: Vec<(i64, GameSummary)> = handles
            .iter()
            .filter(|h| !h.is_remote())
            .filter_map(|h| h.summary.lock().ok().map(|s| (h.id, s.clone())))
            .filter(|(_, s)| !s.finished)
            .collect();
        v.sort_by_key(|(id, _)| *id);
        v.into_iter().map(|(_, s)| s).collect()
    }

    /// The running actor of a game, loading (recovering) it from the store if needed.
    pub async fn get_or_load(&self, env: &Env, id: i64) -> Result<GameHandle, ClientError> {
        if let Some(h) = self.get(id) {
            return Ok(h);
        }
        let _guard = self.loading.lock().await;
        if let Some(h) = self.get(id) {
            return Ok(h);
        }
        let seed = load_seed(env, id).await?;
        if let Some(link) = &env.node {
            if let Some(owner) = acquire(link, id).await? {
                let h = link.remote_handle(id, owner);
                self.insert(h.clone());
                return Ok(h);
            }
            return self.recover_owned(env, link, seed).await;
        }
        let h = adopt::recover(env.clone(), seed).await.map_err(|e| {
            tracing::error!(game = id, error = %e, "cannot load game");
            e.client_error()
        })?;
        self.insert(h.clone());
        Ok(h)
    }

    /// Several nodes: this node holds the game's lease; it claims the game in the store
    /// (fencing whoever wrote before) and recovers it by folding its log.
    async fn recover_owned(
        &self,
        env: &Env,
        link: &std::sync::Arc<crate::node::Link>,
        seed: GameSeed,
    ) -> Result<GameHandle, ClientError> {
        let id = seed.row.id.0;
        env.leagues
            .learn_arbiters(env, seed.row.key.as_deref())
            .await;
        if let Err(e) = claim(env, link, id).await {
            let _ = link.cluster.release(&node::game_key(id)).await;
            return Err(e);
        }
        match adopt::recover(env.clone(), seed).await {
            Ok(h) => {
                link.took(id);
                self.insert(h.clone());
                Ok(h)
            }
            Err(e) => {
                tracing::error!(game = id, error = %e, "cannot load game");
                env.persist.unclaim(Some(id), None);
                let _ = link.cluster.release(&node::game_key(id)).await;
                Err(e.client_error())
            }
        }
    }

    /// Several nodes: the handles of games other nodes run.
    pub(crate) fn remote_handles(&self) -> Vec<GameHandle> {
        self.map()
            .values()
            .filter(|h| h.is_remote() && h.is_alive())
            .cloned()
            .collect()
    }

    /// Several nodes: a remote game whose owner is gone — this node takes its lease if it can
    /// and runs it from now on (its local subscribers move to it), or follows the new owner.
    pub(crate) async fn take_over(
        &self,
        env: &Env,
        remote: &GameHandle,
    ) -> Result<(), ClientError> {
        let Some(link) = &env.node else {
            return Ok(());
        };
        let id = remote.id;
        let _guard = self.loading.lock().await;
        if self.get(id).is_some_and(|h| !h.is_remote()) {
            return Ok(());
        }
        let seed = load_seed(env, id).await?;
        if let Some(owner) = acquire(link, id).await? {
            link.ctl(node::Ctl::Owner {
                id,
                owner: Some(owner),
            });
            return Ok(());
        }
        remote
            .alive
            .store(false, std::sync::atomic::Ordering::Release);
        self.remove_dead(id);
        self.recover_owned(env, link, seed).await?;
        link.ctl(node::Ctl::Owner { id, owner: None });
        Ok(())
    }

    /// Several nodes: makes this node the owner of a game about to be created (its lease and
    /// its claim in the store) before its first event is committed.
    pub async fn own_new(&self, env: &Env, id: i64) -> Result<(), ClientError> {
        let Some(link) = &env.node else {
            return Ok(());
        };
        if acquire(link, id).await?.is_some() {
            return Err(ClientError::Unavailable);
        }
        claim(env, link, id).await?;
        link.took(id);
        Ok(())
    }
}

/// Takes a game's lease: `None` this node holds it now, `Some(node)` another node does.
async fn acquire(link: &node::Link, id: i64) -> Result<Option<String>, ClientError> {
    link.wait_released(id).await;
    link.cluster
        .acquire(&node::game_key(id))
        .await
        .map_err(|e| {
            tracing::warn!(game = id, error = %e, "cannot take the game's lease");
            ClientError::Unavailable
        })
}

async fn claim(env: &Env, link: &node::Link, id: i64) -> Result<(), ClientError> {
    env.persist
        .claim_game(id, &link.id)
        .await
        .map(|_| ())
        .map_err(|e| {
            tracing::warn!(game = id, error = %e, "cannot claim the game in the store");
            ClientError::StoreUnavailable
        })
}

pub async fn load_seed(env: &Env, id: i64) -> Result<GameSeed, ClientError> {
    let row = env
        .persist
        .game(id)
        .await
        .map_err(|_| ClientError::StoreUnavailable)?
        .ok_or_else(|| ClientError::GameNotFound(id.to_string()))?;
    let red = env
        .persist
        .account(row.red.0)
        .await
        .map_err(|_| ClientError::StoreUnavailable)?
        .ok_or(ClientError::StoreUnavailable)?;
    let black = env
        .persist
        .account(row.black.0)
        .await
        .map_err(|_| ClientError::StoreUnavailable)?
        .ok_or(ClientError::StoreUnavailable)?;
    Ok(GameSeed {
        row,
        red,
        black,
        move_limit_plies: env.config.move_limit_plies,
        calls: None,
    })
}
