//! The SQLite backend: one file in WAL mode, a pool of connections (sqlx) for reads and rare
//! writes, and one writer thread with its own connection (rusqlite) that group-commits appends
//! (`BEGIN IMMEDIATE … COMMIT`, one transaction per batch).
//!
//! The writer is a plain thread because a batch is many small statements: through sqlx every
//! statement is a round trip between the async task and sqlx's connection thread (two thread
//! switches each, and a wait for the busy async worker to come back to the task), while the
//! thread runs the whole batch in one call with prepared statements it keeps.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteRow, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection};

use crate::batch::{Committer, GameState, Op, Writers, plan, remember};
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
        // No statement journals on the writer: a statement that may abort half-way makes
        // SQLite copy every page it touches into a statement journal first (measured with
        // valgrind's DHAT: 64 KiB journal chunks, the bulk of the writer's allocations). The
        // writer's statements use `OR FAIL` (a constraint failure stops the statement without
        // undoing its earlier rows; the writer then rolls back the whole batch), and its
        // connection skips the foreign-key lookups: the writer checks every appended event's
        // game itself (an unknown game is refused before anything is written).
        let file = connect.get_filename().to_path_buf();
        let synchronous = match options.sqlite_sync {
            SqliteSync::Full => "FULL",
            SqliteSync::Normal => "NORMAL",
        };
        let jobs = spawn_writer(file, synchronous, options.sqlite_recent_max.max(1)).await?;
        let checkpointer = connect.connect().await?;
        let writers = Writers::spawn(
            vec![SqliteCommitter {
                jobs,
                checkpoint: Checkpoint::new(checkpointer),
            }],
            options.queue_capacity,
            options.max_batch,
        );
        Ok(SqliteStore { pool, writers })
    }
}

/// What the writer thread is asked to do.
enum Job {
    Commit(
        Vec<Op>,
        tokio::sync::oneshot::Sender<Result<Vec<Result<u64>>>>,
    ),
    /// Checkpoint on the writer's own connection (the background connection is gone).
    Checkpoint,
}

/// The group-commit writer as the async side sees it: a queue to the writer thread.
struct SqliteCommitter {
    jobs: std::sync::mpsc::Sender<Job>,
    checkpoint: Checkpoint,
}

/// A game's last seq in the indexed log (from its `(game_id, seq)` index: SQLite stores no
/// `last_seq` column, so an append writes no `games` row) and whether it is finished. The
/// writer knows the last seqs of the games in `recent_events` itself.
const SQL_STATE: &str = "SELECT (SELECT COALESCE(MAX(seq), 0) FROM game_events WHERE game_id = ?1), \
     finished_at_ms FROM games WHERE id = ?1";
/// Moves the recent events into the indexed log, sorted so each game's go in together (its
/// index leaf is written once for all of them). `OR FAIL`: see `open_writer`; a duplicate seq
/// fails the whole move, which is rolled back.
const SQL_MOVE_RECENT: &str = "BEGIN IMMEDIATE; \
     INSERT OR FAIL INTO game_events (game_id, seq, kind, payload, at_ms, actor_id, reason) \
     SELECT game_id, seq, kind, payload, at_ms, actor_id, reason FROM recent_events \
     ORDER BY game_id, seq; \
     DELETE FROM recent_events; COMMIT";
/// Marks a game finished (the only `games` write of a batch).
const SQL_FINISH: &str = "UPDATE OR FAIL games SET result = ?2, reason = ?3, \
     finished_at_ms = ?4 WHERE id = ?1";

/// Rows per multi-row `INSERT`: a batch's events go in greedily in chunks of these sizes, so
/// a handful of prepared statements serve any batch and most rows share a statement's
/// per-execution cost.
const CHUNKS: [usize; 4] = [64, 16, 4, 1];

/// The `INSERT` of `rows` events.
fn insert_sql(rows: usize) -> String {
    let tuple = "(?, ?, ?, ?, ?, ?, ?)";
    format!(
        "INSERT OR FAIL INTO recent_events (game_id, seq, kind, payload, at_ms, actor_id, reason) \
         VALUES {}",
        vec![tuple; rows].join(", ")
    )
}

