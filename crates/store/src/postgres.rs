//! The PostgreSQL backend: a connection pool for reads and rare writes, and `pg_writers` writer
//! tasks, each with a connection of its own, that group-commit appends.
//!
//! A writer remembers the last seq of the games it has committed to. When every game of a batch
//! is known and every append continues its game, the batch is **one statement** in its own
//! transaction: it locks the games' rows, checks each stored last seq is still the remembered
//! one, and only if all are inserts the events and updates the games (all from arrays with
//! `UNNEST`). Otherwise — a game seen for the first time, an append that would be refused, or
//! a game another writer or node has written to since — the batch runs as a transaction of
//! three statements (lock and read the games, insert, update) around the refusal rules.
//! Each statement is a network round trip and, on a virtual machine, two process wake-ups, so
//! the usual batch costs one round trip instead of six (pool check, `BEGIN`, three statements,
//! `COMMIT`).

use crate::IdMap as HashMap;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, Postgres};

use crate::batch::{
    Committer, GameState, GameUpdate, KnownPlan, Op, Writers, plan, plan_known, remember,
};
use crate::sql::{SqlStore, Suspects};
use crate::types::{GameId, to_i64, to_u64};
use crate::{Result, StoreError, StoreOptions};

/// A PostgreSQL-backed [`Store`](crate::Store): the shared [`SqlStore`] on `sqlx::Postgres`,
/// opened by [`PgStore::open`].
pub type PgStore = SqlStore<Postgres>;

impl SqlStore<Postgres> {
    /// Connects to `url` (`postgres://…`), runs the migrations (under PostgreSQL's migration
    /// lock, so several nodes may start at once) and starts the writer tasks. Must be called
    /// inside a tokio runtime.
    pub async fn open(url: &str, options: &StoreOptions) -> Result<PgStore> {
        let writers = options.pg_writers.max(1);
        let pool = PgPoolOptions::new()
            .max_connections(options.pool_size.max(1))
            .acquire_timeout(options.acquire_timeout)
            .connect(url)
            .await?;
        crate::migrate::migrator(crate::migrate::POSTGRES)
            .await?
            .run(&pool)
            .await?;
        let connect = (*pool.connect_options()).clone();
        let suspects = Suspects::default();
        let mut committers = Vec::with_capacity(writers);
        for _ in 0..writers {
            let mut committer = PgCommitter {
                conn: None,
                conn_name: String::new(),
                connect: connect.clone(),
                known: HashMap::default(),
                last_used: std::time::Instant::now(),
                idle_check: options.pg_idle_check,
                suspects: suspects.clone(),
                connect_timeout: options.acquire_timeout,
            };
            committer.conn = Some(committer.connect().await?);
            committers.push(committer);
        }
        let writers = Writers::spawn(committers, options.queue_capacity, options.max_batch);
        Ok(PgStore {
            pool,
            writers,
            suspects,
            ping_timeout: options.ping_timeout,
        })
    }
}

/// A sqlx error of a statement that carried a commit (the one-statement commit, or `COMMIT`):
/// an error answered by the server means it failed (nothing committed); any other (the
/// connection lost, a broken protocol) leaves the outcome unknown.
fn after_commit_sent(e: sqlx::Error) -> StoreError {
    match e {
        sqlx::Error::Database(_) => e.into(),
        e => StoreError::CommitUnknown(e.to_string()),
    }
}

struct PgCommitter {
    /// The writer's own connection; dropped after an error and opened again at the next batch.
    conn: Option<PgConnection>,
    /// Its `application_name` (`chuhe-writer-` and random hex), by which `resolve_append` finds
    /// it on the server should a commit's outcome be unknown.
    conn_name: String,
    connect: PgConnectOptions,
    /// Shared with the store (see [`Suspects`]).
    suspects: Suspects,
    /// How long connecting may take ([`StoreOptions::acquire_timeout`]).
    connect_timeout: Duration,
    /// Last seq and finished flag of the unfinished games this writer has committed to. Only
    /// a hint: the one-statement commit checks each against the stored row.
    known: HashMap<GameId, GameState>,
    /// When the connection last answered, and how long it may idle before it is pinged.
    last_used: std::time::Instant,
    idle_check: Duration,
}

