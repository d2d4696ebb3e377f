//! The [`Store`](crate::Store) implementation both backends share: [`SqlStore`], generic over
//! sqlx's [`Database`] (`sqlx::Sqlite` or `sqlx::Postgres`). Everything but the group-commit
//! writers (`crate::batch`, with a committer per backend) and opening is the same SQL on both
//! (`$1`-style parameters work in SQLite and PostgreSQL alike); the few differences are the
//! constants of [`Backend`]. The generic code compiles to one copy per backend, so a query is
//! still a plain `sqlx::query` with binds.

use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Row, Type};

use crate::batch::{Op, Writers};
use crate::types::{
    check_handle, check_kind, check_name, check_no_nul, check_opt_no_nul, to_i64, to_u64,
};
use crate::{
    Append, AuditEntry, AuditId, Authenticated, BroadcastDelay, Competition, CompetitionEvent,
    CompetitionId, Finish, Game, GameFilter, GameId, GameRecord, Millis, NewAudit, NewCompetition,
    NewCompetitionEvent, NewEvent, NewGame, NewPrincipal, NewToken, Principal, PrincipalId,
    Resolution, Result, Role, Store, StoreError, StoreStats, StoredEvent, TokenHash, TokenId,
    TokenInfo,
};

pub(crate) const PRINCIPAL_COLS: &str = "id, role, name, rating, created_at_ms";
pub(crate) const TOKEN_COLS: &str = "id, principal_id, role, label, created_at_ms, revoked_at_ms";

/// A live token with its principal, by the token's hash: the statement of a login, without its
/// condition on the hash (`AND t.hash = …` or `AND t.hash IN (…)` follows).
macro_rules! authenticate_select {
    () => {
        "SELECT t.hash, t.id, t.principal_id, t.role, t.label, t.created_at_ms, \
         t.revoked_at_ms, p.role AS p_role, p.name AS p_name, p.rating AS p_rating, \
         p.created_at_ms AS p_created_at_ms \
         FROM tokens t JOIN principals p ON p.id = t.principal_id \
         WHERE t.revoked_at_ms IS NULL"
    };
}

/// The columns of a game row, with `last_seq` given as an SQL expression.
macro_rules! game_cols {
    ($last_seq:literal) => {
        concat!(
            "id, red_id, black_id, time_control, ruleset, start_fen, delay_moves, delay_ms, \
             event, round, board, scheduled_start_ms, created_at_ms, start_mode, \
             lateness_limit_ms, key, ",
            $last_seq,
            " AS last_seq, result, reason, finished_at_ms"
        )
    };
}
/// On PostgreSQL `last_seq` is a column (several nodes' writers check it under row locks).
pub(crate) const GAME_COLS: &str = game_cols!("last_seq");
/// On SQLite it is derived from the log (its one writer remembers it; see
/// `migrations/sqlite/0002_last_seq_from_the_log.sql`): the larger of the largest keyed seq
/// (a search of `game_event_keys`' primary key) and the largest seq among the few events
/// above the watermark, not keyed yet (a rowid range of `game_events`; `0004_event_keys.sql`).
pub(crate) const GAME_COLS_DERIVED_SEQ: &str = game_cols!(
    "MAX((SELECT COALESCE(MAX(k.seq), 0) FROM game_event_keys AS k WHERE k.game_id = games.id), \
     (SELECT COALESCE(MAX(t.seq), 0) FROM game_events AS t \
      WHERE t.id > (SELECT keyed_to FROM game_event_watermark) AND t.game_id = games.id))"
);
pub(crate) const EVENT_COLS: &str = "game_id, seq, kind, payload, at_ms, actor_id, reason";
pub(crate) const AUDIT_COLS: &str = "id, at_ms, actor_id, action, subject, reason";
pub(crate) const COMPETITION_COLS: &str = "id, name, created_at_ms, created_by, last_seq";
pub(crate) const COMPETITION_EVENT_COLS: &str =
    "competition_id, seq, kind, payload, at_ms, actor_id, reason";

/// Whether a database error is a unique-constraint violation.
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

/// Whether a database error is a foreign-key violation.
pub(crate) fn is_foreign_key_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_foreign_key_violation())
}

/// Groups events (sorted by game, then seq) under their games, keeping only the events each game
/// row accounts for (`seq <= last_seq`: the events read after the row may include newer ones),
/// and checks the log is gap-free.
pub(crate) fn assemble(games: Vec<Game>, events: Vec<StoredEvent>) -> Result<Vec<GameRecord>> {
    let mut by_game: std::collections::HashMap<GameId, Vec<StoredEvent>> =
        std::collections::HashMap::with_capacity(games.len());
    for e in events {
        by_game.entry(e.game).or_default().push(e);
    }
    games
        .into_iter()
        .map(|game| {
            let mut events = by_game.remove(&game.id).unwrap_or_default();
            events.retain(|e| e.seq <= game.last_seq);
            for (i, e) in events.iter().enumerate() {
                if e.seq != i as u64 + 1 {
                    return Err(StoreError::Corrupt(format!(
                        "game {}: event log has a gap before seq {}",
                        game.id, e.seq
                    )));
                }
            }
            if events.len() as u64 != game.last_seq {
                return Err(StoreError::Corrupt(format!(
                    "game {}: last_seq is {} but {} events are stored",
                    game.id,
                    game.last_seq,
                    events.len()
                )));
            }
            Ok(GameRecord { game, events })
        })
        .collect()
}

