//! What the server needs from storage, as one narrow trait. `chuhe-store`'s
//! `Store` implements the real thing (SQLite, PostgreSQL); this module adapts
//! it. Keeping the port narrow lets the game actor be tested with
//! [`MemoryPersist`].

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

/// A game's event log: (seq, payload) in order.
pub type EventLog = Vec<(u64, Vec<u8>)>;

/// A boxed future (object-safe async trait methods without a macro crate).
pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Storage failed; the request changed nothing.
#[derive(Debug, Clone, thiserror::Error)]
#[error("store: {0}")]
pub struct PersistError(pub String);

/// Roles of authenticated principals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Player,
    Arbiter,
    Organizer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Arbiter => "arbiter",
            Role::Organizer => "organizer",
        }
    }
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "player" => Some(Role::Player),
            "arbiter" => Some(Role::Arbiter),
            "organizer" | "organiser" => Some(Role::Organizer),
            _ => None,
        }
    }
}

/// A registered player, arbiter or organiser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub id: i64,
    pub name: String,
    pub role: Role,
}

/// A new game as stored (its events come separately).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRow {
    pub id: i64,
    pub red: i64,
    pub black: i64,
    pub time_control: String,
    pub ruleset: String,
    pub start_fen: String,
    pub delay_plies: u32,
    pub delay_ms: u64,
    pub event: Option<String>,
    pub round: Option<String>,
    pub board: Option<u32>,
    pub created_at_ms: u64,
    pub finished: bool,
    /// When the clocks start: the wire's `StartMode` number (0: at once).
    pub start_mode: i32,
    /// START_MODE_SCHEDULED: the instant, Unix ms.
    pub scheduled_start_ms: Option<u64>,
    /// Art. 21 lateness limit (0: none).
    pub lateness_limit_ms: u64,
}

/// One event to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    pub seq: u64,
    pub kind: &'static str,
    pub payload: Vec<u8>,
    pub at_ms: u64,
    /// Who caused it (arbiter commands: the arbiter) and why.
    pub actor: Option<i64>,
    pub reason: Option<String>,
}

/// One game's append (and finish) in an [`Persist::append_batch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendOp {
    pub game: i64,
    pub events: Vec<EventRow>,
    pub finish: Option<FinishRow>,
}

/// How a game finished (written atomically with the events that finish it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishRow {
    pub result: String,
    pub reason: String,
    pub at_ms: u64,
}

/// The storage port of the game server.
pub trait Persist: Send + Sync + 'static {
    /// Appends events (gap-free, starting at the game's last seq + 1) and,
    /// when given, marks the game finished, atomically and durably.
    fn append(
        &self,
        game: i64,
        events: Vec<EventRow>,
        finish: Option<FinishRow>,
    ) -> BoxFut<'_, Result<(), PersistError>>;
    /// Several games' appends at once, each exactly as [`Persist::append`] (answers in the
    /// order of `ops`). Stores with group commit take them in one hand-off; the default
    /// appends them one after another.
    fn append_batch(&self, ops: Vec<AppendOp>) -> BoxFut<'_, Vec<Result<(), PersistError>>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(ops.len());
            for op in ops {
                out.push(self.append(op.game, op.events, op.finish).await);
            }
            out
        })
    }
    /// Every event of a game, in seq order (payloads).
    fn events(&self, game: i64) -> BoxFut<'_, Result<EventLog, PersistError>>;
    /// Ids of every game not finished.
    fn unfinished_games(&self) -> BoxFut<'_, Result<Vec<i64>, PersistError>>;
    fn game(&self, game: i64) -> BoxFut<'_, Result<Option<GameRow>, PersistError>>;
    /// Creates a game row (no events yet); returns it with its id.
    fn create_game(&self, game: GameRow) -> BoxFut<'_, Result<GameRow, PersistError>>;
    /// The account a bearer token belongs to (None: unknown or revoked).
    fn authenticate(&self, token: &str) -> BoxFut<'_, Result<Option<Account>, PersistError>>;
    fn account(&self, id: i64) -> BoxFut<'_, Result<Option<Account>, PersistError>>;
    fn create_account(&self, name: &str, role: Role) -> BoxFut<'_, Result<Account, PersistError>>;
    /// Issues a new random token; returns (token, token id).
    fn issue_token(
        &self,
        account: i64,
        label: Option<String>,
    ) -> BoxFut<'_, Result<(String, i64), PersistError>>;
    /// Revokes a token; false when there was no such live token.
    fn revoke_token(&self, token_id: i64) -> BoxFut<'_, Result<bool, PersistError>>;
    /// The group-commit writer (lane) that commits a game's appends: batches of different
    /// lanes commit independently, so the shards submit one batch per lane and none waits
    /// for another lane's transaction. One lane unless the store says otherwise.
    fn lane_of(&self, game: i64) -> usize {
        let _ = game;
        0
    }
    /// Totals of the group-commit writers since the store opened (for `/metrics`); None for
    /// a store without group commit.
    fn commit_stats(&self) -> Option<CommitStats> {
        None
    }
}

/// Group-commit totals since the store opened (the store's own counters).
pub use chuhe_store::StoreStats as CommitStats;