/// Opens the writer's connection on a thread of its own and starts serving jobs there; the
/// thread ends (closing the connection) when the returned sender is dropped.
async fn spawn_writer(
    file: std::path::PathBuf,
    synchronous: &'static str,
    recent_max: u64,
) -> Result<std::sync::mpsc::Sender<Job>> {
    let (jobs, queue) = std::sync::mpsc::channel::<Job>();
    let (opened, open_result) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("chuhe-sqlite-writer".into())
        .spawn(move || {
            let conn = match open_writer(&file, synchronous) {
                Ok(conn) => conn,
                Err(e) => {
                    let _ = opened.send(Err(e));
                    return;
                }
            };
            let mut writer = Writer {
                conn,
                known: HashMap::new(),
                insert_sql: CHUNKS.map(insert_sql),
                recent: HashMap::new(),
                recent_rows: 0,
                recent_max,
            };
            // Whatever a previous run left in recent_events moves into the indexed log now,
            // so the writer knows every recent event (it appends all of them from here on).
            if let Err(e) = writer.move_recent() {
                let _ = opened.send(Err(StoreError::CommitFailed(format!(
                    "moving the recent events of the last run into the log: {e}"
                ))));
                return;
            }
            let _ = opened.send(Ok(()));
            while let Ok(job) = queue.recv() {
                match job {
                    Job::Commit(ops, reply) => {
                        let _ = reply.send(writer.commit(ops));
                    }
                    Job::Checkpoint => {
                        // Best effort: a failure here is retried at the next turn.
                        let _ = writer
                            .conn
                            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                    }
                }
            }
        })
        .map_err(|e| StoreError::CommitFailed(format!("starting the writer thread: {e}")))?;
    open_result.await.map_err(|_| StoreError::Closed)??;
    Ok(jobs)
}

fn open_writer(file: &std::path::Path, synchronous: &str) -> Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let conn = rusqlite::Connection::open_with_flags(
        file,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = {synchronous}; \
         PRAGMA foreign_keys = OFF; PRAGMA cache_size = -16384; PRAGMA wal_autocheckpoint = 0;"
    ))?;
    conn.set_prepared_statement_cache_capacity(CHUNKS.len() + 4);
    Ok(conn)
}

/// The writer thread's side: its connection and what it knows of the games.
struct Writer {
    conn: rusqlite::Connection,
    /// Last seq and finished flag of the unfinished games this writer has committed to. It is
    /// the only writer of events, so after one read per game a batch needs no `SELECT`; the
    /// map is emptied whenever a commit fails, and a game leaves it when it finishes.
    known: HashMap<GameId, GameState>,
    /// The `INSERT` statements for each of [`CHUNKS`].
    insert_sql: [String; CHUNKS.len()],
    /// The last seq of every game with events in `recent_events` (all appended by this
    /// writer: the table is emptied when it opens). Kept across failed commits, unlike
    /// `known`.
    recent: HashMap<GameId, u64>,
    /// Rows in `recent_events`.
    recent_rows: u64,
    /// Rows at which they move into the indexed log ([`StoreOptions::sqlite_recent_max`]).
    recent_max: u64,
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
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.jobs
            .send(Job::Commit(ops, reply))
            .map_err(|_| StoreError::Closed)?;
        let done = answer.await.map_err(|_| StoreError::Closed)?;
        if self.checkpoint.after_commit() {
            let _ = self.jobs.send(Job::Checkpoint);
        }
        done
    }
}

impl Writer {
    fn commit(&mut self, ops: Vec<Op>) -> Result<Vec<Result<u64>>> {
        match self.commit_batch(ops) {
            Ok((outcomes, updates, rows)) => {
                remember(&mut self.known, &updates);
                if rows > 0 {
                    for u in &updates {
                        self.recent.insert(u.game, u.last_seq);
                    }
                    self.recent_rows += rows as u64;
                }
                if self.recent_rows >= self.recent_max {
                    if let Err(e) = self.move_recent() {
                        // The events stay in recent_events, where readers see them too; the
                        // move is tried again after another recent_max appends.
                        self.recent_rows = 0;
                        tracing::error!(error = %e, "moving recent events into the log failed");
                    }
                }
                Ok(outcomes)
            }
            Err(e) => {
                self.known.clear();
                if !self.conn.is_autocommit() {
                    // Nothing of the batch may stay; if even the rollback fails the
                    // connection is unusable and the next BEGIN reports it.
                    let _ = self.conn.execute_batch("ROLLBACK");
                }
                Err(e)
            }
        }
    }

    /// Moves every recent event into the indexed log, in a transaction of its own (the batch
    /// before it is committed and answered whatever happens here).
    fn move_recent(&mut self) -> Result<()> {
        match self.conn.execute_batch(SQL_MOVE_RECENT) {
            Ok(()) => {
                self.recent.clear();
                self.recent_rows = 0;
                Ok(())
            }
            Err(e) => {
                if !self.conn.is_autocommit() {
                    let _ = self.conn.execute_batch("ROLLBACK");
                }
                Err(e.into())
            }
        }
    }

