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

pub use chuhe_store::{
    Competition, CompetitionEvent, CompetitionId, ErrorKind, Game as StoredGame, NewCompetition,
    NewCompetitionEvent, NewGame,
};

/// Storage refused or failed: what kind of failure (the store's own classification), and
/// whether an append's outcome is unknown (it may have committed: resolve it before answering).
#[derive(Debug, Clone, thiserror::Error)]
#[error("store: {message}")]
pub struct PersistError {
    pub kind: ErrorKind,
    pub message: String,
    /// An append whose commit may or may not have happened (the connection died during it).
    pub outcome_unknown: bool,
}

impl PersistError {
    fn of(kind: ErrorKind, message: impl Into<String>) -> PersistError {
        PersistError {
            kind,
            message: message.into(),
            outcome_unknown: false,
        }
    }

    /// A failure of the store itself (retrying may work).
    pub fn unavailable(message: impl Into<String>) -> PersistError {
        PersistError::of(ErrorKind::Unavailable, message)
    }

    /// The caller's mistake against stored data (retrying the same cannot work).
    pub fn conflict(message: impl Into<String>) -> PersistError {
        PersistError::of(ErrorKind::Conflict, message)
    }

    /// The caller's input is invalid (retrying the same cannot work).
    pub fn invalid(message: impl Into<String>) -> PersistError {
        PersistError::of(ErrorKind::Invalid, message)
    }

    pub fn not_found(message: impl Into<String>) -> PersistError {
        PersistError::of(ErrorKind::NotFound, message)
    }

    /// Not the store's fault: nothing changed and retrying the same cannot help.
    pub fn is_client_error(&self) -> bool {
        !matches!(
            self.kind,
            ErrorKind::Unavailable | ErrorKind::Internal | ErrorKind::Fenced
        )
    }

    /// This node is no longer the owner (a stale fencing token): nothing was stored.
    pub fn fenced(message: impl Into<String>) -> PersistError {
        PersistError::of(ErrorKind::Fenced, message)
    }

    /// Whether the store refused the write because another node owns the game now.
    pub fn is_fenced(&self) -> bool {
        self.kind == ErrorKind::Fenced
    }
}

impl From<chuhe_store::StoreError> for PersistError {
    fn from(e: chuhe_store::StoreError) -> PersistError {
        PersistError {
            kind: e.kind(),
            outcome_unknown: e.outcome_unknown(),
            message: e.to_string(),
        }
    }
}

/// Roles of authenticated principals (the game core's: an actor's role decides what it may do).
pub use chuhe_game::Role;

