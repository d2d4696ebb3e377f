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
            .busy_timeout(Duration::from_secs(10))
            // A group commit rewrites the same hot pages batch after batch; checkpointing less
            // often (every 32 MiB of WAL instead of 4 MiB) copies each of them back once. The
            // writer's own connection checkpoints in the background instead (see Checkpoint).
            .pragma("wal_autocheckpoint", "8192");
        let pool = SqlitePoolOptions::new()
            .max_connections(options.pool_size.max(1))
            .connect_with(connect.clone())
            .await?;
        crate::migrate::migrator(crate::migrate::SQLITE)
            .await?
            .run(&pool)
            .await?;
        // The writer touches the hot pages of every live game: give it 16 MiB of page cache
        // (the default, kept for the readers so idle memory stays small, is 2 MiB).
        // No statement journals on the writer: a multi-row statement that may abort half-way
        // makes SQLite copy every page it touches into a statement journal first (measured
        // with valgrind's DHAT: 64 KiB journal chunks, the bulk of the writer's allocations).
        // The writer's statements use `OR FAIL` (a constraint failure stops the statement
        // without undoing its earlier rows; the writer then rolls back the whole batch), and
        // its connection skips the foreign-key lookups: the writer checks every appended
        // event's game itself (an unknown game is refused before anything is written).
        let conn = connect
            .clone()
            .foreign_keys(false)
            .pragma("cache_size", "-16384")
            .pragma("wal_autocheckpoint", "0")
            .connect()
            .await?;
        let checkpointer = connect.connect().await?;
        let writers = Writers::spawn(
            vec![SqliteCommitter {
                conn,
                sql: Statements::new(),
                known: HashMap::new(),
                checkpoint: Checkpoint::new(checkpointer),
            }],
            options.queue_capacity,
            options.max_batch,
        );
        Ok(SqliteStore { pool, writers })
    }
}

/// Rows per multi-row statement. A batch is split greedily into chunks of these sizes, so a
/// handful of prepared statements (cached per connection) serve any batch size, and a batch of
/// 1,000 appends takes about a dozen statements instead of 3,000: with sqlx every statement is a
/// round trip to the connection's worker thread, which costs more than SQLite's own work.
const CHUNKS: [usize; 5] = [256, 64, 16, 4, 1];

/// The chunk sizes covering `n` rows, largest first, as indexes into [`CHUNKS`].
fn split(mut n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, &size) in CHUNKS.iter().enumerate() {
        while n >= size {
            out.push(i);
            n -= size;
        }
    }
    out
}

fn repeat_tuple(rows: usize, width: usize) -> String {
    let tuple = format!("({})", vec!["?"; width].join(", "));
    vec![tuple; rows].join(", ")
}

struct Statements {
    select: Vec<String>,
    insert: Vec<String>,
    update: Vec<String>,
}

impl Statements {
    fn new() -> Statements {
        Statements {
            select: CHUNKS
                .iter()
                .map(|&n| {
                    format!(
                        "SELECT id, last_seq, finished_at_ms FROM games WHERE id IN ({})",
                        vec!["?"; n].join(", ")
                    )
                })
                .collect(),
            insert: CHUNKS
                .iter()
                .map(|&n| {
                    format!(
                        "INSERT OR FAIL INTO game_events \
                         (game_id, seq, kind, payload, at_ms, actor_id, reason) VALUES {}",
                        repeat_tuple(n, 7)
                    )
                })
                .collect(),
            update: CHUNKS
                .iter()
                .map(|&n| {
                    format!(
                        "WITH u (id, last_seq, result, reason, finished_at_ms) AS (VALUES {}) \
                         UPDATE OR FAIL games SET last_seq = u.last_seq, \
                         result = COALESCE(u.result, games.result), \
                         reason = COALESCE(u.reason, games.reason), \
                         finished_at_ms = COALESCE(u.finished_at_ms, games.finished_at_ms) \
                         FROM u WHERE games.id = u.id",
                        repeat_tuple(n, 5)
                    )
                })
                .collect(),
        }
    }
}

struct SqliteCommitter {
    conn: SqliteConnection,
    sql: Statements,
    /// Last seq and finished flag of the unfinished games this writer has committed to. It is
    /// the only writer of events, so after one read per game a batch needs no `SELECT`; the
    /// map is emptied whenever a commit fails, and a game leaves it when it finishes.
    known: HashMap<GameId, GameState>,
    checkpoint: Checkpoint,
}

/// How often the WAL is copied back into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(250);

/// Checkpoints the WAL (`PRAGMA wal_checkpoint(PASSIVE)`) on a connection of its own in a
/// background task, so no group commit waits for a checkpoint: the writer's connection has
/// automatic checkpoints turned off. A passive checkpoint never blocks the writer; the writer
/// restarts the WAL from its beginning once everything in it has been copied back. Should
/// the background connection be lost, the writer checkpoints on its own connection instead.
struct Checkpoint {
    idle: Option<SqliteConnection>,
    running: Option<tokio::sync::oneshot::Receiver<SqliteConnection>>,
    last: std::time::Instant,
}

impl Checkpoint {
    fn new(conn: SqliteConnection) -> Checkpoint {
        Checkpoint {
            idle: Some(conn),
            running: None,
            last: std::time::Instant::now(),
        }
    }