/// The one-statement commit (see the module docs). `$1..$6`: the games (id, last seq expected,
/// last seq after, result, reason, finished at); `$7..$13`: the events; `$14`: per game, the
/// fencing token its appends carry (NULL: unchecked), which must be the stored one.
///
/// Fencing is race-free because the token is read from the row this statement locks
/// `FOR UPDATE`: a claim (`UPDATE games SET fence_token = fence_token + 1`) that comes while
/// the statement holds the lock waits until it has committed, so the new owner's reads after
/// its claim see these events; a claim that commits first makes this statement's lock wait
/// for it and then read the new token (READ COMMITTED re-reads a locked row's latest version),
/// so a stale token writes nothing.
///
/// Every event must name one of the locked games (`ok`): the log has no foreign key
/// (migration 0005), this is its check.
///
/// `locked` and `upd` find the games by id (`id = ANY($1)`, an index scan of the primary key
/// whatever the statistics say); the expectations are checked on the locked rows in `ok`.
/// Written as a join with `v` and `finished_at_ms IS NULL`, it let the planner use the partial
/// index of unfinished games: without statistics (a new table, or autovacuum off) it takes
/// them for 0.5 % of the table and caches a plan that reads and hashes every live game for
/// every batch — 2.8 ms of a backend's CPU per commit with 5,000 live games, measured — and
/// the update joined `v` to a sequential scan of all games (`a_cached_plan_finds_the_games_by_id`
/// below).
const SQL_KNOWN: &str = "\
WITH v AS (
    SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::BIGINT[], $4::TEXT[], $5::TEXT[], \
        $6::BIGINT[], $14::BIGINT[]) AS v(id, expected, last_seq, result, reason, finished_at_ms, fence)
), locked AS (
    SELECT g.id, g.last_seq, g.finished_at_ms, g.fence_token FROM games g
    WHERE g.id = ANY($1::BIGINT[]) ORDER BY g.id FOR UPDATE OF g
), ok AS (
    SELECT (SELECT count(*) FROM locked l JOIN v ON l.id = v.id
            WHERE l.last_seq = v.expected AND l.finished_at_ms IS NULL
                AND (v.fence IS NULL OR l.fence_token = v.fence))
        = (SELECT count(*) FROM v)
        AND NOT EXISTS (SELECT 1 FROM UNNEST($7::BIGINT[]) AS e(game_id)
                        WHERE e.game_id <> ALL($1::BIGINT[])) AS all_ok
), upd AS (
    UPDATE games AS g SET last_seq = v.last_seq,
        result = COALESCE(v.result, g.result), reason = COALESCE(v.reason, g.reason),
        finished_at_ms = COALESCE(v.finished_at_ms, g.finished_at_ms)
    FROM v, ok WHERE g.id = ANY($1::BIGINT[]) AND g.id = v.id AND ok.all_ok
    RETURNING g.id
), ins AS (
    INSERT INTO game_events (game_id, seq, kind, payload, at_ms, actor_id, reason)
    SELECT e.game_id, e.seq, e.kind, e.payload, e.at_ms, e.actor_id, e.reason
    FROM UNNEST($7::BIGINT[], $8::BIGINT[], $9::TEXT[], $10::BYTEA[], $11::BIGINT[], \
        $12::BIGINT[], $13::TEXT[]) AS e(game_id, seq, kind, payload, at_ms, actor_id, reason),
        ok
    WHERE ok.all_ok
    RETURNING 1
)
SELECT (SELECT all_ok FROM ok), (SELECT count(*) FROM upd), (SELECT count(*) FROM ins)";

/// The locked path's update of the games (`$1..$5`: id, last seq, result, reason, finished
/// at), by id for the same reason as `upd` above.
const SQL_UPDATE: &str = "\
UPDATE games AS g SET last_seq = u.last_seq,
    result = COALESCE(u.result, g.result), reason = COALESCE(u.reason, g.reason),
    finished_at_ms = COALESCE(u.finished_at_ms, g.finished_at_ms)
FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[])
    AS u(id, last_seq, result, reason, finished_at_ms)
WHERE g.id = ANY($1::BIGINT[]) AND g.id = u.id";

/// The events of a batch as the arrays of the `UNNEST` insert, borrowing the events' texts
/// and payloads (the ops stay whole for the locked path, should the one statement refuse).
#[derive(Default)]
struct EventArrays<'a> {
    game_ids: Vec<i64>,
    seqs: Vec<i64>,
    kinds: Vec<&'a str>,
    payloads: Vec<&'a [u8]>,
    ats: Vec<i64>,
    actors: Vec<Option<i64>>,
    reasons: Vec<Option<&'a str>>,
}

