//! [`Persist`] on top of `chuhe-store`'s [`Store`] (SQLite or PostgreSQL).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use chuhe_store::{
    Append, CompetitionId, Finish, GameId, NewEvent, NewPrincipal, NewToken, PrincipalId, Store,
    StoreError, TokenId, generate_token, hash_token,
};

use crate::persist::{
    Account, AppendOp, BoxFut, CommitStats, Competition, CompetitionEvent, EventRow, FinishRow,
    NewCompetition, NewCompetitionEvent, NewGame, Persist, PersistError, Role, StoredGame,
};

/// Adapts any `Store` (usually `chuhe_store::AnyStore`).
pub struct StoreAdapter<S: Store> {
    store: Arc<S>,
}

impl<S: Store> StoreAdapter<S> {
    pub fn new(store: Arc<S>) -> Self {
        StoreAdapter { store }
    }
    pub fn store(&self) -> &Arc<S> {
        &self.store
    }
}

fn pe(e: StoreError) -> PersistError {
    e.into()
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn role_to(r: Role) -> chuhe_store::Role {
    match r {
        Role::Player => chuhe_store::Role::Player,
        Role::Arbiter => chuhe_store::Role::Arbiter,
        Role::Organizer => chuhe_store::Role::Organiser,
    }
}

fn role_from(r: chuhe_store::Role) -> Role {
    match r {
        chuhe_store::Role::Player => Role::Player,
        chuhe_store::Role::Arbiter => Role::Arbiter,
        chuhe_store::Role::Organiser => Role::Organizer,
    }
}

fn account(p: chuhe_store::Principal) -> Account {
    Account {
        id: p.id.0,
        name: p.name,
        role: role_from(p.role),
    }
}

fn new_events(events: Vec<EventRow>) -> Vec<NewEvent> {
    events
        .into_iter()
        .map(|e| {
            let mut n = NewEvent::new(e.seq, e.kind, e.payload, e.at_ms as i64);
            if let Some(a) = e.actor {
                n = n.by(PrincipalId(a), e.reason);
            }
            n
        })
        .collect()
}

fn finish_of(f: FinishRow) -> Finish {
    Finish {
        result: f.result,
        reason: f.reason,
        at_ms: f.at_ms as i64,
    }
}

impl<S: Store> Persist for StoreAdapter<S> {
    fn commit_stats(&self) -> Option<CommitStats> {
        Some(self.store.stats())
    }

    fn ping(&self) -> BoxFut<'_, Result<(), PersistError>> {
        Box::pin(async move { self.store.ping().await.map_err(pe) })
    }

    fn lane_of(&self, game: i64) -> usize {
        self.store.writer_of(GameId(game))
    }

    fn append_batch(&self, ops: Vec<AppendOp>) -> BoxFut<'_, Vec<Result<(), PersistError>>> {
        Box::pin(async move {
            let appends = ops
                .into_iter()
                .map(|op| Append {
                    game: GameId(op.game),
                    events: new_events(op.events),
                    finish: op.finish.map(finish_of),
                })
                .collect();
            self.store
                .append_many(appends)
                .await
                .into_iter()
                .map(|r| r.map(|_| ()).map_err(pe))
                .collect()
        })
    }

    fn append(
        &self,
        game: i64,
        events: Vec<EventRow>,
        finish: Option<FinishRow>,
    ) -> BoxFut<'_, Result<(), PersistError>> {
        Box::pin(async move {
            let events = new_events(events);
            match finish {
                Some(f) => self
                    .store
                    .finish(GameId(game), events, finish_of(f))
                    .await
                    .map(|_| ())
                    .map_err(pe),
                None => self
                    .store
                    .append(GameId(game), events)
                    .await
                    .map(|_| ())
                    .map_err(pe),
            }
        })
    }

    fn resolve(&self, op: AppendOp) -> BoxFut<'_, Result<bool, PersistError>> {
        Box::pin(async move {
            let append = Append {
                game: GameId(op.game),
                events: new_events(op.events),
                finish: op.finish.map(finish_of),
            };
            match self.store.resolve_append(&append).await.map_err(pe)? {
                chuhe_store::Resolution::Committed { .. } => Ok(true),
                chuhe_store::Resolution::NotCommitted { .. } => Ok(false),
            }
        })
    }

    fn events(&self, game: i64) -> BoxFut<'_, Result<crate::persist::EventLog, PersistError>> {
        Box::pin(async move {
            let rec = self.store.load_game(GameId(game)).await.map_err(pe)?;
            Ok(rec.events.into_iter().map(|e| (e.seq, e.payload)).collect())
        })
    }

    fn unfinished_games(&self) -> BoxFut<'_, Result<Vec<i64>, PersistError>> {
        Box::pin(async move {
            let recs = self.store.unfinished_games().await.map_err(pe)?;
            Ok(recs.into_iter().map(|r| r.game.id.0).collect())
        })
    }

    fn game(&self, game: i64) -> BoxFut<'_, Result<Option<StoredGame>, PersistError>> {
        Box::pin(async move {
            match self.store.game(GameId(game)).await {
                Ok(g) => Ok(Some(g)),
                Err(StoreError::GameNotFound(_)) => Ok(None),
                Err(e) => Err(pe(e)),
            }
        })
    }

    fn create_game(&self, game: NewGame) -> BoxFut<'_, Result<StoredGame, PersistError>> {
        Box::pin(async move { self.store.create_game(game).await.map_err(pe) })
    }

    fn create_games(
        &self,
        games: Vec<NewGame>,
    ) -> BoxFut<'_, Result<Vec<StoredGame>, PersistError>> {
        Box::pin(async move { self.store.create_games(games).await.map_err(pe) })
    }

    fn game_by_key(&self, key: &str) -> BoxFut<'_, Result<Option<StoredGame>, PersistError>> {
        let key = key.to_string();
        Box::pin(async move { self.store.game_by_key(&key).await.map_err(pe) })
    }

    fn account_named(
        &self,
        name: &str,
        role: Role,
    ) -> BoxFut<'_, Result<Option<Account>, PersistError>> {
        let name = name.to_string();
        Box::pin(async move {
            let all = self
                .store
                .list_principals(Some(role_to(role)))
                .await
                .map_err(pe)?;
            Ok(all.into_iter().find(|p| p.name == name).map(account))
        })
    }

    fn create_competition(
        &self,
        new: NewCompetition,
    ) -> BoxFut<'_, Result<Competition, PersistError>> {
        Box::pin(async move { self.store.create_competition(new).await.map_err(pe) })
    }

    fn competitions(&self) -> BoxFut<'_, Result<Vec<Competition>, PersistError>> {
        Box::pin(async move { self.store.competitions().await.map_err(pe) })
    }

    fn append_competition(
        &self,
        id: i64,
        events: Vec<NewCompetitionEvent>,
    ) -> BoxFut<'_, Result<u64, PersistError>> {
        Box::pin(async move {
            self.store
                .append_competition(CompetitionId(id), events)
                .await
                .map_err(pe)
        })
    }

    fn competition_events(
        &self,
        id: i64,
        after_seq: u64,
    ) -> BoxFut<'_, Result<Vec<CompetitionEvent>, PersistError>> {
        Box::pin(async move {
            self.store
                .competition_events(CompetitionId(id), after_seq)
                .await
                .map_err(pe)
        })
    }

    fn authenticate(&self, token: &str) -> BoxFut<'_, Result<Option<Account>, PersistError>> {
        let hash = hash_token(token);
        Box::pin(async move {
            let a = self.store.authenticate(hash).await.map_err(pe)?;
            Ok(a.map(|a| {
                let mut acc = account(a.principal);
                // The token's role is what the connection may do.
                acc.role = role_from(a.token.role);
                acc
            }))
        })
    }

    fn account(&self, id: i64) -> BoxFut<'_, Result<Option<Account>, PersistError>> {
        Box::pin(async move {
            match self.store.principal(PrincipalId(id)).await {
                Ok(p) => Ok(Some(account(p))),
                Err(StoreError::PrincipalNotFound(_)) => Ok(None),
                Err(e) => Err(pe(e)),
            }
        })
    }

    fn create_account_with_id(
        &self,
        id: &str,
        name: &str,
        role: Role,
    ) -> BoxFut<'_, Result<Account, PersistError>> {
        let (id, name) = (id.to_string(), name.to_string());
        Box::pin(async move {
            let new = NewPrincipal {
                role: role_to(role),
                name,
                rating: None,
                created_at_ms: now_ms(),
            };
            let p = self
                .store
                .create_principal_with_handle(new, &id)
                .await
                .map_err(pe)?;
            Ok(account(p))
        })
    }

    fn account_by_given_id(&self, id: &str) -> BoxFut<'_, Result<Option<Account>, PersistError>> {
        let id = id.to_string();
        Box::pin(async move {
            let p = self.store.principal_by_handle(&id).await.map_err(pe)?;
            Ok(p.map(account))
        })
    }

    fn create_account(&self, name: &str, role: Role) -> BoxFut<'_, Result<Account, PersistError>> {
        let name = name.to_string();
        Box::pin(async move {
            let p = self
                .store
                .create_principal(NewPrincipal {
                    role: role_to(role),
                    name,
                    rating: None,
                    created_at_ms: now_ms(),
                })
                .await
                .map_err(pe)?;
            Ok(account(p))
        })
    }

    fn issue_token(
        &self,
        account: i64,
        label: Option<String>,
    ) -> BoxFut<'_, Result<(String, i64), PersistError>> {
        Box::pin(async move {
            let p = self
                .store
                .principal(PrincipalId(account))
                .await
                .map_err(pe)?;
            let g = generate_token().map_err(pe)?;
            let info = self
                .store
                .insert_token(NewToken {
                    hash: g.hash,
                    principal: p.id,
                    role: p.role,
                    label,
                    created_at_ms: now_ms(),
                })
                .await
                .map_err(pe)?;
            Ok((g.token, info.id.0))
        })
    }

    fn revoke_token(&self, token_id: i64) -> BoxFut<'_, Result<bool, PersistError>> {
        Box::pin(async move {
            match self.store.revoke_token(TokenId(token_id), now_ms()).await {
                Ok(_) => Ok(true),
                Err(StoreError::TokenNotFound(_)) => Ok(false),
                Err(e) => Err(pe(e)),
            }
        })
    }
}
