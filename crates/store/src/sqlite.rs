//! The SQLite backend: one file in WAL mode, a pool of connections for reads and rare writes,
//! and one writer task with its own connection that group-commits appends
//! (`BEGIN IMMEDIATE … COMMIT`, one transaction per batch).

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteRow, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection};

use crate::batch::{Committer, GameState, Op, Writers, plan};
use crate::{SqliteSync, StoreOptions};

/// A SQLite-backed [`Store`](crate::Store).
pub struct SqliteStore {
    pool: SqlitePool,
    writers: Writers,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if missing) the database file named by `url` (`sqlite://PATH`), runs the
    /// migrations and starts the writer task. Must be called inside a tokio runtime.
    pub async fn open(url: &str, options: &StoreOptions) -> Result<SqliteStore> {
        if url.contains(":memory:") || url.contains("mode=memory") {
            return Err(StoreError::UnsupportedUrl(format!(
                "{url} (in-memory SQLite cannot be shared by the writer and readers; use a file)"
            )));
        }
        let connect = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(match options.sqlite_sync {
                SqliteSync::Full => SqliteSynchronous::Full,
                SqliteSync::Normal => SqliteSynchronous::Normal,
            })
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(options.pool_size.max(1))
            .connect_with(connect.clone())
            .await?;
        crate::migrate::migrator(crate::migrate::SQLITE)
            .await?
            .run(&pool)
            .await?;
        let conn = connect.connect().await?;
        let writers = Writers::spawn(
            vec![SqliteCommitter { conn }],
            options.queue_capacity,
            options.max_batch,
        );
        Ok(SqliteStore { pool, writers })
    }
}

struct SqliteCommitter {
    conn: SqliteConnection,
}

impl Committer for SqliteCommitter {
    async fn commit(&mut self, ops: Vec<Op>) -> Result<Vec<Result<u64>>> {
        // IMMEDIATE takes the write lock up front, so the batch never fails half-way for a
        // concurrent writer from the pool (it waits up to the busy timeout instead).
        let mut tx = self.conn.begin_with("BEGIN IMMEDIATE").await?;
        let mut states = HashMap::new();
        for op in &ops {
            if states.contains_key(&op.game) {
                continue;
            }
            let row: Option<(i64, Option<i64>)> =
                sqlx::query_as("SELECT last_seq, finished_at_ms FROM games WHERE id = $1")
                    .bind(op.game.0)
                    .fetch_optional(&mut *tx)
                    .await?;
            if let Some((last_seq, finished_at)) = row {
                states.insert(
                    op.game,
                    GameState {
                        last_seq: to_u64("last_seq", last_seq)?,
                        finished: finished_at.is_some(),
                    },
                );
            }
        }
        let plan = plan(ops, &states);
        for (game, ev) in &plan.rows {
            sqlx::query(
                "INSERT INTO game_events (game_id, seq, kind, payload, at_ms, actor_id, reason) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(game.0)
            .bind(to_i64("seq", ev.seq)?)
            .bind(&ev.kind)
            .bind(&ev.payload)
            .bind(ev.at_ms)
            .bind(ev.actor.map(|a| a.0))
            .bind(&ev.reason)
            .execute(&mut *tx)
            .await?;
        }
        for u in &plan.updates {
            let (result, reason, at) = match &u.finish {
                Some(f) => (Some(&f.result), Some(&f.reason), Some(f.at_ms)),
                None => (None, None, None),
            };
            sqlx::query(
                "UPDATE games SET last_seq = $2, result = COALESCE($3, result), \
                 reason = COALESCE($4, reason), finished_at_ms = COALESCE($5, finished_at_ms) \
                 WHERE id = $1",
            )
            .bind(u.game.0)
            .bind(to_i64("last_seq", u.last_seq)?)
            .bind(result)
            .bind(reason)
            .bind(at)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(plan.outcomes)
    }
}

crate::common::impl_store!(SqliteStore, SqliteRow);