impl<'a> EventArrays<'a> {
    fn push(&mut self, game: GameId, ev: &'a crate::types::NewEvent) -> Result<()> {
        self.game_ids.push(game.0);
        self.seqs.push(to_i64("seq", ev.seq)?);
        self.kinds.push(&ev.kind);
        self.payloads.push(&ev.payload);
        self.ats.push(ev.at_ms);
        self.actors.push(ev.actor.map(|a| a.0));
        self.reasons.push(ev.reason.as_deref());
        Ok(())
    }

    fn len(&self) -> usize {
        self.game_ids.len()
    }
}

/// The games of a batch as the arrays of the `UNNEST` update.
#[derive(Default)]
struct UpdateArrays<'a> {
    game_ids: Vec<i64>,
    last_seqs: Vec<i64>,
    results: Vec<Option<&'a str>>,
    reasons: Vec<Option<&'a str>>,
    finished: Vec<Option<i64>>,
}

impl<'a> UpdateArrays<'a> {
    fn push(&mut self, u: &'a GameUpdate) -> Result<()> {
        self.game_ids.push(u.game.0);
        self.last_seqs.push(to_i64("last_seq", u.last_seq)?);
        let f = u.finish.as_ref();
        self.results.push(f.map(|f| f.result.as_str()));
        self.reasons.push(f.map(|f| f.reason.as_str()));
        self.finished.push(f.map(|f| f.at_ms));
        Ok(())
    }
}

impl Committer for PgCommitter {
    async fn commit(&mut self, ops: Vec<Op>) -> Result<Vec<Result<u64>>> {
        let mut conn = match self.conn.take() {
            // An idle connection may have been closed by the server meanwhile: check it before
            // sending anything, so a lost connection costs a reconnect, not a failed batch.
            Some(mut c) if self.last_used.elapsed() >= self.idle_check => {
                match tokio::time::timeout(self.connect_timeout, c.ping()).await {
                    Ok(Ok(())) => c,
                    _ => self.connect().await?,
                }
            }
            Some(c) => c,
            None => self.connect().await?,
        };
        let done = self.commit_on(&mut conn, ops).await;
        match &done {
            // A failed statement may leave the connection unusable: open a new one next time.
            Err(e) => {
                self.known.clear();
                if e.outcome_unknown() {
                    let name = std::mem::take(&mut self.conn_name);
                    match self.suspects.lock() {
                        Ok(mut s) => s.push(name),
                        Err(poisoned) => poisoned.into_inner().push(name),
                    }
                }
            }
            Ok(_) => {
                self.conn = Some(conn);
                self.last_used = std::time::Instant::now();
            }
        }
        done
    }
}

impl PgCommitter {
    /// A new connection for the writer, under a new name. A failure here is before anything
    /// of the batch was sent.
    async fn connect(&mut self) -> Result<PgConnection> {
        let rnd = crate::generate_token()?.hash.0;
        let name: String = std::iter::once("chuhe-writer-".to_owned())
            .chain(rnd[..8].iter().map(|b| format!("{b:02x}")))
            .collect();
        let options = self.connect.clone().application_name(&name);
        let conn = tokio::time::timeout(self.connect_timeout, options.connect())
            .await
            .map_err(|_| {
                StoreError::CommitFailed(format!(
                    "connecting took longer than {} ms",
                    self.connect_timeout.as_millis()
                ))
            })??;
        self.conn_name = name;
        Ok(conn)
    }

    async fn commit_on(
        &mut self,
        conn: &mut PgConnection,
        ops: Vec<Op>,
    ) -> Result<Vec<Result<u64>>> {
        if let Some(known) = plan_known(&ops, &self.known) {
            if self.commit_known(conn, ops.as_slice(), &known).await? {
                remember(&mut self.known, known.games.iter().map(|(_, u)| u));
                return Ok(known.outcomes.into_iter().map(Ok).collect());
            }
            // Some game changed under us (another writer or node): nothing was written.
            for (_, u) in &known.games {
                self.known.remove(&u.game);
            }
        }
        let (outcomes, updates) = self.commit_locked(conn, ops).await?;
        remember(&mut self.known, &updates);
        Ok(outcomes)
    }

