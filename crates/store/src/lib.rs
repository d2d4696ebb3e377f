//! # chuhe-store
//!
//! Durable storage for the chuhe server: principals (players, arbiters, organisers), hashed
//! bearer tokens, games, each game's gap-free event log, an administrative audit log, and the
//! append-only logs of competitions (league seasons) — on embedded SQLite or on PostgreSQL,
//! behind one [`Store`] trait.
//!
//! * Open with [`open`] from a URL (`sqlite://chuhe.db`, `postgres://…`); migrations run first.
//! * Appends ([`Store::append`], [`Store::finish`]) go through group commit: writer tasks batch
//!   the appends of many games into one transaction and answer each caller after `COMMIT`.
//!   When `append` returns `Ok`, the events are durable (see the crate README for exactly how
//!   durable on each backend).
//! * The crate knows no protocol or rules types: payloads are opaque bytes, kinds and results
//!   are short texts chosen by the server, and the store never reads the clock (times are passed
//!   in as Unix milliseconds).
//!
//! ```no_run
//! # async fn demo() -> Result<(), chuhe_store::StoreError> {
//! use chuhe_store::{NewEvent, Store, StoreOptions};
//! let store = chuhe_store::open("sqlite://chuhe.db", &StoreOptions::default()).await?;
//! # let game = chuhe_store::GameId(1);
//! let last = store
//!     .append(game, vec![NewEvent::new(1, "move", vec![1, 2, 3], 1_700_000_000_000)])
//!     .await?;
//! assert_eq!(last, 1);
//! store.close().await;
//! # Ok(()) }
//! ```

mod batch;
mod error;
mod migrate;
mod sql;

/// A hash map for small integer keys (game ids) on the per-move paths, hashed with foldhash
/// instead of SipHash (which, in these maps of the store and the server, was ~4 % of the
/// server's instructions per move). Seeded per map.
/// The server's maps keyed by game id use it too.
pub type IdMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// A set of ids with the same fast hasher as [`IdMap`].
pub type IdSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

pub mod postgres;
pub mod provision;
pub mod sqlite;
#[cfg(feature = "test-support")]
pub mod testing;
mod token;
mod types;

use std::future::Future;

pub use batch::StoreStats;
pub use error::{ErrorKind, Result, StoreError};
pub use token::{GeneratedToken, generate_token, hash_token};
pub use types::{
    AuditEntry, AuditId, Authenticated, BroadcastDelay, Competition, CompetitionEvent,
    CompetitionId, Finish, Game, GameFilter, GameId, GameRecord, MAX_HANDLE_CHARS, Millis,
    NewAudit, NewCompetition, NewCompetitionEvent, NewEvent, NewGame, NewPrincipal, NewToken,
    Principal, PrincipalId, Resolution, Role, StoredEvent, TokenHash, TokenId, TokenInfo,
    check_handle,
};

pub use postgres::PgStore;
pub use sql::{Backend, SqlStore};
pub use sqlite::SqliteStore;

/// The most token hashes one statement of [`Store::authenticate_many`] looks up (SQLite allows
/// 32,766 parameters a statement, PostgreSQL 65,535).
pub const AUTHENTICATE_BATCH: usize = 256;

/// One append (or finish, with `finish` set) of [`Store::append_many`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Append {
    /// The game.
    pub game: GameId,
    /// Its next events (`last_seq + 1` onwards; may be empty when `finish` is set).
    pub events: Vec<NewEvent>,
    /// Marks the game finished in the same transaction.
    pub finish: Option<Finish>,
    /// The fencing token of the node appending ([`Store::claim_game`]): the append is refused
    /// with [`StoreError::Fenced`] (nothing stored) unless it is the game's current token.
    /// None: not checked (one node).
    pub fence: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SqliteSync {
    /// `NORMAL` (the default): each group commit is written to the WAL file (the OS page cache)
    /// before callers are answered, and the WAL is fsynced at checkpoints. An acknowledged
    /// append survives `kill -9`, a panic or an OOM kill of the process; an OS crash or power
    /// loss may lose the commits since the last checkpoint (the database stays consistent).
    #[default]
    Normal,
    /// `FULL`: each group commit is also fsynced before callers are answered, so an
    /// acknowledged append survives an OS crash and a power loss too. Costs one fsync per batch
    /// (latency, not CPU: batches grow to absorb it).
    Full,
}

