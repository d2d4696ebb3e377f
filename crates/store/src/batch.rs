//! Group commit: appends from many games are queued to writer tasks, which commit whatever has
//! queued up in one transaction and then answer every caller. The validation of a batch
//! ([`plan`]) is pure so it can be tested without a database.

use crate::IdMap as HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::error::{Result, StoreError};
use crate::types::{Finish, GameId, NewEvent, check_kind, check_no_nul, check_opt_no_nul};

/// One append (or finish) waiting in a writer's queue.
pub(crate) struct Op {
    pub game: GameId,
    pub events: Vec<NewEvent>,
    pub finish: Option<Finish>,
    /// The fencing token the append carries (checked against the game's), or None
    /// (unchecked).
    pub fence: Option<u64>,
}

pub(crate) enum Msg {
    /// Appends submitted together (one call to `append`, or one `append_many` for one
    /// writer), answered together, in order.
    Ops(Vec<Op>, oneshot::Sender<Vec<Result<u64>>>),
    /// Commit everything queued before this message, then stop.
    Shutdown(oneshot::Sender<()>),
}

/// The state of a game as the batch sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GameState {
    pub last_seq: u64,
    pub finished: bool,
    /// The game's fencing token as read in the batch's transaction, or None when it was not
    /// read (a writer's memory; the statement that commits then checks the tokens itself).
    pub fence: Option<u64>,
}

/// The new state of one game after a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GameUpdate {
    pub game: GameId,
    pub last_seq: u64,
    pub finish: Option<Finish>,
}

/// What a batch writes, and what each op is answered.
pub(crate) struct Plan {
    /// Per op, in order: the game's last seq after it, or why it was refused.
    pub outcomes: Vec<Result<u64>>,
    /// Events to insert, in order.
    pub rows: Vec<(GameId, NewEvent)>,
    /// One entry per game that changed.
    pub updates: Vec<GameUpdate>,
}

fn check_op(op: &Op, state: Option<GameState>) -> Result<GameState> {
    let Some(state) = state else {
        return Err(StoreError::GameNotFound(op.game));
    };
    // A stale owner is told so first, whatever else is wrong with its append.
    if let (Some(mine), Some(current)) = (op.fence, state.fence)
        && mine != current
    {
        return Err(StoreError::Fenced {
            what: format!("game {}", op.game),
            token: mine,
        });
    }
    if op.events.is_empty() && op.finish.is_none() {
        return Err(StoreError::Invalid("append of no events".into()));
    }
    if state.finished {
        return Err(StoreError::GameFinished(op.game));
    }
    for (i, ev) in op.events.iter().enumerate() {
        let expected = state.last_seq + 1 + i as u64;
        if ev.seq != expected {
            return Err(StoreError::SeqMismatch {
                game: op.game,
                expected,
                got: ev.seq,
            });
        }
        if ev.seq > i64::MAX as u64 {
            return Err(StoreError::Invalid(format!("seq {} is too large", ev.seq)));
        }
        // One NUL would fail the whole batch on PostgreSQL: refuse it here, on both backends.
        check_kind(&ev.kind)?;
        check_opt_no_nul("event reason", ev.reason.as_deref())?;
    }
    if let Some(f) = &op.finish {
        if f.result.trim().is_empty() || f.reason.trim().is_empty() {
            return Err(StoreError::Invalid(
                "a finished game needs a result and a reason".into(),
            ));
        }
        check_no_nul("result", &f.result)?;
        check_no_nul("reason", &f.reason)?;
    }
    Ok(GameState {
        last_seq: state.last_seq + op.events.len() as u64,
        finished: op.finish.is_some(),
        fence: state.fence,
    })
}

