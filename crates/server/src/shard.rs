//! Game shards: each shard is one task that owns many games and runs every command of
//! theirs. A move costs one hand-off from the connection to the shard; the shard prepares
//! the changes of all the commands it has in hand, commits them to the store in one batch
//! ([`Persist::append_batch`](crate::persist::Persist::append_batch)), and when the batch's
//! outcome comes back settles, acknowledges and broadcasts them all in one turn. No task per
//! game is woken twice per move, and the store's writers get one hand-off per batch instead
//! of one per game.
//!
//! A game has at most one change in flight: its later commands wait in its backlog (bounded
//! by `game_mailbox`; beyond that they are answered `busy`) and run, in order, once the
//! commit is settled. So a game's commits stay in order, and nothing is acknowledged or
//! broadcast before it is committed. Timers (flags, broadcast delays, unloading finished
//! games) are one ordered set per shard with a single sleep for the earliest.

use std::collections::{BTreeSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, sleep_until};
use tracing::{Instrument, info_span};

use crate::error::{ClientError, ErrorToWire};
use crate::handle::{GameHandle, LoadedGames, ShardCmd};
use crate::live::{Handled, LiveGame, Staged, Wake};
use crate::persist::{AppendOp, Persist, PersistError};
use crate::request::Request;
use chuhe_game::Decided;

/// What the shards are given: the store, the settings, the metrics, the games loaded on this
/// node (a game a shard unloads leaves it), the node link and the shutdown signals.
#[derive(Clone)]
pub struct ShardDeps {
    pub persist: std::sync::Arc<dyn Persist>,
    pub config: std::sync::Arc<crate::config::Config>,
    pub metrics: std::sync::Arc<crate::metrics::Metrics>,
    /// The registry's table of loaded games.
    pub registry: std::sync::Arc<LoadedGames>,
    pub node: Option<std::sync::Arc<crate::node::Link>>,
    pub shutdown: watch::Receiver<bool>,
    /// Held by every shard; serve waits for all to be dropped.
    pub tasks_done: mpsc::Sender<()>,
}

/// The senders of every shard; a game always lives in the shard its id picks.
pub struct Shards {
    senders: Vec<mpsc::Sender<ShardCmd>>,
}

/// The receiving ends, handed to [`Shards::start`].
pub struct ShardQueues(Vec<mpsc::Receiver<ShardCmd>>);

impl Shards {
    /// `count` shards with mailboxes of `capacity` commands each.
    pub fn new(count: usize, capacity: usize) -> (Shards, ShardQueues) {
        let (senders, receivers) = (0..count.max(1))
            .map(|_| mpsc::channel(capacity.max(1)))
            .unzip();
        (Shards { senders }, ShardQueues(receivers))
    }

    /// Spawns the shard tasks; they run until the server's shutdown signal, then finish the
    /// commits in flight and stop.
    /// `settled` turns true when the last shard has stopped.
    pub fn start(env: &ShardDeps, queues: ShardQueues, settled: watch::Sender<bool>) {
        let running = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(queues.0.len()));
        let settled = std::sync::Arc::new(settled);
        for (i, rx) in queues.0.into_iter().enumerate() {
            let shard = Shard::new(env.clone());
            let shutdown = env.shutdown.clone();
            let (running, settled) = (running.clone(), settled.clone());
            tokio::spawn(
                async move {
                    shard.run(rx, shutdown).await;
                    if running.fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
                        settled.send_replace(true);
                    }
                }
                .instrument(info_span!("shard", shard = i)),
            );
        }
    }

    /// Hands a game whose first events are committed to its shard; from now on the handle
    /// routes to it.
    pub(crate) async fn adopt(&self, game: LiveGame) -> Result<GameHandle, ClientError> {
        let tx = self.sender_for(game.id());
        let handle = GameHandle {
            id: game.id(),
            tx: tx.clone(),
            summary: game.summary.clone(),
            alive: game.alive.clone(),
            remote: None,
        };
        tx.send(ShardCmd::Adopt(Box::new(game)))
            .await
            .map_err(|_| ClientError::ShuttingDown)?;
        Ok(handle)
    }

    pub(crate) fn sender_for(&self, game: i64) -> mpsc::Sender<ShardCmd> {
        let n = self.senders.len() as i64;
        let i = usize::try_from(game.rem_euclid(n.max(1))).unwrap_or(0);
        match self.senders.get(i).or(self.senders.first()) {
            Some(tx) => tx.clone(),
            // Unreachable: `new` makes at least one shard. A closed channel answers every
            // send with an error, as a stopped shard would.
            None => mpsc::channel(1).0,
        }
    }
}

/// How many commands a shard takes from its mailbox in one turn.
const TAKE: usize = 256;