/// A registered player, arbiter or organiser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub id: i64,
    pub name: String,
    pub role: Role,
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
    /// Whether an append whose outcome was unknown (the connection died during its commit)
    /// committed: Ok(true) it did, Ok(false) it did not and never will; an error leaves the
    /// outcome unknown (ask again later). Nothing else may be appended to the game first.
    fn resolve(&self, op: AppendOp) -> BoxFut<'_, Result<bool, PersistError>>;
    /// Every event of a game, in seq order (payloads).
    fn events(&self, game: i64) -> BoxFut<'_, Result<EventLog, PersistError>>;
    /// Ids of every game not finished.
    fn unfinished_games(&self) -> BoxFut<'_, Result<Vec<i64>, PersistError>>;
    fn game(&self, game: i64) -> BoxFut<'_, Result<Option<StoredGame>, PersistError>>;
    /// Creates a game row (no events yet); returns it with its id. With a key that is already
    /// stored, returns that game unchanged (creating is idempotent by key).
    fn create_game(&self, game: NewGame) -> BoxFut<'_, Result<StoredGame, PersistError>>;
    /// Several games' rows at once (a league round's boards), each exactly as
    /// [`Persist::create_game`] (answers in the order of `games`). Stores with transactions
    /// create them in one; the default creates them one after another.
    fn create_games(
        &self,
        games: Vec<NewGame>,
    ) -> BoxFut<'_, Result<Vec<StoredGame>, PersistError>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(games.len());
            for g in games {
                out.push(self.create_game(g).await?);
            }
            Ok(out)
        })
    }
    /// The game created with `key`, if any.
    fn game_by_key(&self, key: &str) -> BoxFut<'_, Result<Option<StoredGame>, PersistError>>;
    /// A principal by name and role (None: no such).
    fn account_named(
        &self,
        name: &str,
        role: Role,
    ) -> BoxFut<'_, Result<Option<Account>, PersistError>>;
    /// A new league (competition) with an empty log.
    fn create_competition(
        &self,
        new: NewCompetition,
    ) -> BoxFut<'_, Result<Competition, PersistError>>;
    /// Every competition, oldest first.
    fn competitions(&self) -> BoxFut<'_, Result<Vec<Competition>, PersistError>>;
    /// Appends to a competition's log (gap-free, atomic, durable when Ok).
    fn append_competition(
        &self,
        id: i64,
        events: Vec<NewCompetitionEvent>,
    ) -> BoxFut<'_, Result<u64, PersistError>>;
    /// A competition's log after `after_seq`, in order.
    fn competition_events(
        &self,
        id: i64,
        after_seq: u64,
    ) -> BoxFut<'_, Result<Vec<CompetitionEvent>, PersistError>>;
    /// The account a bearer token belongs to (None: unknown or revoked).
    fn authenticate(&self, token: &str) -> BoxFut<'_, Result<Option<Account>, PersistError>>;
    fn account(&self, id: i64) -> BoxFut<'_, Result<Option<Account>, PersistError>>;
    /// Every account (players, arbiters, organizers), by id (`chuhe admin list-players`).
    fn accounts(&self) -> BoxFut<'_, Result<Vec<Account>, PersistError>>;
    fn create_account(&self, name: &str, role: Role) -> BoxFut<'_, Result<Account, PersistError>>;
    /// Creates an account with a stable id given by an organizer (an alias of its numeric id;
    /// see `chuhe_store::check_handle`). A store that cannot keep such ids refuses.
    fn create_account_with_id(
        &self,
        id: &str,
        name: &str,
        role: Role,
    ) -> BoxFut<'_, Result<Account, PersistError>> {
        let _ = (id, name, role);
        Box::pin(async { Err(PersistError::invalid("this store keeps no given ids")) })
    }
    /// The account whose given stable id this is, if any.
    fn account_by_given_id(&self, id: &str) -> BoxFut<'_, Result<Option<Account>, PersistError>> {
        let _ = id;
        Box::pin(async { Ok(None) })
    }
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
    /// Makes `node` the owner of a game in the database (several nodes, issue 23): bumps the
    /// game's fencing token and returns it. From then on this store's appends to the game carry
    /// the token, and the database refuses (`PersistError::is_fenced`) every append to it
    /// carrying an older one — a stale owner's writes fail in the database itself. A store
    /// without owners (one node) answers 0 and fences nothing.
    fn claim_game(&self, game: i64, node: &str) -> BoxFut<'_, Result<u64, PersistError>> {
        let _ = (game, node);
        Box::pin(async { Ok(0) })
    }
    /// As [`Persist::claim_game`], for a competition (a league's runner) and its log.
    fn claim_competition(&self, id: i64, node: &str) -> BoxFut<'_, Result<u64, PersistError>> {
        let _ = (id, node);
        Box::pin(async { Ok(0) })
    }
    /// Forgets this store's token of a game or competition this node gave up (its appends
    /// carry none afterwards; the next owner claims anew).
    fn unclaim(&self, game: Option<i64>, competition: Option<i64>) {
        let _ = (game, competition);
    }
    /// A readiness probe: Ok when the store answers a trivial query and its writers run
    /// (`/readyz`). Bounded by the store's own ping timeout.
    fn ping(&self) -> BoxFut<'_, Result<(), PersistError>> {
        Box::pin(async { Ok(()) })
    }
    /// Commits what is queued, stops the writers and closes the connections (SQLite: the last
    /// one checkpoints the WAL and removes `-wal`/`-shm`). Called once, at a clean shutdown of
    /// `serve` and after a one-shot command; appends afterwards fail.
    fn close(&self) -> BoxFut<'_, ()> {
        Box::pin(async {})
    }
}

/// Group-commit totals since the store opened (the store's own counters).
pub use chuhe_store::StoreStats as CommitStats;

