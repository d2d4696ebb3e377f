//! The part of the [`Store`](crate::Store) implementation that is the same SQL on both
//! backends (`$1`-style parameters work in SQLite and PostgreSQL alike). It is a macro rather
//! than generic code because sqlx's generic bounds across databases cost more than they save;
//! each backend expands it once, so every query is still plain `sqlx::query` with binds.

pub(crate) const PRINCIPAL_COLS: &str = "id, role, name, rating, created_at_ms";
pub(crate) const TOKEN_COLS: &str = "id, principal_id, role, label, created_at_ms, revoked_at_ms";
/// The columns of a game row, with `last_seq` given as an SQL expression.
macro_rules! game_cols {
    ($last_seq:literal) => {
        concat!(
            "id, red_id, black_id, time_control, ruleset, start_fen, delay_moves, delay_ms, \
             event, round, board, scheduled_start_ms, created_at_ms, ",
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

/// Whether a database error is a unique-constraint violation.
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

/// Groups events (sorted by game, then seq) under their games, keeping only the events each game
/// row accounts for (`seq <= last_seq`: the events read after the row may include newer ones),
/// and checks the log is gap-free.
pub(crate) fn assemble(
    games: Vec<crate::Game>,
    events: Vec<crate::StoredEvent>,
) -> crate::Result<Vec<crate::GameRecord>> {
    let mut by_game: std::collections::HashMap<crate::GameId, Vec<crate::StoredEvent>> =
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
                    return Err(crate::StoreError::Corrupt(format!(
                        "game {}: event log has a gap before seq {}",
                        game.id, e.seq
                    )));
                }
            }
            if events.len() as u64 != game.last_seq {
                return Err(crate::StoreError::Corrupt(format!(
                    "game {}: last_seq is {} but {} events are stored",
                    game.id,
                    game.last_seq,
                    events.len()
                )));
            }
            Ok(crate::GameRecord { game, events })
        })
        .collect()
}