impl SqliteSync {
    /// Parses `normal` or `full` (any case), for flags and config files.
    pub fn parse(s: &str) -> Option<SqliteSync> {
        match s.to_ascii_lowercase().as_str() {
            "normal" => Some(SqliteSync::Normal),
            "full" => Some(SqliteSync::Full),
            _ => None,
        }
    }
}

/// Tuning of a store. The defaults suit one server node.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// SQLite durability; see [`SqliteSync`].
    pub sqlite_sync: SqliteSync,
    /// Connections for reads and non-batched writes (the group-commit writers have their own).
    pub pool_size: u32,
    /// PostgreSQL writer tasks, each with its own connection (each commits its own batches;
    /// games are routed by id). SQLite always has exactly one writer.
    pub pg_writers: usize,
    /// Most appends in one transaction.
    pub max_batch: usize,
    /// Appends that may wait per writer before `append` itself waits (back-pressure).
    pub queue_capacity: usize,
    /// A PostgreSQL writer whose connection has been idle this long checks it (a ping) before
    /// the next batch and reconnects if it is gone (say, after a database restart), so that
    /// batch does not fail. Under load no batch pays for the check.
    pub pg_idle_check: std::time::Duration,
    /// SQLite: appends (events) between the starts of two key steps of the writer, which key
    /// the events appended since the last one — add their `(game_id, seq) -> row` keys to the
    /// per-game key table and move the watermark above them; no payload is copied
    /// (`migrations/sqlite/0004_event_keys.sql`). Smaller keeps reads of the unkeyed tail
    /// cheaper; larger writes each game's leaf of the key tree once for more of its moves.
    pub sqlite_recent_max: u64,
    /// SQLite: keys per slice of a key step, at least (a slice ends with a game). Each slice
    /// is a transaction of its own after a group commit, so a commit waits for one slice at
    /// most, not for the whole step (`migrations/sqlite/0005_key_steps_in_slices.sql`).
    pub sqlite_key_slice: usize,
    /// SQLite: the size of the WAL file at which the writer, after a commit, copies the whole
    /// WAL into the database and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`), and to which
    /// SQLite truncates it whenever it restarts (`journal_size_limit`). Default 64 MiB, at
    /// least 1 MiB. Without it the WAL grew without bound under steady load.
    pub sqlite_wal_max: u64,
    /// SQLite: after this long without a commit, the writer empties the WAL (a truncating
    /// checkpoint) if anything was committed since it last was; it does at close too.
    /// Default 1 s.
    pub sqlite_quiet_after: std::time::Duration,
    /// How long a read or a non-batched write (logins, the organiser API, …) waits for a pooled
    /// connection — on PostgreSQL including connecting, and checking an idle connection —
    /// before it fails with a database error ([`ErrorKind::Unavailable`]); and how long a
    /// PostgreSQL writer waits to connect before it fails its batch (`CommitFailed`). Default
    /// 3 s, so an unreachable database fails requests in seconds instead of hanging.
    pub acquire_timeout: std::time::Duration,
    /// How long [`Store::ping`] waits for the database before it answers
    /// [`StoreError::Timeout`]. Default 1 s.
    pub ping_timeout: std::time::Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            sqlite_sync: SqliteSync::Normal,
            pool_size: 8,
            pg_writers: 2,
            max_batch: 1024,
            queue_capacity: 8192,
            pg_idle_check: std::time::Duration::from_secs(5),
            sqlite_recent_max: 4096,
            sqlite_key_slice: 512,
            sqlite_wal_max: 64 << 20,
            sqlite_quiet_after: std::time::Duration::from_secs(1),
            acquire_timeout: std::time::Duration::from_secs(3),
            ping_timeout: std::time::Duration::from_secs(1),
        }
    }
}

