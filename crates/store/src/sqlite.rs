//! The SQLite backend: one file in WAL mode, a pool of connections (sqlx) for reads and rare
//! writes, and one writer thread with its own connection (rusqlite) that group-commits appends
//! (`BEGIN IMMEDIATE … COMMIT`, one transaction per batch).
//!
//! The writer is a plain thread because a batch is many small statements: through sqlx every
//! statement is a round trip between the async task and sqlx's connection thread (two thread
//! switches each, and a wait for the busy async worker to come back to the task), while the
//! thread runs the whole batch in one call with prepared statements it keeps.

use crate::IdMap as HashMap;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection, Sqlite};

use crate::batch::{Committer, GameState, Op, Writers, plan, remember};
use crate::sql::SqlStore;
use crate::types::{GameId, to_i64, to_u64};
use crate::{Result, SqliteSync, StoreError, StoreOptions};

/// A SQLite-backed [`Store`](crate::Store): the shared [`SqlStore`] on `sqlx::Sqlite`, opened by
/// [`SqliteStore::open`].
pub type SqliteStore = SqlStore<Sqlite>;

impl SqlStore<Sqlite> {
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
            .acquire_timeout(options.acquire_timeout)
            // An in-process database file cannot hang up: sqlx's ping before every checkout
            // was one more hand-off to the connection's worker thread per read (a login was
            // four), and found nothing a query would not report itself.
            .test_before_acquire(false)
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
        let wal = WalLimit::new(&file, options.sqlite_wal_max, options.sqlite_quiet_after);
        let (jobs, exited) = spawn_writer(
            file,
            synchronous,
            options.sqlite_recent_max.max(1),
            options.sqlite_key_slice,
            wal,
        )
        .await?;
        let checkpointer = connect.connect().await?;
        let writers = Writers::spawn(
            vec![SqliteCommitter {
                jobs,
                exited,
                checkpoint: Checkpoint::new(checkpointer),
            }],
            options.queue_capacity,
            options.max_batch,
        );
        Ok(SqliteStore {
            pool,
            writers,
            suspects: Default::default(),
            ping_timeout: options.ping_timeout,
        })
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
    /// Closed when the writer thread has ended (after its last key slice, its connection
    /// closed).
    exited: tokio::sync::oneshot::Receiver<()>,
    checkpoint: Checkpoint,
}

/// A game's fencing token (`0008_fencing.sql`).
const SQL_FENCE: &str = "SELECT fence_token FROM games WHERE id = ?1";
/// A game's last keyed seq (one search of the `(game_id, seq)` primary key of
/// `game_event_keys`: SQLite stores no `last_seq` column, so an append writes no `games` row)
/// and whether it is finished. The events above the watermark (the unkeyed tail) have no
/// index; the writer appended every one of them itself (it keys the tail when it opens) and
/// knows their games' last seqs (`Writer::recent`), so it takes the larger of the two instead
/// of scanning the tail for every game it has not seen yet.
const SQL_STATE: &str = "SELECT \
     (SELECT COALESCE(MAX(seq), 0) FROM game_event_keys WHERE game_id = ?1), \
     finished_at_ms FROM games WHERE id = ?1";
/// A key step (`0004_event_keys.sql`, `0005_key_steps_in_slices.sql`) adds the
/// `(game_id, seq) -> id` keys of the events above the watermark, sorted so each game's go in
/// together (its leaf of the key tree is written once for all of them), in slices of whole
/// games, each in a transaction of its own between two group commits. No payload is read or
/// written. The watermark: keyed up to `keyed_to`; a running step keys up to `keying_to` and
/// has keyed the games up to `keyed_game` (0 and 0: no step running).
const SQL_WATERMARK: &str = "SELECT keyed_to, keying_to, keyed_game, COALESCE((SELECT MAX(id) FROM game_events), 0) \
     FROM game_event_watermark";
/// The events a step still has to key: `?1 < id <= ?2` and game `> ?3`, in key order.
const SQL_UNKEYED: &str = "SELECT game_id, seq, id FROM game_events \
     WHERE id > ?1 AND id <= ?2 AND game_id > ?3 ORDER BY game_id, seq";
/// After a slice that leaves games of the step to key: keyed up to game `?2` of step `?1`.
const SQL_SLICE_DONE: &str =
    "UPDATE OR FAIL game_event_watermark SET keying_to = ?1, keyed_game = ?2";
/// After the last slice: everything up to `?1` is keyed.
const SQL_STEP_DONE: &str =
    "UPDATE OR FAIL game_event_watermark SET keyed_to = ?1, keying_to = 0, keyed_game = 0";
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
        "INSERT OR FAIL INTO game_events (game_id, seq, kind, payload, at_ms, actor_id, reason) \
         VALUES {}",
        vec![tuple; rows].join(", ")
    )
}

/// The `INSERT` of `rows` keys. `OR FAIL`: see `open_writer`; a duplicate seq fails the
/// slice, which is rolled back.
fn key_sql(rows: usize) -> String {
    format!(
        "INSERT OR FAIL INTO game_event_keys (game_id, seq, event_id) VALUES {}",
        vec!["(?, ?, ?)"; rows].join(", ")
    )
}

