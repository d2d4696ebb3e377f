//! The league driver: one task per league that owns its state, commits the entries the core
//! decides to the league's log (the store's competition log) before anything else sees them,
//! sets up the board games the core wants (idempotently, by key), learns of their ends, keeps
//! the one timer the core asks for, and publishes the league's public stream. Everything it
//! knows is in the log: a restart (or `kill -9`) replays it and carries on, including what fell
//! due during the outage.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chuhe_proto::v1::{self as w, server_message};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{Instant, sleep_until};
use tracing::{Instrument, debug, error, info, info_span, warn};

use super::core::{
    ColourResult, Entry, League, LeagueCommand, LeagueError, LeagueEvent, TeamAccounts, next_due,
    wanted_games,
};
use super::hooks::LeagueHooks;
use super::spec::EventSpec;
use crate::desks::Desks;
use crate::node::Link;
use crate::outbox::{Out, Outbox, SharedFrame};
use crate::persist::{
    Account, CompetitionEvent, NewCompetition, NewCompetitionEvent, NewGame, Persist, PersistError,
    Role,
};
use crate::registry::Registry;
use crate::time::TimeBase;
use chuhe_game::Actor;

/// Public entries kept for resuming a subscription by seq (a connection's write queue has
/// room for all of them besides its usual frames).
pub(crate) const REPLAY: usize = 512;
/// A failed store operation is retried after this.
const RETRY: Duration = Duration::from_secs(1);

/// Why a league request failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    League(#[from] LeagueError),
    #[error("the store could not record it; nothing changed, retry")]
    Store(String),
    #[error("league {0} not found")]
    NotFound(i64),
    #[error("the server is shutting down")]
    ShuttingDown,
}

impl RunError {
    pub fn code(&self) -> &'static str {
        match self {
            RunError::League(e) => e.code(),
            RunError::Store(_) => "store_unavailable",
            RunError::NotFound(_) => "not_found",
            RunError::ShuttingDown => "shutting_down",
        }
    }
}

pub use super::hooks::GameEnd;

/// What the league runners are given: the store, the clock, the arbiters' desks, the metrics,
/// the node link, the leagues running here, the game registry (a league's board games are
/// loaded through it) and the server's shutdown signals.
#[derive(Clone)]
pub struct LeagueDeps {
    pub persist: Arc<dyn Persist>,
    pub time: TimeBase,
    pub desks: Arc<Desks>,
    pub metrics: Arc<crate::metrics::Metrics>,
    pub node: Option<Arc<Link>>,
    pub leagues: Arc<Leagues>,
    pub registry: Arc<Registry>,
    pub shutdown: watch::Receiver<bool>,
    /// Held by every runner; serve waits for all to be dropped.
    pub tasks_done: mpsc::Sender<()>,
}

enum Msg {
    Command {
        cmd: LeagueCommand,
        actor: Actor,
        reason: Option<String>,
        reply: oneshot::Sender<Result<Vec<Entry>, RunError>>,
    },
    GameEnded(GameEnd),
    Subscribe {
        out: Outbox,
        last_seq: u64,
        req: u32,
        /// Another node relays the stream to this subscriber: only the catch-up goes to it.
        relay: bool,
    },
    Detach(u64),
}

/// The handle to a running league.
#[derive(Clone)]
pub struct LeagueHandle {
    pub id: i64,
    tx: mpsc::Sender<Msg>,
    /// The state as of the last committed entry.
    pub state: watch::Receiver<Arc<League>>,
    /// The state as the public stream shows it: as of the last public entry released (the
    /// broadcast delay behind [`LeagueHandle::state`]); the event feed's match results and
    /// standings are computed from it.
    pub public: watch::Receiver<Arc<League>>,
    /// Several nodes: set when this node lost the league (its lease, or a fenced commit): the
    /// runner stops at once.
    stop: Arc<watch::Sender<bool>>,
}

impl LeagueHandle {
    /// Decides and commits a command; the committed entries, or why not.
    pub async fn command(
        &self,
        cmd: LeagueCommand,
        actor: Actor,
        reason: Option<String>,
    ) -> Result<Vec<Entry>, RunError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Msg::Command {
                cmd,
                actor,
                reason,
                reply,
            })
            .await
            .map_err(|_| RunError::ShuttingDown)?;
        rx.await.map_err(|_| RunError::ShuttingDown)?
    }

    /// The committed state now.
    pub fn snapshot(&self) -> Arc<League> {
        self.state.borrow().clone()
    }

    /// The state the public stream has shown so far (see [`LeagueHandle::public`]).
    pub fn public_snapshot(&self) -> Arc<League> {
        self.public.borrow().clone()
    }

    /// Subscribes a connection to the league's public stream from `last_seq` (0: from a
    /// snapshot). Answered on the connection.
    pub fn subscribe(&self, out: Outbox, last_seq: u64, req: u32) -> bool {
        self.tx
            .try_send(Msg::Subscribe {
                out,
                last_seq,
                req,
                relay: false,
            })
            .is_ok()
    }

    /// Several nodes: the catch-up of a subscriber on another node (the reply and the ring
    /// from `last_seq`); that node follows the league's channel from there.
    pub(crate) fn subscribe_relayed(&self, out: Outbox, last_seq: u64, req: u32) -> bool {
        self.tx
            .try_send(Msg::Subscribe {
                out,
                last_seq,
                req,
                relay: true,
            })
            .is_ok()
    }

    pub fn detach(&self, conn: u64) {
        let _ = self.tx.try_send(Msg::Detach(conn));
    }
}