/// Storage for the game server. Implemented by [`SqliteStore`], [`PgStore`] and [`AnyStore`]
/// (the one to use: `open(url)` returns it). Methods return `Send` futures, so a store can be
/// shared as `Arc<AnyStore>` (or `Arc<S>` with `S: Store`) across tasks.
///
/// Errors are [`StoreError`]s; [`StoreError::is_client_error`] tells bad input or state (nothing
/// was changed) from database failures.
pub trait Store: Send + Sync + 'static {
    // ---- principals -------------------------------------------------------------------------

    /// Creates a player, arbiter or organiser. Names are unique per role
    /// ([`StoreError::NameTaken`]).
    fn create_principal(&self, new: NewPrincipal)
    -> impl Future<Output = Result<Principal>> + Send;

    /// Creates a principal with a stable id given by an organizer (`handle`: 1 to 64 letters,
    /// digits, `-` or `_`, not digits only), an alias of its numeric id. Handles are unique
    /// ([`StoreError::HandleTaken`]), names unique per role ([`StoreError::NameTaken`]).
    fn create_principal_with_handle(
        &self,
        new: NewPrincipal,
        handle: &str,
    ) -> impl Future<Output = Result<Principal>> + Send;

    /// The principal with this stable id, if any.
    fn principal_by_handle(
        &self,
        handle: &str,
    ) -> impl Future<Output = Result<Option<Principal>>> + Send;

    /// One principal ([`StoreError::PrincipalNotFound`]).
    fn principal(&self, id: PrincipalId) -> impl Future<Output = Result<Principal>> + Send;

    /// All principals, or those of one role, by id.
    fn list_principals(
        &self,
        role: Option<Role>,
    ) -> impl Future<Output = Result<Vec<Principal>>> + Send;

    /// Sets (or clears) a principal's rating.
    fn set_rating(
        &self,
        id: PrincipalId,
        rating: Option<i64>,
    ) -> impl Future<Output = Result<()>> + Send;

    // ---- tokens -----------------------------------------------------------------------------

    /// Records a token by its hash (make one with [`generate_token`]). The role must be one the
    /// principal may hold ([`Role::may_grant`]).
    fn insert_token(&self, new: NewToken) -> impl Future<Output = Result<TokenInfo>> + Send;

    /// The principal and token for a token hash (see [`hash_token`]); `None` when the token is
    /// unknown or revoked.
    fn authenticate(
        &self,
        hash: TokenHash,
    ) -> impl Future<Output = Result<Option<Authenticated>>> + Send;

    /// [`Store::authenticate`] for several token hashes at once: one answer per hash, in their
    /// order (a hash may appear more than once). The SQL stores look them up in one statement
    /// per [`AUTHENTICATE_BATCH`] hashes, so a burst of logins costs the database a few
    /// statements instead of one each.
    fn authenticate_many(
        &self,
        hashes: Vec<TokenHash>,
    ) -> impl Future<Output = Result<Vec<Option<Authenticated>>>> + Send;

    /// A principal's tokens, revoked ones included, by id.
    fn tokens_of(
        &self,
        principal: PrincipalId,
    ) -> impl Future<Output = Result<Vec<TokenInfo>>> + Send;

    /// Revokes a token (idempotent: revoking again keeps the first time). Returns it.
    fn revoke_token(
        &self,
        id: TokenId,
        at_ms: Millis,
    ) -> impl Future<Output = Result<TokenInfo>> + Send;

    // ---- games ------------------------------------------------------------------------------

    /// Creates a game between two different players; its log is empty (`last_seq` 0).
    ///
    /// With a [`key`](NewGame::key) that a stored game already has, it creates nothing and
    /// returns that game as it is (no error; nothing of `new` is compared with it, so a caller
    /// that reuses keys for other games should compare). Concurrent creates with one key, from
    /// any node, store one game and all return it.
    fn create_game(&self, new: NewGame) -> impl Future<Output = Result<Game>> + Send;

    /// Creates several games in one transaction (a league round's boards): each as
    /// [`create_game`](Store::create_game) would, in order; all of them or (on an error) none.
    fn create_games(&self, new: Vec<NewGame>) -> impl Future<Output = Result<Vec<Game>>> + Send;

    /// One game ([`StoreError::GameNotFound`]).
    fn game(&self, id: GameId) -> impl Future<Output = Result<Game>> + Send;

    /// The game created with this [`key`](NewGame::key), if any.
    fn game_by_key(&self, key: &str) -> impl Future<Output = Result<Option<Game>>> + Send;

    /// Live games oldest first, or finished games most recent first.
    fn list_games(
        &self,
        filter: GameFilter,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<Game>>> + Send;

    // ---- the event log ----------------------------------------------------------------------

    /// Appends events to a game's log, atomically: all or none. The first event's seq must be
    /// the game's `last_seq + 1` and the rest must follow one by one, otherwise
    /// [`StoreError::SeqMismatch`] (a duplicate or a gap; nothing stored). Refused on a
    /// finished game ([`StoreError::GameFinished`]). Returns the game's new `last_seq` once the
    /// batch carrying it has committed.
    ///
    /// **Outcomes.** `Ok` means committed (durable as the README's Durability section says).
    /// [`StoreError::CommitUnknown`] ([`StoreError::outcome_unknown`]) means it may or may not
    /// have committed — the database connection was lost while the commit was in flight, say —
    /// and the caller must not assume either: ask [`resolve_append`](Store::resolve_append)
    /// before answering anyone or appending the game's next seq. Every other error means it
    /// was not stored and never will be (refusals like `SeqMismatch`, and `CommitFailed`:
    /// the transaction failed before it could commit).
    ///
    /// Appends of one game are committed in the order they were called. If the caller drops the
    /// future after the append was queued, it may still be committed (resolve it the same way).
    fn append(
        &self,
        game: GameId,
        events: Vec<NewEvent>,
    ) -> impl Future<Output = Result<u64>> + Send;

    /// Like [`append`](Store::append) (events may be empty), and marks the game finished with
    /// its result, in the same transaction. Later appends are refused.
    fn finish(
        &self,
        game: GameId,
        events: Vec<NewEvent>,
        finish: Finish,
    ) -> impl Future<Output = Result<u64>> + Send;

    /// Several games' appends and finishes submitted at once, each as [`append`](Store::append)
    /// or [`finish`](Store::finish) would be (atomic by itself; a refused one does not affect
    /// the others; two of one game chain in order). The answers come back in the order of
    /// `appends`, each the game's new `last_seq` or why it was refused. The group-commit
    /// writers get them in one message (per writer), so a caller holding many games' appends
    /// pays one hand-off for all of them.
    fn append_many(&self, appends: Vec<Append>) -> impl Future<Output = Vec<Result<u64>>> + Send;

    /// What became of an append or finish (given exactly as it was submitted) whose answer
    /// was [`StoreError::CommitUnknown`], or which was dropped before it answered:
    /// [`Resolution::Committed`] when all of it is in the log as given,
    /// [`Resolution::NotCommitted`] when none of it is, and
    /// [`StoreError::AppendConflict`] when the log holds other events at its seqs (something
    /// else was committed there; this append was not).
    ///
    /// The answer is final: before it reads the game, it ends this store's writer connections
    /// whose commit's outcome was unknown and waits until the server has no backend left for
    /// them (PostgreSQL `pg_terminate_backend`; the role needs the right to signal its own
    /// backends, which every role has), and it locks the game's row to wait for any
    /// transaction writing the game. It does not change the log: after `NotCommitted` the
    /// caller may append the same seqs again, or others. Any error (the database still
    /// unreachable, say) leaves the outcome unknown; ask again later. Run it before appending
    /// anything else to the game.
    fn resolve_append(&self, append: &Append) -> impl Future<Output = Result<Resolution>> + Send;

    /// Up to `limit` events with seq > `after_seq`, in order (reconnect replay). Empty when
    /// there is nothing newer; [`StoreError::GameNotFound`] for an unknown game.
    fn events_since(
        &self,
        game: GameId,
        after_seq: u64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<StoredEvent>>> + Send;

    /// A game and all its events (`1..=last_seq`), for recovery or records.
    fn load_game(&self, game: GameId) -> impl Future<Output = Result<GameRecord>> + Send;

    /// Every unfinished game with all its events, by id: what the server rebuilds at start.
    fn unfinished_games(&self) -> impl Future<Output = Result<Vec<GameRecord>>> + Send;

    // ---- audit ------------------------------------------------------------------------------

    /// Logs an administrative action (who, what, on what, why). Actions inside a game (arbiter
    /// commands) are game events with `actor` and `reason` instead.
    fn record_audit(&self, new: NewAudit) -> impl Future<Output = Result<AuditEntry>> + Send;

    /// The latest audit entries, newest first.
    fn audit_log(&self, limit: u32) -> impl Future<Output = Result<Vec<AuditEntry>>> + Send;

    // ---- competitions (league seasons) and their logs ----------------------------------------

    /// Creates a competition with an empty log (`last_seq` 0). A `created_by` that is no
    /// principal gives [`StoreError::PrincipalNotFound`].
    fn create_competition(
        &self,
        new: NewCompetition,
    ) -> impl Future<Output = Result<Competition>> + Send;

    /// Every competition, oldest first.
    fn competitions(&self) -> impl Future<Output = Result<Vec<Competition>>> + Send;

    /// One competition ([`StoreError::CompetitionNotFound`]).
    fn competition(&self, id: CompetitionId) -> impl Future<Output = Result<Competition>> + Send;

    /// Appends entries to a competition's log, atomically (all or none), in a transaction of
    /// its own (not the games' group commit). The first entry's seq must be the log's
    /// `last_seq + 1` and the rest must follow one by one, otherwise
    /// [`StoreError::CompetitionSeqMismatch`] (a seq already used, or a gap; nothing stored).
    /// Returns the new `last_seq` after `COMMIT` (durable as the README's Durability section
    /// says). Concurrent appends to one log, from any node, take turns: each is accepted
    /// exactly when it continues the log as the one before left it.
    ///
    /// An error of kind [`ErrorKind::Unavailable`] (the connection lost during `COMMIT`, say)
    /// leaves the outcome unknown: append the same entries again. `Ok` then means they were
    /// stored now; a `CompetitionSeqMismatch` whose `expected` is past them means the log
    /// already holds their seqs (read them back to see whether they are these entries).
    fn append_competition(
        &self,
        id: CompetitionId,
        events: Vec<NewCompetitionEvent>,
    ) -> impl Future<Output = Result<u64>> + Send;

    /// [`append_competition`](Store::append_competition) with the fencing token of the node
    /// appending ([`claim_competition`](Store::claim_competition)): refused with
    /// [`StoreError::Fenced`] (nothing stored) unless it is the competition's current token.
    /// None: not checked, exactly `append_competition`.
    fn append_competition_fenced(
        &self,
        id: CompetitionId,
        events: Vec<NewCompetitionEvent>,
        fence: Option<u64>,
    ) -> impl Future<Output = Result<u64>> + Send;

    // ---- ownership (several nodes, issue 23) --------------------------------------------------

    /// Makes `node` the owner of a game in the database: bumps the game's fencing token (0
    /// until the first claim) and returns the new one, atomically. From then on an append
    /// carrying an older token ([`Append::fence`]) is refused with [`StoreError::Fenced`] and
    /// stores nothing; appends without a token are not checked.
    ///
    /// Race-free with appends in flight: on PostgreSQL the claim updates the game's row,
    /// which every append transaction locks `FOR UPDATE` before it checks the token, so a
    /// claim either waits for an append in flight to commit (and the new owner's reads after
    /// the claim see it) or commits first (and the append then reads the new token and is
    /// refused). On SQLite the claim and the writer's transaction take turns on the write
    /// lock. `node` is recorded for operators (`games.fence_node`), never compared.
    /// [`StoreError::GameNotFound`] for an unknown game.
    fn claim_game(&self, game: GameId, node: &str) -> impl Future<Output = Result<u64>> + Send;

    /// As [`claim_game`](Store::claim_game), for a competition (a league's runner) and its
    /// log ([`append_competition_fenced`](Store::append_competition_fenced)).
    /// [`StoreError::CompetitionNotFound`] for an unknown competition.
    fn claim_competition(
        &self,
        id: CompetitionId,
        node: &str,
    ) -> impl Future<Output = Result<u64>> + Send;

    /// The entries of a competition's log with seq > `after_seq`, in seq order (all of them
    /// from 0). Empty when nothing is newer; [`StoreError::CompetitionNotFound`] for an unknown
    /// competition.
    fn competition_events(
        &self,
        id: CompetitionId,
        after_seq: u64,
    ) -> impl Future<Output = Result<Vec<CompetitionEvent>>> + Send;

    // ---- lifecycle --------------------------------------------------------------------------

    /// Commits every queued append, stops the writers and closes the connections. When it
    /// returns the writers have ended (SQLite: with the key slice the writer runs after its
    /// last commit), so nothing of this store writes to the database any more. Appends after
    /// this fail with [`StoreError::Closed`].
    fn close(&self) -> impl Future<Output = ()> + Send;

    /// A readiness probe: whether the database answers a trivial query (`SELECT 1` on a pooled
    /// connection) within [`StoreOptions::ping_timeout`], and the group-commit writers are
    /// running. `Err(StoreError::Timeout)` when the database hangs, a database error when it
    /// refuses, [`StoreError::Closed`] after [`close`](Store::close). Cheap enough to call per
    /// `/readyz` request. (The writers connect on their own; a writer whose connection is lost
    /// reconnects at its next batch.)
    fn ping(&self) -> impl Future<Output = Result<()>> + Send;

    /// Counters of the group-commit writers (batches, appends, events, refusals, failures,
    /// time in transactions), for `/metrics`. Cheap: a few atomic loads.
    fn stats(&self) -> StoreStats;

    /// Which group-commit writer commits this game's appends (0 on SQLite, which has one).
    /// Appends to different writers commit independently, so a caller with many games'
    /// appends in hand can submit one [`append_many`](Store::append_many) per writer and
    /// take each writer's answers as soon as its transaction is done.
    fn writer_of(&self, game: GameId) -> usize;
}

/// Either backend, chosen at run time by URL.
pub enum AnyStore {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

impl std::fmt::Debug for AnyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AnyStore::Sqlite(_) => "AnyStore::Sqlite",
            AnyStore::Postgres(_) => "AnyStore::Postgres",
        })
    }
}