/// Decides what became of `append` from the game row and the stored events at its seqs, read
/// when no transaction that could still store it is in flight.
pub(crate) fn resolve(append: &Append, game: &Game, stored: &[StoredEvent]) -> Result<Resolution> {
    let conflict = |seq| StoreError::AppendConflict {
        game: append.game,
        seq,
    };
    let Some(first) = append.events.first() else {
        // A finish without events: committed exactly when the game is finished so.
        return Ok(match (&append.finish, &game.finish) {
            (Some(mine), Some(stored)) if mine == stored => Resolution::Committed {
                last_seq: game.last_seq,
            },
            _ => Resolution::NotCommitted {
                last_seq: game.last_seq,
            },
        });
    };
    if stored.is_empty() {
        // The log is gap-free: it ends before the append's first seq.
        return Ok(Resolution::NotCommitted {
            last_seq: game.last_seq,
        });
    }
    for (i, mine) in append.events.iter().enumerate() {
        let same = stored.get(i).is_some_and(|s| {
            s.seq == mine.seq
                && s.kind == mine.kind
                && s.payload == mine.payload
                && s.at_ms == mine.at_ms
                && s.actor == mine.actor
                && s.reason == mine.reason
        });
        if !same {
            return Err(conflict(mine.seq));
        }
    }
    let last_seq = append.events.last().map_or(first.seq, |e| e.seq);
    if append.finish.is_some() && append.finish != game.finish {
        // The events are there, but were not stored by this finish (which was atomic).
        return Err(conflict(last_seq + 1));
    }
    Ok(Resolution::Committed { last_seq })
}

/// What differs between the backends in the shared SQL. Implemented for `sqlx::Sqlite` and
/// `sqlx::Postgres` only.
pub trait Backend: Database {
    /// The columns of a game row: [`GAME_COLS`] or [`GAME_COLS_DERIVED_SEQ`].
    const GAME_COLS: &'static str;
    /// Where the event log is read: the table `game_events`, or SQLite's view `game_log`.
    const EVENTS: &'static str;
    /// `resolve_append`'s first statement in its transaction, if any: how long it waits for
    /// a writer's row lock.
    const LOCK_TIMEOUT: Option<&'static str>;
    /// What `resolve_append` appends to its `SELECT` of the game row to wait for any
    /// transaction writing the game (the writers lock the row `FOR UPDATE`).
    const LOCK_GAME: &'static str;
    /// Ends a writer connection whose commit's outcome is unknown (`$1`: its
    /// `application_name`) and counts its backends still alive (see [`Suspects`]).
    const FENCE: Option<&'static str>;
}

impl Backend for sqlx::Postgres {
    const GAME_COLS: &'static str = GAME_COLS;
    const EVENTS: &'static str = "game_events";
    const LOCK_TIMEOUT: Option<&'static str> = Some("SET LOCAL lock_timeout = '5s'");
    const LOCK_GAME: &'static str = " FOR SHARE";
    // `pg_terminate_backend` with a timeout (PostgreSQL 14 and later) answers true once the
    // backend has ended, so the count is of backends still there after 5 s. The materialised
    // CTE picks the backends first: in one `WHERE`, PostgreSQL may call the function on every
    // row before it compares the name (it did, and ended every connection).
    const FENCE: Option<&'static str> = Some(
        "WITH s AS MATERIALIZED (SELECT pid FROM pg_stat_activity \
             WHERE application_name = $1 AND pid <> pg_backend_pid()) \
         SELECT COUNT(*) AS alive FROM s WHERE NOT pg_terminate_backend(s.pid, 5000)",
    );
}

impl Backend for sqlx::Sqlite {
    const GAME_COLS: &'static str = GAME_COLS_DERIVED_SEQ;
    const EVENTS: &'static str = "game_log";
    // The one writer is a thread of this process: when it has answered, its transaction is
    // over (committed or rolled back), and nothing else writes events.
    const LOCK_TIMEOUT: Option<&'static str> = None;
    const LOCK_GAME: &'static str = "";
    const FENCE: Option<&'static str> = None;
}

/// The `application_name`s of PostgreSQL writer connections whose last commit's outcome is
/// unknown and whose backend may still be alive on the server: a statement that reached it is
/// carried out, and committed, even when the client is gone (say, once a lock it waits for is
/// free). `resolve_append` ends them and waits until they are gone before it reads a game.
/// Always empty on SQLite.
pub(crate) type Suspects = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// A store on a SQL database: a connection pool for reads and the rare writes (principals,
/// tokens, games, audit), and the group-commit writers for appends. Use it as
/// [`SqliteStore`](crate::SqliteStore) or [`PgStore`](crate::PgStore) (each has its `open`).
pub struct SqlStore<DB: Database> {
    pub(crate) pool: Pool<DB>,
    pub(crate) writers: Writers,
    pub(crate) suspects: Suspects,
    pub(crate) ping_timeout: std::time::Duration,
}

impl<DB: Database> std::fmt::Debug for SqlStore<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlStore")
            .field("backend", &DB::NAME)
            .finish_non_exhaustive()
    }
}

/// Longest [`NewGame::key`].
const MAX_GAME_KEY_CHARS: usize = 200;
/// Longest [`NewCompetition::name`].
const MAX_COMPETITION_NAME_CHARS: usize = 200;

fn role_of(s: &str) -> Result<Role> {
    Role::parse(s).ok_or_else(|| StoreError::Corrupt(format!("unknown role {s:?}")))
}