/// Validates a batch against the games' stored states, op by op in queue order (an op sees the
/// effect of the ops accepted before it). A refused op changes nothing.
pub(crate) fn plan(ops: Vec<Op>, states: &HashMap<GameId, GameState>) -> Plan {
    let mut current: HashMap<GameId, GameState> = HashMap::default();
    let mut finishes: HashMap<GameId, Finish> = HashMap::default();
    let mut order: Vec<GameId> = Vec::new();
    let mut outcomes = Vec::with_capacity(ops.len());
    let mut rows = Vec::new();
    for op in ops {
        let state = current
            .get(&op.game)
            .copied()
            .or_else(|| states.get(&op.game).copied());
        match check_op(&op, state) {
            Ok(next) => {
                if current.insert(op.game, next).is_none() {
                    order.push(op.game);
                }
                outcomes.push(Ok(next.last_seq));
                if let Some(f) = op.finish {
                    finishes.insert(op.game, f);
                }
                rows.extend(op.events.into_iter().map(|e| (op.game, e)));
            }
            Err(e) => outcomes.push(Err(e)),
        }
    }
    let updates = order
        .into_iter()
        .filter_map(|game| {
            current.get(&game).map(|s| GameUpdate {
                game,
                last_seq: s.last_seq,
                finish: finishes.remove(&game),
            })
        })
        .collect();
    Plan {
        outcomes,
        rows,
        updates,
    }
}

/// Updates a writer's memory of game states after a commit: a finished game is forgotten
/// (nothing may be appended to it), any other takes its new last seq.
pub(crate) fn remember<'a>(
    known: &mut HashMap<GameId, GameState>,
    updates: impl IntoIterator<Item = &'a GameUpdate>,
) {
    for u in updates {
        if u.finish.is_some() {
            known.remove(&u.game);
        } else {
            known.insert(
                u.game,
                GameState {
                    last_seq: u.last_seq,
                    finished: false,
                    fence: None,
                },
            );
        }
    }
}

/// A batch whose every op is accepted against the states a writer already knows: the outcome
/// (last seq after it) of each op, and per game its last seq before the batch and its update.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct KnownPlan {
    pub outcomes: Vec<u64>,
    pub games: Vec<(u64, GameUpdate)>,
    /// Per game (as `games`), the fencing token its appends carry, if any: the statement
    /// must find it stored, or write nothing.
    pub fences: Vec<Option<u64>>,
}

/// The plan of a batch when all its games are in `known` and no op would be refused, without
/// consuming the ops; None otherwise (the batch then needs the stored states, see [`plan`]).
/// A writer uses it to commit in one statement that applies only if every game's stored last
/// seq is still the one in `known` (and its fencing token the one the appends carry: `known`
/// holds no tokens, so none is checked here; two different tokens for one game give None).
pub(crate) fn plan_known(ops: &[Op], known: &HashMap<GameId, GameState>) -> Option<KnownPlan> {
    let mut current: HashMap<GameId, (u64, GameState, Option<Finish>)> = HashMap::default();
    let mut fences: HashMap<GameId, u64> = HashMap::default();
    let mut order = Vec::new();
    let mut outcomes = Vec::with_capacity(ops.len());
    for op in ops {
        let state = match current.get(&op.game) {
            Some((_, s, _)) => *s,
            None => *known.get(&op.game)?,
        };
        let next = check_op(
            op,
            Some(GameState {
                fence: None,
                ..state
            }),
        )
        .ok()?;
        if let Some(token) = op.fence
            && *fences.entry(op.game).or_insert(token) != token
        {
            return None;
        }
        outcomes.push(next.last_seq);
        match current.get_mut(&op.game) {
            Some(entry) => {
                entry.1 = next;
                if op.finish.is_some() {
                    entry.2.clone_from(&op.finish);
                }
            }
            None => {
                order.push(op.game);
                current.insert(op.game, (state.last_seq, next, op.finish.clone()));
            }
        }
    }
    let fences = order.iter().map(|g| fences.get(g).copied()).collect();
    let games = order
        .into_iter()
        .filter_map(|game| {
            let (before, after, finish) = current.remove(&game)?;
            Some((
                before,
                GameUpdate {
                    game,
                    last_seq: after.last_seq,
                    finish,
                },
            ))
        })
        .collect();
    Some(KnownPlan {
        outcomes,
        games,
        fences,
    })
}