/// Every league of the server, by id.
pub struct Leagues {
    map: Mutex<chuhe_store::IdMap<i64, LeagueHandle>>,
    /// Where a league's log is read (the arbiters of one running elsewhere).
    persist: Arc<dyn Persist>,
    /// Several nodes: where a game's end goes when its league runs elsewhere.
    node: Option<Arc<Link>>,
    /// Several nodes: the arbiters of leagues that run on other nodes, read from their logs
    /// when one of their games is taken up here (an event's arbiters never change).
    remote_arbiters: Mutex<chuhe_store::IdMap<i64, Arc<Vec<i64>>>>,
}

impl Leagues {
    pub fn new(persist: Arc<dyn Persist>, node: Option<Arc<Link>>) -> Leagues {
        Leagues {
            map: Mutex::default(),
            persist,
            node,
            remote_arbiters: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, chuhe_store::IdMap<i64, LeagueHandle>> {
        match self.map.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Whether the arbiter with account `arbiter` rules on the games of league `league` (its id as
    /// the games carry it): the event's own arbiters do; an arbiter of another event, or of no
    /// event, is a spectator of them (no commands, the delayed view, no event log).
    pub fn arbiter_of(&self, league: &str, arbiter: i64) -> bool {
        let Ok(id) = league.parse::<i64>() else {
            return false;
        };
        match self.get(id) {
            Some(h) => h.snapshot().arbiters.contains(&arbiter),
            // Several nodes: the league runs elsewhere; its arbiters as its log names them.
            None => self.remote_arbiters(id).contains(&arbiter),
        }
    }

    /// The arbiters of a league running on another node, as last read (none: not read).
    pub(crate) fn remote_arbiters(&self, id: i64) -> Arc<Vec<i64>> {
        self.remote_arbiters
            .lock()
            .ok()
            .and_then(|m| m.get(&id).cloned())
            .unwrap_or_default()
    }

    /// Several nodes: reads the arbiters of the league a game belongs to from its log, when
    /// that league does not run here (so its arbiters rule on the game here too).
    pub(crate) async fn learn_arbiters(&self, key: Option<&str>) {
        let Some(id) = key
            .and_then(crate::adopt::league_board)
            .and_then(|b| b.league_id.parse::<i64>().ok())
        else {
            return;
        };
        if self.get(id).is_some()
            || self
                .remote_arbiters
                .lock()
                .is_ok_and(|m| m.contains_key(&id))
        {
            return;
        }
        match load(self.persist.as_ref(), id).await {
            Ok(league) => {
                if let Ok(mut m) = self.remote_arbiters.lock() {
                    m.insert(id, Arc::new(league.arbiters.clone()));
                }
            }
            Err(e) => warn!(league = id, error = %e, "cannot read the league's arbiters"),
        }
    }

    pub fn get(&self, id: i64) -> Option<LeagueHandle> {
        self.lock().get(&id).cloned()
    }

    pub fn all(&self) -> Vec<LeagueHandle> {
        let mut v: Vec<LeagueHandle> = self.lock().values().cloned().collect();
        v.sort_by_key(|h| h.id);
        v
    }

    /// A league game ended: its league learns it (a full mailbox is caught up on by the
    /// league's reconciliation when it next starts).
    pub fn game_ended(&self, league: i64, end: GameEnd) {
        self.game_ended_here(league, end);
    }

    /// As [`Leagues::game_ended`], and with several nodes the league's node learns it when
    /// the league runs elsewhere.
    pub(crate) fn game_ended_anywhere(&self, league: i64, end: GameEnd) {
        let Some(link) = &self.node else {
            return self.game_ended(league, end);
        };
        if !self.game_ended_here(league, end.clone()) {
            link.tell_league(league, end);
        }
    }

    /// As [`Leagues::game_ended`]; false when the league does not run on this node.
    pub(crate) fn game_ended_here(&self, league: i64, end: GameEnd) -> bool {
        let Some(h) = self.get(league) else {
            return false;
        };
        {
            if h.tx.try_send(Msg::GameEnded(end)).is_err() {
                warn!(
                    league,
                    "league mailbox full: a game end waits for reconciliation"
                );
            }
        }
        true
    }

    /// Several nodes: this node lost the league's lease; its runner stops at once, unclaims
    /// the league and hands its subscribers to the relay (they follow the league's next
    /// node); requests still in its mailbox are answered retryable.
    pub(crate) fn forget(&self, id: i64) {
        if let Some(h) = self.lock().remove(&id) {
            h.stop.send_replace(true);
        }
    }

    /// Removes the runner of `id` whose stop signal is `stop` (and only it: a new runner of
    /// the same league may have replaced it).
    fn remove(&self, id: i64, stop: &Arc<watch::Sender<bool>>) {
        let mut map = self.lock();
        if map.get(&id).is_some_and(|h| Arc::ptr_eq(&h.stop, stop)) {
            map.remove(&id);
        }
    }
}

impl LeagueHooks for Leagues {
    fn arbiter_of(&self, league: &str, arbiter: i64) -> bool {
        Leagues::arbiter_of(self, league, arbiter)
    }

    fn arbiter_calls(&self, league: i64) -> Option<super::spec::CallsSpec> {
        self.get(league)
            .and_then(|h| h.snapshot().spec.arbiter_calls)
    }

    fn game_ended_anywhere(&self, league: i64, end: GameEnd) {
        Leagues::game_ended_anywhere(self, league, end)
    }

    fn learn_arbiters<'a>(
        &'a self,
        key: Option<&'a str>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
        Box::pin(Leagues::learn_arbiters(self, key))
    }
}

/// Starts every stored league (at server start).
pub async fn start_all(env: &LeagueDeps) {
    let list = match env.persist.competitions().await {
        Ok(l) => l,
        Err(e) => {
            warn!(error = %e, "cannot list leagues");
            return;
        }
    };
    for c in list {
        start_owned(env, c.id.0).await;
    }
}

/// Starts a stored league's runner here unless it runs already — with several nodes, only when
/// this node takes its lease (`league:<id>`) and claims it in the store.
pub(crate) async fn start_owned(env: &LeagueDeps, id: i64) {
    if env.leagues.get(id).is_some() || !own(env, id).await {
        return;
    }
    match load(env.persist.as_ref(), id).await {
        Ok(league) => {
            spawn(env, league);
        }
        Err(e) => {
            error!(league = id, error = %e, "league not started");
            if let Some(link) = &env.node {
                // Not run here: free for a node that can.
                env.persist.unclaim(None, Some(id));
                let _ = link.cluster.release(&crate::node::league_key(id)).await;
            }
        }
    }
}

/// Several nodes: takes the league's lease and claims it in the store; true when this node
/// runs it (always, with one node).
pub(crate) async fn own(env: &LeagueDeps, id: i64) -> bool {
    let Some(link) = &env.node else {
        return true;
    };
    match link.cluster.acquire(&crate::node::league_key(id)).await {
        Ok(None) => match env.persist.claim_competition(id, &link.id).await {
            Ok(_) => {
                link.took_league(id);
                true
            }
            Err(e) => {
                warn!(league = id, error = %e, "cannot claim the league in the store");
                let _ = link.cluster.release(&crate::node::league_key(id)).await;
                false
            }
        },
        Ok(Some(_)) => false,
        Err(e) => {
            warn!(league = id, error = %e, "cannot take the league's lease");
            false
        }
    }
}

/// A stored league's state, folded from its log (without starting it).
pub async fn load(persist: &dyn Persist, id: i64) -> Result<League, String> {
    let events = persist
        .competition_events(id, 0)
        .await
        .map_err(|e| e.to_string())?;
    let entries = events.iter().map(entry_of).collect::<Result<Vec<_>, _>>()?;
    League::replay(id, &entries).map_err(|e| e.to_string())
}

fn entry_of(e: &CompetitionEvent) -> Result<Entry, String> {
    let event: LeagueEvent = serde_json::from_str(&e.payload)
        .map_err(|err| format!("entry {} ({}): {err}", e.seq, e.kind))?;
    Ok(Entry {
        seq: e.seq,
        at_ms: e.at_ms.max(0) as u64,
        actor: e.actor.map(|a| a.0),
        reason: e.reason.clone(),
        event,
    })
}

/// An account for a person of the event: the existing one with that name and role, or new.
pub async fn account(
    p: &dyn crate::persist::Persist,
    name: &str,
    role: Role,
) -> Result<Account, PersistError> {
    if let Some(a) = p.account_named(name, role).await? {
        return Ok(a);
    }
    match p.create_account(name, role).await {
        Ok(a) => Ok(a),
        // Created by someone else meanwhile.
        Err(e) if e.kind == crate::persist::ErrorKind::Conflict => p
            .account_named(name, role)
            .await?
            .ok_or_else(|| PersistError::unavailable(format!("account {name:?} vanished"))),
        Err(e) => Err(e),
    }
}

/// Why an event file could not become a league.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error(transparent)]
    Spec(#[from] super::spec::SpecError),
    #[error(transparent)]
    Store(#[from] PersistError),
}

/// Creates a league from an event file: the accounts of its players, captains and arbiters
/// (existing ones with the same name and role are reused), its log's first entry, its task.
pub async fn create(
    env: &LeagueDeps,
    spec: EventSpec,
    by: Option<i64>,
) -> Result<LeagueHandle, CreateError> {
    let rules = spec.rules()?;
    let times = spec.round_times(&rules, rules.planned_rounds())?;
    let mut teams = Vec::with_capacity(spec.teams.len());
    for t in &spec.teams {
        let mut acc = TeamAccounts::default();
        for p in &t.players {
            acc.players.push(
                account(env.persist.as_ref(), p.name(), Role::Player)
                    .await?
                    .id,
            );
        }
        let captains: Vec<String> = if t.captains.is_empty() {
            vec![format!("{} 领队", t.name)]
        } else {
            t.captains.clone()
        };
        for c in &captains {
            acc.captains
                .push(account(env.persist.as_ref(), c, Role::Player).await?.id);
        }
        teams.push(acc);
    }
    let mut arbiters = Vec::new();
    for a in &spec.arbiters {
        arbiters.push(account(env.persist.as_ref(), a, Role::Arbiter).await?.id);
    }
    let now = env.time.now_ms();
    let c = env
        .persist
        .create_competition(NewCompetition {
            name: spec.name.clone(),
            created_at_ms: now as i64,
            created_by: by.map(chuhe_store::PrincipalId),
        })
        .await?;
    let first = Entry {
        seq: 1,
        at_ms: now,
        actor: by,
        reason: None,
        event: LeagueEvent::Created {
            spec: Box::new(spec),
            teams,
            arbiters,
            rounds: times,
        },
    };
    let league = League::create(c.id.0, &first)
        .map_err(|e| PersistError::unavailable(format!("the new league does not fold: {e}")))?;
    if !own(env, c.id.0).await {
        warn!(league = c.id.0, "the new league's lease is held elsewhere");
    }
    env.persist
        .append_competition(c.id.0, vec![stored(&first)?])
        .await?;
    info!(league = c.id.0, "league created");
    Ok(spawn(env, league))
}

/// Decides and commits a command on a league that is not running yet (at server start, before
/// [`start_all`]: e.g. the demo moving the rounds of a league whose schedule passed while the
/// server was down, before the league's driver would start them all at once). `league` is
/// the stored state ([`load`]); it is brought up to date with the committed entries.
pub async fn command_stopped(
    env: &LeagueDeps,
    league: &mut League,
    cmd: LeagueCommand,
    actor: Actor,
    reason: Option<String>,
) -> Result<Vec<Entry>, RunError> {
    if env.leagues.get(league.id).is_some() {
        return Err(RunError::League(LeagueError::Conflict(format!(
            "league {} is running: send it the command",
            league.id
        ))));
    }
    let entries = decide(league, &cmd, &actor, reason.as_deref(), env.time.now_ms())?;
    if entries.is_empty() {
        return Ok(entries);
    }
    let rows = stored_all(&entries)?;
    env.persist
        .append_competition(league.id, rows)
        .await
        .map_err(|e| RunError::Store(e.to_string()))?;
    for e in &entries {
        league
            .fold(e)
            .map_err(|err| RunError::Store(format!("a committed entry did not fold: {err}")))?;
    }
    Ok(entries)
}

/// What the core decides on `cmd` by `actor`: the entries to commit; what waits for the
/// organiser is logged.
fn decide(
    league: &League,
    cmd: &LeagueCommand,
    actor: &Actor,
    reason: Option<&str>,
    now: u64,
) -> Result<Vec<Entry>, LeagueError> {
    let d = super::core::decide(league, cmd, &league_actor(actor), reason, now)?;
    for w in &d.waiting {
        warn!(league = league.id, error = %w.error(), "{}", w.what());
    }
    Ok(d.entries)
}

/// The league's view of who sends a command.
pub(crate) fn league_actor(a: &Actor) -> super::core::Actor {
    super::core::Actor {
        id: a.id,
        role: a.role.map(|r| match r {
            Role::Player => super::core::Role::Player,
            Role::Arbiter => super::core::Role::Arbiter,
            Role::Organizer => super::core::Role::Organizer,
        }),
    }
}

/// A game's result (the wire's number) in the league's terms; None: it has none.
fn game_end(result: i32) -> Option<ColourResult> {
    match w::Result::try_from(result).unwrap_or(w::Result::Unspecified) {
        w::Result::RedWins => Some(ColourResult::RedWins),
        w::Result::BlackWins => Some(ColourResult::BlackWins),
        w::Result::Draw => Some(ColourResult::Draw),
        w::Result::BothLose => Some(ColourResult::BothLose),
        w::Result::Unspecified => None,
    }
}

/// The entries as the store's log rows.
fn stored_all(entries: &[Entry]) -> Result<Vec<NewCompetitionEvent>, RunError> {
    entries
        .iter()
        .map(stored)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| RunError::Store(e.to_string()))
}

fn stored(e: &Entry) -> Result<NewCompetitionEvent, PersistError> {
    Ok(NewCompetitionEvent {
        seq: e.seq,
        kind: e.event.kind().to_string(),
        payload: serde_json::to_string(&e.event)
            .map_err(|err| PersistError::unavailable(format!("entry {}: {err}", e.seq)))?,
        at_ms: e.at_ms as i64,
        actor: e.actor.map(chuhe_store::PrincipalId),
        reason: e.reason.clone(),
    })
}

fn spawn(env: &LeagueDeps, league: League) -> LeagueHandle {
    let id = league.id;
    let (tx, rx) = mpsc::channel(1024);
    let (state_tx, state_rx) = watch::channel(Arc::new(league.clone()));
    // After a restart, what the stream shows starts from the stored state.
    let (public_tx, public_rx) = watch::channel(Arc::new(league.clone()));
    let (stop, stopped) = watch::channel(false);
    let handle = LeagueHandle {
        id,
        tx,
        state: state_rx,
        public: public_rx,
        stop: Arc::new(stop),
    };
    env.leagues.lock().insert(id, handle.clone());
    let runner = Runner {
        stop: handle.stop.clone(),
        stopped,
        fenced: false,
        env: env.clone(),
        league,
        state: state_tx,
        public: public_tx,
        ring: VecDeque::new(),
        subs: Vec::new(),
        channel: crate::node::Channel::of(
            env.node.as_ref().map(|l| l.publisher()),
            crate::node::league_channel(id),
        ),
        publishing: false,
        delayed: VecDeque::new(),
        retry_at: None,
        reconciled: false,
    };
    tokio::spawn(runner.run(rx).instrument(info_span!("league", league = id)));
    handle
}

struct Runner {
    /// Its handles' stop signal (to leave the league map when it stops on its own).
    stop: Arc<watch::Sender<bool>>,
    /// Set by [`Leagues::forget`] (the league's lease was lost).
    stopped: watch::Receiver<bool>,
    /// A commit was refused as fenced: another node runs the league now.
    fenced: bool,
    env: LeagueDeps,
    league: League,
    state: watch::Sender<Arc<League>>,
    /// The state as of the last public frame released.
    public: watch::Sender<Arc<League>>,
    /// Recent public frames (for resume by seq).
    ring: VecDeque<Arc<SharedFrame>>,
    subs: Vec<Outbox>,
    /// Several nodes: where the public stream is published for the other nodes' relays.
    channel: Option<crate::node::Channel>,
    /// False while the ring is rebuilt from the log (the other nodes' relays catch up).
    publishing: bool,
    /// Public frames held back by the broadcast delay: (release at, frame).
    delayed: VecDeque<(u64, Arc<SharedFrame>, Option<Arc<League>>)>,
    retry_at: Option<Instant>,
    reconciled: bool,
}

impl Runner {
    async fn run(mut self, mut rx: mpsc::Receiver<Msg>) {
        let _done = self.env.tasks_done.clone();
        let mut shutdown = self.env.shutdown.clone();
        let mut stopped = self.stopped.clone();
        // The public stream so far: every public entry of the log is in the ring.
        self.rebuild_ring().await;
        self.publishing = true;
        loop {
            if *shutdown.borrow() || self.lost() {
                break;
            }
            if !self.reconciled {
                self.reconciled = self.reconcile().await;
            }
            // What became due while nothing happened (or during an outage), and the games
            // the league wants set up.
            self.execute(LeagueCommand::Tick, Actor::SERVER, None)
                .await
                .ok();
            if self.lost() {
                break;
            }
            self.ensure_games().await;
            if self.lost() {
                break;
            }
            let now = self.env.time.now_ms();
            let due = next_due(&self.league, now).map(|t| self.env.time.instant_at(t));
            let release = self
                .delayed
                .front()
                .map(|(t, ..)| self.env.time.instant_at(*t));
            let wake = [due, release, self.retry_at]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
            tokio::select! {
                biased;
                _ = shutdown.changed() => break,
                _ = async { let _ = stopped.wait_for(|s| *s).await; } => break,
                msg = rx.recv() => {
                    let Some(msg) = msg else { break };
                    self.message(msg).await;
                    // Everything waiting, before looking at the clock again.
                    while !self.lost() {
                        let Ok(msg) = rx.try_recv() else { break };
                        self.message(msg).await;
                    }
                }
                _ = sleep_until(wake) => {
                    self.retry_at = None;
                    self.release_delayed();
                }
            }
        }
        if self.lost() {
            self.hand_over(rx).await;
        }
        debug!(league = self.league.id, "league runner stopped");
    }

    /// Several nodes: this node lost the league (its lease, or a fenced commit).
    fn lost(&self) -> bool {
        self.fenced || *self.stopped.borrow()
    }

    /// The league left this node: it is unclaimed and its lease given up, the requests still
    /// in its mailbox are answered retryable (nothing of theirs was committed here; asked
    /// again they reach the league's next node), and its subscribers follow it there.
    async fn hand_over(&mut self, mut rx: mpsc::Receiver<Msg>) {
        let id = self.league.id;
        warn!(
            league = id,
            "the league left this node; its runner stops here"
        );
        // A lost lease was handled by the relay already (with the league's removal, at the
        // same moment): a runner this node starts again meanwhile keeps its claim.
        self.env.leagues.remove(id, &self.stop);
        rx.close();
        let moved = || RunError::Store("the league moved to another node; retry".into());
        let mut subs = std::mem::take(&mut self.subs);
        while let Ok(msg) = rx.try_recv() {
            match msg {
                Msg::Command { reply, .. } => {
                    let _ = reply.send(Err(moved()));
                }
                // Not subscribed here: asked again, it reaches the league's next node.
                Msg::Subscribe { out, req, .. } => {
                    out.send_msg(w::ServerMessage {
                        kind: Some(server_message::Kind::Error(
                            crate::error::ErrorToWire::to_wire(
                                &crate::error::ClientError::Unavailable,
                                req,
                                &id.to_string(),
                            ),
                        )),
                    });
                }
                Msg::GameEnded(_) => {}
                Msg::Detach(conn) => subs.retain(|o| o.conn_id != conn),
            }
        }
        let Some(link) = self.env.node.clone() else {
            return;
        };
        if self.fenced {
            link.league_left(id);
            self.env.persist.unclaim(None, Some(id));
        }
        // Every subscriber was sent the ring (the released frames) up to here.
        let last = self.ring.back().map_or(0, |f| f.seq);
        link.ctl(crate::node::Ctl::LeagueLeft { id, subs, last });
        if self.fenced {
            let _ = link.cluster.release(&crate::node::league_key(id)).await;
        }
    }

    async fn message(&mut self, msg: Msg) {
        match msg {
            Msg::Command {
                cmd,
                actor,
                reason,
                reply,
            } => {
                let r = self.execute(cmd, actor, reason).await;
                let _ = reply.send(r);
            }
            Msg::GameEnded(end) => {
                let cmd = LeagueCommand::GameFinished {
                    game: end.game,
                    result: game_end(end.result),
                    reason: end.reason,
                    fouls: end.fouls,
                };
                if let Err(e) = self.execute(cmd, Actor::SERVER, None).await {
                    warn!(league = self.league.id, game = end.game, error = %e, "game end not recorded");
                    self.reconciled = false;
                    self.retry_at = Some(Instant::now() + RETRY);
                }
            }
            Msg::Subscribe {
                out,
                last_seq,
                req,
                relay,
            } => self.subscribe(out, last_seq, req, relay),
            Msg::Detach(conn) => self.subs.retain(|o| o.conn_id != conn),
        }
    }

    /// Decides a command, commits its entries, folds and publishes them.
    async fn execute(
        &mut self,
        cmd: LeagueCommand,
        actor: Actor,
        reason: Option<String>,
    ) -> Result<Vec<Entry>, RunError> {
        let now = self.env.time.now_ms();
        let entries = decide(&self.league, &cmd, &actor, reason.as_deref(), now)?;
        self.commit(entries).await
    }

    async fn commit(&mut self, entries: Vec<Entry>) -> Result<Vec<Entry>, RunError> {
        if entries.is_empty() {
            return Ok(entries);
        }
        let rows = stored_all(&entries)?;
        if let Err(e) = self
            .env
            .persist
            .append_competition(self.league.id, rows)
            .await
        {
            warn!(league = self.league.id, error = %e, "league commit failed");
            if e.is_fenced() {
                // Another node claimed the league: nothing more is written or set up here.
                self.env
                    .metrics
                    .cluster_fenced_commits_total
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.fenced = true;
                return Err(RunError::Store(
                    "the league moved to another node; retry".into(),
                ));
            }
            // It may have committed after all: read the log back before anything else.
            self.resync().await;
            return Err(RunError::Store(e.to_string()));
        }
        for e in &entries {
            if let Err(err) = self.league.fold(e) {
                error!(league = self.league.id, error = %err, "a committed entry did not fold");
            }
        }
        self.publish(&entries);
        Ok(entries)
    }

    /// Catches up with the stored log (after a commit whose outcome is unknown).
    async fn resync(&mut self) {
        match self
            .env
            .persist
            .competition_events(self.league.id, self.league.seq)
            .await
        {
            Ok(events) => {
                let mut entries = Vec::new();
                for ev in &events {
                    match entry_of(ev) {
                        Ok(e) => entries.push(e),
                        Err(err) => {
                            error!(league = self.league.id, error = %err, "unreadable entry");
                            return;
                        }
                    }
                }
                for e in &entries {
                    if let Err(err) = self.league.fold(e) {
                        error!(league = self.league.id, error = %err, "stored entry did not fold");
                        return;
                    }
                }
                self.publish(&entries);
            }
            Err(e) => {
                warn!(league = self.league.id, error = %e, "cannot read the league's log back");
                self.retry_at = Some(Instant::now() + RETRY);
            }
        }
    }

    /// Makes the state and the public entries visible.
    fn publish(&mut self, entries: &[Entry]) {
        let now = Arc::new(self.league.clone());
        self.state.send_replace(now.clone());
        let delay_ms = u64::from(self.league.rules.delay.seconds) * 1000;
        // Public seqs: the league's count after these entries, counted back.
        for e in entries {
            crate::desks::deliver_message(&self.env.persist, &self.env.desks, &self.league, e);
        }
        let public: Vec<&Entry> = entries.iter().filter(|e| e.event.is_public()).collect();
        let first = self.league.public_seq + 1 - public.len() as u64;
        for (i, e) in public.into_iter().enumerate() {
            let frame = Arc::new(frame(self.league.id, first + i as u64, e));
            if delay_ms == 0 {
                self.release(frame, Some(now.clone()));
            } else {
                self.delayed
                    .push_back((e.at_ms + delay_ms, frame, Some(now.clone())));
            }
        }
        self.release_delayed();
    }

    fn release_delayed(&mut self) {
        let now = self.env.time.now_ms();
        while self.delayed.front().is_some_and(|(t, ..)| *t <= now) {
            if let Some((_, f, state)) = self.delayed.pop_front() {
                self.release(f, state);
            }
        }
    }

    /// Releases a public frame; `state`: the league as of its commit, from then on what the
    /// public stream shows.
    fn release(&mut self, f: Arc<SharedFrame>, state: Option<Arc<League>>) {
        if let Some(st) = state {
            self.public.send_replace(st);
        }
        if self.ring.len() >= REPLAY {
            self.ring.pop_front();
        }
        self.ring.push_back(f.clone());
        self.subs.retain(|o| o.send(Out::Shared(f.clone())));
        if let (Some(c), true) = (&self.channel, self.publishing) {
            c.publish(&f);
        }
    }

    /// The ring from the stored log (at start): every public entry old enough to be public.
    async fn rebuild_ring(&mut self) {
        let Ok(events) = self.env.persist.competition_events(self.league.id, 0).await else {
            return;
        };
        let delay_ms = u64::from(self.league.rules.delay.seconds) * 1000;
        let mut public_seq = 0;
        // The league entry by entry: what the stream shows with each delayed frame.
        let mut work: Option<League> = None;
        for ev in &events {
            let Ok(e) = entry_of(ev) else { continue };
            if delay_ms > 0 {
                work = match work.take() {
                    None => League::create(self.league.id, &e).ok(),
                    Some(mut l) => l.fold(&e).is_ok().then_some(l),
                };
            }
            if !e.event.is_public() {
                continue;
            }
            public_seq += 1;
            let f = Arc::new(frame(self.league.id, public_seq, &e));
            if delay_ms == 0 {
                self.release(f, None);
            } else {
                let release_at = e.at_ms + delay_ms;
                let state = (release_at > self.env.time.now_ms())
                    .then(|| work.as_ref().map(|l| Arc::new(l.clone())))
                    .flatten();
                if state.is_some() && self.delayed.is_empty() {
                    // The state the stream showed before this first held-back entry.
                    if let Some(before) = self.public_before(&events, e.seq) {
                        self.public.send_replace(Arc::new(before));
                    }
                }
                self.delayed.push_back((release_at, f, state));
            }
        }
        self.release_delayed();
    }

    /// The league folded from its stored log up to (not including) entry `seq`.
    fn public_before(&self, events: &[CompetitionEvent], seq: u64) -> Option<League> {
        let entries: Vec<Entry> = events
            .iter()
            .filter_map(|ev| entry_of(ev).ok())
            .take_while(|e| e.seq < seq)
            .collect();
        League::replay(self.league.id, &entries).ok()
    }

    fn subscribe(&mut self, out: Outbox, last_seq: u64, req: u32, relay: bool) {
        let top = self.ring.back().map_or(0, |f| f.seq);
        let first = self.ring.front().map_or(top + 1, |f| f.seq);
        out.send_msg(w::ServerMessage {
            kind: Some(server_message::Kind::Reply(w::Reply {
                request_id: req,
                game_id: String::new(),
                seq: top,
            })),
        });
        let from = if last_seq + 1 >= first { last_seq } else { 0 };
        for f in self.ring.iter().filter(|f| f.seq > from) {
            out.send(Out::Shared(f.clone()));
        }
        if relay {
            return;
        }
        self.subs.retain(|o| o.conn_id != out.conn_id);
        self.subs.push(out);
    }

    /// Sets up every game the league wants: stores it by key (idempotent), starts it on its
    /// shard, records it in the league's log.
    async fn ensure_games(&mut self) {
        let now = self.env.time.now_ms();
        let wants = wanted_games(&self.league, now);
        if wants.is_empty() {
            return;
        }
        // Every row in one store transaction, then each game started on its shard.
        let news = wants.iter().map(|w| self.new_game(w)).collect();
        let rows = match self.env.persist.create_games(news).await {
            Ok(rows) => rows,
            Err(e) => {
                warn!(league = self.league.id, games = wants.len(), error = %e, "league games not set up; retrying");
                self.retry_at = Some(Instant::now() + RETRY);
                return;
            }
        };
        let mut cmds = Vec::with_capacity(wants.len());
        for (want, row) in wants.into_iter().zip(rows) {
            // Creates its first event if it has none (a fresh game), else takes it up.
            match self.env.registry.get_or_load(row.id.0).await {
                Ok(_) => cmds.push(LeagueCommand::GameCreated {
                    at: want.at,
                    stage: want.stage,
                    game: row.id.0,
                    first_colour: want.first_colour,
                    red: want.red.0,
                    black: want.black.0,
                    start_ms: want.start_ms,
                }),
                Err(e) => {
                    warn!(league = self.league.id, at = %want.at, error = %e, "league game not set up; retrying");
                    self.retry_at = Some(Instant::now() + RETRY);
                }
            }
        }
        // All of them in one commit: a round of many boards is one transaction.
        let mut work = self.league.clone();
        let mut entries = Vec::new();
        for cmd in cmds {
            match decide(&work, &cmd, &Actor::SERVER, None, now) {
                Ok(es) => {
                    for e in &es {
                        if work.fold(e).is_err() {
                            break;
                        }
                    }
                    entries.extend(es);
                }
                Err(e) => warn!(league = self.league.id, error = %e, "league game not recorded"),
            }
        }
        if let Err(e) = self.commit(entries).await {
            warn!(league = self.league.id, error = %e, "league games not recorded; retrying");
            self.retry_at = Some(Instant::now() + RETRY);
        }
    }

    /// A wanted game's row: stored by its key, so setting it up again finds it.
    fn new_game(&self, want: &super::core::GameWant) -> NewGame {
        let l = &self.league;
        NewGame {
            red: chuhe_store::PrincipalId(want.red.0),
            black: chuhe_store::PrincipalId(want.black.0),
            time_control: want.time_control.clone(),
            ruleset: "cxa".into(),
            start_fen: chuhe_rules::START_FEN.into(),
            broadcast_delay: chuhe_store::BroadcastDelay {
                moves: l.rules.delay.plies,
                millis: u64::from(l.rules.delay.seconds) * 1000,
            },
            event: Some(l.spec.name.clone()),
            round: Some(want.at.round.to_string()),
            board: Some(want.at.board),
            scheduled_start_ms: Some(want.start_ms as i64),
            created_at_ms: self.env.time.now_ms() as i64,
            start_mode: "scheduled".into(),
            lateness_limit_ms: l.rules.lateness_ms as i64,
            key: Some(want.key(l.id)),
        }
    }

    /// Learns the end of every game of the league that ended while the league could not hear
    /// it (a restart, a full mailbox). True when every game could be looked at.
    async fn reconcile(&mut self) -> bool {
        let playing: Vec<i64> = self
            .league
            .rounds
            .iter()
            .flat_map(|r| &r.tables)
            .flat_map(|t| &t.boards)
            .flat_map(|b| &b.games)
            .filter(|g| g.finished.is_none())
            .map(|g| g.game)
            .collect();
        let mut complete = true;
        for game in playing {
            let h = match self.env.registry.get_or_load(game).await {
                Ok(h) => h,
                Err(e) => {
                    warn!(
                        league = self.league.id,
                        game,
                        code = e.code(),
                        "league game not loaded"
                    );
                    complete = false;
                    continue;
                }
            };
            let Some(rec) = h.record(false).await else {
                complete = false;
                continue;
            };
            let v = rec.view;
            if v.finished {
                let cmd = LeagueCommand::GameFinished {
                    game,
                    result: game_end(v.result),
                    reason: v.end_reason.clone(),
                    fouls: [v.red_fouls, v.black_fouls],
                };
                if self.execute(cmd, Actor::SERVER, None).await.is_err() {
                    complete = false;
                }
            }
        }
        if !complete {
            self.retry_at = Some(Instant::now() + RETRY);
        }
        complete
    }
}

/// The wire frame of a public entry: its JSON, under the league's public seq.
fn frame(league: i64, seq: u64, e: &Entry) -> SharedFrame {
    let json = serde_json::to_string(&e.event).unwrap_or_default();
    SharedFrame::new(
        seq,
        w::ServerMessage {
            kind: Some(server_message::Kind::League(w::LeagueUpdate {
                league_id: league.to_string(),
                seq,
                at_ms: e.at_ms,
                kind: e.event.kind().to_string(),
                json,
            })),
        },
    )
}