fn check_text(what: &str, s: &str, max: usize) -> Result<()> {
    check_no_nul(what, s)?;
    if s.trim().is_empty() {
        return Err(StoreError::Invalid(format!("{what} must not be blank")));
    }
    if s.chars().count() > max {
        return Err(StoreError::Invalid(format!(
            "{what} is longer than {max} characters"
        )));
    }
    Ok(())
}

// The two impl blocks below carry the same bounds: what the shared SQL needs of a backend
// (run statements on its pool, bind and read `i64`, text and bytes, find columns by name).
// Both backends meet them; they are spelled out because Rust does not infer them from a trait.

impl<DB> SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> &'q [u8]: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB>,
    for<'q> Option<&'q str>: Encode<'q, DB>,
    for<'r> String: Decode<'r, DB> + Type<DB>,
    for<'r> Vec<u8>: Decode<'r, DB> + Type<DB>,
    for<'n> &'n str: ColumnIndex<DB::Row>,
{
    fn principal_from(row: &DB::Row) -> Result<Principal> {
        Ok(Principal {
            id: PrincipalId(row.try_get("id")?),
            role: role_of(&row.try_get::<String, _>("role")?)?,
            name: row.try_get("name")?,
            rating: row.try_get("rating")?,
            created_at_ms: row.try_get("created_at_ms")?,
        })
    }

    fn token_from(row: &DB::Row) -> Result<TokenInfo> {
        Ok(TokenInfo {
            id: TokenId(row.try_get("id")?),
            principal: PrincipalId(row.try_get("principal_id")?),
            role: role_of(&row.try_get::<String, _>("role")?)?,
            label: row.try_get("label")?,
            created_at_ms: row.try_get("created_at_ms")?,
            revoked_at_ms: row.try_get("revoked_at_ms")?,
        })
    }

    /// A row of `authenticate_select!()`.
    fn authenticated_from(row: &DB::Row) -> Result<Authenticated> {
        let token = Self::token_from(row)?;
        let principal = Principal {
            id: token.principal,
            role: role_of(&row.try_get::<String, _>("p_role")?)?,
            name: row.try_get("p_name")?,
            rating: row.try_get("p_rating")?,
            created_at_ms: row.try_get("p_created_at_ms")?,
        };
        Ok(Authenticated { principal, token })
    }

    fn game_from(row: &DB::Row) -> Result<Game> {
        let result: Option<String> = row.try_get("result")?;
        let reason: Option<String> = row.try_get("reason")?;
        let finished_at_ms: Option<Millis> = row.try_get("finished_at_ms")?;
        let finish = match (result, finished_at_ms) {
            (Some(result), Some(at_ms)) => Some(Finish {
                result,
                reason: reason.unwrap_or_default(),
                at_ms,
            }),
            _ => None,
        };
        let board: Option<i64> = row.try_get("board")?;
        let board = board
            .map(|b| u32::try_from(b).map_err(|_| StoreError::Corrupt(format!("board {b}"))))
            .transpose()?;
        let delay_moves: i64 = row.try_get("delay_moves")?;
        Ok(Game {
            id: GameId(row.try_get("id")?),
            red: PrincipalId(row.try_get("red_id")?),
            black: PrincipalId(row.try_get("black_id")?),
            time_control: row.try_get("time_control")?,
            ruleset: row.try_get("ruleset")?,
            start_fen: row.try_get("start_fen")?,
            broadcast_delay: BroadcastDelay {
                moves: u32::try_from(delay_moves)
                    .map_err(|_| StoreError::Corrupt(format!("delay_moves {delay_moves}")))?,
                millis: to_u64("delay_ms", row.try_get("delay_ms")?)?,
            },
            event: row.try_get("event")?,
            round: row.try_get("round")?,
            board,
            scheduled_start_ms: row.try_get("scheduled_start_ms")?,
            created_at_ms: row.try_get("created_at_ms")?,
            start_mode: row.try_get("start_mode")?,
            lateness_limit_ms: row.try_get("lateness_limit_ms")?,
            key: row.try_get("key")?,
            last_seq: to_u64("last_seq", row.try_get("last_seq")?)?,
            finish,
        })
    }

    fn competition_from(row: &DB::Row) -> Result<Competition> {
        let created_by: Option<i64> = row.try_get("created_by")?;
        Ok(Competition {
            id: CompetitionId(row.try_get("id")?),
            name: row.try_get("name")?,
            created_at_ms: row.try_get("created_at_ms")?,
            created_by: created_by.map(PrincipalId),
            last_seq: to_u64("last_seq", row.try_get("last_seq")?)?,
        })
    }

    fn competition_event_from(row: &DB::Row) -> Result<CompetitionEvent> {
        let actor: Option<i64> = row.try_get("actor_id")?;
        Ok(CompetitionEvent {
            competition: CompetitionId(row.try_get("competition_id")?),
            seq: to_u64("seq", row.try_get("seq")?)?,
            kind: row.try_get("kind")?,
            payload: row.try_get("payload")?,
            at_ms: row.try_get("at_ms")?,
            actor: actor.map(PrincipalId),
            reason: row.try_get("reason")?,
        })
    }

    fn event_from(row: &DB::Row) -> Result<StoredEvent> {
        let actor: Option<i64> = row.try_get("actor_id")?;
        Ok(StoredEvent {
            game: GameId(row.try_get("game_id")?),
            seq: to_u64("seq", row.try_get("seq")?)?,
            kind: row.try_get("kind")?,
            payload: row.try_get("payload")?,
            at_ms: row.try_get("at_ms")?,
            actor: actor.map(PrincipalId),
            reason: row.try_get("reason")?,
        })
    }

    fn audit_from(row: &DB::Row) -> Result<AuditEntry> {
        let actor: Option<i64> = row.try_get("actor_id")?;
        Ok(AuditEntry {
            id: AuditId(row.try_get("id")?),
            at_ms: row.try_get("at_ms")?,
            actor: actor.map(PrincipalId),
            action: row.try_get("action")?,
            subject: row.try_get("subject")?,
            reason: row.try_get("reason")?,
        })
    }

    async fn fetch_principal(&self, id: PrincipalId) -> Result<Principal> {
        let sql = format!("SELECT {PRINCIPAL_COLS} FROM principals WHERE id = $1");
        let row = sqlx::query(&sql)
            .bind(id.0)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::PrincipalNotFound(id))?;
        Self::principal_from(&row)
    }

    async fn fetch_competition(&self, id: CompetitionId) -> Result<Competition> {
        let sql = format!("SELECT {COMPETITION_COLS} FROM competitions WHERE id = $1");
        let row = sqlx::query(&sql)
            .bind(id.0)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::CompetitionNotFound(id))?;
        Self::competition_from(&row)
    }

    async fn fetch_game_by_key(&self, key: &str) -> Result<Option<Game>> {
        let sql = format!("SELECT {} FROM games WHERE key = $1", DB::GAME_COLS);
        let row = sqlx::query(&sql)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(Self::game_from).transpose()
    }

    /// Inserts a principal, with a stable id given by an organizer or none
    /// ([`StoreError::HandleTaken`], [`StoreError::NameTaken`]).
    async fn insert_principal(&self, new: NewPrincipal, handle: Option<&str>) -> Result<Principal> {
        check_name(&new.name)?;
        let sql = format!(
            "INSERT INTO principals (role, name, rating, created_at_ms, handle) \
             VALUES ($1, $2, $3, $4, $5) RETURNING {PRINCIPAL_COLS}"
        );
        let inserted = sqlx::query(&sql)
            .bind(new.role.as_str())
            .bind(new.name.as_str())
            .bind(new.rating)
            .bind(new.created_at_ms)
            .bind(handle)
            .fetch_one(&self.pool)
            .await;
        match inserted {
            Ok(row) => Self::principal_from(&row),
            Err(e) if is_unique_violation(&e) => {
                // Which of the two unique keys: the handle, or the name within the role.
                if let Some(handle) = handle
                    && self.principal_by_handle(handle).await?.is_some()
                {
                    Err(StoreError::HandleTaken(handle.to_string()))
                } else {
                    Err(StoreError::NameTaken {
                        role: new.role,
                        name: new.name,
                    })
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Bumps the fencing token of row `id` of `table` (`games` or `competitions`), recording
    /// `node`; the new token, or None when there is no such row.
    async fn claim_row(&self, table: &'static str, id: i64, node: &str) -> Result<Option<u64>> {
        check_text("node", node, 200)?;
        let sql = format!(
            "UPDATE {table} SET fence_token = fence_token + 1, fence_node = $2 WHERE id = $1 \
             RETURNING fence_token"
        );
        let Some(row) = sqlx::query(&sql)
            .bind(id)
            .bind(node)
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        let token: i64 = row.try_get("fence_token")?;
        to_u64("fence_token", token).map(Some)
    }

    async fn fetch_game(&self, id: GameId) -> Result<Game> {
        let sql = format!("SELECT {} FROM games WHERE id = $1", DB::GAME_COLS);
        let row = sqlx::query(&sql)
            .bind(id.0)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::GameNotFound(id))?;
        Self::game_from(&row)
    }

    /// Ends the writer connections whose commit's outcome is unknown (see [`Suspects`]); an
    /// error when one may still be alive.
    async fn fence(&self) -> Result<()> {
        let Some(sql) = DB::FENCE else {
            return Ok(());
        };
        let names = match self.suspects.lock() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        for name in names {
            let alive: i64 = sqlx::query(sql)
                .bind(name.as_str())
                .fetch_one(&self.pool)
                .await?
                .try_get("alive")?;
            if alive > 0 {
                return Err(StoreError::CommitUnknown(format!(
                    "writer connection {name} is still alive on the server"
                )));
            }
            match self.suspects.lock() {
                Ok(mut s) => s.retain(|n| *n != name),
                Err(poisoned) => poisoned.into_inner().retain(|n| *n != name),
            }
        }
        Ok(())
    }

    /// The game row, locked against writers until the transaction ends (PostgreSQL), and its
    /// events `first..=last`.
    async fn game_and_events(
        &self,
        game: GameId,
        first: u64,
        last: u64,
    ) -> Result<(Game, Vec<StoredEvent>)> {
        let mut tx = self.pool.begin().await?;
        if let Some(sql) = DB::LOCK_TIMEOUT {
            sqlx::query(sql).execute(&mut *tx).await?;
        }
        let sql = format!(
            "SELECT {} FROM games WHERE id = $1{}",
            DB::GAME_COLS,
            DB::LOCK_GAME
        );
        let row = sqlx::query(&sql)
            .bind(game.0)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(StoreError::GameNotFound(game))?;
        let row = Self::game_from(&row)?;
        let mut events = Vec::new();
        if first <= last {
            let sql = format!(
                "SELECT {EVENT_COLS} FROM {} WHERE game_id = $1 AND seq >= $2 AND seq <= $3 \
                 ORDER BY seq",
                DB::EVENTS
            );
            let rows = sqlx::query(&sql)
                .bind(game.0)
                .bind(to_i64("seq", first)?)
                .bind(to_i64("seq", last)?)
                .fetch_all(&mut *tx)
                .await?;
            events = rows
                .iter()
                .map(Self::event_from)
                .collect::<Result<Vec<_>>>()?;
        }
        tx.commit().await?;
        Ok((row, events))
    }

    async fn fetch_events(
        &self,
        game: GameId,
        after_seq: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>> {
        let sql = format!(
            "SELECT {EVENT_COLS} FROM {} WHERE game_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            DB::EVENTS
        );
        let rows = sqlx::query(&sql)
            .bind(game.0)
            .bind(to_i64("after_seq", after_seq)?)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(Self::event_from).collect()
    }
}

impl<DB> Store for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> &'q [u8]: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB>,
    for<'q> Option<&'q str>: Encode<'q, DB>,
    for<'r> String: Decode<'r, DB> + Type<DB>,
    for<'r> Vec<u8>: Decode<'r, DB> + Type<DB>,
    for<'n> &'n str: ColumnIndex<DB::Row>,
{
    async fn create_principal(&self, new: NewPrincipal) -> Result<Principal> {
        self.insert_principal(new, None).await
    }

    async fn principal(&self, id: PrincipalId) -> Result<Principal> {
        self.fetch_principal(id).await
    }

    async fn create_principal_with_handle(
        &self,
        new: NewPrincipal,
        handle: &str,
    ) -> Result<Principal> {
        check_handle(handle)?;
        self.insert_principal(new, Some(handle)).await
    }

    async fn principal_by_handle(&self, handle: &str) -> Result<Option<Principal>> {
        let sql = format!("SELECT {PRINCIPAL_COLS} FROM principals WHERE handle = $1");
        let row = sqlx::query(&sql)
            .bind(handle)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(Self::principal_from).transpose()
    }

    async fn list_principals(&self, role: Option<Role>) -> Result<Vec<Principal>> {
        let sql = format!(
            "SELECT {PRINCIPAL_COLS} FROM principals WHERE $1 IS NULL OR role = $1 ORDER BY id"
        );
        let rows = sqlx::query(&sql)
            .bind(role.map(Role::as_str))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(Self::principal_from).collect()
    }

    async fn set_rating(&self, id: PrincipalId, rating: Option<i64>) -> Result<()> {
        sqlx::query("UPDATE principals SET rating = $2 WHERE id = $1 RETURNING id")
            .bind(id.0)
            .bind(rating)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::PrincipalNotFound(id))?;
        Ok(())
    }

    async fn insert_token(&self, new: NewToken) -> Result<TokenInfo> {
        let holder = self.fetch_principal(new.principal).await?;
        if !holder.role.may_grant(new.role) {
            return Err(StoreError::RoleNotGrantable {
                principal_role: holder.role,
                token_role: new.role,
            });
        }
        if let Some(label) = &new.label {
            check_text("label", label, 200)?;
        }
        let sql = format!(
            "INSERT INTO tokens (hash, principal_id, role, label, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5) RETURNING {TOKEN_COLS}"
        );
        let row = sqlx::query(&sql)
            .bind(&new.hash.0[..])
            .bind(new.principal.0)
            .bind(new.role.as_str())
            .bind(new.label.as_deref())
            .bind(new.created_at_ms)
            .fetch_one(&self.pool)
            .await
            .map_err(|e| {
                if is_unique_violation(&e) {
                    StoreError::DuplicateToken
                } else {
                    e.into()
                }
            })?;
        Self::token_from(&row)
    }

    async fn authenticate(&self, hash: TokenHash) -> Result<Option<Authenticated>> {
        // One statement for the token and its principal: a login is one round trip (one
        // hand-off to SQLite's worker thread), not two.
        const SQL: &str = concat!(authenticate_select!(), " AND t.hash = $1");
        let Some(row) = sqlx::query(SQL)
            .bind(&hash.0[..])
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        Ok(Some(Self::authenticated_from(&row)?))
    }

    async fn authenticate_many(
        &self,
        hashes: Vec<TokenHash>,
    ) -> Result<Vec<Option<Authenticated>>> {
        let mut found = Vec::with_capacity(hashes.len());
        for chunk in hashes.chunks(crate::AUTHENTICATE_BATCH) {
            // The list's length rounded up to a power of two, the rest filled with the first
            // hash: a handful of statement texts for the connections to prepare once each.
            let n = chunk.len().next_power_of_two();
            let list = (1..=n)
                .map(|i| format!("${i}"))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!("{} AND t.hash IN ({list})", authenticate_select!());
            let mut q = sqlx::query(&sql);
            for i in 0..n {
                q = q.bind(&chunk.get(i).unwrap_or(&chunk[0]).0[..]);
            }
            let rows = q.fetch_all(&self.pool).await?;
            let mut by_hash = std::collections::HashMap::with_capacity(rows.len());
            for row in &rows {
                let hash: Vec<u8> = row.try_get("hash")?;
                by_hash.insert(hash, Self::authenticated_from(row)?);
            }
            found.extend(chunk.iter().map(|h| by_hash.get(&h.0[..]).cloned()));
        }
        Ok(found)
    }

    async fn tokens_of(&self, principal: PrincipalId) -> Result<Vec<TokenInfo>> {
        self.fetch_principal(principal).await?;
        let sql = format!("SELECT {TOKEN_COLS} FROM tokens WHERE principal_id = $1 ORDER BY id");
        let rows = sqlx::query(&sql)
            .bind(principal.0)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(Self::token_from).collect()
    }

    async fn revoke_token(&self, id: TokenId, at_ms: Millis) -> Result<TokenInfo> {
        // Idempotent: a second revocation keeps the first time.
        let sql = format!(
            "UPDATE tokens SET revoked_at_ms = COALESCE(revoked_at_ms, $2) \
             WHERE id = $1 RETURNING {TOKEN_COLS}"
        );
        let row = sqlx::query(&sql)
            .bind(id.0)
            .bind(at_ms)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::TokenNotFound(id))?;
        Self::token_from(&row)
    }

    async fn create_game(&self, new: NewGame) -> Result<Game> {
        self.create_games(vec![new])
            .await?
            .pop()
            .ok_or_else(|| StoreError::Corrupt("creating one game returned none".into()))
    }

    async fn create_games(&self, new: Vec<NewGame>) -> Result<Vec<Game>> {
        let mut players = std::collections::BTreeSet::new();
        for g in &new {
            if g.red == g.black {
                return Err(StoreError::Invalid(
                    "red and black must be different players".into(),
                ));
            }
            check_text("time control", &g.time_control, 200)?;
            check_text("ruleset", &g.ruleset, 100)?;
            check_text("start FEN", &g.start_fen, 200)?;
            check_opt_no_nul("event", g.event.as_deref())?;
            check_opt_no_nul("round", g.round.as_deref())?;
            check_text("start mode", &g.start_mode, 64)?;
            if g.lateness_limit_ms < 0 {
                return Err(StoreError::Invalid(format!(
                    "lateness limit {} ms is negative",
                    g.lateness_limit_ms
                )));
            }
            if let Some(key) = &g.key {
                check_text("game key", key, MAX_GAME_KEY_CHARS)?;
            }
            to_i64("broadcast delay", g.broadcast_delay.millis)?;
            players.extend([g.red, g.black]);
        }
        for side in players {
            // Principals are never deleted and never change role, so checking before the
            // insert is race-free.
            let p = self.fetch_principal(side).await?;
            if p.role != Role::Player {
                return Err(StoreError::WrongRole {
                    principal: side,
                    expected: Role::Player,
                    actual: p.role,
                });
            }
        }
        // A key already stored inserts nothing (and no error: `games_by_key` is the conflict
        // target). On PostgreSQL an insert of the same key by a transaction still running waits
        // for it, so the stored game is committed when it is read below. All of them in one
        // transaction: one durable write for a round of games.
        let sql = format!(
            "INSERT INTO games (red_id, black_id, time_control, ruleset, start_fen, \
             delay_moves, delay_ms, event, round, board, scheduled_start_ms, \
             created_at_ms, start_mode, lateness_limit_ms, key) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
             ON CONFLICT (key) DO NOTHING RETURNING {}",
            DB::GAME_COLS
        );
        let by_key = format!("SELECT {} FROM games WHERE key = $1", DB::GAME_COLS);
        let mut out = Vec::with_capacity(new.len());
        let mut tx = self.pool.begin().await?;
        for g in &new {
            let row = sqlx::query(&sql)
                .bind(g.red.0)
                .bind(g.black.0)
                .bind(g.time_control.as_str())
                .bind(g.ruleset.as_str())
                .bind(g.start_fen.as_str())
                .bind(i64::from(g.broadcast_delay.moves))
                .bind(to_i64("broadcast delay", g.broadcast_delay.millis)?)
                .bind(g.event.as_deref())
                .bind(g.round.as_deref())
                .bind(g.board.map(i64::from))
                .bind(g.scheduled_start_ms)
                .bind(g.created_at_ms)
                .bind(g.start_mode.as_str())
                .bind(g.lateness_limit_ms)
                .bind(g.key.as_deref())
                .fetch_optional(&mut *tx)
                .await?;
            if let Some(row) = row {
                out.push(Self::game_from(&row)?);
                continue;
            }
            // Only a key can conflict (the id is generated): the game stored under it, as it
            // is (stored before, or earlier in this batch).
            let key = g.key.as_deref().unwrap_or_default();
            let row = sqlx::query(&by_key)
                .bind(key)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or_else(|| {
                    StoreError::Corrupt(format!(
                        "creating a game with key {key:?} conflicted, but no game has the key"
                    ))
                })?;
            out.push(Self::game_from(&row)?);
        }
        tx.commit().await?;
        Ok(out)
    }

    async fn game_by_key(&self, key: &str) -> Result<Option<Game>> {
        check_no_nul("game key", key)?;
        self.fetch_game_by_key(key).await
    }

    async fn game(&self, id: GameId) -> Result<Game> {
        self.fetch_game(id).await
    }

    async fn list_games(&self, filter: GameFilter, limit: u32) -> Result<Vec<Game>> {
        let sql = match filter {
            GameFilter::Live => format!(
                "SELECT {} FROM games WHERE finished_at_ms IS NULL ORDER BY id LIMIT $1",
                DB::GAME_COLS
            ),
            GameFilter::Finished => format!(
                "SELECT {} FROM games WHERE finished_at_ms IS NOT NULL \
                 ORDER BY finished_at_ms DESC, id DESC LIMIT $1",
                DB::GAME_COLS
            ),
        };
        let rows = sqlx::query(&sql)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(Self::game_from).collect()
    }

    async fn append(&self, game: GameId, events: Vec<NewEvent>) -> Result<u64> {
        self.writers
            .submit(Op {
                game,
                events,
                finish: None,
                fence: None,
            })
            .await
    }

    async fn finish(&self, game: GameId, events: Vec<NewEvent>, finish: Finish) -> Result<u64> {
        self.writers
            .submit(Op {
                game,
                events,
                finish: Some(finish),
                fence: None,
            })
            .await
    }

    fn writer_of(&self, game: GameId) -> usize {
        self.writers.writer_of(game)
    }

    async fn append_many(&self, appends: Vec<Append>) -> Vec<Result<u64>> {
        let ops = appends
            .into_iter()
            .map(|a| Op {
                game: a.game,
                events: a.events,
                finish: a.finish,
                fence: a.fence,
            })
            .collect();
        self.writers.submit_many(ops).await
    }

    async fn events_since(
        &self,
        game: GameId,
        after_seq: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>> {
        let events = self.fetch_events(game, after_seq, limit).await?;
        if events.is_empty() {
            // Tell an unknown game from a log with nothing new.
            self.fetch_game(game).await?;
        }
        Ok(events)
    }

    async fn load_game(&self, game: GameId) -> Result<GameRecord> {
        // The row first: events read afterwards are a superset of what it accounts for.
        let row = self.fetch_game(game).await?;
        let limit = u32::try_from(row.last_seq).unwrap_or(u32::MAX);
        let events = self.fetch_events(game, 0, limit).await?;
        let mut records = assemble(vec![row], events)?;
        records.pop().ok_or(StoreError::GameNotFound(game))
    }

    async fn unfinished_games(&self) -> Result<Vec<GameRecord>> {
        let sql = format!(
            "SELECT {} FROM games WHERE finished_at_ms IS NULL ORDER BY id",
            DB::GAME_COLS
        );
        let games = sqlx::query(&sql)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(Self::game_from)
            .collect::<Result<Vec<_>>>()?;
        // One query per game keeps the read simple and bounded; recovery runs once at start.
        // A game finished meanwhile still comes back whole (its row is older).
        let mut events = Vec::new();
        for g in &games {
            let limit = u32::try_from(g.last_seq).unwrap_or(u32::MAX);
            events.extend(self.fetch_events(g.id, 0, limit).await?);
        }
        assemble(games, events)
    }

    async fn record_audit(&self, new: NewAudit) -> Result<AuditEntry> {
        check_text("audit action", &new.action, 64)?;
        check_opt_no_nul("audit subject", new.subject.as_deref())?;
        check_opt_no_nul("audit reason", new.reason.as_deref())?;
        let sql = format!(
            "INSERT INTO audit_log (at_ms, actor_id, action, subject, reason) \
             VALUES ($1, $2, $3, $4, $5) RETURNING {AUDIT_COLS}"
        );
        let row = sqlx::query(&sql)
            .bind(new.at_ms)
            .bind(new.actor.map(|a| a.0))
            .bind(new.action.as_str())
            .bind(new.subject.as_deref())
            .bind(new.reason.as_deref())
            .fetch_one(&self.pool)
            .await
            .map_err(|e| match new.actor {
                // The only foreign key: an actor that is no principal.
                Some(actor) if is_foreign_key_violation(&e) => StoreError::PrincipalNotFound(actor),
                _ => e.into(),
            })?;
        Self::audit_from(&row)
    }

    async fn audit_log(&self, limit: u32) -> Result<Vec<AuditEntry>> {
        let sql = format!("SELECT {AUDIT_COLS} FROM audit_log ORDER BY id DESC LIMIT $1");
        let rows = sqlx::query(&sql)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(Self::audit_from).collect()
    }

    async fn create_competition(&self, new: NewCompetition) -> Result<Competition> {
        check_text("competition name", &new.name, MAX_COMPETITION_NAME_CHARS)?;
        let sql = format!(
            "INSERT INTO competitions (name, created_at_ms, created_by) \
             VALUES ($1, $2, $3) RETURNING {COMPETITION_COLS}"
        );
        let row = sqlx::query(&sql)
            .bind(new.name.as_str())
            .bind(new.created_at_ms)
            .bind(new.created_by.map(|p| p.0))
            .fetch_one(&self.pool)
            .await
            .map_err(|e| match new.created_by {
                // The only foreign key: a creator that is no principal.
                Some(by) if is_foreign_key_violation(&e) => StoreError::PrincipalNotFound(by),
                _ => e.into(),
            })?;
        Self::competition_from(&row)
    }

    async fn competitions(&self) -> Result<Vec<Competition>> {
        let sql = format!("SELECT {COMPETITION_COLS} FROM competitions ORDER BY id");
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter().map(Self::competition_from).collect()
    }

    async fn competition(&self, id: CompetitionId) -> Result<Competition> {
        self.fetch_competition(id).await
    }

    async fn append_competition(
        &self,
        id: CompetitionId,
        events: Vec<NewCompetitionEvent>,
    ) -> Result<u64> {
        self.append_competition_fenced(id, events, None).await
    }

    async fn claim_game(&self, game: GameId, node: &str) -> Result<u64> {
        // A row lock: waits for an append in flight to the game (the writers lock the row
        // `FOR UPDATE`; SQLite: the write lock), and every append after it reads the new token.
        self.claim_row("games", game.0, node)
            .await?
            .ok_or(StoreError::GameNotFound(game))
    }

    async fn claim_competition(&self, id: CompetitionId, node: &str) -> Result<u64> {
        self.claim_row("competitions", id.0, node)
            .await?
            .ok_or(StoreError::CompetitionNotFound(id))
    }

    async fn append_competition_fenced(
        &self,
        id: CompetitionId,
        events: Vec<NewCompetitionEvent>,
        fence: Option<u64>,
    ) -> Result<u64> {
        if events.is_empty() {
            return Err(StoreError::Invalid("append of no entries".into()));
        }
        for e in &events {
            to_i64("seq", e.seq)?;
            check_kind(&e.kind)?;
            check_no_nul("entry payload", &e.payload)?;
            check_opt_no_nul("entry reason", e.reason.as_deref())?;
        }
        // Principals are never deleted: checking the actors before the transaction is
        // race-free, and names the missing one (a foreign-key error would not).
        let mut actors: Vec<PrincipalId> = events.iter().filter_map(|e| e.actor).collect();
        actors.sort_unstable();
        actors.dedup();
        for actor in actors {
            self.fetch_principal(actor).await?;
        }
        let n = events.len() as u64;
        let mut tx = self.pool.begin().await?;
        // The first statement writes the competition's row: PostgreSQL locks it until the
        // commit, so appends to one log (from any node) take turns and each sees the last seq
        // the one before it committed; SQLite takes its write lock here, waiting for other
        // writers under the busy timeout, instead of upgrading a read later (which can fail).
        // The same lock makes the fencing check race-free: a claim (an update of this row)
        // waits for this transaction to end, or this update waits for the claim and then
        // reads the token it set.
        let row = sqlx::query(
            "UPDATE competitions SET last_seq = last_seq + $2 WHERE id = $1 \
             RETURNING last_seq, fence_token",
        )
        .bind(id.0)
        .bind(to_i64("entries", n)?)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::CompetitionNotFound(id))?;
        let last: i64 = row.try_get("last_seq")?;
        let current: i64 = row.try_get("fence_token")?;
        if let Some(token) = fence
            && to_i64("fence token", token)? != current
        {
            tx.rollback().await?;
            return Err(StoreError::Fenced {
                what: format!("competition {id}"),
                token,
            });
        }
        let before = to_u64("last_seq", last)?.checked_sub(n).ok_or_else(|| {
            StoreError::Corrupt(format!("competition {id}: last_seq {last} below {n}"))
        })?;
        for (i, e) in events.iter().enumerate() {
            let expected = before + 1 + i as u64;
            if e.seq != expected {
                tx.rollback().await?;
                return Err(StoreError::CompetitionSeqMismatch {
                    competition: id,
                    expected,
                    got: e.seq,
                });
            }
        }
        let sql = format!(
            "INSERT INTO competition_events ({COMPETITION_EVENT_COLS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)"
        );
        for e in &events {
            sqlx::query(&sql)
                .bind(id.0)
                .bind(to_i64("seq", e.seq)?)
                .bind(e.kind.as_str())
                .bind(e.payload.as_str())
                .bind(e.at_ms)
                .bind(e.actor.map(|a| a.0))
                .bind(e.reason.as_deref())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(before + n)
    }

    async fn competition_events(
        &self,
        id: CompetitionId,
        after_seq: u64,
    ) -> Result<Vec<CompetitionEvent>> {
        let sql = format!(
            "SELECT {COMPETITION_EVENT_COLS} FROM competition_events \
             WHERE competition_id = $1 AND seq > $2 ORDER BY seq"
        );
        let rows = sqlx::query(&sql)
            .bind(id.0)
            .bind(to_i64("after_seq", after_seq)?)
            .fetch_all(&self.pool)
            .await?;
        if rows.is_empty() {
            // Tell an unknown competition from a log with nothing new.
            self.fetch_competition(id).await?;
            return Ok(Vec::new());
        }
        let events = rows
            .iter()
            .map(Self::competition_event_from)
            .collect::<Result<Vec<_>>>()?;
        // One statement reads a committed prefix of a gap-free log: anything else is damage.
        for (i, e) in events.iter().enumerate() {
            if e.seq != after_seq + 1 + i as u64 {
                return Err(StoreError::Corrupt(format!(
                    "competition {id}: log has a gap before seq {}",
                    e.seq
                )));
            }
        }
        Ok(events)
    }

    async fn resolve_append(&self, append: &Append) -> Result<Resolution> {
        self.fence().await?;
        let first = append.events.first().map_or(1, |e| e.seq);
        let last = append.events.last().map_or(0, |e| e.seq);
        let (game, stored) = self.game_and_events(append.game, first, last).await?;
        resolve(append, &game, &stored)
    }

    async fn ping(&self) -> Result<()> {
        if !self.writers.running() {
            return Err(StoreError::Closed);
        }
        let probe = sqlx::query("SELECT 1").execute(&self.pool);
        match tokio::time::timeout(self.ping_timeout, probe).await {
            Ok(done) => done.map(|_| ()).map_err(StoreError::from),
            Err(_) => Err(StoreError::Timeout(format!(
                "ping, after {} ms",
                self.ping_timeout.as_millis()
            ))),
        }
    }

    async fn close(&self) {
        self.writers.shutdown().await;
        self.pool.close().await;
    }

    fn stats(&self) -> StoreStats {
        self.writers.stats()
    }
}