/// A backend's way of committing one batch in one transaction.
pub(crate) trait Committer: Send + 'static {
    /// Commits the batch. On `Err` nothing of it was stored, unless the error is
    /// [`StoreError::CommitUnknown`]: then all of it may have been.
    fn commit(&mut self, ops: Vec<Op>) -> impl Future<Output = Result<Vec<Result<u64>>>> + Send;

    /// At shutdown, after the last commit: whatever the committer still does in the
    /// background is done when this returns.
    fn finish(self) -> impl Future<Output = ()> + Send
    where
        Self: Sized,
    {
        async {}
    }
}

/// Counters of the group-commit writers, for metrics. All are totals since the store opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Transactions committed.
    pub batches: u64,
    /// Appends and finishes acknowledged with `Ok`.
    pub appends: u64,
    /// Events stored.
    pub events: u64,
    /// Appends refused (seq mismatch, finished or unknown game, bad input).
    pub refused: u64,
    /// Appends answered `CommitFailed` or `CommitUnknown` (their transaction failed, or its
    /// outcome is unknown).
    pub failed: u64,
    /// Time spent in batch transactions (from `BEGIN` to `COMMIT` done), in microseconds.
    pub commit_micros: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    batches: AtomicU64,
    appends: AtomicU64,
    events: AtomicU64,
    refused: AtomicU64,
    failed: AtomicU64,
    commit_micros: AtomicU64,
}

impl Counters {
    fn snapshot(&self) -> StoreStats {
        StoreStats {
            batches: self.batches.load(Ordering::Relaxed),
            appends: self.appends.load(Ordering::Relaxed),
            events: self.events.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            commit_micros: self.commit_micros.load(Ordering::Relaxed),
        }
    }
}

/// Handles to the writer tasks. Games are routed to writers by id, so the appends of one game
/// are always committed in the order they were submitted.
pub(crate) struct Writers {
    senders: Vec<mpsc::Sender<Msg>>,
    max_batch: usize,
    counters: Arc<Counters>,
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

impl Writers {
    pub fn spawn<C: Committer>(
        committers: Vec<C>,
        queue_capacity: usize,
        max_batch: usize,
    ) -> Writers {
        let mut senders = Vec::with_capacity(committers.len());
        let mut tasks = Vec::with_capacity(committers.len());
        let counters = Arc::new(Counters::default());
        for committer in committers {
            let (tx, rx) = mpsc::channel(queue_capacity.max(1));
            senders.push(tx);
            tasks.push(tokio::spawn(run(
                committer,
                rx,
                max_batch.max(1),
                Arc::clone(&counters),
            )));
        }
        Writers {
            senders,
            max_batch: max_batch.max(1),
            counters,
            tasks: std::sync::Mutex::new(tasks),
        }
    }

    pub fn stats(&self) -> StoreStats {
        self.counters.snapshot()
    }

    /// Whether every writer task is still taking appends (none has stopped or been closed).
    pub fn running(&self) -> bool {
        self.senders.iter().all(|s| !s.is_closed())
    }

    /// The writer that commits `game`'s appends.
    pub fn writer_of(&self, game: GameId) -> usize {
        let n = self.senders.len() as i64;
        usize::try_from(game.0.rem_euclid(n.max(1))).unwrap_or(0)
    }

    /// Queues one message of ops to writer `idx`; the receiver gets its answers.
    async fn send_ops(
        &self,
        idx: usize,
        ops: Vec<Op>,
    ) -> Option<oneshot::Receiver<Vec<Result<u64>>>> {
        let sender = self.senders.get(idx)?;
        let (reply, answer) = oneshot::channel();
        sender.send(Msg::Ops(ops, reply)).await.ok()?;
        Some(answer)
    }