/// Inserts `rows` with the multi-row statements `sqls` (one per size of [`CHUNKS`], largest
/// first, greedily); `bind` binds one row of `columns` parameters from the 1-based index it
/// is given.
fn insert_in_chunks<T>(
    conn: &rusqlite::Connection,
    sqls: &[String; CHUNKS.len()],
    rows: &[T],
    columns: usize,
    mut bind: impl FnMut(&mut rusqlite::Statement<'_>, usize, &T) -> Result<()>,
) -> Result<()> {
    let mut rest = rows;
    for (size, sql) in CHUNKS.iter().zip(sqls) {
        while rest.len() >= *size {
            let (now, later) = rest.split_at(*size);
            rest = later;
            let mut insert = conn.prepare_cached(sql)?;
            for (i, row) in now.iter().enumerate() {
                bind(&mut insert, columns * i + 1, row)?;
            }
            insert.raw_execute()?;
        }
    }
    Ok(())
}

/// Opens the writer's connection on a thread of its own and starts serving jobs there; the
/// thread ends (closing the connection) when the returned sender is dropped, and then closes
/// the returned receiver.
async fn spawn_writer(
    file: std::path::PathBuf,
    synchronous: &'static str,
    recent_max: u64,
    key_slice: usize,
    wal: WalLimit,
) -> Result<(
    std::sync::mpsc::Sender<Job>,
    tokio::sync::oneshot::Receiver<()>,
)> {
    let (jobs, queue) = std::sync::mpsc::channel::<Job>();
    let (opened, open_result) = tokio::sync::oneshot::channel();
    let (exiting, exited) = tokio::sync::oneshot::channel::<()>();
    std::thread::Builder::new()
        .name("chuhe-sqlite-writer".into())
        .spawn(move || {
            // Dropped last, when the thread ends: after the writer and its connection.
            let _exiting = exiting;
            let conn = match open_writer(&file, synchronous) {
                Ok(conn) => conn,
                Err(e) => {
                    let _ = opened.send(Err(e));
                    return;
                }
            };
            let quiet_after = wal.quiet_after;
            let mut writer = Writer::new(conn, synchronous, recent_max, key_slice).with_wal(wal);
            // Whatever a previous run left unkeyed is keyed now, so the writer knows the last
            // seq of every game in the tail (it appends all of the tail from here on).
            if let Err(e) = writer.key_tail() {
                let _ = opened.send(Err(StoreError::CommitFailed(format!(
                    "keying the events of the last run: {e}"
                ))));
                return;
            }
            let _ = opened.send(Ok(()));
            loop {
                let job = match queue.recv_timeout(quiet_after) {
                    Ok(job) => job,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        // Quiet: give the disk space of the WAL back.
                        writer.truncate_wal_if_written(QUIET_BUSY_WAIT);
                        continue;
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                };
                match job {
                    Job::Commit(ops, reply) => {
                        let _ = reply.send(writer.commit(ops));
                        // After the answer, so no batch waits for its own slice or for the
                        // WAL's truncation.
                        writer.key_step();
                        writer.bound_wal();
                    }
                    Job::Checkpoint => {
                        // Best effort: a failure here is retried at the next turn.
                        let _ = writer
                            .conn
                            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                    }
                }
            }
            // At close: the WAL copied back and emptied, whoever else still has the file open.
            writer.truncate_wal_if_written(CLOSE_BUSY_WAIT);
            drop(writer);
        })
        .map_err(|e| StoreError::CommitFailed(format!("starting the writer thread: {e}")))?;
    open_result.await.map_err(|_| StoreError::Closed)??;
    Ok((jobs, exited))
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
    conn.set_prepared_statement_cache_capacity(2 * CHUNKS.len() + 8);
    Ok(conn)
}

/// How long a truncating checkpoint waits for readers (and the background checkpoint) to let
/// go: under load (short, as every commit waits behind it; tried again once the WAL has grown
/// by half its limit more), when quiet, and at close.
const LOAD_BUSY_WAIT: Duration = Duration::from_millis(50);
const QUIET_BUSY_WAIT: Duration = Duration::from_millis(200);
const CLOSE_BUSY_WAIT: Duration = Duration::from_secs(2);

/// The writer's bounds on the WAL file (see [`StoreOptions::sqlite_wal_max`]).
struct WalLimit {
    /// The WAL file (`<database>-wal`).
    path: std::path::PathBuf,
    max: u64,
    /// The size at which the writer next truncates it (`max`, or more after a failed try).
    next: u64,
    quiet_after: Duration,
    /// Whether anything was committed since the WAL was last emptied.
    written: bool,
}

impl WalLimit {
    fn new(db: &std::path::Path, max: u64, quiet_after: Duration) -> WalLimit {
        let mut path = db.as_os_str().to_owned();
        path.push("-wal");
        let max = max.max(1 << 20);
        WalLimit {
            path: path.into(),
            max,
            next: max,
            quiet_after,
            written: true,
        }
    }
}

/// The writer thread's side: its connection and what it knows of the games.
struct Writer {
    conn: rusqlite::Connection,
    /// Whether the connection runs `synchronous = FULL` (else `NORMAL`).
    full_sync: bool,
    /// Last seq and finished flag of the unfinished games this writer has committed to. It is
    /// the only writer of events, so after one read per game a batch needs no `SELECT`; the
    /// map is emptied whenever a commit fails, and a game leaves it when it finishes.
    known: HashMap<GameId, GameState>,
    /// The `INSERT` statements for each of [`CHUNKS`]: events, keys.
    insert_sql: [String; CHUNKS.len()],
    key_sql: [String; CHUNKS.len()],
    /// The last seq of every game that may have events not keyed yet (all appended by this
    /// writer: it keys the tail when it opens), with the step generation it was appended in.
    /// Kept across failed commits, unlike `known`; a finished step drops the entries it
    /// keyed.
    recent: HashMap<GameId, (u64, u64)>,
    /// The step generation: appends since the running (or last) step started carry this.
    generation: u64,
    /// Rows appended since the last step started (or failed to start).
    recent_rows: u64,
    /// Rows at which a step starts ([`StoreOptions::sqlite_recent_max`]).
    recent_max: u64,
    /// Keys per slice, at least (a slice ends with a game; [`StoreOptions::sqlite_key_slice`]).
    key_slice: usize,
    /// The running key step.
    step: Option<KeyStep>,
    /// The generation of a step that failed half-way (its rest is done by the next step,
    /// which resumes it from the watermark).
    failed_generation: Option<u64>,
    /// The bounds on the WAL file; none in tests that build a writer by hand.
    wal: Option<WalLimit>,
    /// The keys of the rows this writer appended above the watermark, so that a step need not
    /// read them back from the table; `None` while that cannot be vouched for (before the
    /// writer has keyed the tail it opened on, after a commit that failed), and then a step
    /// reads its keys from the table, as it always may.
    appended: Option<Appended>,
    /// Steps whose keys came from [`Writer::appended`], and from the table (for tests).
    steps_from_memory: u64,
    steps_from_table: u64,
}

/// The keys of the rows appended above `base`, in rowid order: row `base + 1 + i` is
/// `keys[i]` (game, seq, event id). Rowids only grow, by one a row (the table's rows are never
/// deleted and this writer is the only one that appends), which [`Writer::commit`] checks.
struct Appended {
    base: i64,
    keys: Vec<(i64, i64, i64)>,
}

/// A committed batch's rows in the order they were inserted: (game, seq), and the rowid of
/// the last one.
struct AppendedRows {
    keys: Vec<(i64, i64)>,
    last_id: i64,
}

/// A running key step: the keys it still has to add, a slice after each group commit.
struct KeyStep {
    /// The largest event id it keys (`keying_to`).
    to: i64,
    /// The keys to add, sorted by game and seq: (game, seq, event id).
    keys: Vec<(i64, i64, i64)>,
    /// How many of `keys` are in.
    done: usize,
    /// The generation of the appends it keys (all of them at or below `to`).
    generation: u64,
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

    /// Ends the writer thread and waits for it: a key slice it runs after the last commit
    /// is done (or failed) when the store's `close` returns, and its connection is closed. A
    /// background checkpoint still running is waited for too, and the background connection
    /// closed (not just dropped, which closes it later on sqlx's thread): the store's `close`
    /// then closes the pool, whose last connection checkpoints the WAL and deletes it.
    async fn finish(self) {
        drop(self.jobs);
        let _ = self.exited.await;
        let mut checkpoint = self.checkpoint;
        if let Some(running) = checkpoint.running.take() {
            if let Ok(conn) = running.await {
                checkpoint.idle = Some(conn);
            }
        }
        if let Some(conn) = checkpoint.idle.take() {
            let _ = conn.close().await;
        }
    }
}

impl Writer {
    fn new(
        conn: rusqlite::Connection,
        synchronous: &'static str,
        recent_max: u64,
        key_slice: usize,
    ) -> Writer {
        Writer {
            conn,
            full_sync: synchronous == "FULL",
            known: HashMap::default(),
            insert_sql: CHUNKS.map(insert_sql),
            key_sql: CHUNKS.map(key_sql),
            recent: HashMap::default(),
            generation: 0,
            recent_rows: 0,
            recent_max,
            key_slice: key_slice.max(1),
            step: None,
            failed_generation: None,
            wal: None,
            appended: None,
            steps_from_memory: 0,
            steps_from_table: 0,
        }
    }

    fn with_wal(mut self, wal: WalLimit) -> Writer {
        // After a checkpoint restarts the WAL, SQLite truncates the file to this size.
        let _ = self
            .conn
            .execute_batch(&format!("PRAGMA journal_size_limit = {}", wal.max));
        self.wal = Some(wal);
        self
    }

    /// After a commit: once the WAL file has outgrown its limit, checkpoint everything and
    /// truncate it. Without this, under steady load the background checkpoints never catch up
    /// with the writer at a moment when the WAL could restart, and it grows without bound (175
    /// MB for a 14 MB database). One `stat` per commit; the checkpoint copies only what the
    /// background checkpoints have not copied yet.
    fn bound_wal(&mut self) {
        let Some(wal) = &mut self.wal else {
            return;
        };
        wal.written = true;
        let len = std::fs::metadata(&wal.path).map_or(0, |m| m.len());
        if len <= wal.next {
            return;
        }
        let truncated = self.truncate_wal(LOAD_BUSY_WAIT);
        if let Some(wal) = &mut self.wal {
            // Readers held on past the wait: try again once the WAL has grown some more.
            wal.next = if truncated {
                wal.max
            } else {
                len + wal.max / 2
            };
        }
    }

    /// When quiet and at close: empties the WAL if anything was committed since it last was.
    fn truncate_wal_if_written(&mut self, busy_wait: Duration) {
        if self.wal.as_ref().is_some_and(|w| w.written) {
            self.truncate_wal(busy_wait);
        }
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)`: copies every frame of the WAL into the database and
    /// truncates the WAL file to zero bytes, waiting up to `busy_wait` for readers that still
    /// use it. True when it did.
    fn truncate_wal(&mut self, busy_wait: Duration) -> bool {
        let _ = self.conn.busy_timeout(busy_wait);
        // (busy, frames in the WAL, frames checkpointed): busy 0 means done.
        let done = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                r.get::<_, i64>(0)
            });
        let _ = self.conn.busy_timeout(Duration::from_secs(10));
        let truncated = matches!(done, Ok(0));
        if truncated {
            if let Some(wal) = &mut self.wal {
                wal.written = false;
            }
        } else {
            tracing::debug!(?done, "truncating the WAL waited too long for readers");
        }
        truncated
    }

    fn commit(&mut self, ops: Vec<Op>) -> Result<Vec<Result<u64>>> {
        match self.commit_batch(ops) {
            Ok((outcomes, updates, appended)) => {
                remember(&mut self.known, &updates);
                let rows = appended.keys.len();
                self.note_appended(appended);
                if rows > 0 {
                    for u in &updates {
                        self.recent.insert(u.game, (u.last_seq, self.generation));
                    }
                    self.recent_rows += rows as u64;
                }
                Ok(outcomes)
            }
            Err(e) => {
                self.known.clear();
                // Rows of a failed COMMIT may be in the table; a step reads them from there.
                self.appended = None;
                if !self.conn.is_autocommit() {
                    // Nothing of the batch may stay; if even the rollback fails the
                    // connection is unusable and the next BEGIN reports it.
                    let _ = self.conn.execute_batch("ROLLBACK");
                }
                Err(e)
            }
        }
    }

    /// Adds a committed batch's rows to [`Writer::appended`], or gives it up if their rowids
    /// do not follow the last ones it holds.
    fn note_appended(&mut self, batch: AppendedRows) {
        let Some(a) = &mut self.appended else {
            return;
        };
        let n = batch.keys.len() as i64;
        if n == 0 {
            return;
        }
        let first = batch.last_id - n + 1;
        if first != a.base + a.keys.len() as i64 + 1 {
            self.appended = None;
            return;
        }
        a.keys.extend(
            batch
                .keys
                .into_iter()
                .zip(first..)
                .map(|((game, seq), id)| (game, seq, id)),
        );
    }

    /// After a group commit: the next slice of the running step, or a new step once
    /// `recent_max` rows have been appended since the last one started. A failure leaves the
    /// events in the tail, where readers see them too, and is tried again after another
    /// `recent_max` appends.
    fn key_step(&mut self) {
        if self.step.is_none() {
            if self.recent_rows < self.recent_max {
                return;
            }
            self.recent_rows = 0;
            if let Err(e) = self.start_step() {
                tracing::error!(error = %e, "starting to key the recent events failed");
                return;
            }
        }
        if let Err(e) = self.key_slice() {
            tracing::error!(error = %e, "keying the recent events failed");
        }
    }

    /// Keys every event of the tail now, slice after slice (when the writer opens, and in
    /// tests).
    /// A step resumed from the watermark ends below the newest events: another one follows
    /// until nothing is left to key.
    fn key_tail(&mut self) -> Result<()> {
        loop {
            if self.step.is_none() {
                self.start_step()?;
            }
            if self.step.is_none() {
                return Ok(());
            }
            self.key_slice()?;
        }
    }

    /// (keyed_to, keying_to, keyed_game, largest event id).
    fn watermark(&mut self) -> Result<(i64, i64, i64, i64)> {
        Ok(self
            .conn
            .prepare_cached(SQL_WATERMARK)?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?)
    }

    /// Starts a step: the one a failed slice or a previous run left half-done (as the
    /// watermark says), or one for every event above the watermark. Reads only; nothing to
    /// key, no step.
    fn start_step(&mut self) -> Result<()> {
        let (keyed_to, keying_to, keyed_game, max_id) = self.watermark()?;
        let (to, after_game, generation) = if keying_to > 0 {
            let g = self.failed_generation.unwrap_or(self.generation);
            (keying_to, keyed_game, g)
        } else if max_id > keyed_to {
            (max_id, 0, self.generation)
        } else {
            // Every row is keyed: the keys of the next ones can be kept as they are appended.
            if self.appended.is_none() {
                self.appended = Some(Appended {
                    base: max_id,
                    keys: Vec::new(),
                });
            }
            return Ok(());
        };
        let fresh = keying_to == 0;
        // A fresh step over exactly the rows this writer appended and kept takes their keys
        // from memory, sorted as `SQL_UNKEYED` sorts them; any other reads them from the
        // table, and a fresh one then keeps the keys of the rows appended after it began.
        let remembered = match &mut self.appended {
            Some(a) if fresh && a.base == keyed_to && a.base + a.keys.len() as i64 == max_id => {
                let mut keys = std::mem::take(&mut a.keys);
                a.base = max_id;
                keys.sort_unstable();
                Some(keys)
            }
            _ => None,
        };
        let keys = match remembered {
            Some(keys) => {
                self.steps_from_memory += 1;
                keys
            }
            None => {
                let keys = self
                    .conn
                    .prepare_cached(SQL_UNKEYED)?
                    .query_map([keyed_to, to, after_game], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })?
                    .collect::<rusqlite::Result<Vec<(i64, i64, i64)>>>()?;
                self.appended = fresh.then(|| Appended {
                    base: max_id,
                    keys: Vec::new(),
                });
                self.steps_from_table += 1;
                keys
            }
        };
        self.step = Some(KeyStep {
            to,
            keys,
            done: 0,
            generation,
        });
        self.failed_generation = None;
        self.generation += 1;
        Ok(())
    }

    /// The next slice of the running step in a transaction of its own: at least `key_slice`
    /// keys, to the end of a game; the last one moves `keyed_to` and ends the step. With
    /// `synchronous = FULL` a slice commits without its own fsync (`NORMAL`): the next group
    /// commit's fsync makes it durable, and a slice lost in a crash is done again at the next
    /// open (its watermark is lost with it). A failed slice writes nothing and ends the
    /// step; the next one resumes it from the watermark.
    fn key_slice(&mut self) -> Result<()> {
        let Some(step) = &self.step else {
            return Ok(());
        };
        let mut end = (step.done + self.key_slice).min(step.keys.len());
        while end < step.keys.len() && end > 0 && step.keys[end].0 == step.keys[end - 1].0 {
            end += 1;
        }
        let slice = &step.keys[step.done..end];
        let last = end == step.keys.len();
        let to = step.to;
        let full = self.full_sync;
        if full {
            self.conn.execute_batch("PRAGMA synchronous = NORMAL")?;
        }
        let written = self.write_slice(slice, to, last);
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        if full {
            self.conn.execute_batch("PRAGMA synchronous = FULL")?;
        }
        if let Err(e) = written {
            if let Some(step) = self.step.take() {
                self.failed_generation = Some(step.generation);
            }
            return Err(e);
        }
        if last {
            if let Some(step) = self.step.take() {
                self.recent.retain(|_, (_, g)| *g > step.generation);
            }
        } else if let Some(step) = &mut self.step {
            step.done = end;
        }
        Ok(())
    }

    fn write_slice(&self, slice: &[(i64, i64, i64)], to: i64, last: bool) -> Result<()> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        insert_in_chunks(
            &self.conn,
            &self.key_sql,
            slice,
            3,
            |insert, i, (game, seq, id)| {
                insert.raw_bind_parameter(i, game)?;
                insert.raw_bind_parameter(i + 1, seq)?;
                insert.raw_bind_parameter(i + 2, id)?;
                Ok(())
            },
        )?;
        if last {
            self.conn.prepare_cached(SQL_STEP_DONE)?.execute([to])?;
        } else if let Some((game, _, _)) = slice.last() {
            self.conn
                .prepare_cached(SQL_SLICE_DONE)?
                .execute([to, *game])?;
        }
        self.conn.execute_batch("COMMIT")?;
        Ok(())
    }

    /// One batch in one transaction: the outcomes, the games' new states, the rows written.
    #[allow(clippy::type_complexity)]
    fn commit_batch(
        &mut self,
        ops: Vec<Op>,
    ) -> Result<(
        Vec<Result<u64>>,
        Vec<crate::batch::GameUpdate>,
        AppendedRows,
    )> {
        let mut ids: Vec<i64> = ops.iter().map(|o| o.game.0).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut states = HashMap::with_capacity_and_hasher(ids.len(), Default::default());
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
                        let recent = self.recent.get(&GameId(id)).map_or(0, |r| r.0);
                        states.insert(
                            GameId(id),
                            GameState {
                                last_seq: logged.max(recent),
                                finished: finished_at.is_some(),
                                fence: None,
                            },
                        );
                    }
                    Err(rusqlite::Error::QueryReturnedNoRows) => {} // plan refuses it
                    Err(e) => return Err(e.into()),
                }
            }
        }
        // The tokens of the games whose appends carry one, read under the write lock: a claim
        // (a write from the pool) commits before this transaction began or after it ends.
        let mut fenced: Vec<i64> = ops
            .iter()
            .filter(|o| o.fence.is_some())
            .map(|o| o.game.0)
            .collect();
        fenced.sort_unstable();
        fenced.dedup();
        if !fenced.is_empty() {
            let mut select = self.conn.prepare_cached(SQL_FENCE)?;
            for id in fenced {
                if let Some(state) = states.get_mut(&GameId(id)) {
                    let token: i64 = select.query_row([id], |r| r.get(0))?;
                    state.fence = Some(to_u64("fence_token", token)?);
                }
            }
        }
        let plan = plan(ops, &states);
        insert_in_chunks(
            &self.conn,
            &self.insert_sql,
            &plan.rows,
            7,
            |insert, i, (game, ev)| {
                insert.raw_bind_parameter(i, game.0)?;
                insert.raw_bind_parameter(i + 1, to_i64("seq", ev.seq)?)?;
                insert.raw_bind_parameter(i + 2, ev.kind.as_str())?;
                insert.raw_bind_parameter(i + 3, ev.payload.as_slice())?;
                insert.raw_bind_parameter(i + 4, ev.at_ms)?;
                insert.raw_bind_parameter(i + 5, ev.actor.map(|a| a.0))?;
                insert.raw_bind_parameter(i + 6, ev.reason.as_deref())?;
                Ok(())
            },
        )?;
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
        let appended = AppendedRows {
            keys: plan
                .rows
                .iter()
                .map(|(game, ev)| Ok((game.0, to_i64("seq", ev.seq)?)))
                .collect::<Result<Vec<_>>>()?,
            last_id: self.conn.last_insert_rowid(),
        };
        if let Err(e) = self.conn.execute_batch("COMMIT") {
            // SQLITE_BUSY leaves the transaction open (`commit` rolls it back): nothing is
            // stored. Any other failure of COMMIT itself (an I/O error writing or syncing the
            // WAL) may have left the commit frame in the WAL, where recovery could find it.
            return Err(match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::DatabaseBusy) => e.into(),
                _ => StoreError::CommitUnknown(format!("COMMIT failed: {e}")),
            });
        }
        Ok((plan.outcomes, plan.updates, appended))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::{NewEvent, Store};
    use sqlx::Executor;

    /// A fresh database file at `url`, migrated up to (and including) migration `upto`.
    async fn database_at(url: &str, upto: usize) -> SqliteConnection {
        let opts = SqliteConnectOptions::from_str(url)
            .unwrap()
            .create_if_missing(true);
        let mut c = opts.connect().await.unwrap();
        crate::migrate::migrator(&crate::migrate::SQLITE[..upto])
            .await
            .unwrap()
            .run(&mut c)
            .await
            .unwrap();
        c
    }

    /// Two players and the games `ids` between them (schema of migration 2 or later).
    fn players_and_games(ids: &[i64]) -> String {
        let games: Vec<String> = ids
            .iter()
            .map(|id| format!("({id}, 1, 2, '90m', 'cxa', 'startpos', 0)"))
            .collect();
        format!(
            "INSERT INTO principals (id, role, name, created_at_ms) VALUES \
             (1, 'player', 'a', 0), (2, 'player', 'b', 0);
             INSERT INTO games (id, red_id, black_id, time_control, ruleset, start_fen, \
             created_at_ms) VALUES {};",
            games.join(", ")
        )
    }

    /// `EXPLAIN QUERY PLAN` of `sql`, one line per step.
    async fn plan_of(c: &mut SqliteConnection, sql: &str) -> Vec<String> {
        use sqlx::Row;
        sqlx::query(&format!("EXPLAIN QUERY PLAN {sql}"))
            .fetch_all(c)
            .await
            .unwrap()
            .iter()
            .map(|row| row.get::<String, _>("detail"))
            .collect()
    }

    /// A database written by servers at migration 3 (appends in `recent_events`, moved in bulk
    /// into the indexed `game_events`) opens with every event of both tables in its log, in
    /// order: the recent ones join `game_events`, every event gets its key, and appends go on
    /// where each log ends; a duplicate is refused whichever part holds its seq.
    #[tokio::test]
    async fn a_database_from_migration_3_keeps_both_tables() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("old.db").display());
        let payload = |g: i64, seq: i64| format!("{g}:{seq}").into_bytes();
        {
            let mut c = database_at(&url, 3).await;
            c.execute(players_and_games(&[7, 8, 9]).as_str())
                .await
                .unwrap();
            // Game 7: 1-3 moved, 4-5 recent; game 8: 1-2 moved only; game 9: 1-2 recent only.
            // Moved rows sit sorted by game, recent ones interleaved in append order.
            let rows = [
                ("game_events", 7, 1),
                ("game_events", 7, 2),
                ("game_events", 7, 3),
                ("game_events", 8, 1),
                ("game_events", 8, 2),
                ("recent_events", 9, 1),
                ("recent_events", 7, 4),
                ("recent_events", 9, 2),
                ("recent_events", 7, 5),
            ];
            for (table, g, seq) in rows {
                sqlx::query(&format!(
                    "INSERT INTO {table} (game_id, seq, kind, payload, at_ms, actor_id, reason) \
                     VALUES (?, ?, 'move', ?, ?, ?, ?)"
                ))
                .bind(g)
                .bind(seq)
                .bind(payload(g, seq))
                .bind(100 * g + seq)
                .bind((seq == 2).then_some(1i64))
                .bind((seq == 2).then_some("ruling"))
                .execute(&mut c)
                .await
                .unwrap();
            }
        }
        let s = SqliteStore::open(&url, &StoreOptions::default())
            .await
            .unwrap();
        let want = [(7, 5), (8, 2), (9, 2)];
        let check = |events: &[crate::StoredEvent], g: i64, n: i64| {
            let seqs: Vec<i64> = events.iter().map(|e| e.seq as i64).collect();
            assert_eq!(seqs, (1..=n).collect::<Vec<_>>(), "game {g}");
            for e in events {
                let seq = e.seq as i64;
                assert_eq!(e.game, GameId(g));
                assert_eq!(e.kind, "move");
                assert_eq!(e.payload, payload(g, seq));
                assert_eq!(e.at_ms, 100 * g + seq);
                assert_eq!(e.actor, (seq == 2).then_some(crate::PrincipalId(1)));
                assert_eq!(e.reason.as_deref(), (seq == 2).then_some("ruling"));
            }
        };
        for (g, n) in want {
            let rec = s.load_game(GameId(g)).await.unwrap();
            assert_eq!(rec.game.last_seq, n as u64);
            check(&rec.events, g, n);
            let since = s.events_since(GameId(g), 1, 100).await.unwrap();
            assert_eq!(since.len() as i64, n - 1);
        }
        let live = s.unfinished_games().await.unwrap();
        assert_eq!(live.len(), 3);
        for (rec, (g, n)) in live.iter().zip(want) {
            check(&rec.events, g, n);
        }
        {
            let mut c = SqliteConnection::connect(&url).await.unwrap();
            let tables: Vec<String> =
                sqlx::query_scalar("SELECT name FROM sqlite_schema WHERE name = 'recent_events'")
                    .fetch_all(&mut c)
                    .await
                    .unwrap();
            assert!(tables.is_empty(), "{tables:?}");
            let (events, keys, max_id, keyed_to): (i64, i64, i64, i64) = sqlx::query_as(
                "SELECT (SELECT COUNT(*) FROM game_events), (SELECT COUNT(*) FROM \
                 game_event_keys), (SELECT MAX(id) FROM game_events), \
                 (SELECT keyed_to FROM game_event_watermark)",
            )
            .fetch_one(&mut c)
            .await
            .unwrap();
            assert_eq!((events, keys, keyed_to), (9, 9, max_id));
            // The recent rows joined game_events in their append order.
            let appended: Vec<(i64, i64)> =
                sqlx::query_as("SELECT game_id, seq FROM game_events WHERE id > 5 ORDER BY id")
                    .fetch_all(&mut c)
                    .await
                    .unwrap();
            assert_eq!(appended, [(9, 1), (7, 4), (9, 2), (7, 5)]);
        }
        for (g, dup) in [(7, 1), (7, 5), (9, 2)] {
            let r = s
                .append(GameId(g), vec![NewEvent::new(dup, "move", vec![0], 1)])
                .await;
            assert!(matches!(r, Err(StoreError::SeqMismatch { .. })), "{r:?}");
        }
        assert_eq!(
            s.append(
                GameId(9),
                vec![NewEvent::new(3, "move", payload(9, 3), 903)]
            )
            .await
            .unwrap(),
            3
        );
        s.close().await;
        // A reopen reads the same logs.
        let s = SqliteStore::open(&url, &StoreOptions::default())
            .await
            .unwrap();
        for (g, n) in [(7, 5), (8, 2), (9, 3)] {
            let rec = s.load_game(GameId(g)).await.unwrap();
            assert_eq!(rec.game.last_seq, n as u64);
            check(&rec.events, g, n);
        }
        s.close().await;
    }

    /// The reads of the log push `game_id = ? AND seq > ?` into both parts of `game_log`: the
    /// keyed part searches the primary key of `game_event_keys` and fetches rows by rowid, the
    /// tail is a rowid range above the watermark; the last-seq expressions search the same
    /// way. Nothing scans a whole table but the one-row watermark.
    #[tokio::test]
    async fn reads_of_the_log_search_the_keys_and_a_rowid_range() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("plan.db").display());
        let mut c = database_at(&url, crate::migrate::SQLITE.len()).await;
        let scans = |plan: &[String]| {
            plan.iter()
                .filter(|l| l.starts_with("SCAN") && !l.contains("game_event_watermark"))
                .count()
        };
        let events = plan_of(
            &mut c,
            "SELECT game_id, seq, kind, payload, at_ms, actor_id, reason FROM game_log \
             WHERE game_id = 7 AND seq > 3 ORDER BY seq LIMIT 10",
        )
        .await;
        assert!(
            events
                .iter()
                .any(|l| l.contains("k USING PRIMARY KEY (game_id=? AND seq>?)")),
            "{events:?}"
        );
        assert!(
            events
                .iter()
                .any(|l| l.contains("SEARCH e USING INTEGER PRIMARY KEY (rowid=?)")),
            "{events:?}"
        );
        assert!(
            events
                .iter()
                .any(|l| l.contains("SEARCH game_events USING INTEGER PRIMARY KEY (rowid>?)")),
            "{events:?}"
        );
        assert_eq!(scans(&events), 0, "{events:?}");
        let game = plan_of(
            &mut c,
            &format!(
                "SELECT {} FROM games WHERE id = 7",
                crate::sql::GAME_COLS_DERIVED_SEQ
            ),
        )
        .await;
        assert!(
            game.iter()
                .any(|l| l.contains("k USING PRIMARY KEY (game_id=?)")),
            "{game:?}"
        );
        assert!(
            game.iter()
                .any(|l| l.contains("t USING INTEGER PRIMARY KEY (rowid>?)")),
            "{game:?}"
        );
        assert_eq!(scans(&game), 0, "{game:?}");
        let state = plan_of(&mut c, &SQL_STATE.replace("?1", "7")).await;
        assert!(
            state
                .iter()
                .any(|l| l.contains("game_event_keys USING PRIMARY KEY (game_id=?)")),
            "{state:?}"
        );
        assert_eq!(scans(&state), 0, "{state:?}");
    }

    /// A key step half-done — some games' keys in, the watermark saying so — and events
    /// appended after it started: every read sees each event once, in order, with the right
    /// last seq; the writer stopped there (as in a crash), the next open finishes the step,
    /// keys the rest, and appends go on.
    #[tokio::test]
    async fn a_half_done_key_step_reads_each_event_once_and_the_next_open_finishes_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("half.db");
        let url = format!("sqlite://{}", file.display());
        let mut c = database_at(&url, crate::migrate::SQLITE.len()).await;
        c.execute(players_and_games(&[7, 8, 9]).as_str())
            .await
            .unwrap();
        c.execute(
            "INSERT INTO game_events (game_id, seq, kind, payload, at_ms) VALUES \
             (8, 1, 'move', x'0801', 0), (7, 1, 'move', x'0701', 0), (9, 1, 'move', x'0901', 0), \
             (7, 2, 'move', x'0702', 0), (8, 2, 'move', x'0802', 0), (9, 2, 'move', x'0902', 0);",
        )
        .await
        .unwrap();
        // One key per slice, at least: each slice is one whole game.
        let mut writer = Writer::new(open_writer(&file, "FULL").unwrap(), "FULL", 1, 1);
        writer.start_step().unwrap();
        writer.key_slice().unwrap();
        c.execute(
            "INSERT INTO game_events (game_id, seq, kind, payload, at_ms) VALUES \
             (7, 3, 'move', x'0703', 0), (9, 3, 'move', x'0903', 0);",
        )
        .await
        .unwrap();
        async fn watermark(c: &mut SqliteConnection) -> (i64, i64, i64, i64) {
            sqlx::query_as(
                "SELECT keyed_to, keying_to, keyed_game, (SELECT COUNT(*) FROM game_event_keys) \
                 FROM game_event_watermark",
            )
            .fetch_one(c)
            .await
            .unwrap()
        }
        async fn logs(c: &mut SqliteConnection) -> Vec<(i64, Vec<i64>, Vec<Vec<u8>>, i64)> {
            let mut all = Vec::new();
            for g in [7, 8, 9] {
                let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(
                    "SELECT seq, payload FROM game_log WHERE game_id = ? AND seq > 0 ORDER BY seq",
                )
                .bind(g)
                .fetch_all(&mut *c)
                .await
                .unwrap();
                let last: i64 = sqlx::query_scalar(&format!(
                    "SELECT last_seq FROM (SELECT {} FROM games WHERE id = ?)",
                    crate::sql::GAME_COLS_DERIVED_SEQ
                ))
                .bind(g)
                .fetch_one(&mut *c)
                .await
                .unwrap();
                let (seqs, payloads) = rows.into_iter().unzip();
                all.push((g, seqs, payloads, last));
            }
            all
        }
        let want = vec![
            (
                7,
                vec![1, 2, 3],
                vec![vec![7, 1], vec![7, 2], vec![7, 3]],
                3,
            ),
            (8, vec![1, 2], vec![vec![8, 1], vec![8, 2]], 2),
            (
                9,
                vec![1, 2, 3],
                vec![vec![9, 1], vec![9, 2], vec![9, 3]],
                3,
            ),
        ];
        // Game 7's two keys are in; 8 and 9 wait; the step ends at event 6.
        assert_eq!(watermark(&mut c).await, (0, 6, 7, 2));
        assert_eq!(logs(&mut c).await, want);
        writer.key_slice().unwrap();
        assert_eq!(watermark(&mut c).await, (0, 6, 8, 4));
        assert_eq!(logs(&mut c).await, want);
        drop(writer);
        let s = SqliteStore::open(&url, &StoreOptions::default())
            .await
            .unwrap();
        assert_eq!(watermark(&mut c).await, (8, 0, 0, 8));
        assert_eq!(logs(&mut c).await, want);
        assert_eq!(
            s.append(GameId(8), vec![NewEvent::new(3, "move", vec![8, 3], 1)])
                .await
                .unwrap(),
            3
        );
        let r = s
            .append(GameId(9), vec![NewEvent::new(3, "move", vec![0], 1)])
            .await;
        assert!(matches!(r, Err(StoreError::SeqMismatch { .. })), "{r:?}");
        s.close().await;
    }

    /// When quiet (and at close) the writer empties the WAL of what it committed since it last
    /// did, and only then; after a commit it truncates the WAL once the file is over the limit.
    #[test]
    fn the_writer_empties_the_wal_when_asked_and_when_it_outgrows_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("wal.db");
        let setup = rusqlite::Connection::open(&file).unwrap();
        for m in crate::migrate::SQLITE {
            setup.execute_batch(m.2).unwrap();
        }
        drop(setup);
        let conn = open_writer(&file, "NORMAL").unwrap();
        conn.execute_batch(&players_and_games(&[7])).unwrap();
        let wal = WalLimit::new(&file, 1 << 20, Duration::from_secs(1));
        let wal_path = wal.path.clone();
        let len = || std::fs::metadata(&wal_path).map_or(0, |m| m.len());
        let mut w = Writer::new(conn, "NORMAL", 1 << 20, 512).with_wal(wal);
        let mut seq = 0;
        let mut append = |w: &mut Writer, bytes: usize| {
            seq += 1;
            let op = Op {
                game: GameId(7),
                events: vec![NewEvent::new(seq, "move", vec![1; bytes], 0)],
                finish: None,
                fence: None,
            };
            assert!(matches!(w.commit(vec![op]).unwrap()[..], [Ok(_)]));
            w.bound_wal();
        };
        append(&mut w, 100);
        assert!(len() > 0);
        w.truncate_wal_if_written(QUIET_BUSY_WAIT);
        assert_eq!(len(), 0);
        assert!(!w.wal.as_ref().unwrap().written);
        // Under load: never much past the limit (one commit of 64 KiB past it at most).
        let mut largest = 0;
        for _ in 0..100 {
            append(&mut w, 64 << 10);
            largest = largest.max(len());
        }
        assert!(
            largest > 0 && largest <= (1 << 20) + (80 << 10),
            "{largest}"
        );
        drop(w);
    }

    /// A writer (`synchronous = NORMAL`) on a new database in `dir` holding the games `ids`,
    /// starting a key step every `recent_max` rows, `key_slice` keys a slice.
    fn writer_with_games(
        dir: &tempfile::TempDir,
        ids: &[i64],
        recent_max: u64,
        key_slice: usize,
    ) -> Writer {
        let file = dir.path().join("w.db");
        let setup = rusqlite::Connection::open(&file).unwrap();
        for m in crate::migrate::SQLITE {
            setup.execute_batch(m.2).unwrap();
        }
        drop(setup);
        let conn = open_writer(&file, "NORMAL").unwrap();
        conn.execute_batch(&players_and_games(ids)).unwrap();
        Writer::new(conn, "NORMAL", recent_max, key_slice)
    }

    /// Every key in the table points at the row of its game and seq, and every row has one.
    fn assert_keys_are_the_rows(w: &Writer) {
        let rows: i64 = w
            .conn
            .query_row("SELECT COUNT(*) FROM game_events", [], |r| r.get(0))
            .unwrap();
        let keys: i64 = w
            .conn
            .query_row("SELECT COUNT(*) FROM game_event_keys", [], |r| r.get(0))
            .unwrap();
        let wrong: i64 = w
            .conn
            .query_row(
                "SELECT COUNT(*) FROM game_event_keys k LEFT JOIN game_events e ON e.id = k.event_id \
                 WHERE e.id IS NULL OR e.game_id <> k.game_id OR e.seq <> k.seq",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!((keys, wrong), (rows, 0));
    }

    /// A step over the rows the writer appended takes their keys from memory, and they are
    /// the table's: batches of one game and of several, small and crossing the insert's
    /// chunks, with steps between. A row written past the writer makes the next step read the
    /// table instead, and the step after that takes its keys from memory again.
    #[test]
    fn steps_key_the_appended_rows_from_memory_as_the_table_would() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer_with_games(&dir, &[7, 8, 9], 5, 3);
        w.key_tail().unwrap();
        let mut last = std::collections::HashMap::<i64, u64>::new();
        let mut batch = |w: &mut Writer, games: &[(i64, usize)]| {
            let ops = games
                .iter()
                .map(|&(g, n)| {
                    let seq = last.entry(g).or_insert(0);
                    let events = (0..n)
                        .map(|_| {
                            *seq += 1;
                            NewEvent::new(*seq, "move", vec![1], 0)
                        })
                        .collect();
                    Op {
                        game: GameId(g),
                        events,
                        finish: None,
                        fence: None,
                    }
                })
                .collect();
            let outcomes = w.commit(ops).unwrap();
            assert!(outcomes.iter().all(Result::is_ok));
            w.key_step();
        };
        for round in 0..12 {
            batch(&mut w, &[(7, 1)]);
            batch(&mut w, &[(9, 2), (8, 1), (7, 3)]);
            if round % 4 == 0 {
                batch(&mut w, &[(8, 70), (9, 5)]);
            }
        }
        w.key_tail().unwrap();
        assert!(w.steps_from_memory >= 5, "{}", w.steps_from_memory);
        assert_keys_are_the_rows(&w);

        // A row the writer did not append (only a test writes one).
        w.conn
            .execute_batch(
                "INSERT INTO game_events (game_id, seq, kind, payload, at_ms) \
                 VALUES (9, 1000, 'move', x'01', 0)",
            )
            .unwrap();
        let (memory, table) = (w.steps_from_memory, w.steps_from_table);
        batch(&mut w, &[(7, 2)]);
        w.key_tail().unwrap();
        assert_eq!(
            (w.steps_from_memory, w.steps_from_table),
            (memory, table + 1),
            "the table's rows were read"
        );
        assert_keys_are_the_rows(&w);
        for _ in 0..6 {
            batch(&mut w, &[(8, 1), (7, 1)]);
        }
        w.key_tail().unwrap();
        assert!(w.steps_from_memory > memory, "back to memory");
        assert_keys_are_the_rows(&w);
    }

    /// A step that ends, and appends during it: the writer forgets the last seqs of the games
    /// whose events the step keyed, and only those (it needs the others, above the step).
    #[test]
    fn a_finished_step_forgets_only_what_it_keyed() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer_with_games(&dir, &[7, 8], 2, 1);
        let append = |w: &mut Writer, g: i64, seq: u64| {
            let op = Op {
                game: GameId(g),
                events: vec![NewEvent::new(seq, "move", vec![1], 0)],
                finish: None,
                fence: None,
            };
            assert!(matches!(w.commit(vec![op]).unwrap()[..], [Ok(_)]));
        };
        append(&mut w, 7, 1);
        append(&mut w, 8, 1);
        w.key_step(); // starts a step for both games, keys game 7
        assert!(w.step.is_some());
        append(&mut w, 8, 2); // above the step
        w.key_step(); // keys game 8 (seq 1), ends the step
        assert!(w.step.is_none());
        assert_eq!(w.recent.keys().copied().collect::<Vec<_>>(), [GameId(8)]);
        assert_eq!(w.recent[&GameId(8)].0, 2);
        w.key_tail().unwrap();
        assert!(w.recent.is_empty());
    }

    /// A duplicate seq that reached the tail (written past the writer, which refuses one) makes
    /// the bulk step fail as a whole: it is rolled back, every key and the watermark stay as
    /// they were, the tail is still read, and the step succeeds once the duplicate is gone.
    #[tokio::test]
    async fn a_duplicate_in_the_tail_fails_the_bulk_step_and_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("dup.db");
        let url = format!("sqlite://{}", file.display());
        let mut c = database_at(&url, crate::migrate::SQLITE.len()).await;
        c.execute(players_and_games(&[7]).as_str()).await.unwrap();
        c.execute(
            "INSERT INTO game_events (game_id, seq, kind, payload, at_ms) VALUES \
             (7, 1, 'move', x'01', 0), (7, 2, 'move', x'02', 0);",
        )
        .await
        .unwrap();
        let mut writer = Writer::new(open_writer(&file, "NORMAL").unwrap(), "NORMAL", 1, 512);
        writer.key_tail().unwrap();
        c.execute(
            "INSERT INTO game_events (game_id, seq, kind, payload, at_ms) VALUES \
             (7, 3, 'move', x'03', 0), (7, 2, 'move', x'ff', 0);",
        )
        .await
        .unwrap();
        async fn state(c: &mut SqliteConnection) -> sqlx::Result<(i64, i64)> {
            sqlx::query_as(
                "SELECT (SELECT COUNT(*) FROM game_event_keys), \
                 (SELECT keyed_to FROM game_event_watermark)",
            )
            .fetch_one(c)
            .await
        }
        assert_eq!(state(&mut c).await.unwrap(), (2, 2));
        let failed = writer.key_tail();
        assert!(
            matches!(&failed, Err(StoreError::Sqlite(e)) if e.to_string().contains("UNIQUE")),
            "{failed:?}"
        );
        assert!(writer.conn.is_autocommit(), "rolled back");
        assert_eq!(state(&mut c).await.unwrap(), (2, 2));
        let log: Vec<i64> =
            sqlx::query_scalar("SELECT seq FROM game_log WHERE game_id = 7 ORDER BY seq")
                .fetch_all(&mut c)
                .await
                .unwrap();
        assert_eq!(log, [1, 2, 2, 3]);
        c.execute("DELETE FROM game_events WHERE id = 4")
            .await
            .unwrap();
        writer.key_tail().unwrap();
        assert_eq!(state(&mut c).await.unwrap(), (3, 3));
    }

    /// Games stored before migration 6 (the league's) read back with the defaults: started
    /// `now`, no lateness limit, no key (their NULL keys do not collide in the unique index).
    #[tokio::test]
    async fn games_from_before_migration_6_start_now() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("old.db").display());
        {
            let mut c = database_at(&url, 5).await;
            c.execute(players_and_games(&[7, 8]).as_str())
                .await
                .unwrap();
        }
        let s = SqliteStore::open(&url, &StoreOptions::default())
            .await
            .unwrap();
        for id in [7, 8] {
            let g = s.game(GameId(id)).await.unwrap();
            assert_eq!(
                (g.start_mode.as_str(), g.lateness_limit_ms, g.key),
                ("now", 0, None)
            );
            assert_eq!(
                (g.time_control.as_str(), g.ruleset.as_str()),
                ("90m", "cxa")
            );
        }
        assert_eq!(s.game_by_key("k").await.unwrap(), None);
        s.close().await;
    }

    /// A database written by servers before migration 2 (a `last_seq` column kept by every
    /// append) opens with its logs intact: last seqs now come from the log, appends continue
    /// where each log ends, and a duplicate is still refused.
    #[tokio::test]
    async fn a_database_from_before_migration_2_keeps_its_logs() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("old.db").display());
        {
            let mut c = database_at(&url, 1).await;
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