/// An in-memory [`Persist`] for tests.
pub struct MemoryPersist {
    /// The data, shared by every node's view ([`MemoryPersist::node_view`]).
    inner: std::sync::Arc<Mutex<Mem>>,
    /// This view's fencing tokens: game id → token, and competitions' (see
    /// [`Persist::claim_game`]). Appends carry them; the data's own tokens decide.
    tokens: Mutex<HashMap<i64, u64>>,
    competition_tokens: Mutex<HashMap<i64, u64>>,
    /// While set, every append fails (a store outage) and stores nothing.
    failing: std::sync::atomic::AtomicBool,
    /// While set, every append commits but is answered as failed with its outcome unknown
    /// (the connection died during the commit); `Some(false)`: fails, unknown, not committed.
    ambiguous: Mutex<Option<bool>>,
    /// Resolutions answered "still unknown" before the truth (a database still down).
    unresolved: std::sync::atomic::AtomicU32,
    /// While true, appends are not answered (a slow commit); see [`MemoryPersist::hold`].
    held: tokio::sync::watch::Sender<bool>,
    /// While true, logins and account requests hang (a database that does not answer); see
    /// [`MemoryPersist::stall`].
    stalled: tokio::sync::watch::Sender<bool>,
}

impl Default for MemoryPersist {
    fn default() -> Self {
        MemoryPersist {
            inner: Default::default(),
            tokens: Mutex::default(),
            competition_tokens: Mutex::default(),
            failing: std::sync::atomic::AtomicBool::new(false),
            ambiguous: Mutex::new(None),
            unresolved: std::sync::atomic::AtomicU32::new(0),
            held: tokio::sync::watch::channel(false).0,
            stalled: tokio::sync::watch::channel(false).0,
        }
    }
}

#[derive(Default)]
struct Mem {
    games: HashMap<i64, (StoredGame, EventLog)>,
    accounts: HashMap<i64, Account>,
    tokens: HashMap<String, (i64, i64, bool)>,
    competitions: Vec<(Competition, Vec<CompetitionEvent>)>,
    next_id: i64,
    /// The newest fencing token of each claimed game and competition (none: never claimed).
    fences: HashMap<i64, u64>,
    competition_fences: HashMap<i64, u64>,
}

/// Whether an append carrying `mine` (this view's token, 0: none) is refused: the game was
/// claimed since (by another node's view, or again).
fn fenced_out(fences: &HashMap<i64, u64>, id: i64, mine: u64) -> bool {
    fences.get(&id).is_some_and(|&t| t != mine)
}

fn token_of(tokens: &Mutex<HashMap<i64, u64>>, id: i64) -> u64 {
    tokens
        .lock()
        .map(|t| t.get(&id).copied().unwrap_or(0))
        .unwrap_or(0)
}

impl MemoryPersist {
    /// Another node's view of the same data: its own fencing tokens (and outage switches),
    /// the same games, accounts and logs — several in-process nodes on one database.
    pub fn node_view(&self) -> MemoryPersist {
        MemoryPersist {
            inner: self.inner.clone(),
            ..MemoryPersist::default()
        }
    }

    /// Makes every append fail (true) or work again (false).
    pub fn set_failing(&self, failing: bool) {
        self.failing
            .store(failing, std::sync::atomic::Ordering::SeqCst);
    }

    /// Makes every append's outcome unknown to its caller: `Some(true)` commits it anyway,
    /// `Some(false)` does not; `None` back to normal. The first `unresolved` resolutions of
    /// each then fail (the store still unreachable).
    pub fn set_ambiguous(&self, commit: Option<bool>, unresolved: u32) {
        if let Ok(mut a) = self.ambiguous.lock() {
            *a = commit;
        }
        self.unresolved
            .store(unresolved, std::sync::atomic::Ordering::SeqCst);
    }

    /// Holds every append's answer back (true) until released (false): commits that take
    /// their time, so tests can see what waits for them.
    pub fn hold(&self, held: bool) {
        self.held.send_replace(held);
    }

    /// Makes logins, account lookups and account creation hang (true) until released
    /// (false), and the readiness probe fail meanwhile: a database that stopped answering.
    pub fn stall(&self, stalled: bool) {
        self.stalled.send_replace(stalled);
    }

    /// Waits while appends are held.
    fn released(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        Self::until_false(&self.held)
    }

    /// Waits while account requests are stalled.
    fn unstalled(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        Self::until_false(&self.stalled)
    }