    /// The answers to a message of `n` ops: all `Closed` if the writer was gone before it took
    /// the message, all `CommitUnknown` if it went away after (it may have been committing
    /// them).
    async fn answers(
        answer: Option<oneshot::Receiver<Vec<Result<u64>>>>,
        n: usize,
    ) -> Vec<Result<u64>> {
        match answer {
            Some(rx) => match rx.await {
                Ok(outcomes) if outcomes.len() == n => outcomes,
                _ => (0..n)
                    .map(|_| {
                        Err(StoreError::CommitUnknown(
                            "the writer stopped before answering".into(),
                        ))
                    })
                    .collect(),
            },
            None => (0..n).map(|_| Err(StoreError::Closed)).collect(),
        }
    }

    pub async fn submit(&self, op: Op) -> Result<u64> {
        let idx = self.writer_of(op.game);
        let answer = self.send_ops(idx, vec![op]).await;
        Self::answers(answer, 1)
            .await
            .pop()
            .unwrap_or(Err(StoreError::Closed))
    }

    /// Submits several appends at once: one message per writer (and per `max_batch` ops), so
    /// a caller with many games' appends in hand pays one hand-off for all of them. The
    /// answers come back in the order of `ops`; each is what `submit` would have answered.
    pub async fn submit_many(&self, ops: Vec<Op>) -> Vec<Result<u64>> {
        if ops.is_empty() {
            return Vec::new();
        }
        let total = ops.len();
        // Which writer each op goes to, and the ops in per-writer messages of at most
        // `max_batch` (a message is never split across transactions).
        let mut parts: Vec<(usize, Vec<usize>, Vec<Op>)> = Vec::new();
        for (i, op) in ops.into_iter().enumerate() {
            let idx = self.writer_of(op.game);
            match parts
                .iter_mut()
                .rev()
                .find(|(w, _, part)| *w == idx && part.len() < self.max_batch)
            {
                Some((_, order, part)) => {
                    order.push(i);
                    part.push(op);
                }
                None => parts.push((idx, vec![i], vec![op])),
            }
        }
        let mut answers: Vec<Option<Result<u64>>> = (0..total).map(|_| None).collect();
        // Every message is queued before any answer is awaited, so the writers can commit
        // them in parallel (and one writer's messages in one transaction).
        let mut sent = Vec::with_capacity(parts.len());
        for (idx, order, part) in parts {
            sent.push((order, self.send_ops(idx, part).await));
        }
        for (order, answer) in sent {
            let n = order.len();
            for (i, outcome) in order.into_iter().zip(Self::answers(answer, n).await) {
                if let Some(slot) = answers.get_mut(i) {
                    *slot = Some(outcome);
                }
            }
        }
        answers
            .into_iter()
            .map(|a| a.unwrap_or(Err(StoreError::Closed)))
            .collect()
    }

