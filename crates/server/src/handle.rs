//! The handle to a running game — its shard's bounded mailbox, the game's id and summary —
//! the messages a shard takes, and the table of the games loaded on this node
//! ([`LoadedGames`], which the registry fills and the shards clear).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use chuhe_proto::v1::GameSummary;
use tokio::sync::{mpsc, oneshot};

use crate::error::ClientError;
use crate::live::LiveGame;
use crate::request::{RecordView, Request};

/// What a shard is asked to do.
pub(crate) enum ShardCmd {
    /// A client request for a game (boxed: the mailbox's slots stay small).
    Client(i64, Box<Request>),
    /// A connection went away: drop its subscriptions to the game.
    Detach(i64, u64),
    /// The game's record, as the live or the public (delayed) stream sees it.
    Record {
        game: i64,
        public: bool,
        /// The reader is an arbiter with this account id (see [`GameHandle::record_for`]).
        arbiter: Option<i64>,
        reply: oneshot::Sender<RecordView>,
    },
    /// A game whose first event is committed: the shard runs it from now on.
    Adopt(Box<LiveGame>),
    /// Several nodes: this node lost the game's lease. The shard unloads it (after the commit
    /// in flight is settled) and its requests and subscribers follow the game to its owner.
    Unload(i64),
}

/// The handle to a game: its shard's mailbox, the game's id and summary.
#[derive(Clone)]
pub struct GameHandle {
    pub id: i64,
    pub(crate) tx: mpsc::Sender<ShardCmd>,
    pub summary: Arc<Mutex<GameSummary>>,
    /// False once the shard has unloaded the game (or stopped).
    pub(crate) alive: Arc<AtomicBool>,
    /// Several nodes: the node that owns the game when it is not this one (requests go to
    /// this node's relay, which forwards them there).
    pub(crate) remote: Option<Arc<Mutex<String>>>,
}

impl std::fmt::Debug for GameHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GameHandle({})", self.id)
    }
}

impl GameHandle {
    /// Routes a request; a full mailbox answers `busy` rather than waiting.
    pub fn send(&self, r: Request) -> Result<(), ClientError> {
        match self.tx.try_send(ShardCmd::Client(self.id, Box::new(r))) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => Err(ClientError::Busy),
            Err(mpsc::error::TrySendError::Closed(_)) => {
                Err(ClientError::GameNotFound(self.id.to_string()))
            }
        }
    }

    pub fn detach(&self, conn_id: u64) {
        let _ = self.tx.try_send(ShardCmd::Detach(self.id, conn_id));
    }

    pub async fn record(&self, public: bool) -> Option<RecordView> {
        self.record_for(public, None).await
    }

    /// The record as `arbiter` (an arbiter's account id) may see it: live when it rules on the
    /// game, public (delayed) when the game is a league's whose event it is not an arbiter of.
    pub async fn record_for(&self, public: bool, arbiter: Option<i64>) -> Option<RecordView> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(ShardCmd::Record {
                game: self.id,
                public,
                arbiter,
                reply: tx,
            })
            .await
            .ok()?;
        rx.await.ok()
    }

    /// Whether the game runs on another node (its requests are relayed there).
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire) && !self.tx.is_closed()
    }
}

/// The games loaded on this node, by id (local ones, and with several nodes remote handles):
/// the registry's table, which a shard leaves a game it unloads.
#[derive(Default)]
pub struct LoadedGames {
    games: Mutex<chuhe_store::IdMap<i64, GameHandle>>,
}

impl LoadedGames {
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

    /// Several nodes: the handles of games other nodes run.
    pub(crate) fn remote_handles(&self) -> Vec<GameHandle> {
        self.map()
            .values()
            .filter(|h| h.is_remote() && h.is_alive())
            .cloned()
            .collect()
    }
}