/// A commit in flight: the games in the batch's order, when it was submitted, the answers.
type Commit = Pin<Box<dyn Future<Output = CommitDone> + Send>>;
/// A commit whose outcome was unknown, being asked of the store: (game, committed).
type Resolve = Pin<Box<dyn Future<Output = (i64, bool)> + Send>>;
struct CommitDone {
    games: Vec<i64>,
    started: Instant,
    results: Vec<Result<(), PersistError>>,
}

struct Slot {
    game: Box<LiveGame>,
    /// The change being committed, and the request that asked for it (None: a timer).
    inflight: Option<(Staged, Option<Box<Request>>)>,
    /// Client requests waiting for the commit in flight, in arrival order.
    backlog: VecDeque<Box<Request>>,
    /// The instant this game is in the shard's timer set under.
    wake: Option<Instant>,
    /// Several nodes: the game's lease was lost; it leaves once its commit in flight settles.
    leaving: bool,
}

impl Slot {
    /// Stages a decision for this turn's commit; it is in flight until the commit's outcome.
    /// `req`: the request to answer once it is settled (None: a timer's, or answered already).
    fn begin(
        &mut self,
        decided: Decided,
        req: Option<Box<Request>>,
        is_timer: bool,
        staged: &mut Vec<AppendOp>,
    ) {
        let (op, s) = self.game.stage(decided, is_timer);
        self.inflight = Some((s, req));
        staged.push(op);
    }
}

struct Shard {
    env: ShardDeps,
    slots: chuhe_store::IdMap<i64, Slot>,
    timers: BTreeSet<(Instant, i64)>,
    /// Changes staged this turn, committed together at its end.
    staged: Vec<AppendOp>,
    commits: FuturesUnordered<Commit>,
    /// Commits whose outcome is unknown, being resolved; their games wait.
    resolving: FuturesUnordered<Resolve>,
    stopping: bool,
}

impl Shard {
    fn new(env: ShardDeps) -> Shard {
        Shard {
            env,
            slots: chuhe_store::IdMap::default(),
            timers: BTreeSet::new(),
            staged: Vec::new(),
            commits: FuturesUnordered::new(),
            resolving: FuturesUnordered::new(),
            stopping: false,
        }
    }

    async fn run(mut self, mut rx: mpsc::Receiver<ShardCmd>, mut shutdown: watch::Receiver<bool>) {
        let mut cmds = Vec::with_capacity(TAKE);
        // One sleep for the earliest timer, reset only when that changes.
        let sleep = sleep_until(Instant::now() + Duration::from_secs(86400 * 365));
        tokio::pin!(sleep);
        let mut armed: Option<Instant> = None;
        let shut = shutdown.changed();
        tokio::pin!(shut);
        loop {
            self.flush();
            if self.stopping && self.commits.is_empty() && self.resolving.is_empty() {
                break;
            }
            let first = self.timers.first().map(|(t, _)| *t);
            if first != armed {
                if let Some(t) = first {
                    sleep.as_mut().reset(t);
                }
                armed = first;
            }
            tokio::select! {
                biased;
                _ = &mut shut, if !self.stopping => self.stopping = true,
                Some(done) = self.commits.next(), if !self.commits.is_empty() => {
                    self.committed(done);
                }
                Some((id, committed)) = self.resolving.next(), if !self.resolving.is_empty() => {
                    self.settle(id, committed);
                }
                // Before new commands: a flag that has fallen is decided before a move that
                // comes after it.
                _ = &mut sleep, if armed.is_some() && !self.stopping => {
                    armed = None;
                    self.timers_due(Instant::now());
                }
                n = rx.recv_many(&mut cmds, TAKE), if !self.stopping => {
                    if n == 0 {
                        self.stopping = true;
                    }
                    for cmd in cmds.drain(..) {
                        self.command(cmd);
                    }
                }
            }
        }
        // Stopped: every commit is settled and answered. Requests still waiting — behind a
        // commit, or in the mailbox — are answered `shutting_down` (resent after the restart,
        // a move is played then, or acknowledged if it was).
        for slot in self.slots.values_mut() {
            for r in slot.backlog.drain(..) {
                slot.game.error(&r, &ClientError::ShuttingDown);
            }
        }
        rx.close();
        while let Ok(cmd) = rx.try_recv() {
            if let ShardCmd::Client(id, r) = cmd {
                refuse(&self.env, id, &r, &ClientError::ShuttingDown);
            }
        }
        for slot in self.slots.values() {
            slot.game.unloaded();
        }
        for id in self.slots.keys() {
            self.env.registry.remove_dead(*id);
        }
    }