/// An in-memory [`Persist`] for tests.
pub struct MemoryPersist {
    inner: Mutex<Mem>,
    /// While set, every append fails (a store outage) and stores nothing.
    failing: std::sync::atomic::AtomicBool,
    /// While true, appends are not answered (a slow commit); see [`MemoryPersist::hold`].
    held: tokio::sync::watch::Sender<bool>,
}

impl Default for MemoryPersist {
    fn default() -> Self {
        MemoryPersist {
            inner: Mutex::default(),
            failing: std::sync::atomic::AtomicBool::new(false),
            held: tokio::sync::watch::channel(false).0,
        }
    }
}

#[derive(Default)]
struct Mem {
    games: HashMap<i64, (GameRow, EventLog)>,
    accounts: HashMap<i64, Account>,
    tokens: HashMap<String, (i64, i64, bool)>,
    next_id: i64,
}

impl MemoryPersist {
    /// Makes every append fail (true) or work again (false).
    pub fn set_failing(&self, failing: bool) {
        self.failing
            .store(failing, std::sync::atomic::Ordering::SeqCst);
    }

    /// Holds every append's answer back (true) until released (false): commits that take
    /// their time, so tests can see what waits for them.
    pub fn hold(&self, held: bool) {
        self.held.send_replace(held);
    }

    /// Waits while appends are held.
    fn released(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.held.subscribe();
        async move {
            while *rx.borrow_and_update() {
                if rx.changed().await.is_err() {
                    return;
                }
            }
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Mem) -> T) -> T {
        let mut g = match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        f(&mut g)
    }
}

impl Persist for MemoryPersist {
    fn append(
        &self,
        game: i64,
        events: Vec<EventRow>,
        finish: Option<FinishRow>,
    ) -> BoxFut<'_, Result<(), PersistError>> {
        let released = self.released();
        if self.failing.load(std::sync::atomic::Ordering::SeqCst) {
            return Box::pin(async move {
                released.await;
                Err(PersistError("store outage (test)".into()))
            });
        }
        let r = self.with(|m| {
            let Some((row, log)) = m.games.get_mut(&game) else {
                return Err(PersistError(format!("no game {game}")));
            };
            for e in events {
                let expect = log.len() as u64 + 1;
                if e.seq != expect {
                    return Err(PersistError(format!("seq {} but expected {expect}", e.seq)));
                }
                log.push((e.seq, e.payload));
            }
            if finish.is_some() {
                row.finished = true;
            }
            Ok(())
        });
        Box::pin(async move {
            released.await;
            r
        })
    }

    fn events(&self, game: i64) -> BoxFut<'_, Result<EventLog, PersistError>> {
        let r = self.with(|m| m.games.get(&game).map(|g| g.1.clone()).unwrap_or_default());
        Box::pin(async move { Ok(r) })
    }

    fn unfinished_games(&self) -> BoxFut<'_, Result<Vec<i64>, PersistError>> {
        let mut r: Vec<i64> = self.with(|m| {
            m.games
                .values()
                .filter(|g| !g.0.finished)
                .map(|g| g.0.id)
                .collect()
        });
        r.sort_unstable();
        Box::pin(async move { Ok(r) })
    }

    fn game(&self, game: i64) -> BoxFut<'_, Result<Option<GameRow>, PersistError>> {
        let r = self.with(|m| m.games.get(&game).map(|g| g.0.clone()));
        Box::pin(async move { Ok(r) })
    }

    fn create_game(&self, mut game: GameRow) -> BoxFut<'_, Result<GameRow, PersistError>> {
        let r = self.with(|m| {
            m.next_id += 1;
            game.id = m.next_id;
            m.games.insert(game.id, (game.clone(), Vec::new()));
            game
        });
        Box::pin(async move { Ok(r) })
    }

    fn authenticate(&self, token: &str) -> BoxFut<'_, Result<Option<Account>, PersistError>> {
        let r = self.with(|m| {
            m.tokens
                .get(token)
                .filter(|t| !t.2)
                .and_then(|t| m.accounts.get(&t.1).cloned())
        });
        Box::pin(async move { Ok(r) })
    }

    fn account(&self, id: i64) -> BoxFut<'_, Result<Option<Account>, PersistError>> {
        let r = self.with(|m| m.accounts.get(&id).cloned());
        Box::pin(async move { Ok(r) })
    }

    fn create_account(&self, name: &str, role: Role) -> BoxFut<'_, Result<Account, PersistError>> {
        let r = self.with(|m| {
            m.next_id += 1;
            let a = Account {
                id: m.next_id,
                name: name.to_string(),
                role,
            };
            m.accounts.insert(a.id, a.clone());
            a
        });
        Box::pin(async move { Ok(r) })
    }

    fn issue_token(
        &self,
        account: i64,
        _label: Option<String>,
    ) -> BoxFut<'_, Result<(String, i64), PersistError>> {
        let r = self.with(|m| {
            m.next_id += 1;
            let tok = format!("mem-token-{}", m.next_id);
            m.tokens.insert(tok.clone(), (m.next_id, account, false));
            (tok, m.next_id)
        });
        Box::pin(async move { Ok(r) })
    }

    fn revoke_token(&self, token_id: i64) -> BoxFut<'_, Result<bool, PersistError>> {
        let r = self.with(|m| {
            for t in m.tokens.values_mut() {
                if t.0 == token_id && !t.2 {
                    t.2 = true;
                    return true;
                }
            }
            false
        });
        Box::pin(async move { Ok(r) })
    }
}