    fn until_false(
        flag: &tokio::sync::watch::Sender<bool>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = flag.subscribe();
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
                Err(PersistError::unavailable("store outage (test)"))
            });
        }
        let ambiguous = self.ambiguous.lock().map(|a| *a).unwrap_or(None);
        if ambiguous == Some(false) {
            return Box::pin(async move {
                released.await;
                Err(PersistError {
                    outcome_unknown: true,
                    ..PersistError::unavailable("connection lost during the commit (test)")
                })
            });
        }
        let token = token_of(&self.tokens, game);
        let r = self.with(|m| {
            if fenced_out(&m.fences, game, token) {
                return Err(PersistError::fenced(format!(
                    "game {game} is owned by another node now"
                )));
            }
            let Some((row, log)) = m.games.get_mut(&game) else {
                return Err(PersistError::not_found(format!("no game {game}")));
            };
            for e in events {
                let expect = log.len() as u64 + 1;
                if e.seq != expect {
                    return Err(PersistError::conflict(format!(
                        "seq {} but expected {expect}",
                        e.seq
                    )));
                }
                log.push((e.seq, e.payload));
            }
            row.last_seq = log.len() as u64;
            if let Some(f) = finish {
                row.finish = Some(chuhe_store::Finish {
                    result: f.result,
                    reason: f.reason,
                    at_ms: f.at_ms as i64,
                });
            }
            if ambiguous == Some(true) {
                return Err(PersistError {
                    outcome_unknown: true,
                    ..PersistError::unavailable("connection lost during the commit (test)")
                });
            }
            Ok(())
        });
        Box::pin(async move {
            released.await;
            r
        })
    }

    fn resolve(&self, op: AppendOp) -> BoxFut<'_, Result<bool, PersistError>> {
        use std::sync::atomic::Ordering;
        let still_down = self
            .unresolved
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        let r = if still_down {
            Err(PersistError::unavailable("still unreachable (test)"))
        } else {
            self.with(|m| {
                let log = m.games.get(&op.game).map(|g| &g.1);
                let Some(first) = op.events.first() else {
                    return Ok(false);
                };
                match log.and_then(|l| l.get(first.seq as usize - 1)) {
                    None => Ok(false),
                    Some((_, payload)) if *payload == first.payload => Ok(true),
                    Some(_) => Err(PersistError::conflict("other events at these seqs")),
                }
            })
        };
        Box::pin(async move { r })
    }

    fn events(&self, game: i64) -> BoxFut<'_, Result<EventLog, PersistError>> {
        let r = self.with(|m| m.games.get(&game).map(|g| g.1.clone()).unwrap_or_default());
        Box::pin(async move { Ok(r) })
    }

    fn unfinished_games(&self) -> BoxFut<'_, Result<Vec<i64>, PersistError>> {
        let mut r: Vec<i64> = self.with(|m| {
            m.games
                .values()
                .filter(|g| !g.0.is_finished())
                .map(|g| g.0.id.0)
                .collect()
        });
        r.sort_unstable();
        Box::pin(async move { Ok(r) })
    }

    fn game(&self, game: i64) -> BoxFut<'_, Result<Option<StoredGame>, PersistError>> {
        let r = self.with(|m| m.games.get(&game).map(|g| g.0.clone()));
        Box::pin(async move { Ok(r) })
    }

    fn create_game(&self, game: NewGame) -> BoxFut<'_, Result<StoredGame, PersistError>> {
        let r = self.with(|m| {
            if let Some(key) = &game.key {
                if let Some(g) = m.games.values().find(|g| g.0.key.as_ref() == Some(key)) {
                    return g.0.clone();
                }
            }
            m.next_id += 1;
            let stored = StoredGame {
                id: chuhe_store::GameId(m.next_id),
                red: game.red,
                black: game.black,
                time_control: game.time_control,
                ruleset: game.ruleset,
                start_fen: game.start_fen,
                broadcast_delay: game.broadcast_delay,
                event: game.event,
                round: game.round,
                board: game.board,
                scheduled_start_ms: game.scheduled_start_ms,
                created_at_ms: game.created_at_ms,
                start_mode: game.start_mode,
                lateness_limit_ms: game.lateness_limit_ms,
                key: game.key,
                last_seq: 0,
                finish: None,
            };
            m.games.insert(m.next_id, (stored.clone(), Vec::new()));
            stored
        });
        Box::pin(async move { Ok(r) })
    }

    fn game_by_key(&self, key: &str) -> BoxFut<'_, Result<Option<StoredGame>, PersistError>> {
        let r = self.with(|m| {
            m.games
                .values()
                .find(|g| g.0.key.as_deref() == Some(key))
                .map(|g| g.0.clone())
        });
        Box::pin(async move { Ok(r) })
    }

    fn account_named(
        &self,
        name: &str,
        role: Role,
    ) -> BoxFut<'_, Result<Option<Account>, PersistError>> {
        let r = self.with(|m| {
            m.accounts
                .values()
                .find(|a| a.name == name && a.role == role)
                .cloned()
        });
        Box::pin(async move { Ok(r) })
    }

    fn create_competition(
        &self,
        new: NewCompetition,
    ) -> BoxFut<'_, Result<Competition, PersistError>> {
        let r = self.with(|m| {
            let c = Competition {
                id: CompetitionId(m.competitions.len() as i64 + 1),
                name: new.name,
                created_at_ms: new.created_at_ms,
                created_by: new.created_by,
                last_seq: 0,
            };
            m.competitions.push((c.clone(), Vec::new()));
            c
        });
        Box::pin(async move { Ok(r) })
    }

    fn competitions(&self) -> BoxFut<'_, Result<Vec<Competition>, PersistError>> {
        let r = self.with(|m| m.competitions.iter().map(|c| c.0.clone()).collect());
        Box::pin(async move { Ok(r) })
    }

    fn append_competition(
        &self,
        id: i64,
        events: Vec<NewCompetitionEvent>,
    ) -> BoxFut<'_, Result<u64, PersistError>> {
        let token = token_of(&self.competition_tokens, id);
        let r = self.with(|m| {
            if fenced_out(&m.competition_fences, id, token) {
                return Err(PersistError::fenced(format!(
                    "competition {id} is run by another node now"
                )));
            }
            let Some((c, log)) = m.competitions.get_mut((id as usize).wrapping_sub(1)) else {
                return Err(PersistError::not_found(format!("competition {id}")));
            };
            for (i, e) in events.iter().enumerate() {
                if e.seq != c.last_seq + 1 + i as u64 {
                    return Err(PersistError::conflict(format!("seq {} out of turn", e.seq)));
                }
            }
            for e in events {
                c.last_seq = e.seq;
                log.push(CompetitionEvent {
                    competition: CompetitionId(id),
                    seq: e.seq,
                    kind: e.kind,
                    payload: e.payload,
                    at_ms: e.at_ms,
                    actor: e.actor,
                    reason: e.reason,
                });
            }
            Ok(c.last_seq)
        });
        Box::pin(async move { r })
    }

    fn competition_events(
        &self,
        id: i64,
        after_seq: u64,
    ) -> BoxFut<'_, Result<Vec<CompetitionEvent>, PersistError>> {
        let r = self.with(|m| {
            m.competitions
                .get((id as usize).wrapping_sub(1))
                .map(|(_, log)| log.iter().filter(|e| e.seq > after_seq).cloned().collect())
                .ok_or_else(|| PersistError::not_found(format!("competition {id}")))
        });
        Box::pin(async move { r })
    }

    fn claim_game(&self, game: i64, node: &str) -> BoxFut<'_, Result<u64, PersistError>> {
        let _ = node;
        let t = self.with(|m| {
            let t = m.fences.entry(game).or_insert(0);
            *t += 1;
            *t
        });
        if let Ok(mut mine) = self.tokens.lock() {
            mine.insert(game, t);
        }
        Box::pin(async move { Ok(t) })
    }

    fn claim_competition(&self, id: i64, node: &str) -> BoxFut<'_, Result<u64, PersistError>> {
        let _ = node;
        let t = self.with(|m| {
            let t = m.competition_fences.entry(id).or_insert(0);
            *t += 1;
            *t
        });
        if let Ok(mut mine) = self.competition_tokens.lock() {
            mine.insert(id, t);
        }
        Box::pin(async move { Ok(t) })
    }

    fn unclaim(&self, game: Option<i64>, competition: Option<i64>) {
        if let (Some(g), Ok(mut t)) = (game, self.tokens.lock()) {
            t.remove(&g);
        }
        if let (Some(c), Ok(mut t)) = (competition, self.competition_tokens.lock()) {
            t.remove(&c);
        }
    }

    fn authenticate(&self, token: &str) -> BoxFut<'_, Result<Option<Account>, PersistError>> {
        let token = token.to_string();
        let unstalled = self.unstalled();
        Box::pin(async move {
            unstalled.await;
            Ok(self.with(|m| {
                m.tokens
                    .get(&token)
                    .filter(|t| !t.2)
                    .and_then(|t| m.accounts.get(&t.1).cloned())
            }))
        })
    }

    fn account(&self, id: i64) -> BoxFut<'_, Result<Option<Account>, PersistError>> {
        let unstalled = self.unstalled();
        Box::pin(async move {
            unstalled.await;
            Ok(self.with(|m| m.accounts.get(&id).cloned()))
        })
    }

    fn accounts(&self) -> BoxFut<'_, Result<Vec<Account>, PersistError>> {
        let mut all = self.with(|m| m.accounts.values().cloned().collect::<Vec<_>>());
        all.sort_by_key(|a| a.id);
        Box::pin(async move { Ok(all) })
    }

    fn ping(&self) -> BoxFut<'_, Result<(), PersistError>> {
        let r = if *self.stalled.borrow() {
            Err(PersistError::unavailable(
                "the store does not answer (test)",
            ))
        } else {
            Ok(())
        };
        Box::pin(async move { r })
    }

    fn create_account(&self, name: &str, role: Role) -> BoxFut<'_, Result<Account, PersistError>> {
        let r = self.with(|m| {
            if m.accounts
                .values()
                .any(|a| a.name == name && a.role == role)
            {
                return Err(PersistError::conflict(format!(
                    "a {} named {name:?} exists",
                    role.as_str()
                )));
            }
            m.next_id += 1;
            let a = Account {
                id: m.next_id,
                name: name.to_string(),
                role,
            };
            m.accounts.insert(a.id, a.clone());
            Ok(a)
        });
        Box::pin(async move { r })
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