    /// Starts a background checkpoint when one is due; true when one is due but the
    /// background connection is gone, so the writer must checkpoint on its own connection.
    fn after_commit(&mut self) -> bool {
        use tokio::sync::oneshot::error::TryRecvError;
        if let Some(rx) = &mut self.running {
            match rx.try_recv() {
                Ok(conn) => {
                    self.idle = Some(conn);
                    self.running = None;
                }
                Err(TryRecvError::Empty) => return false,
                Err(TryRecvError::Closed) => self.running = None,
            }
        }
        if self.last.elapsed() < CHECKPOINT_EVERY {
            return false;
        }
        self.last = std::time::Instant::now();
        let Some(mut conn) = self.idle.take() else {
            return true;
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.running = Some(rx);
        tokio::spawn(async move {
            // A failed checkpoint is retried at the next turn; a connection that fails
            // twice in a row is dropped (the writer then checkpoints inline).
            let first = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(&mut conn)
                .await;
            if first.is_err() && conn.ping().await.is_err() {
                return;
            }
            let _ = tx.send(conn);
        });
        false
    }
}

impl Committer for SqliteCommitter {
    async fn commit(&mut self, ops: Vec<Op>) -> Result<Vec<Result<u64>>> {
        let done = self.commit_batch(ops).await;
        match &done {
            Ok((_, updates)) => {
                for u in updates {
                    if u.finish.is_some() {
                        self.known.remove(&u.game);
                    } else {
                        self.known.insert(
                            u.game,
                            GameState {
                                last_seq: u.last_seq,
                                finished: false,
                            },
                        );
                    }
                }
            }
            Err(_) => self.known.clear(),
        }
        if self.checkpoint.after_commit() {
            // Best effort: a failure here is retried at the next turn and fails no append.
            let _ = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(&mut self.conn)
                .await;
        }
        done.map(|(outcomes, _)| outcomes)
    }
}

impl SqliteCommitter {
    /// One batch in one transaction: the outcomes, and the games' new states.
    async fn commit_batch(
        &mut self,
        ops: Vec<Op>,
    ) -> Result<(Vec<Result<u64>>, Vec<crate::batch::GameUpdate>)> {
        let mut ids: Vec<i64> = ops.iter().map(|o| o.game.0).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut states = HashMap::with_capacity(ids.len());
        ids.retain(|&id| match self.known.get(&GameId(id)) {
            Some(&state) => {
                states.insert(GameId(id), state);
                false
            }
            None => true,
        });
        // IMMEDIATE takes the write lock up front, so the batch never fails half-way for a
        // concurrent writer from the pool (it waits up to the busy timeout instead).
        let mut tx = self.conn.begin_with("BEGIN IMMEDIATE").await?;
        let mut rest = &ids[..];
        for chunk in split(ids.len()) {
            let (now, later) = rest.split_at(CHUNKS[chunk]);
            rest = later;
            let mut q = sqlx::query_as::<_, (i64, i64, Option<i64>)>(&self.sql.select[chunk]);
            for id in now {
                q = q.bind(id);
            }
            for (id, last_seq, finished_at) in q.fetch_all(&mut *tx).await? {
                states.insert(
                    GameId(id),
                    GameState {
                        last_seq: to_u64("last_seq", last_seq)?,
                        finished: finished_at.is_some(),
                    },
                );
            }
        }
        let plan = plan(ops, &states);
        let mut rest = &plan.rows[..];
        for chunk in split(plan.rows.len()) {
            let (now, later) = rest.split_at(CHUNKS[chunk]);
            rest = later;
            let mut q = sqlx::query(&self.sql.insert[chunk]);
            for (game, ev) in now {
                q = q
                    .bind(game.0)
                    .bind(to_i64("seq", ev.seq)?)
                    .bind(ev.kind.as_str())
                    .bind(ev.payload.as_slice())
                    .bind(ev.at_ms)
                    .bind(ev.actor.map(|a| a.0))
                    .bind(ev.reason.as_deref());
            }
            q.execute(&mut *tx).await?;
        }
        let mut rest = &plan.updates[..];
        for chunk in split(plan.updates.len()) {
            let (now, later) = rest.split_at(CHUNKS[chunk]);
            rest = later;
            let mut q = sqlx::query(&self.sql.update[chunk]);
            for u in now {
                let f = u.finish.as_ref();
                q = q
                    .bind(u.game.0)
                    .bind(to_i64("last_seq", u.last_seq)?)
                    .bind(f.map(|f| f.result.as_str()))
                    .bind(f.map(|f| f.reason.as_str()))
                    .bind(f.map(|f| f.at_ms));
            }
            q.execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok((plan.outcomes, plan.updates))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_every_size_exactly() {
        for n in 0..2000 {
            let parts = split(n);
            assert_eq!(parts.iter().map(|&i| CHUNKS[i]).sum::<usize>(), n);
            assert!(parts.windows(2).all(|w| w[0] <= w[1]), "largest first");
        }
        assert_eq!(split(261), vec![0, 3, 4]);
    }
}

crate::common::impl_store!(SqliteStore, SqliteRow);