    /// Commits everything queued, stops the writers and waits for them.
    pub async fn shutdown(&self) {
        for sender in &self.senders {
            let (done, wait) = oneshot::channel();
            if sender.send(Msg::Shutdown(done)).await.is_ok() {
                let _ = wait.await;
            }
        }
        let tasks = match self.tasks.lock() {
            Ok(mut t) => std::mem::take(&mut *t),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for t in tasks {
            let _ = t.await;
        }
    }
}

async fn run<C: Committer>(
    mut committer: C,
    mut rx: mpsc::Receiver<Msg>,
    max_batch: usize,
    counters: Arc<Counters>,
) {
    let mut ops = Vec::with_capacity(max_batch);
    // Each message's reply and how many of the batch's ops are its.
    let mut replies: Vec<(oneshot::Sender<Vec<Result<u64>>>, usize)> = Vec::new();
    loop {
        let mut shutdown = None;
        match rx.recv().await {
            None => return,
            Some(Msg::Ops(more, reply)) => {
                replies.push((reply, more.len()));
                ops.extend(more);
            }
            Some(Msg::Shutdown(done)) => shutdown = Some(done),
        }
        // Take whatever queued up while the previous batch was committing.
        while shutdown.is_none() && ops.len() < max_batch {
            match rx.try_recv() {
                Ok(Msg::Ops(more, reply)) => {
                    replies.push((reply, more.len()));
                    ops.extend(more);
                }
                Ok(Msg::Shutdown(done)) => shutdown = Some(done),
                Err(_) => break,
            }
        }
        if !ops.is_empty() {
            let batch = std::mem::take(&mut ops);
            let sizes: Vec<u64> = batch.iter().map(|o| o.events.len() as u64).collect();
            let started = Instant::now();
            let committed = committer.commit(batch).await;
            let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            counters.commit_micros.fetch_add(micros, Ordering::Relaxed);
            let outcomes: Vec<Result<u64>> = match committed {
                Ok(outcomes) => {
                    counters.batches.fetch_add(1, Ordering::Relaxed);
                    let (mut stored, mut refused, mut events) = (0, 0, 0);
                    for (outcome, size) in outcomes.iter().zip(&sizes) {
                        match outcome {
                            Ok(_) => {
                                stored += 1;
                                events += size;
                            }
                            Err(_) => refused += 1,
                        }
                    }
                    counters.appends.fetch_add(stored, Ordering::Relaxed);
                    counters.refused.fetch_add(refused, Ordering::Relaxed);
                    counters.events.fetch_add(events, Ordering::Relaxed);
                    outcomes
                }
                Err(e) => {
                    counters
                        .failed
                        .fetch_add(sizes.len() as u64, Ordering::Relaxed);
                    let unknown = e.outcome_unknown();
                    let msg = match e {
                        StoreError::CommitUnknown(msg) | StoreError::CommitFailed(msg) => msg,
                        e => e.to_string(),
                    };
                    sizes
                        .iter()
                        .map(|_| {
                            Err(if unknown {
                                StoreError::CommitUnknown(msg.clone())
                            } else {
                                StoreError::CommitFailed(msg.clone())
                            })
                        })
                        .collect()
                }
            };
            let mut outcomes = outcomes.into_iter();
            for (reply, n) in replies.drain(..) {
                let mine: Vec<Result<u64>> = outcomes.by_ref().take(n).collect();
                // The caller may have gone away; its appends are committed regardless.
                let _ = reply.send(mine);
            }
        }
        if let Some(done) = shutdown {
            rx.close();
            committer.finish().await;
            let _ = done.send(());
            return;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ev(seq: u64) -> NewEvent {
        NewEvent::new(seq, "move", vec![seq as u8], 1000)
    }

    fn op(game: i64, seqs: &[u64]) -> Op {
        Op {
            game: GameId(game),
            events: seqs.iter().map(|&s| ev(s)).collect(),
            finish: None,
            fence: None,
        }
    }

    fn states(list: &[(i64, u64, bool)]) -> HashMap<GameId, GameState> {
        list.iter()
            .map(|&(g, last_seq, finished)| {
                (
                    GameId(g),
                    GameState {
                        last_seq,
                        finished,
                        fence: None,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn ops_of_one_game_chain_within_a_batch() {
        let p = plan(
            vec![op(1, &[1, 2]), op(2, &[5]), op(1, &[3])],
            &states(&[(1, 0, false), (2, 4, false)]),
        );
        assert_eq!(p.outcomes.len(), 3);
        assert_eq!(p.outcomes[0].as_ref().unwrap(), &2);
        assert_eq!(p.outcomes[1].as_ref().unwrap(), &5);
        assert_eq!(p.outcomes[2].as_ref().unwrap(), &3);
        assert_eq!(p.rows.len(), 4);
        assert_eq!(
            p.updates,
            vec![
                GameUpdate {
                    game: GameId(1),
                    last_seq: 3,
                    finish: None
                },
                GameUpdate {
                    game: GameId(2),
                    last_seq: 5,
                    finish: None
                },
            ]
        );
    }

    #[test]
    fn duplicate_and_gap_are_refused_without_effect() {
        let p = plan(
            vec![op(1, &[1]), op(1, &[1]), op(1, &[3]), op(1, &[2, 4])],
            &states(&[(1, 0, false)]),
        );
        assert!(p.outcomes[0].is_ok());
        assert!(matches!(
            p.outcomes[1],
            Err(StoreError::SeqMismatch {
                expected: 2,
                got: 1,
                ..
            })
        ));
        assert!(matches!(
            p.outcomes[2],
            Err(StoreError::SeqMismatch {
                expected: 2,
                got: 3,
                ..
            })
        ));
        assert!(matches!(
            p.outcomes[3],
            Err(StoreError::SeqMismatch {
                expected: 3,
                got: 4,
                ..
            })
        ));
        assert_eq!(p.rows.len(), 1);
        assert_eq!(p.updates[0].last_seq, 1);
    }

    #[test]
    fn unknown_finished_and_empty() {
        let mut fin = op(1, &[1]);
        fin.finish = Some(Finish {
            result: "1-0".into(),
            reason: "checkmate".into(),
            at_ms: 5,
        });
        let p = plan(
            vec![op(9, &[1]), fin, op(1, &[2]), op(3, &[]), op(4, &[1])],
            &states(&[(1, 0, false), (3, 0, false), (4, 0, true)]),
        );
        assert!(matches!(
            p.outcomes[0],
            Err(StoreError::GameNotFound(GameId(9)))
        ));
        assert!(p.outcomes[1].is_ok());
        assert!(matches!(
            p.outcomes[2],
            Err(StoreError::GameFinished(GameId(1)))
        ));
        assert!(matches!(p.outcomes[3], Err(StoreError::Invalid(_))));
        assert!(matches!(
            p.outcomes[4],
            Err(StoreError::GameFinished(GameId(4)))
        ));
        assert_eq!(p.updates.len(), 1);
        assert_eq!(p.updates[0].finish.as_ref().unwrap().result, "1-0");
    }

    #[test]
    fn bad_kind_is_refused() {
        let mut o = op(1, &[1]);
        o.events[0].kind = String::new();
        let p = plan(vec![o], &states(&[(1, 0, false)]));
        assert!(matches!(p.outcomes[0], Err(StoreError::Invalid(_))));
        assert!(p.rows.is_empty() && p.updates.is_empty());
    }

    #[test]
    fn a_stale_token_is_refused_and_spoils_nothing_else() {
        let mut stored = states(&[(1, 0, false), (2, 3, false)]);
        if let Some(s) = stored.get_mut(&GameId(1)) {
            s.fence = Some(5);
        }
        let fenced = |game, seqs: &[u64], token| Op {
            fence: Some(token),
            ..op(game, seqs)
        };
        let p = plan(
            vec![
                fenced(1, &[1], 4),
                fenced(2, &[4], 9), // game 2's token was not read: unchecked here
                fenced(1, &[1], 5),
                op(1, &[2]), // no token: not checked
                fenced(1, &[3], 6),
            ],
            &stored,
        );
        assert!(matches!(
            &p.outcomes[0],
            Err(StoreError::Fenced { token: 4, what }) if what == "game 1"
        ));
        assert_eq!(p.outcomes[1].as_ref().unwrap(), &4);
        assert_eq!(p.outcomes[2].as_ref().unwrap(), &1);
        assert_eq!(p.outcomes[3].as_ref().unwrap(), &2);
        assert!(matches!(
            p.outcomes[4],
            Err(StoreError::Fenced { token: 6, .. })
        ));
        assert_eq!(p.rows.len(), 3);
    }

    #[test]
    fn plan_known_carries_one_token_per_game() {
        let known = states(&[(1, 0, false), (2, 0, false)]);
        let fenced = |game, seqs: &[u64], token| Op {
            fence: Some(token),
            ..op(game, seqs)
        };
        let k = plan_known(&[fenced(1, &[1], 3), op(2, &[1]), op(1, &[2])], &known).unwrap();
        assert_eq!(k.fences, vec![Some(3), None]);
        assert!(plan_known(&[fenced(1, &[1], 3), fenced(1, &[2], 4)], &known).is_none());
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Whatever mix of appends arrives, what a batch writes continues every game's log
            /// without gaps or duplicates, and an op is accepted exactly when its seqs continue
            /// the log as left by the ops before it.
            #[test]
            fn plan_keeps_logs_gap_free(
                start in proptest::collection::vec((0u64..4, any::<bool>()), 3),
                ops in proptest::collection::vec((0i64..4, 0u64..8, 0usize..3), 0..40),
            ) {
                let mut stored = HashMap::default();
                for (g, &(last_seq, finished)) in start.iter().enumerate() {
                    stored.insert(GameId(g as i64), GameState { last_seq, finished, fence: None });
                }
                let batch: Vec<Op> = ops
                    .iter()
                    .map(|&(g, first, n)| op(g, &(first..first + n as u64).collect::<Vec<_>>()))
                    .collect();
                let p = plan(batch, &stored);
                prop_assert_eq!(p.outcomes.len(), ops.len());
                let mut model = stored.clone();
                for (&(g, first, n), outcome) in ops.iter().zip(&p.outcomes) {
                    let game = GameId(g);
                    let ok = match model.get_mut(&game) {
                        Some(s) if !s.finished && n > 0 && first == s.last_seq + 1 => {
                            s.last_seq += n as u64;
                            true
                        }
                        _ => false,
                    };
                    prop_assert_eq!(ok, outcome.is_ok());
                }
                let mut next: HashMap<GameId, u64> =
                    stored.iter().map(|(g, s)| (*g, s.last_seq + 1)).collect();
                for (game, ev) in &p.rows {
                    let want = next.get_mut(game).ok_or_else(|| TestCaseError::fail("unknown game"))?;
                    prop_assert_eq!(ev.seq, *want);
                    *want += 1;
                }
                for u in &p.updates {
                    prop_assert_eq!(Some(&u.last_seq), model.get(&u.game).map(|s| &s.last_seq));
                }
            }

            /// `plan_known` answers exactly when every game is known and `plan` accepts every
            /// op, and then with the same outcomes and updates.
            #[test]
            fn plan_known_agrees_with_plan(
                start in proptest::collection::vec((0u64..4, any::<bool>()), 3),
                ops in proptest::collection::vec((0i64..4, 0u64..8, 0usize..3, any::<bool>()), 0..20),
            ) {
                let mut stored = HashMap::default();
                for (g, &(last_seq, finished)) in start.iter().enumerate() {
                    stored.insert(GameId(g as i64), GameState { last_seq, finished, fence: None });
                }
                let batch: Vec<Op> = ops
                    .iter()
                    .map(|&(g, first, n, fin)| {
                        let mut o = op(g, &(first..first + n as u64).collect::<Vec<_>>());
                        if fin {
                            o.finish = Some(Finish { result: "1-0".into(), reason: "resign".into(), at_ms: 1 });
                        }
                        o
                    })
                    .collect();
                let fast = plan_known(&batch, &stored);
                let p = plan(batch, &stored);
                let all_ok = p.outcomes.iter().all(|o| o.is_ok())
                    && ops.iter().all(|&(g, ..)| stored.contains_key(&GameId(g)));
                prop_assert_eq!(fast.is_some(), all_ok);
                if let Some(fast) = fast {
                    let outcomes: Vec<u64> = p.outcomes.iter().filter_map(|o| o.as_ref().ok().copied()).collect();
                    prop_assert_eq!(fast.outcomes, outcomes);
                    let updates: Vec<GameUpdate> = fast.games.iter().map(|(_, u)| u.clone()).collect();
                    prop_assert_eq!(updates, p.updates);
                    for (before, u) in &fast.games {
                        prop_assert_eq!(Some(*before), stored.get(&u.game).map(|s| s.last_seq));
                    }
                }
            }
        }
    }
}
