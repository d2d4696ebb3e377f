//! Group commit: appends from many games are queued to writer tasks, which commit whatever has
//! queued up in one transaction and then answer every caller. The validation of a batch
//! ([`plan`]) is pure so it can be tested without a database.

use std::collections::HashMap;
use std::future::Future;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::error::{Result, StoreError};
use crate::types::{Finish, GameId, MAX_KIND_CHARS, NewEvent};

/// One append (or finish) waiting in a writer's queue.
pub(crate) struct Op {
    pub game: GameId,
    pub events: Vec<NewEvent>,
    pub finish: Option<Finish>,
}

pub(crate) enum Msg {
    Op(Op, oneshot::Sender<Result<u64>>),
    /// Commit everything queued before this message, then stop.
    Shutdown(oneshot::Sender<()>),
}

/// The state of a game as the batch sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GameState {
    pub last_seq: u64,
    pub finished: bool,
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
        if ev.kind.is_empty() || ev.kind.chars().count() > MAX_KIND_CHARS {
            return Err(StoreError::Invalid(format!(
                "event kind must be 1 to {MAX_KIND_CHARS} characters"
            )));
        }
    }
    if let Some(f) = &op.finish {
        if f.result.trim().is_empty() || f.reason.trim().is_empty() {
            return Err(StoreError::Invalid(
                "a finished game needs a result and a reason".into(),
            ));
        }
    }
    Ok(GameState {
        last_seq: state.last_seq + op.events.len() as u64,
        finished: op.finish.is_some(),
    })
}

/// Validates a batch against the games' stored states, op by op in queue order (an op sees the
/// effect of the ops accepted before it). A refused op changes nothing.
pub(crate) fn plan(ops: Vec<Op>, states: &HashMap<GameId, GameState>) -> Plan {
    let mut current: HashMap<GameId, GameState> = HashMap::new();
    let mut finishes: HashMap<GameId, Finish> = HashMap::new();
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

/// A backend's way of committing one batch in one transaction.
pub(crate) trait Committer: Send + 'static {
    /// Commits the batch; on `Err` nothing of it was stored.
    fn commit(&mut self, ops: Vec<Op>) -> impl Future<Output = Result<Vec<Result<u64>>>> + Send;
}

/// Handles to the writer tasks. Games are routed to writers by id, so the appends of one game
/// are always committed in the order they were submitted.
pub(crate) struct Writers {
    senders: Vec<mpsc::Sender<Msg>>,
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
        for committer in committers {
            let (tx, rx) = mpsc::channel(queue_capacity.max(1));
            senders.push(tx);
            tasks.push(tokio::spawn(run(committer, rx, max_batch.max(1))));
        }
        Writers {
            senders,
            tasks: std::sync::Mutex::new(tasks),
        }
    }

    pub async fn submit(&self, op: Op) -> Result<u64> {
        let n = self.senders.len() as i64;
        let idx = usize::try_from(op.game.0.rem_euclid(n.max(1))).unwrap_or(0);
        let sender = self.senders.get(idx).ok_or(StoreError::Closed)?;
        let (reply, answer) = oneshot::channel();
        sender
            .send(Msg::Op(op, reply))
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
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

async fn run<C: Committer>(mut committer: C, mut rx: mpsc::Receiver<Msg>, max_batch: usize) {
    let mut ops = Vec::with_capacity(max_batch);
    let mut replies = Vec::with_capacity(max_batch);
    loop {
        let mut shutdown = None;
        match rx.recv().await {
            None => return,
            Some(Msg::Op(op, reply)) => {
                ops.push(op);
                replies.push(reply);
            }
            Some(Msg::Shutdown(done)) => shutdown = Some(done),
        }
        // Take whatever queued up while the previous batch was committing.
        while shutdown.is_none() && ops.len() < max_batch {
            match rx.try_recv() {
                Ok(Msg::Op(op, reply)) => {
                    ops.push(op);
                    replies.push(reply);
                }
                Ok(Msg::Shutdown(done)) => shutdown = Some(done),
                Err(_) => break,
            }
        }
        if !ops.is_empty() {
            let batch = std::mem::take(&mut ops);
            match committer.commit(batch).await {
                Ok(outcomes) => {
                    for (reply, outcome) in replies.drain(..).zip(outcomes) {
                        // The caller may have gone away; its append is committed regardless.
                        let _ = reply.send(outcome);
                    }
                }
                Err(e) => {
                    let msg = e.to_string();
                    for reply in replies.drain(..) {
                        let _ = reply.send(Err(StoreError::CommitFailed(msg.clone())));
                    }
                }
            }
            replies.clear();
        }
        if let Some(done) = shutdown {
            rx.close();
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
        }
    }

    fn states(list: &[(i64, u64, bool)]) -> HashMap<GameId, GameState> {
        list.iter()
            .map(|&(g, last_seq, finished)| (GameId(g), GameState { last_seq, finished }))
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
}