impl AnyStore {
    /// `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        match self {
            AnyStore::Sqlite(_) => "sqlite",
            AnyStore::Postgres(_) => "postgres",
        }
    }
}

/// Opens a store from a URL and runs its migrations: `sqlite://PATH` (or `sqlite:PATH`; the file
/// is created if missing; in-memory databases are refused) or `postgres://…`/`postgresql://…`.
pub async fn open(url: &str, options: &StoreOptions) -> Result<AnyStore> {
    if url.starts_with("sqlite:") {
        Ok(AnyStore::Sqlite(SqliteStore::open(url, options).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(AnyStore::Postgres(PgStore::open(url, options).await?))
    } else {
        Err(StoreError::UnsupportedUrl(url.to_owned()))
    }
}

macro_rules! delegate {
    ($self:ident, $s:ident => $call:expr) => {
        match $self {
            AnyStore::Sqlite($s) => $call.await,
            AnyStore::Postgres($s) => $call.await,
        }
    };
}

impl Store for AnyStore {
    async fn create_principal(&self, new: NewPrincipal) -> Result<Principal> {
        delegate!(self, s => s.create_principal(new))
    }
    async fn principal(&self, id: PrincipalId) -> Result<Principal> {
        delegate!(self, s => s.principal(id))
    }
    async fn create_principal_with_handle(
        &self,
        new: NewPrincipal,
        handle: &str,
    ) -> Result<Principal> {
        delegate!(self, s => s.create_principal_with_handle(new, handle))
    }
    async fn principal_by_handle(&self, handle: &str) -> Result<Option<Principal>> {
        delegate!(self, s => s.principal_by_handle(handle))
    }
    async fn list_principals(&self, role: Option<Role>) -> Result<Vec<Principal>> {
        delegate!(self, s => s.list_principals(role))
    }
    async fn set_rating(&self, id: PrincipalId, rating: Option<i64>) -> Result<()> {
        delegate!(self, s => s.set_rating(id, rating))
    }
    async fn insert_token(&self, new: NewToken) -> Result<TokenInfo> {
        delegate!(self, s => s.insert_token(new))
    }
    async fn authenticate(&self, hash: TokenHash) -> Result<Option<Authenticated>> {
        delegate!(self, s => s.authenticate(hash))
    }
    async fn authenticate_many(
        &self,
        hashes: Vec<TokenHash>,
    ) -> Result<Vec<Option<Authenticated>>> {
        delegate!(self, s => s.authenticate_many(hashes))
    }
    async fn tokens_of(&self, principal: PrincipalId) -> Result<Vec<TokenInfo>> {
        delegate!(self, s => s.tokens_of(principal))
    }
    async fn revoke_token(&self, id: TokenId, at_ms: Millis) -> Result<TokenInfo> {
        delegate!(self, s => s.revoke_token(id, at_ms))
    }
    async fn create_game(&self, new: NewGame) -> Result<Game> {
        delegate!(self, s => s.create_game(new))
    }
    async fn create_games(&self, new: Vec<NewGame>) -> Result<Vec<Game>> {
        delegate!(self, s => s.create_games(new))
    }
    async fn game(&self, id: GameId) -> Result<Game> {
        delegate!(self, s => s.game(id))
    }
    async fn game_by_key(&self, key: &str) -> Result<Option<Game>> {
        delegate!(self, s => s.game_by_key(key))
    }
    async fn list_games(&self, filter: GameFilter, limit: u32) -> Result<Vec<Game>> {
        delegate!(self, s => s.list_games(filter, limit))
    }
    async fn append(&self, game: GameId, events: Vec<NewEvent>) -> Result<u64> {
        delegate!(self, s => s.append(game, events))
    }
    async fn finish(&self, game: GameId, events: Vec<NewEvent>, finish: Finish) -> Result<u64> {
        delegate!(self, s => s.finish(game, events, finish))
    }
    async fn append_many(&self, appends: Vec<Append>) -> Vec<Result<u64>> {
        delegate!(self, s => s.append_many(appends))
    }
    async fn resolve_append(&self, append: &Append) -> Result<Resolution> {
        delegate!(self, s => s.resolve_append(append))
    }
    async fn events_since(
        &self,
        game: GameId,
        after_seq: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>> {
        delegate!(self, s => s.events_since(game, after_seq, limit))
    }
    async fn load_game(&self, game: GameId) -> Result<GameRecord> {
        delegate!(self, s => s.load_game(game))
    }
    async fn unfinished_games(&self) -> Result<Vec<GameRecord>> {
        delegate!(self, s => s.unfinished_games())
    }
    async fn record_audit(&self, new: NewAudit) -> Result<AuditEntry> {
        delegate!(self, s => s.record_audit(new))
    }
    async fn audit_log(&self, limit: u32) -> Result<Vec<AuditEntry>> {
        delegate!(self, s => s.audit_log(limit))
    }
    async fn create_competition(&self, new: NewCompetition) -> Result<Competition> {
        delegate!(self, s => s.create_competition(new))
    }
    async fn competitions(&self) -> Result<Vec<Competition>> {
        delegate!(self, s => s.competitions())
    }
    async fn competition(&self, id: CompetitionId) -> Result<Competition> {
        delegate!(self, s => s.competition(id))
    }
    async fn append_competition(
        &self,
        id: CompetitionId,
        events: Vec<NewCompetitionEvent>,
    ) -> Result<u64> {
        delegate!(self, s => s.append_competition(id, events))
    }
    async fn competition_events(
        &self,
        id: CompetitionId,
        after_seq: u64,
    ) -> Result<Vec<CompetitionEvent>> {
        delegate!(self, s => s.competition_events(id, after_seq))
    }
    async fn append_competition_fenced(
        &self,
        id: CompetitionId,
        events: Vec<NewCompetitionEvent>,
        fence: Option<u64>,
    ) -> Result<u64> {
        delegate!(self, s => s.append_competition_fenced(id, events, fence))
    }
    async fn claim_game(&self, game: GameId, node: &str) -> Result<u64> {
        delegate!(self, s => s.claim_game(game, node))
    }
    async fn claim_competition(&self, id: CompetitionId, node: &str) -> Result<u64> {
        delegate!(self, s => s.claim_competition(id, node))
    }
    async fn close(&self) {
        delegate!(self, s => s.close())
    }
    async fn ping(&self) -> Result<()> {
        delegate!(self, s => s.ping())
    }
    fn stats(&self) -> StoreStats {
        match self {
            AnyStore::Sqlite(s) => s.stats(),
            AnyStore::Postgres(s) => s.stats(),
        }
    }
    fn writer_of(&self, game: GameId) -> usize {
        match self {
            AnyStore::Sqlite(s) => s.writer_of(game),
            AnyStore::Postgres(s) => s.writer_of(game),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_sync_parses() {
        assert_eq!(SqliteSync::parse("FULL"), Some(SqliteSync::Full));
        assert_eq!(SqliteSync::parse("normal"), Some(SqliteSync::Normal));
        assert_eq!(SqliteSync::parse("off"), None);
        assert_eq!(SqliteSync::default(), SqliteSync::Normal);
    }
}
