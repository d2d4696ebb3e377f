//! [`Persist`] on top of `chuhe-store`'s [`Store`] (SQLite or PostgreSQL).
//!
//! Fencing (several nodes, issue 23): after [`Persist::claim_game`] /
//! [`Persist::claim_competition`] the adapter remembers the token the store returned and
//! attaches it to every append to that game or competition, so the database refuses them
//! (`PersistError::is_fenced`) once another node has claimed it since. Games and competitions
//! never claimed (one node) carry no token and are not checked.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use chuhe_store::{
    AUTHENTICATE_BATCH, Append, Authenticated, CompetitionId, Finish, GameFilter, GameId, IdMap,
    NewEvent, NewPrincipal, NewToken, PrincipalId, Store, StoreError, TokenHash, TokenId,
    generate_token, hash_token,
};
use tokio::sync::{mpsc, oneshot};

use crate::persist::{
    Account, AppendOp, BoxFut, CommitStats, Competition, CompetitionEvent, EventRow, FinishRow,
    NewCompetition, NewCompetitionEvent, NewGame, Persist, PersistError, Role, StoredGame,
};

/// Adapts any `Store` (usually `chuhe_store::AnyStore`).
pub struct StoreAdapter<S: Store> {
    store: Arc<S>,
    /// The fencing tokens of the games and competitions this node has claimed.
    fences: Mutex<Fences>,
    /// The logins waiting for their token's lookup ([`login_batches`]), once one was asked.
    logins: Mutex<Option<mpsc::Sender<Login>>>,
}

/// A token's hash waiting for its lookup, and where its answer goes.
type Login = (
    TokenHash,
    oneshot::Sender<Result<Option<Authenticated>, PersistError>>,
);

/// The most logins waiting for a lookup; one more is answered `unavailable` at once (only a
/// database that stopped answering lets them pile up this far).
const LOGINS_WAITING: usize = 16 * AUTHENTICATE_BATCH;

/// How long one lookup may take before its logins are answered `unavailable` and the next
/// batch is asked, so a database that stopped answering holds later logins behind it no longer
/// than this. Each login's own caller gives up sooner, at `Config::store_timeout` (at most
/// 60 s), whatever the lookup does.
const LOGIN_LOOKUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Looks up the tokens of logins in batches, as a group commit writes: while one lookup is in
/// flight the logins that arrive wait, and the next lookup takes all of them (up to
/// [`AUTHENTICATE_BATCH`]), so a burst of connections (a round's start, a node's restart) costs
/// the database one statement per batch instead of one per connection. Ends when the adapter
/// is dropped.
async fn login_batches<S: Store>(store: Arc<S>, mut rx: mpsc::Receiver<Login>) {
    let mut batch = Vec::with_capacity(AUTHENTICATE_BATCH);
    while rx.recv_many(&mut batch, AUTHENTICATE_BATCH).await > 0 {
        let hashes = batch.iter().map(|(h, _)| *h).collect();
        let lookup = tokio::time::timeout(LOGIN_LOOKUP_TIMEOUT, store.authenticate_many(hashes));
        let answer = match lookup.await {
            Ok(found) => found.map_err(pe),
            Err(_) => Err(PersistError::unavailable(format!(
                "no answer to a login lookup within {} s",
                LOGIN_LOOKUP_TIMEOUT.as_secs()
            ))),
        };
        match answer {
            Ok(found) => {
                // One answer per hash, in order (`Store::authenticate_many`); a waiter left
                // without one is told the store failed (`authenticate`).
                for ((_, tx), a) in batch.drain(..).zip(found) {
                    let _ = tx.send(Ok(a));
                }
            }
            Err(e) => {
                for (_, tx) in batch.drain(..) {
                    let _ = tx.send(Err(e.clone()));
                }
            }
        }
    }
}

#[derive(Default)]
struct Fences {
    games: IdMap<i64, u64>,
    competitions: IdMap<i64, u64>,
}

