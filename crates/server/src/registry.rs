//! Game id → handle. Touched when a connection first names a game, when a
//! game is created or unloaded — never per move (connections cache handles).

use std::sync::Mutex;

use chuhe_proto::v1::GameSummary;

use crate::Env;
use crate::error::ClientError;
use crate::handle::GameHandle;
use crate::load::{self, GameSeed};

#[derive(Default)]
pub struct Registry {
    games: Mutex<crate::IdMap<i64, GameHandle>>,
    /// Serialises loads so one game is never loaded twice (one owner per game).
    loading: tokio::sync::Mutex<()>,
}

impl Registry {
    fn map(&self) -> std::sync::MutexGuard<'_, crate::IdMap<i64, GameHandle>> {
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

    /// Summaries of unfinished games, by id.
    pub fn live_games(&self) -> Vec<GameSummary> {
        let handles: Vec<GameHandle> = self.map().values().cloned().collect();
        let mut v: Vec<(i64, GameSummary)> = handles
            .iter()
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
        let h = load::recover(env.clone(), seed).await.map_err(|e| {
            tracing::error!(game = id, error = %e, "cannot load game");
            e.client_error()
        })?;
        self.insert(h.clone());
        Ok(h)
    }
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
    })
}