    fn command(&mut self, cmd: ShardCmd) {
        match cmd {
            ShardCmd::Client(id, r) => {
                let cap = self.env.config.game_mailbox;
                let Some(slot) = self.slots.get_mut(&id) else {
                    // Unloaded a moment ago: the connection's next try loads it again.
                    return refuse(
                        &self.env,
                        id,
                        &r,
                        &ClientError::GameNotFound(id.to_string()),
                    );
                };
                if slot.inflight.is_some() {
                    if slot.backlog.len() >= cap {
                        slot.game.error(&r, &ClientError::Busy);
                    } else {
                        slot.backlog.push_back(r);
                    }
                } else {
                    self.request(id, r);
                    self.retime(id);
                }
            }
            ShardCmd::Unload(id) => {
                if let Some(slot) = self.slots.get_mut(&id) {
                    if slot.inflight.is_some() {
                        slot.leaving = true;
                    } else {
                        self.evict(id, None);
                    }
                }
            }
            ShardCmd::Detach(id, conn) => {
                if let Some(slot) = self.slots.get_mut(&id) {
                    slot.game.detach(conn);
                }
            }
            ShardCmd::Record {
                game,
                public,
                arbiter,
                reply,
            } => {
                if let Some(slot) = self.slots.get(&game) {
                    let public = public || arbiter.is_some_and(|id| !slot.game.rules_on(id));
                    let _ = reply.send(slot.game.record_view(public));
                }
            }
            ShardCmd::Adopt(game) => {
                let id = game.id();
                self.slots.insert(
                    id,
                    Slot {
                        game,
                        inflight: None,
                        backlog: VecDeque::new(),
                        wake: None,
                        leaving: false,
                    },
                );
                self.retime(id);
            }
        }
    }

    /// Runs a request of a game with no commit in flight.
    fn request(&mut self, id: i64, r: Box<Request>) {
        let Some(slot) = self.slots.get_mut(&id) else {
            return;
        };
        // A start or lateness limit that is due comes first; the request waits for it.
        if let Some(due) = slot.game.due_first() {
            slot.backlog.push_front(r);
            slot.begin(due, None, true, &mut self.staged);
            return;
        }
        match slot.game.prepare(&r) {
            Handled::Done => {}
            Handled::Commit(decided) => slot.begin(*decided, Some(r), false, &mut self.staged),
            Handled::CommitQuietly(decided) => slot.begin(*decided, None, false, &mut self.staged),
        }
    }

    /// Commits what this turn staged: one batch per store lane (writer), each settled as soon
    /// as its own transaction is done.
    fn flush(&mut self) {
        if self.staged.is_empty() {
            return;
        }
        let mut lanes: Vec<(usize, Vec<AppendOp>)> = Vec::new();
        for op in std::mem::take(&mut self.staged) {
            let lane = self.env.persist.lane_of(op.game);
            match lanes.iter_mut().find(|(l, _)| *l == lane) {
                Some((_, ops)) => ops.push(op),
                None => lanes.push((lane, vec![op])),
            }
        }
        let started = Instant::now();
        for (_, ops) in lanes {
            let games: Vec<i64> = ops.iter().map(|op| op.game).collect();
            let persist = self.env.persist.clone();
            self.commits.push(Box::pin(async move {
                let results = persist.append_batch(ops).await;
                CommitDone {
                    games,
                    started,
                    results,
                }
            }));
        }
    }

    /// A batch's outcome: settle and answer each game's change, then run what waited for it.
    /// A commit whose outcome is unknown (the database connection died during it) is first
    /// resolved against the store: its game answers nothing else until the store says.
    fn committed(&mut self, done: CommitDone) {
        self.env
            .metrics
            .commit_latency
            .observe_n(done.started.elapsed(), done.games.len() as u64);
        let mut results = done.results.into_iter();
        for id in done.games {
            // A missing answer counts as a failed commit (the store answers every op).
            match results.next() {
                Some(Ok(())) => self.settle(id, true),
                Some(Err(e)) if e.outcome_unknown => self.resolve(id),
                // Another node owns the game now: nothing was stored and nothing is answered
                // here; the game leaves and the request follows it to its owner.
                Some(Err(e)) if e.is_fenced() => {
                    tracing::warn!(game = id, "commit fenced: another node owns the game");
                    self.env
                        .metrics
                        .cluster_fenced_commits_total
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let req = self
                        .slots
                        .get_mut(&id)
                        .and_then(|s| s.inflight.take())
                        .and_then(|(_, r)| r);
                    self.evict(id, req);
                }
                _ => self.settle(id, false),
            }
        }
    }