    /// The one-statement commit; false (nothing written) when a game's stored last seq is not
    /// the expected one or the game is finished.
    async fn commit_known(
        &self,
        conn: &mut PgConnection,
        ops: &[Op],
        known: &KnownPlan,
    ) -> Result<bool> {
        let mut games = UpdateArrays::default();
        let mut fences = Vec::with_capacity(known.fences.len());
        for f in &known.fences {
            fences.push(f.map(|t| to_i64("fence token", t)).transpose()?);
        }
        let mut expected = Vec::with_capacity(known.games.len());
        for (before, u) in &known.games {
            expected.push(to_i64("last_seq", *before)?);
            games.push(u)?;
        }
        let mut events = EventArrays::default();
        for op in ops {
            for ev in &op.events {
                events.push(op.game, ev)?;
            }
        }
        let n_events = events.len();
        let (all_ok, updated, inserted): (bool, i64, i64) = sqlx::query_as(SQL_KNOWN)
            .bind(&games.game_ids)
            .bind(expected)
            .bind(&games.last_seqs)
            .bind(&games.results)
            .bind(&games.reasons)
            .bind(&games.finished)
            .bind(events.game_ids)
            .bind(events.seqs)
            .bind(events.kinds)
            .bind(events.payloads)
            .bind(events.ats)
            .bind(events.actors)
            .bind(events.reasons)
            .bind(fences)
            .fetch_one(&mut *conn)
            .await
            .map_err(after_commit_sent)?;
        if all_ok && (updated as usize != games.game_ids.len() || inserted as usize != n_events) {
            // Committed already (the statement is its own transaction), yet not as planned.
            return Err(StoreError::CommitUnknown(format!(
                "one-statement commit wrote {updated} games and {inserted} events, expected {} and {}",
                games.game_ids.len(),
                n_events
            )));
        }
        Ok(all_ok)
    }