/// A game for tests: `red` against `black` from the start position at 10m, started at once,
/// no broadcast delay, no event (override fields with `NewGame { .., ..test_game(r, b) }`).
#[cfg(test)]
pub(crate) fn test_game(red: chuhe_store::PrincipalId, black: chuhe_store::PrincipalId) -> NewGame {
    NewGame {
        red,
        black,
        time_control: "10m".into(),
        ruleset: "cxa".into(),
        start_fen: String::new(),
        broadcast_delay: Default::default(),
        event: None,
        round: None,
        board: None,
        scheduled_start_ms: None,
        created_at_ms: 0,
        start_mode: "now".into(),
        lateness_limit_ms: 0,
        key: None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod fencing_tests {
    use super::*;

    fn row(seq: u64) -> EventRow {
        EventRow {
            seq,
            kind: "move",
            payload: vec![seq as u8],
            at_ms: 0,
            actor: None,
            reason: None,
        }
    }

    #[tokio::test]
    async fn a_claim_fences_every_other_nodes_appends() {
        let one = MemoryPersist::default();
        let two = one.node_view();
        let p = one.create_account("p", Role::Player).await.unwrap();
        let g = one
            .create_game(test_game(
                chuhe_store::PrincipalId(p.id),
                chuhe_store::PrincipalId(p.id),
            ))
            .await
            .unwrap()
            .id
            .0;
        // Never claimed (one node): appends carry no token and are taken.
        one.append(g, vec![row(1)], None).await.unwrap();
        assert_eq!(one.claim_game(g, "one").await.unwrap(), 1);
        one.append(g, vec![row(2)], None).await.unwrap();
        // The other node claims it: the first node's appends are refused, nothing stored.
        assert_eq!(two.claim_game(g, "two").await.unwrap(), 2);
        let e = one.append(g, vec![row(3)], None).await.unwrap_err();
        assert!(e.is_fenced() && !e.is_client_error());
        two.append(g, vec![row(3)], None).await.unwrap();
        assert_eq!(two.events(g).await.unwrap().len(), 3);
        // Unclaimed, the first node's appends carry no token: still refused.
        one.unclaim(Some(g), None);
        assert!(
            one.append(g, vec![row(4)], None)
                .await
                .unwrap_err()
                .is_fenced()
        );
    }
}
