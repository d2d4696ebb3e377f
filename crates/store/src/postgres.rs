//! The PostgreSQL backend: a connection pool shared by reads and by `pg_writers` writer tasks;
//! each writer commits a batch in one transaction of three statements whatever its size
//! (lock the games' rows, insert all events from arrays with `UNNEST`, update all games).

use std::collections::HashMap;
use std::time::Duration;

use sqlx::postgres::{PgPool, PgPoolOptions, PgRow};

use crate::StoreOptions;
use crate::batch::{Committer, GameState, Op, Writers, plan};

/// A PostgreSQL-backed [`Store`](crate::Store).
pub struct PgStore {
    pool: PgPool,
    writers: Writers,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://…`), runs the migrations (under PostgreSQL's migration
    /// lock, so several nodes may start at once) and starts the writer tasks. Must be called
    /// inside a tokio runtime.
    pub async fn open(url: &str, options: &StoreOptions) -> Result<PgStore> {
        let writers = options.pg_writers.max(1);
        let pool = PgPoolOptions::new()
            // Every writer may hold a connection while reads go on.
            .max_connections(options.pool_size.max(1) + writers as u32)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await?;
        crate::migrate::migrator(crate::migrate::POSTGRES)
            .await?
            .run(&pool)
            .await?;
        let committers = (0..writers)
            .map(|_| PgCommitter { pool: pool.clone() })
            .collect();
        let writers = Writers::spawn(committers, options.queue_capacity, options.max_batch);
        Ok(PgStore { pool, writers })
    }
}

struct PgCommitter {
    pool: PgPool,
}

impl Committer for PgCommitter {
    async fn commit(&mut self, ops: Vec<Op>) -> Result<Vec<Result<u64>>> {
        let mut ids: Vec<i64> = ops.iter().map(|o| o.game.0).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut tx = self.pool.begin().await?;
        // Row locks (in id order, so concurrent writers cannot deadlock) make the seq check
        // safe even with several writers or nodes.
        let rows: Vec<(i64, i64, Option<i64>)> = sqlx::query_as(
            "SELECT id, last_seq, finished_at_ms FROM games WHERE id = ANY($1) \
             ORDER BY id FOR UPDATE",
        )
        .bind(&ids)
        .fetch_all(&mut *tx)
        .await?;
        let mut states = HashMap::with_capacity(rows.len());
        for (id, last_seq, finished_at) in rows {
            states.insert(
                GameId(id),
                GameState {
                    last_seq: to_u64("last_seq", last_seq)?,
                    finished: finished_at.is_some(),
                },
            );
        }
        let plan = plan(ops, &states);
        if !plan.rows.is_empty() {
            let n = plan.rows.len();
            let mut game_ids = Vec::with_capacity(n);
            let mut seqs = Vec::with_capacity(n);
            let mut kinds = Vec::with_capacity(n);
            let mut payloads = Vec::with_capacity(n);
            let mut ats = Vec::with_capacity(n);
            let mut actors = Vec::with_capacity(n);
            let mut reasons = Vec::with_capacity(n);
            for (game, ev) in plan.rows {
                game_ids.push(game.0);
                seqs.push(to_i64("seq", ev.seq)?);
                kinds.push(ev.kind);
                payloads.push(ev.payload);
                ats.push(ev.at_ms);
                actors.push(ev.actor.map(|a| a.0));
                reasons.push(ev.reason);
            }
            sqlx::query(
                "INSERT INTO game_events (game_id, seq, kind, payload, at_ms, actor_id, reason) \
                 SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::BYTEA[], \
                 $5::BIGINT[], $6::BIGINT[], $7::TEXT[])",
            )
            .bind(game_ids)
            .bind(seqs)
            .bind(kinds)
            .bind(payloads)
            .bind(ats)
            .bind(actors)
            .bind(reasons)
            .execute(&mut *tx)
            .await?;
        }
        if !plan.updates.is_empty() {
            let n = plan.updates.len();
            let mut game_ids = Vec::with_capacity(n);
            let mut last_seqs = Vec::with_capacity(n);
            let mut results = Vec::with_capacity(n);
            let mut reasons = Vec::with_capacity(n);
            let mut finished = Vec::with_capacity(n);
            for u in plan.updates {
                game_ids.push(u.game.0);
                last_seqs.push(to_i64("last_seq", u.last_seq)?);
                let (r, why, at) = match u.finish {
                    Some(f) => (Some(f.result), Some(f.reason), Some(f.at_ms)),
                    None => (None, None, None),
                };
                results.push(r);
                reasons.push(why);
                finished.push(at);
            }
            sqlx::query(
                "UPDATE games AS g SET last_seq = u.last_seq, \
                 result = COALESCE(u.result, g.result), reason = COALESCE(u.reason, g.reason), \
                 finished_at_ms = COALESCE(u.finished_at_ms, g.finished_at_ms) \
                 FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[]) \
                 AS u(id, last_seq, result, reason, finished_at_ms) WHERE g.id = u.id",
            )
            .bind(game_ids)
            .bind(last_seqs)
            .bind(results)
            .bind(reasons)
            .bind(finished)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(plan.outcomes)
    }
}

crate::common::impl_store!(PgStore, PgRow);