    /// The general commit: one transaction that locks and reads the games' rows, decides every
    /// append against them ([`plan`]), inserts the events and updates the games.
    async fn commit_locked(
        &self,
        conn: &mut PgConnection,
        ops: Vec<Op>,
    ) -> Result<(Vec<Result<u64>>, Vec<GameUpdate>)> {
        let mut ids: Vec<i64> = ops.iter().map(|o| o.game.0).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut tx = conn.begin().await?;
        // Row locks (in id order, so concurrent writers cannot deadlock) make the seq check
        // safe even with several writers or nodes, and the fencing check race-free (see
        // `SQL_KNOWN`): a claim's update of a row waits for this transaction, or this lock
        // waits for the claim and reads its token.
        let rows: Vec<(i64, i64, Option<i64>, i64)> = sqlx::query_as(
            "SELECT id, last_seq, finished_at_ms, fence_token FROM games WHERE id = ANY($1) \
             ORDER BY id FOR UPDATE",
        )
        .bind(&ids)
        .fetch_all(&mut *tx)
        .await?;
        let mut states = HashMap::with_capacity_and_hasher(rows.len(), Default::default());
        for (id, last_seq, finished_at, fence) in rows {
            states.insert(
                GameId(id),
                GameState {
                    last_seq: to_u64("last_seq", last_seq)?,
                    finished: finished_at.is_some(),
                    fence: Some(to_u64("fence_token", fence)?),
                },
            );
        }
        let plan = plan(ops, &states);
        if !plan.rows.is_empty() {
            let mut events = EventArrays::default();
            for (game, ev) in &plan.rows {
                events.push(*game, ev)?;
            }
            sqlx::query(
                "INSERT INTO game_events (game_id, seq, kind, payload, at_ms, actor_id, reason) \
                 SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::BYTEA[], \
                 $5::BIGINT[], $6::BIGINT[], $7::TEXT[])",
            )
            .bind(events.game_ids)
            .bind(events.seqs)
            .bind(events.kinds)
            .bind(events.payloads)
            .bind(events.ats)
            .bind(events.actors)
            .bind(events.reasons)
            .execute(&mut *tx)
            .await?;
        }
        if !plan.updates.is_empty() {
            let mut games = UpdateArrays::default();
            for u in &plan.updates {
                games.push(u)?;
            }
            sqlx::query(SQL_UPDATE)
                .bind(games.game_ids)
                .bind(games.last_seqs)
                .bind(games.results)
                .bind(games.reasons)
                .bind(games.finished)
                .execute(&mut *tx)
                .await?;
        }
        // Every error before this one left the transaction uncommitted (the server rolls it
        // back when the connection goes).
        tx.commit().await.map_err(after_commit_sent)?;
        Ok((plan.outcomes, plan.updates))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::Store;
    use sqlx::Executor;

    /// With `CHUHE_TEST_DATABASE_URL`: a new schema `chuhe_<what>_…` on its server, an admin
    /// connection to drop it afterwards, its name, and a URL whose connections use it. Without
    /// it, one stderr line says the test was skipped.
    async fn schema_of_its_own(what: &str) -> Option<(PgConnection, String, String)> {
        let Ok(base) = std::env::var("CHUHE_TEST_DATABASE_URL") else {
            // Straight to the process's stderr, past libtest's output capture, so it is seen.
            use std::io::Write as _;
            let thread = std::thread::current();
            let test = thread.name().unwrap_or("a PostgreSQL unit test");
            let _ = writeln!(
                std::io::stderr(),
                "skipped: {test} ({what}: CHUHE_TEST_DATABASE_URL is not set)"
            );
            return None;
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let schema = format!("chuhe_{what}_{}_{nanos}", std::process::id());
        let mut admin = PgConnection::connect(&base).await.unwrap();
        admin
            .execute(format!("CREATE SCHEMA {schema}").as_str())
            .await
            .unwrap();
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{sep}options=-c%20search_path%3D{schema}");
        Some((admin, schema, url))
    }

    /// Games stored before migration 2 (the league's) read back with the defaults: started
    /// `now`, no lateness limit, no key, and their NULL keys do not collide. Needs
    /// `CHUHE_TEST_DATABASE_URL`; works in a schema of its own and drops it.
    #[tokio::test]
    async fn games_from_before_migration_2_start_now() {
        let Some((mut admin, schema, url)) = schema_of_its_own("old_games").await else {
            return;
        };
        let games = async {
            let mut c = PgConnection::connect(&url).await?;
            crate::migrate::migrator(&crate::migrate::POSTGRES[..1])
                .await
                .map_err(|e| sqlx::Error::Protocol(e.to_string()))?
                .run(&mut c)
                .await?;
            c.execute(
                "INSERT INTO principals (id, role, name, created_at_ms) VALUES \
                 (1, 'player', 'a', 0), (2, 'player', 'b', 0);
                 INSERT INTO games (id, red_id, black_id, time_control, ruleset, start_fen, \
                 created_at_ms, last_seq) VALUES (7, 1, 2, '90m', 'cxa', 'startpos', 0, 0), \
                 (8, 1, 2, '90m', 'cxa', 'startpos', 0, 0)",
            )
            .await?;
            c.close().await?;
            let s = PgStore::open(&url, &crate::StoreOptions::default())
                .await
                .map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
            let mut games = Vec::new();
            for id in [7, 8] {
                games.push(
                    s.game(GameId(id))
                        .await
                        .map_err(|e| sqlx::Error::Protocol(e.to_string()))?,
                );
            }
            s.close().await;
            Ok::<_, sqlx::Error>(games)
        }
        .await;
        admin
            .execute(format!("DROP SCHEMA {schema} CASCADE").as_str())
            .await
            .unwrap();
        for g in games.unwrap() {
            assert_eq!(
                (g.start_mode.as_str(), g.lateness_limit_ms, g.key),
                ("now", 0, None)
            );
            assert_eq!((g.time_control.as_str(), g.last_seq), ("90m", 0));
        }
    }

    /// A connection to `url` with every migration run.
    async fn migrated(url: &str) -> Result<PgConnection, sqlx::Error> {
        let mut c = PgConnection::connect(url).await?;
        crate::migrate::migrator(crate::migrate::POSTGRES)
            .await
            .map_err(|e| sqlx::Error::Protocol(e.to_string()))?
            .run(&mut c)
            .await?;
        Ok(c)
    }

    /// The log has no foreign key (migration 0005): the one-statement commit itself refuses
    /// events of a game it did not lock, and writes nothing of the batch. Needs
    /// `CHUHE_TEST_DATABASE_URL`; works in a schema of its own and drops it.
    #[tokio::test]
    async fn an_event_of_a_game_the_commit_did_not_lock_writes_nothing() {
        let Some((mut admin, schema, url)) = schema_of_its_own("no_fk").await else {
            return;
        };
        let outcomes = async {
            let mut c = migrated(&url).await?;
            c.execute(
                "INSERT INTO principals (id, role, name, created_at_ms) VALUES \
                 (1, 'player', 'a', 0), (2, 'player', 'b', 0);
                 INSERT INTO games (id, red_id, black_id, time_control, ruleset, start_fen, \
                 created_at_ms) VALUES (1, 1, 2, '90m', 'cxa', 'startpos', 0), \
                 (2, 1, 2, '90m', 'cxa', 'startpos', 0)",
            )
            .await?;
            let mut outcomes = Vec::new();
            // Game 1 locked and advanced, the event of game 2 (a game that exists) and of
            // game 99 (one that does not); then the event of game 1 itself.
            for event_game in [2i64, 99, 1] {
                let none_i: Vec<Option<i64>> = vec![None];
                let none_s: Vec<Option<&str>> = vec![None];
                let payload: Vec<&[u8]> = vec![&[0u8]];
                let row: (bool, i64, i64) = sqlx::query_as(SQL_KNOWN)
                    .bind(vec![1i64])
                    .bind(vec![0i64])
                    .bind(vec![1i64])
                    .bind(&none_s)
                    .bind(&none_s)
                    .bind(&none_i)
                    .bind(vec![event_game])
                    .bind(vec![1i64])
                    .bind(vec!["move"])
                    .bind(payload)
                    .bind(vec![0i64])
                    .bind(&none_i)
                    .bind(&none_s)
                    .bind(&none_i)
                    .fetch_one(&mut c)
                    .await?;
                let stored: (i64,) = sqlx::query_as("SELECT count(*) FROM game_events")
                    .fetch_one(&mut c)
                    .await?;
                outcomes.push((row, stored.0));
            }
            Ok::<_, sqlx::Error>(outcomes)
        }
        .await;
        admin
            .execute(format!("DROP SCHEMA {schema} CASCADE").as_str())
            .await
            .unwrap();
        assert_eq!(
            outcomes.unwrap(),
            [((false, 0, 0), 0), ((false, 0, 0), 0), ((true, 1, 1), 1)]
        );
    }

    /// The plans PostgreSQL caches for the writers' statements that touch games (generic
    /// plans, as after five executions), on a games table it has no statistics for, with
    /// 3,000 live games: the games must be found by id, never by scanning the table or the
    /// partial index of unfinished games (which the planner takes for 0.5 % of the rows
    /// without statistics). Needs `CHUHE_TEST_DATABASE_URL`; works in a schema of its own and
    /// drops it.
    #[tokio::test]
    async fn a_cached_plan_finds_the_games_by_id() {
        let Some((mut admin, schema, url)) = schema_of_its_own("cached_plans").await else {
            return;
        };
        let plans = async {
            let mut c = migrated(&url).await?;
            c.execute(
                "ALTER TABLE games SET (autovacuum_enabled = off);
                 INSERT INTO principals (id, role, name, created_at_ms) VALUES \
                 (1, 'player', 'a', 0), (2, 'player', 'b', 0);
                 INSERT INTO games (red_id, black_id, time_control, ruleset, start_fen, \
                 created_at_ms, last_seq) \
                 SELECT 1, 2, '90m', 'cxa', 'startpos', 0, 5 FROM generate_series(1, 3000);
                 SET plan_cache_mode = force_generic_plan",
            )
            .await?;
            let mut plans = Vec::new();
            for (name, sql, args) in [
                (
                    "one_statement",
                    SQL_KNOWN,
                    "'{7,9}', '{5,5}', '{6,6}', '{NULL,NULL}', '{NULL,NULL}', '{NULL,NULL}', \
                     '{7,9}', '{6,6}', '{move,move}', '{\\\\x00,\\\\x00}', '{0,0}', '{1,2}', \
                     '{NULL,NULL}', '{NULL,NULL}'",
                ),
                (
                    "locked_update",
                    SQL_UPDATE,
                    "'{7,9}', '{6,6}', '{NULL,NULL}', '{NULL,NULL}', '{NULL,NULL}'",
                ),
            ] {
                c.execute(format!("PREPARE {name} AS {sql}").as_str())
                    .await?;
                let rows: Vec<(String,)> =
                    sqlx::query_as(&format!("EXPLAIN EXECUTE {name}({args})"))
                        .fetch_all(&mut c)
                        .await?;
                plans.push(
                    rows.into_iter()
                        .map(|(l,)| l)
                        .collect::<Vec<_>>()
                        .join("\n"),
                );
            }
            Ok::<_, sqlx::Error>(plans)
        }
        .await;
        admin
            .execute(format!("DROP SCHEMA {schema} CASCADE").as_str())
            .await
            .unwrap();
        for plan in plans.unwrap() {
            assert!(!plan.contains("games_unfinished"), "{plan}");
            assert!(!plan.contains("Seq Scan on games"), "{plan}");
            assert!(plan.contains("Index Cond: (id = ANY ($1))"), "{plan}");
        }
    }
}