impl<S: Store> StoreAdapter<S> {
    pub fn new(store: Arc<S>) -> Self {
        StoreAdapter {
            store,
            fences: Mutex::new(Fences::default()),
            logins: Mutex::new(None),
        }
    }

    /// Queues a login for [`login_batches`], starting the task on first use (and again if the
    /// runtime that ran it has gone, as between tests).
    fn queue_login(&self, login: Login) -> Result<(), PersistError> {
        let mut logins = self.logins.lock().unwrap_or_else(|p| p.into_inner());
        let login = match logins.as_ref() {
            Some(tx) => match tx.try_send(login) {
                Ok(()) => return Ok(()),
                Err(mpsc::error::TrySendError::Full(_)) => {
                    return Err(PersistError::unavailable(format!(
                        "{LOGINS_WAITING} logins are waiting for the store"
                    )));
                }
                Err(mpsc::error::TrySendError::Closed(login)) => login,
            },
            None => login,
        };
        let (tx, rx) = mpsc::channel(LOGINS_WAITING);
        tokio::spawn(login_batches(self.store.clone(), rx));
        let queued = tx.try_send(login).map_err(|_| {
            PersistError::unavailable("the login lookup could not be started".to_string())
        });
        *logins = Some(tx);
        queued
    }
    pub fn store(&self) -> &Arc<S> {
        &self.store
    }

    fn fences(&self) -> MutexGuard<'_, Fences> {
        // The maps stay consistent whatever panicked while holding the lock (single inserts
        // and removes).
        self.fences.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The token this node holds for a game, if it claimed it.
    fn game_fence(&self, game: i64) -> Option<u64> {
        self.fences().games.get(&game).copied()
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

    fn claim_game(&self, game: i64, node: &str) -> BoxFut<'_, Result<u64, PersistError>> {
        let node = node.to_string();
        Box::pin(async move {
            let token = self
                .store
                .claim_game(GameId(game), &node)
                .await
                .map_err(pe)?;
            self.fences().games.insert(game, token);
            Ok(token)
        })
    }