    /// Asks the store whether a game's commit in flight happened, until it can say.
    fn resolve(&mut self, id: i64) {
        let Some(slot) = self.slots.get_mut(&id) else {
            return;
        };
        let Some((staged, _)) = slot.inflight.as_mut() else {
            return;
        };
        let op = slot.game.append_of(staged);
        let persist = self.env.persist.clone();
        tracing::warn!(
            game = id,
            "commit outcome unknown; resolving it against the store"
        );
        self.resolving.push(Box::pin(async move {
            loop {
                match persist.resolve(op.clone()).await {
                    Ok(committed) => return (id, committed),
                    Err(e) if e.is_client_error() => {
                        // Other events at these seqs: not this commit's.
                        tracing::error!(game = id, error = %e, "unknown commit resolved to a conflict");
                        return (id, false);
                    }
                    Err(e) => {
                        tracing::debug!(game = id, error = %e, "outcome still unknown; asking again");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                }
            }
        }));
    }

    /// Settles and answers a game's commit in flight, then runs what waited for it.
    fn settle(&mut self, id: i64, committed: bool) {
        let Some(slot) = self.slots.get_mut(&id) else {
            return;
        };
        let Some((staged, req)) = slot.inflight.take() else {
            return;
        };
        slot.game.conclude(staged, committed, req.as_deref());
        if slot.leaving {
            return self.evict(id, None);
        }
        if !self.stopping {
            while let Some(slot) = self.slots.get_mut(&id) {
                if slot.inflight.is_some() {
                    break;
                }
                let Some(r) = slot.backlog.pop_front() else {
                    break;
                };
                self.request(id, r);
            }
        }
        self.retime(id);
    }

    /// Several nodes: the game leaves this node (its lease is lost or its commit was fenced):
    /// it is unloaded here, and `req` (a fenced request), the requests waiting behind it and
    /// its subscribers (with the last seq each was sent) follow it to its owner.
    fn evict(&mut self, id: i64, req: Option<Box<Request>>) {
        let Some(mut slot) = self.slots.remove(&id) else {
            return;
        };
        if let Some(t) = slot.wake.take() {
            self.timers.remove(&(t, id));
        }
        slot.game.unloaded();
        self.env.registry.remove_dead(id);
        self.env.persist.unclaim(Some(id), None);
        let Some(link) = self.env.node.clone() else {
            return;
        };
        // Its lease is lost, or another node claimed the game (and holds it): nothing to
        // release (releasing later could drop a lease this node takes again meanwhile).
        link.gave_up(id);
        link.game_left();
        let subs = slot
            .game
            .take_subscribers()
            .into_iter()
            .map(|(out, who, last)| {
                Box::new(Request {
                    req: 0,
                    who,
                    out,
                    lag: Duration::ZERO,
                    received: Instant::now(),
                    body: crate::request::Body::Subscribe {
                        last_seq: last,
                        relay: None,
                    },
                })
            });
        for r in req.into_iter().chain(slot.backlog.drain(..)).chain(subs) {
            link.ctl(crate::node::Ctl::Reroute(id, r));
        }
    }

    /// Wakes every game whose time has come.
    fn timers_due(&mut self, now: Instant) {
        while let Some(&(t, id)) = self.timers.first() {
            if t > now {
                break;
            }
            self.timers.remove(&(t, id));
            let Some(slot) = self.slots.get_mut(&id) else {
                continue;
            };
            slot.wake = None;
            if slot.inflight.is_some() {
                // Settling the commit re-times the game.
                continue;
            }
            match slot.game.wake(now) {
                Wake::Nothing => {}
                Wake::Commit(decided) => slot.begin(*decided, None, true, &mut self.staged),
                Wake::Unload => {
                    if let Some(slot) = self.slots.remove(&id) {
                        slot.game.unloaded();
                        self.env.registry.remove_dead(id);
                        if let Some(link) = self.env.node.clone() {
                            // Several nodes: a finished game's lease goes with it.
                            self.env.persist.unclaim(Some(id), None);
                            link.release_game(id);
                        }
                    }
                    continue;
                }
            }
            self.retime(id);
        }
    }

    /// Puts a game in the timer set at the instant it next needs waking.
    fn retime(&mut self, id: i64) {
        let Some(slot) = self.slots.get_mut(&id) else {
            return;
        };
        let want = slot.game.next_wake(slot.inflight.is_some());
        if want != slot.wake {
            if let Some(old) = slot.wake {
                self.timers.remove(&(old, id));
            }
            if let Some(t) = want {
                self.timers.insert((t, id));
            }
            slot.wake = want;
        }
    }
}

/// Answers a request for a game the shard does not hold.
fn refuse(env: &ShardDeps, game: i64, r: &Request, e: &ClientError) {
    env.metrics
        .client_errors_total
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    r.out.send_msg(chuhe_proto::v1::ServerMessage {
        kind: Some(chuhe_proto::v1::server_message::Kind::Error(
            e.to_wire(r.req, &game.to_string()),
        )),
    });
}