macro_rules! impl_store {
    ($backend:ty, $row:ty, $game_cols:path, $events:literal) => {
        use sqlx::Row as _;

        use crate::common::{
            AUDIT_COLS, EVENT_COLS, PRINCIPAL_COLS, TOKEN_COLS, is_unique_violation,
        };
        use $game_cols as GAME_COLS;
        use crate::types::{check_name, to_i64, to_u64};
        use crate::{
            AuditEntry, AuditId, Authenticated, BroadcastDelay, Finish, Game, GameFilter, GameId,
            GameRecord, Millis, NewAudit, NewEvent, NewGame, NewPrincipal, NewToken, Principal,
            PrincipalId, Result, Role, StoreError, StoredEvent, TokenHash, TokenId, TokenInfo,
        };

        fn role_of(s: &str) -> Result<Role> {
            Role::parse(s).ok_or_else(|| StoreError::Corrupt(format!("unknown role {s:?}")))
        }

        fn principal_from(row: &$row) -> Result<Principal> {
            Ok(Principal {
                id: PrincipalId(row.try_get("id")?),
                role: role_of(row.try_get("role")?)?,
                name: row.try_get("name")?,
                rating: row.try_get("rating")?,
                created_at_ms: row.try_get("created_at_ms")?,
            })
        }

        fn token_from(row: &$row) -> Result<TokenInfo> {
            Ok(TokenInfo {
                id: TokenId(row.try_get("id")?),
                principal: PrincipalId(row.try_get("principal_id")?),
                role: role_of(row.try_get("role")?)?,
                label: row.try_get("label")?,
                created_at_ms: row.try_get("created_at_ms")?,
                revoked_at_ms: row.try_get("revoked_at_ms")?,
            })
        }

        fn game_from(row: &$row) -> Result<Game> {
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
                    moves: u32::try_from(delay_moves).map_err(|_| {
                        StoreError::Corrupt(format!("delay_moves {delay_moves}"))
                    })?,
                    millis: to_u64("delay_ms", row.try_get("delay_ms")?)?,
                },
                event: row.try_get("event")?,
                round: row.try_get("round")?,
                board,
                scheduled_start_ms: row.try_get("scheduled_start_ms")?,
                created_at_ms: row.try_get("created_at_ms")?,
                last_seq: to_u64("last_seq", row.try_get("last_seq")?)?,
                finish,
            })
        }

        fn event_from(row: &$row) -> Result<StoredEvent> {
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

        fn audit_from(row: &$row) -> Result<AuditEntry> {
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

        fn check_text(what: &str, s: &str, max: usize) -> Result<()> {
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

        impl $backend {
            async fn fetch_principal(&self, id: PrincipalId) -> Result<Principal> {
                let sql = format!("SELECT {PRINCIPAL_COLS} FROM principals WHERE id = $1");
                let row = sqlx::query(&sql)
                    .bind(id.0)
                    .fetch_optional(&self.pool)
                    .await?
                    .ok_or(StoreError::PrincipalNotFound(id))?;
                principal_from(&row)
            }

            async fn fetch_game(&self, id: GameId) -> Result<Game> {
                let sql = format!("SELECT {GAME_COLS} FROM games WHERE id = $1");
                let row = sqlx::query(&sql)
                    .bind(id.0)
                    .fetch_optional(&self.pool)
                    .await?
                    .ok_or(StoreError::GameNotFound(id))?;
                game_from(&row)
            }

            async fn fetch_events(
                &self,
                game: GameId,
                after_seq: u64,
                limit: u32,
            ) -> Result<Vec<StoredEvent>> {
                let sql = format!(
                    "SELECT {EVENT_COLS} FROM {} WHERE game_id = $1 AND seq > $2 \
                     ORDER BY seq LIMIT $3",
                    $events
                );
                let rows = sqlx::query(&sql)
                    .bind(game.0)
                    .bind(to_i64("after_seq", after_seq)?)
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(event_from).collect()
            }
        }

        impl crate::Store for $backend {
            async fn create_principal(&self, new: NewPrincipal) -> Result<Principal> {
                check_name(&new.name)?;
                let sql = format!(
                    "INSERT INTO principals (role, name, rating, created_at_ms) \
                     VALUES ($1, $2, $3, $4) RETURNING {PRINCIPAL_COLS}"
                );
                let row = sqlx::query(&sql)
                    .bind(new.role.as_str())
                    .bind(&new.name)
                    .bind(new.rating)
                    .bind(new.created_at_ms)
                    .fetch_one(&self.pool)
                    .await
                    .map_err(|e| {
                        if is_unique_violation(&e) {
                            StoreError::NameTaken {
                                role: new.role,
                                name: new.name.clone(),
                            }
                        } else {
                            e.into()
                        }
                    })?;
                principal_from(&row)
            }

            async fn principal(&self, id: PrincipalId) -> Result<Principal> {
                self.fetch_principal(id).await
            }

            async fn list_principals(&self, role: Option<Role>) -> Result<Vec<Principal>> {
                let sql = format!(
                    "SELECT {PRINCIPAL_COLS} FROM principals \
                     WHERE $1 IS NULL OR role = $1 ORDER BY id"
                );
                let rows = sqlx::query(&sql)
                    .bind(role.map(Role::as_str))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(principal_from).collect()
            }

            async fn set_rating(&self, id: PrincipalId, rating: Option<i64>) -> Result<()> {
                let done = sqlx::query("UPDATE principals SET rating = $2 WHERE id = $1")
                    .bind(id.0)
                    .bind(rating)
                    .execute(&self.pool)
                    .await?;
                if done.rows_affected() == 0 {
                    return Err(StoreError::PrincipalNotFound(id));
                }
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
                    .bind(&new.label)
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
                token_from(&row)
            }

            async fn authenticate(&self, hash: TokenHash) -> Result<Option<Authenticated>> {
                let sql = format!(
                    "SELECT {TOKEN_COLS} FROM tokens WHERE hash = $1 AND revoked_at_ms IS NULL"
                );
                let Some(row) = sqlx::query(&sql)
                    .bind(&hash.0[..])
                    .fetch_optional(&self.pool)
                    .await?
                else {
                    return Ok(None);
                };
                let token = token_from(&row)?;
                let principal = self.fetch_principal(token.principal).await?;
                Ok(Some(Authenticated { principal, token }))
            }

            async fn tokens_of(&self, principal: PrincipalId) -> Result<Vec<TokenInfo>> {
                self.fetch_principal(principal).await?;
                let sql =
                    format!("SELECT {TOKEN_COLS} FROM tokens WHERE principal_id = $1 ORDER BY id");
                let rows = sqlx::query(&sql)
                    .bind(principal.0)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(token_from).collect()
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
                token_from(&row)
            }

            async fn create_game(&self, new: NewGame) -> Result<Game> {
                if new.red == new.black {
                    return Err(StoreError::Invalid(
                        "red and black must be different players".into(),
                    ));
                }
                check_text("time control", &new.time_control, 200)?;
                check_text("ruleset", &new.ruleset, 100)?;
                check_text("start FEN", &new.start_fen, 200)?;
                for side in [new.red, new.black] {
                    // Principals are never deleted and never change role, so checking before
                    // the insert is race-free.
                    let p = self.fetch_principal(side).await?;
                    if p.role != Role::Player {
                        return Err(StoreError::WrongRole {
                            principal: side,
                            expected: Role::Player,
                            actual: p.role,
                        });
                    }
                }
                let sql = format!(
                    "INSERT INTO games (red_id, black_id, time_control, ruleset, start_fen, \
                     delay_moves, delay_ms, event, round, board, scheduled_start_ms, \
                     created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
                     RETURNING {GAME_COLS}"
                );
                let row = sqlx::query(&sql)
                    .bind(new.red.0)
                    .bind(new.black.0)
                    .bind(&new.time_control)
                    .bind(&new.ruleset)
                    .bind(&new.start_fen)
                    .bind(i64::from(new.broadcast_delay.moves))
                    .bind(to_i64("broadcast delay", new.broadcast_delay.millis)?)
                    .bind(&new.event)
                    .bind(&new.round)
                    .bind(new.board.map(i64::from))
                    .bind(new.scheduled_start_ms)
                    .bind(new.created_at_ms)
                    .fetch_one(&self.pool)
                    .await?;
                game_from(&row)
            }

            async fn game(&self, id: GameId) -> Result<Game> {
                self.fetch_game(id).await
            }

            async fn list_games(&self, filter: GameFilter, limit: u32) -> Result<Vec<Game>> {
                let sql = match filter {
                    GameFilter::Live => format!(
                        "SELECT {GAME_COLS} FROM games WHERE finished_at_ms IS NULL \
                         ORDER BY id LIMIT $1"
                    ),
                    GameFilter::Finished => format!(
                        "SELECT {GAME_COLS} FROM games WHERE finished_at_ms IS NOT NULL \
                         ORDER BY finished_at_ms DESC, id DESC LIMIT $1"
                    ),
                };
                let rows = sqlx::query(&sql)
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(game_from).collect()
            }

            async fn append(&self, game: GameId, events: Vec<NewEvent>) -> Result<u64> {
                self.writers
                    .submit(crate::batch::Op {
                        game,
                        events,
                        finish: None,
                    })
                    .await
            }

            async fn finish(
                &self,
                game: GameId,
                events: Vec<NewEvent>,
                finish: Finish,
            ) -> Result<u64> {
                self.writers
                    .submit(crate::batch::Op {
                        game,
                        events,
                        finish: Some(finish),
                    })
                    .await
            }

            fn writer_of(&self, game: GameId) -> usize {
                self.writers.writer_of(game)
            }

            async fn append_many(&self, appends: Vec<crate::Append>) -> Vec<Result<u64>> {
                let ops = appends
                    .into_iter()
                    .map(|a| crate::batch::Op {
                        game: a.game,
                        events: a.events,
                        finish: a.finish,
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
                let mut records = crate::common::assemble(vec![row], events)?;
                records.pop().ok_or(StoreError::GameNotFound(game))
            }

            async fn unfinished_games(&self) -> Result<Vec<GameRecord>> {
                let sql = format!(
                    "SELECT {GAME_COLS} FROM games WHERE finished_at_ms IS NULL ORDER BY id"
                );
                let games = sqlx::query(&sql)
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(game_from)
                    .collect::<Result<Vec<_>>>()?;
                // One query per game keeps the read simple and bounded; recovery runs once at
                // start. A game finished meanwhile still comes back whole (its row is older).
                let mut events = Vec::new();
                for g in &games {
                    let limit = u32::try_from(g.last_seq).unwrap_or(u32::MAX);
                    events.extend(self.fetch_events(g.id, 0, limit).await?);
                }
                crate::common::assemble(games, events)
            }

            async fn record_audit(&self, new: NewAudit) -> Result<AuditEntry> {
                check_text("audit action", &new.action, 64)?;
                let sql = format!(
                    "INSERT INTO audit_log (at_ms, actor_id, action, subject, reason) \
                     VALUES ($1, $2, $3, $4, $5) RETURNING {AUDIT_COLS}"
                );
                let row = sqlx::query(&sql)
                    .bind(new.at_ms)
                    .bind(new.actor.map(|a| a.0))
                    .bind(&new.action)
                    .bind(&new.subject)
                    .bind(&new.reason)
                    .fetch_one(&self.pool)
                    .await?;
                audit_from(&row)
            }

            async fn audit_log(&self, limit: u32) -> Result<Vec<AuditEntry>> {
                let sql =
                    format!("SELECT {AUDIT_COLS} FROM audit_log ORDER BY id DESC LIMIT $1");
                let rows = sqlx::query(&sql)
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(audit_from).collect()
            }

            async fn close(&self) {
                self.writers.shutdown().await;
                self.pool.close().await;
            }

            fn stats(&self) -> crate::StoreStats {
                self.writers.stats()
            }
        }
    };
}

pub(crate) use impl_store;