    fn claim_competition(&self, id: i64, node: &str) -> BoxFut<'_, Result<u64, PersistError>> {
        let node = node.to_string();
        Box::pin(async move {
            let token = self
                .store
                .claim_competition(CompetitionId(id), &node)
                .await
                .map_err(pe)?;
            self.fences().competitions.insert(id, token);
            Ok(token)
        })
    }

    fn unclaim(&self, game: Option<i64>, competition: Option<i64>) {
        let mut fences = self.fences();
        if let Some(g) = game {
            fences.games.remove(&g);
        }
        if let Some(c) = competition {
            fences.competitions.remove(&c);
        }
    }

    fn ping(&self) -> BoxFut<'_, Result<(), PersistError>> {
        Box::pin(async move { self.store.ping().await.map_err(pe) })
    }

    fn close(&self) -> BoxFut<'_, ()> {
        Box::pin(self.store.close())
    }

    fn lane_of(&self, game: i64) -> usize {
        self.store.writer_of(GameId(game))
    }

    fn append_batch(&self, ops: Vec<AppendOp>) -> BoxFut<'_, Vec<Result<(), PersistError>>> {
        Box::pin(async move {
            let appends = {
                let fences = self.fences();
                ops.into_iter()
                    .map(|op| Append {
                        game: GameId(op.game),
                        events: new_events(op.events),
                        finish: op.finish.map(finish_of),
                        fence: fences.games.get(&op.game).copied(),
                    })
                    .collect()
            };
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
            if let Some(fence) = self.game_fence(game) {
                // Only `append_many` carries a token.
                let append = Append {
                    game: GameId(game),
                    events,
                    finish: finish.map(finish_of),
                    fence: Some(fence),
                };
                return match self.store.append_many(vec![append]).await.pop() {
                    Some(r) => r.map(|_| ()).map_err(pe),
                    None => Err(pe(StoreError::Closed)),
                };
            }
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
                fence: None,
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
            // The rows only, in one query: a cluster node's sweep lists them twice a second,
            // and `unfinished_games` would read every game's log too.
            let live = self
                .store
                .list_games(GameFilter::Live, u32::MAX)
                .await
                .map_err(pe)?;
            Ok(live.into_iter().map(|g| g.id.0).collect())
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
            let fence = self.fences().competitions.get(&id).copied();
            self.store
                .append_competition_fenced(CompetitionId(id), events, fence)
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
            let (tx, rx) = oneshot::channel();
            self.queue_login((hash, tx))?;
            let a = rx.await.map_err(|_| {
                PersistError::unavailable("the login lookup ended without an answer".to_string())
            })??;
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

    fn accounts(&self) -> BoxFut<'_, Result<Vec<Account>, PersistError>> {
        Box::pin(async move {
            let all = self.store.list_principals(None).await.map_err(pe)?;
            Ok(all.into_iter().map(account).collect())
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use chuhe_store::{AnyStore, NewCompetitionEvent, StoreOptions};

    /// A SQLite store in a directory of its own under the system temp dir (removed on drop).
    struct TempStore {
        dir: std::path::PathBuf,
        store: Arc<AnyStore>,
    }

    impl Drop for TempStore {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    async fn temp_store(what: &str) -> TempStore {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "chuhe-adapter-{what}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("t.db").display());
        let store = Arc::new(
            chuhe_store::open(&url, &StoreOptions::default())
                .await
                .unwrap(),
        );
        TempStore { dir, store }
    }

    async fn game_of(store: &AnyStore) -> i64 {
        let mut ids = Vec::new();
        for name in ["red", "black"] {
            let p = store
                .create_principal(NewPrincipal {
                    role: chuhe_store::Role::Player,
                    name: name.into(),
                    rating: None,
                    created_at_ms: 0,
                })
                .await
                .unwrap();
            ids.push(p.id);
        }
        let g = store
            .create_game(chuhe_store::NewGame {
                start_fen: "startpos".into(),
                ..crate::persist::test_game(ids[0], ids[1])
            })
            .await
            .unwrap();
        g.id.0
    }

    fn row(seq: u64) -> EventRow {
        EventRow {
            seq,
            kind: "move",
            payload: vec![seq as u8],
            at_ms: seq,
            actor: None,
            reason: None,
        }
    }

    fn op(game: i64, seq: u64) -> AppendOp {
        AppendOp {
            game,
            events: vec![row(seq)],
            finish: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_logins_are_looked_up_together_and_each_gets_its_own_answer() {
        let t = temp_store("logins").await;
        let adapter = Arc::new(StoreAdapter::new(Arc::clone(&t.store)));
        let mut tokens = Vec::new();
        for i in 0..5 {
            let a = adapter
                .create_account(&format!("p{i}"), Role::Player)
                .await
                .unwrap();
            let (token, id) = adapter.issue_token(a.id, None).await.unwrap();
            tokens.push((token, id, a.id));
        }
        assert!(adapter.revoke_token(tokens[4].1).await.unwrap());
        // More logins at once than one lookup takes: valid tokens of different accounts, a
        // revoked one and unknown ones, each answered as if it had been asked alone.
        let n = 2 * AUTHENTICATE_BATCH + 7;
        let mut logins = tokio::task::JoinSet::new();
        for i in 0..n {
            let adapter = Arc::clone(&adapter);
            let (token, want) = match i % 7 {
                k @ 0..=3 => (tokens[k].0.clone(), Some(tokens[k].2)),
                4 => (tokens[4].0.clone(), None),
                _ => (format!("chuhe_unknown-{i}"), None),
            };
            logins.spawn(async move {
                let got = adapter.authenticate(&token).await.unwrap();
                (i, got.map(|a| a.id), want)
            });
        }
        let mut answered = 0;
        while let Some(r) = logins.join_next().await {
            let (i, got, want) = r.unwrap();
            assert_eq!(got, want, "login {i}");
            answered += 1;
        }
        assert_eq!(answered, n);
        t.store.close().await;
    }

    #[tokio::test]
    async fn a_claimed_game_carries_its_token_until_unclaimed() {
        let t = temp_store("game").await;
        let adapter = StoreAdapter::new(Arc::clone(&t.store));
        let g = game_of(&t.store).await;
        assert_eq!(adapter.claim_game(g, "node-a").await.unwrap(), 1);
        adapter.append(g, vec![row(1)], None).await.unwrap();
        assert!(adapter.append_batch(vec![op(g, 2)]).await[0].is_ok());
        // Another node claims the game: every kind of append of this one is fenced now.
        assert_eq!(t.store.claim_game(GameId(g), "node-b").await.unwrap(), 2);
        let e = adapter.append(g, vec![row(3)], None).await.unwrap_err();
        assert!(e.is_fenced(), "{e:?}");
        let finish = FinishRow {
            result: "1-0".into(),
            reason: "resign".into(),
            at_ms: 9,
        };
        let e = adapter
            .append(g, vec![row(3)], Some(finish.clone()))
            .await
            .unwrap_err();
        assert!(e.is_fenced(), "{e:?}");
        let answers = adapter.append_batch(vec![op(g, 3)]).await;
        assert!(answers[0].as_ref().is_err_and(|e| e.is_fenced()));
        assert_eq!(adapter.events(g).await.unwrap().len(), 2, "nothing stored");
        // Claimed again: the new token is attached.
        assert_eq!(adapter.claim_game(g, "node-a").await.unwrap(), 3);
        adapter.append(g, vec![row(3)], None).await.unwrap();
        // Given up: appends carry no token, and the store checks none.
        adapter.unclaim(Some(g), None);
        t.store.claim_game(GameId(g), "node-b").await.unwrap();
        adapter.append(g, vec![row(4)], Some(finish)).await.unwrap();
        assert_eq!(adapter.events(g).await.unwrap().len(), 4);
        t.store.close().await;
    }

    #[tokio::test]
    async fn a_claimed_competition_carries_its_token_until_unclaimed() {
        let t = temp_store("competition").await;
        let adapter = StoreAdapter::new(Arc::clone(&t.store));
        let c = adapter
            .create_competition(NewCompetition {
                name: "2026".into(),
                created_at_ms: 0,
                created_by: None,
            })
            .await
            .unwrap()
            .id
            .0;
        let entry = |seq| vec![NewCompetitionEvent::new(seq, "result", "{}", 0)];
        assert_eq!(adapter.claim_competition(c, "node-a").await.unwrap(), 1);
        assert_eq!(adapter.append_competition(c, entry(1)).await.unwrap(), 1);
        t.store
            .claim_competition(CompetitionId(c), "node-b")
            .await
            .unwrap();
        let e = adapter.append_competition(c, entry(2)).await.unwrap_err();
        assert!(e.is_fenced(), "{e:?}");
        assert_eq!(adapter.competition_events(c, 0).await.unwrap().len(), 1);
        adapter.unclaim(None, Some(c));
        assert_eq!(adapter.append_competition(c, entry(2)).await.unwrap(), 2);
        t.store.close().await;
    }

    #[tokio::test]
    async fn unclaimed_games_are_not_checked() {
        let t = temp_store("unclaimed").await;
        let adapter = StoreAdapter::new(Arc::clone(&t.store));
        let g = game_of(&t.store).await;
        t.store.claim_game(GameId(g), "elsewhere").await.unwrap();
        adapter.append(g, vec![row(1)], None).await.unwrap();
        assert!(adapter.append_batch(vec![op(g, 2)]).await[0].is_ok());
        t.store.close().await;
    }
}