    /// One batch in one transaction: the outcomes, the games' new states, the rows written.
    #[allow(clippy::type_complexity)]
    fn commit_batch(
        &mut self,
        ops: Vec<Op>,
    ) -> Result<(Vec<Result<u64>>, Vec<crate::batch::GameUpdate>, usize)> {
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
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        if !ids.is_empty() {
            let mut select = self.conn.prepare_cached(SQL_STATE)?;
            for id in ids {
                let row = select.query_row([id], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?))
                });
                match row {
                    Ok((last_seq, finished_at)) => {
                        let logged = to_u64("last_seq", last_seq)?;
                        let recent = self.recent.get(&GameId(id)).copied().unwrap_or(0);
                        states.insert(
                            GameId(id),
                            GameState {
                                last_seq: logged.max(recent),
                                finished: finished_at.is_some(),
                            },
                        );
                    }
                    Err(rusqlite::Error::QueryReturnedNoRows) => {} // plan refuses it
                    Err(e) => return Err(e.into()),
                }
            }
        }
        let plan = plan(ops, &states);
        let mut rest = &plan.rows[..];
        for (size, sql) in CHUNKS.iter().zip(&self.insert_sql) {
            while rest.len() >= *size {
                let (now, later) = rest.split_at(*size);
                rest = later;
                let mut insert = self.conn.prepare_cached(sql)?;
                let mut i = 0;
                for (game, ev) in now {
                    insert.raw_bind_parameter(i + 1, game.0)?;
                    insert.raw_bind_parameter(i + 2, to_i64("seq", ev.seq)?)?;
                    insert.raw_bind_parameter(i + 3, ev.kind.as_str())?;
                    insert.raw_bind_parameter(i + 4, ev.payload.as_slice())?;
                    insert.raw_bind_parameter(i + 5, ev.at_ms)?;
                    insert.raw_bind_parameter(i + 6, ev.actor.map(|a| a.0))?;
                    insert.raw_bind_parameter(i + 7, ev.reason.as_deref())?;
                    i += 7;
                }
                insert.raw_execute()?;
            }
        }
        // Only finishes write `games`: the last seq lives in the log (and in `known`).
        let mut finish = None;
        for u in &plan.updates {
            if let Some(f) = &u.finish {
                let update = match &mut finish {
                    Some(s) => s,
                    None => finish.insert(self.conn.prepare_cached(SQL_FINISH)?),
                };
                update.execute(rusqlite::params![
                    u.game.0,
                    f.result.as_str(),
                    f.reason.as_str(),
                    f.at_ms,
                ])?;
            }
        }
        drop(finish);
        self.conn.execute_batch("COMMIT")?;
        Ok((plan.outcomes, plan.updates, plan.rows.len()))
    }
}

crate::common::impl_store!(
    SqliteStore,
    SqliteRow,
    crate::common::GAME_COLS_DERIVED_SEQ,
    "game_log"
);

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::{NewEvent, Store};
    use sqlx::Executor;

    /// A database written by servers before migration 2 (a `last_seq` column kept by every
    /// append) opens with its logs intact: last seqs now come from the log, appends continue
    /// where each log ends, and a duplicate is still refused.
    #[tokio::test]
    async fn a_database_from_before_migration_2_keeps_its_logs() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("old.db").display());
        {
            let opts = SqliteConnectOptions::from_str(&url)
                .unwrap()
                .create_if_missing(true);
            let mut c = opts.connect().await.unwrap();
            crate::migrate::migrator(&crate::migrate::SQLITE[..1])
                .await
                .unwrap()
                .run(&mut c)
                .await
                .unwrap();
            c.execute(
                "INSERT INTO principals (id, role, name, created_at_ms) VALUES \
                 (1, 'player', 'a', 0), (2, 'player', 'b', 0);
                 INSERT INTO games (id, red_id, black_id, time_control, ruleset, start_fen, \
                 created_at_ms, last_seq) VALUES (7, 1, 2, '90m', 'cxa', 'startpos', 0, 3), \
                 (8, 1, 2, '90m', 'cxa', 'startpos', 0, 0);
                 INSERT INTO game_events (game_id, seq, kind, payload, at_ms) VALUES \
                 (7, 1, 'created', x'01', 0), (7, 2, 'move', x'02', 0), (7, 3, 'move', x'03', 0);",
            )
            .await
            .unwrap();
        }
        let s = SqliteStore::open(&url, &StoreOptions::default())
            .await
            .unwrap();
        assert_eq!(s.game(GameId(7)).await.unwrap().last_seq, 3);
        assert_eq!(s.game(GameId(8)).await.unwrap().last_seq, 0);
        let dup = s
            .append(GameId(7), vec![NewEvent::new(3, "move", vec![9], 1)])
            .await;
        assert!(
            matches!(dup, Err(StoreError::SeqMismatch { expected: 4, .. })),
            "{dup:?}"
        );
        assert_eq!(
            s.append(GameId(7), vec![NewEvent::new(4, "move", vec![4], 1)])
                .await
                .unwrap(),
            4
        );
        let rec = s.load_game(GameId(7)).await.unwrap();
        assert_eq!(rec.game.last_seq, 4);
        assert_eq!(rec.events.len(), 4);
        let live = s.unfinished_games().await.unwrap();
        assert_eq!(live.len(), 2);
        s.close().await;
    }
}
