//! Game id → handle. Touched when a connection first names a game, when a
//! game is created or unloaded — never per move (connections cache handles).

use std::sync::Arc;

use chuhe_proto::v1::GameSummary;

use crate::adopt::{self, AdoptDeps, GameSeed};
use crate::error::ClientError;
use crate::handle::{GameHandle, LoadedGames};
use crate::node;

/// The games loaded on this node ([`LoadedGames`], which it derefs to) and how a game is
/// loaded: recovered from the store here, or (several nodes) reached on its owner.
pub struct Registry {
    table: Arc<LoadedGames>,
    /// Serialises loads so one game is never loaded twice (one owner per game).
    loading: tokio::sync::Mutex<()>,
    adopt: AdoptDeps,
    node: Option<Arc<node::Link>>,
}

impl std::ops::Deref for Registry {
    type Target = LoadedGames;

    fn deref(&self) -> &LoadedGames {
        &self.table
    }
}

impl Registry {
    /// A registry filling `table`, putting the games it loads on their shards with `adopt`.
    pub fn new(adopt: AdoptDeps, node: Option<Arc<node::Link>>, table: Arc<LoadedGames>) -> Self {
        Registry {
            table,
            loading: tokio::sync::Mutex::default(),
            adopt,
            node,
        }
    }

    /// What putting a game on its shard takes (to create one: [`adopt::create`]).
    pub fn adopt_deps(&self) -> &AdoptDeps {
        &self.adopt
    }

    /// Summaries of unfinished games, by id — with several nodes, the whole cluster's (the
    /// other nodes' as they published them within the last seconds).
    pub fn live_games_of(&self) -> Vec<GameSummary> {
        let mut v = self.local_games();
        if let Some(link) = &self.node {
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

    /// The running actor of a game, loading (recovering) it from the store if needed.
    pub async fn get_or_load(&self, id: i64) -> Result<GameHandle, ClientError> {
        if let Some(h) = self.get(id) {
            return Ok(h);
        }
        let _guard = self.loading.lock().await;
        if let Some(h) = self.get(id) {
            return Ok(h);
        }
        let seed = self.load_seed(id).await?;
        if let Some(link) = &self.node {
            if let Some(owner) = acquire(link, id).await? {
                let h = link.remote_handle(id, owner);
                self.insert(h.clone());
                return Ok(h);
            }
            return self.recover_owned(link, seed).await;
        }
        let h = adopt::recover(self.adopt.clone(), seed)
            .await
            .map_err(|e| {
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
        link: &Arc<node::Link>,
        seed: GameSeed,
    ) -> Result<GameHandle, ClientError> {
        let id = seed.row.id.0;
        self.adopt
            .game
            .leagues
            .learn_arbiters(seed.row.key.as_deref())
            .await;
        if let Err(e) = self.claim(link, id).await {
            let _ = link.cluster.release(&node::game_key(id)).await;
            return Err(e);
        }
        match adopt::recover(self.adopt.clone(), seed).await {
            Ok(h) => {
                link.took(id);
                self.insert(h.clone());
                Ok(h)
            }
            Err(e) => {
                tracing::error!(game = id, error = %e, "cannot load game");
                self.adopt.persist.unclaim(Some(id), None);
                let _ = link.cluster.release(&node::game_key(id)).await;
                Err(e.client_error())
            }
        }
    }

    /// Several nodes: a remote game whose owner is gone — this node takes its lease if it can
    /// and runs it from now on (its local subscribers move to it), or follows the new owner.
    pub(crate) async fn take_over(&self, remote: &GameHandle) -> Result<(), ClientError> {
        let Some(link) = &self.node else {
            return Ok(());
        };
        let id = remote.id;
        let _guard = self.loading.lock().await;
        if self.get(id).is_some_and(|h| !h.is_remote()) {
            return Ok(());
        }
        let seed = self.load_seed(id).await?;
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
        self.recover_owned(link, seed).await?;
        link.ctl(node::Ctl::Owner { id, owner: None });
        Ok(())
    }

    /// Several nodes: makes this node the owner of a game about to be created (its lease and
    /// its claim in the store) before its first event is committed.
    pub async fn own_new(&self, id: i64) -> Result<(), ClientError> {
        let Some(link) = &self.node else {
            return Ok(());
        };
        if acquire(link, id).await?.is_some() {
            return Err(ClientError::Unavailable);
        }
        self.claim(link, id).await?;
        link.took(id);
        Ok(())
    }

    async fn claim(&self, link: &node::Link, id: i64) -> Result<(), ClientError> {
        self.adopt
            .persist
            .claim_game(id, &link.id)
            .await
            .map(|_| ())
            .map_err(|e| {
                tracing::warn!(game = id, error = %e, "cannot claim the game in the store");
                ClientError::StoreUnavailable
            })
    }

    /// What putting game `id` on its shard takes, read from the store.
    pub async fn load_seed(&self, id: i64) -> Result<GameSeed, ClientError> {
        let persist = &self.adopt.persist;
        let row = persist
            .game(id)
            .await
            .map_err(|_| ClientError::StoreUnavailable)?
            .ok_or_else(|| ClientError::GameNotFound(id.to_string()))?;
        let red = persist
            .account(row.red.0)
            .await
            .map_err(|_| ClientError::StoreUnavailable)?
            .ok_or(ClientError::StoreUnavailable)?;
        let black = persist
            .account(row.black.0)
            .await
            .map_err(|_| ClientError::StoreUnavailable)?
            .ok_or(ClientError::StoreUnavailable)?;
        Ok(GameSeed {
            row,
            red,
            black,
            move_limit_plies: self.adopt.game.config.move_limit_plies,
            calls: None,
        })
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
