//! A game: the position, the clock, the ruling state and the game's subscribers, owned by
//! the one shard task ([`crate::shard`]) that runs it. Everyone else holds a [`GameHandle`]
//! (the shard's bounded mailbox); nothing on the move path takes a lock.
//!
//! Every change follows one path: [`Game::prepare`] computes it (synchronously), the shard
//! commits its events to the store together with other games' changes, and only then does
//! [`Game::settle`] keep the state, acknowledge and broadcast. A failed commit changes
//! nothing. A move (the hot path) is applied to the state in place and undone if it is
//! refused or its commit fails (`Undo`, [`Board::take_back`]); the rarer commands work on a
//! copy.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chuhe_clock::{Clock, ClockSnapshot, Controls, LagConfig, Millis};
use chuhe_proto::v1::{
    self as w, ArbiterNote, ClockState, GameEvent, GameInfo, GameSummary, Result as WResult,
    ServerMessage, Side, SideClock, StoredEvent, arbiter_command::Action, game_event::Kind,
    server_message,
};
use prost::Message as _;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::{debug, error, info, warn};

use crate::Env;
use crate::board::{Board, Played};
use crate::error::ClientError;
use crate::outbox::{Out, Outbox, SharedFrame};
use crate::persist::{Account, AppendOp, EventRow, FinishRow, GameRow, Role};
use crate::shard::ShardCmd;
use crate::view::View;

/// Who sent a request.
#[derive(Debug, Clone)]
pub struct Principal {
    /// None: anonymous spectator.
    pub account: Option<Account>,
}

impl Principal {
    pub fn id(&self) -> Option<i64> {
        self.account.as_ref().map(|a| a.id)
    }
    pub fn role(&self) -> Option<Role> {
        self.account.as_ref().map(|a| a.role)
    }
    pub fn sees_live(&self) -> bool {
        matches!(self.role(), Some(Role::Arbiter | Role::Organizer))
    }
    pub fn wire_role(&self) -> w::Role {
        match self.role() {
            None => w::Role::Spectator,
            Some(Role::Player) => w::Role::Player,
            Some(Role::Arbiter) => w::Role::Arbiter,
            Some(Role::Organizer) => w::Role::Organizer,
        }
    }
}

/// A client request routed to a game.
#[derive(Debug)]
pub struct Request {
    pub req: u32,
    pub who: Arc<Principal>,
    pub out: Outbox,
    /// The connection's round-trip estimate (lag compensation bound).
    pub lag: Duration,
    pub received: Instant,
    pub body: Body,
}

#[derive(Debug)]
pub enum Body {
    Subscribe {
        last_seq: u64,
    },
    Unsubscribe,
    Move {
        ply: u32,
        mv: String,
        offer_draw: bool,
        think_ms: Option<u32>,
    },
    OfferDraw,
    AnswerDraw {
        accept: bool,
    },
    Resign,
    ClaimMoveLimit,
    RequestRuling,
    Arbiter {
        reason: String,
        action: Action,
    },
}

/// A game's record as seen by some audience.
#[derive(Debug, Clone)]
pub struct RecordView {
    pub view: View,
}

/// The handle to a game: its shard's mailbox, the game's id and summary.
#[derive(Clone)]
pub struct GameHandle {
    pub id: i64,
    tx: mpsc::Sender<ShardCmd>,
    pub summary: Arc<Mutex<GameSummary>>,
    /// False once the shard has unloaded the game (or stopped).
    alive: Arc<AtomicBool>,
}

impl std::fmt::Debug for GameHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GameHandle({})", self.id)
    }
}

impl GameHandle {
    /// Routes a request; a full mailbox answers `busy` rather than waiting.
    pub fn send(&self, r: Request) -> Result<(), ClientError> {
        match self.tx.try_send(ShardCmd::Client(self.id, Box::new(r))) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => Err(ClientError::Busy),
            Err(mpsc::error::TrySendError::Closed(_)) => {
                Err(ClientError::GameNotFound(self.id.to_string()))
            }
        }
    }

    pub fn detach(&self, conn_id: u64) {
        let _ = self.tx.try_send(ShardCmd::Detach(self.id, conn_id));
    }

    pub async fn record(&self, public: bool) -> Option<RecordView> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(ShardCmd::Record {
                game: self.id,
                public,
                reply: tx,
            })
            .await
            .ok()?;
        rx.await.ok()
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire) && !self.tx.is_closed()
    }
}

/// Everything needed to start a game actor.
pub struct GameSeed {
    pub row: GameRow,
    pub red: Account,
    pub black: Account,
    pub move_limit_plies: u32,
}

fn cside(s: Side) -> chuhe_clock::Side {
    if s == Side::Black {
        chuhe_clock::Side::Black
    } else {
        chuhe_clock::Side::Red
    }
}

fn wside(s: chuhe_clock::Side) -> Side {
    match s {
        chuhe_clock::Side::Red => Side::Red,
        chuhe_clock::Side::Black => Side::Black,
    }
}

fn other(s: Side) -> Side {
    if s == Side::Red {
        Side::Black
    } else {
        Side::Red
    }
}

fn win_for(s: Side) -> WResult {
    if s == Side::Red {
        WResult::RedWins
    } else {
        WResult::BlackWins
    }
}

fn side_name(s: Side) -> &'static str {
    if s == Side::Red { "Red" } else { "Black" }
}

pub fn result_text(r: WResult) -> &'static str {
    match r {
        WResult::RedWins => "1-0",
        WResult::BlackWins => "0-1",
        WResult::Draw => "1/2-1/2",
        WResult::BothLose => "0-0",
        WResult::Unspecified => "*",
    }
}

fn sidx(s: Side) -> usize {
    if s == Side::Black { 1 } else { 0 }
}

/// The game state that changes with events. The rarer commands clone it, change the clone and
/// swap it in after the commit; a move changes it in place (see [`Undo`]).
#[derive(Clone)]
struct State {
    board: Board,
    /// Everything but the board: small, so a move saves a copy of it to undo.
    status: Status,
}

/// The part of a [`State`] besides the board.
#[derive(Clone)]
struct Status {
    clock: Clock,
    fouls: [u32; 2],
    draw_offer: Option<Side>,
    /// A side whose offer was refused may not offer again until the opponent has offered.
    offer_blocked: [bool; 2],
    result: Option<(WResult, String)>,
    /// The last move, for idempotent resends.
    last_move: Option<LastMove>,
}

/// The last move, for idempotent resends (its texts are in the live view's record).
#[derive(Clone, Copy)]
struct LastMove {
    ply: u32,
    seq: u64,
    side: Side,
}

/// What a move applied in place needs to be undone if its commit fails: the status from
/// before it (the board takes the move back itself, [`Board::take_back`]).
struct Undo(Status);

/// A pending event batch: the events (without seq) and optional finish.
#[derive(Default)]
struct Batch {
    kinds: Vec<(Kind, Option<i64>, Option<String>)>,
}

impl Batch {
    fn push(&mut self, k: Kind) {
        self.kinds.push((k, None, None));
    }
    fn push_by(&mut self, k: Kind, by: i64, why: &str) {
        self.kinds.push((k, Some(by), Some(why.to_string())));
    }
}

/// How a change becomes the game's state once committed.
enum Apply {
    /// Already applied in place (a move); undone with this if the commit fails (boxed: a
    /// game's slot in its shard holds its change in flight, and most games have none).
    InPlace(Box<Undo>),
    /// The next state, swapped in after the commit.
    Replace(Box<State>),
}

/// A change a command or timer wants committed: its events and how the state changes.
pub(crate) struct Change {
    batch: Batch,
    apply: Apply,
    /// When it happens (the events' time).
    now: u64,
    /// The seq to acknowledge; None: the last event of the batch.
    ack_seq: Option<u64>,
    /// The requester is told this instead of a reply once the change is committed (a move
    /// that arrived after the flag fell: the flag is committed, the move refused).
    error_after: Option<ClientError>,
    is_move: bool,
    /// A flag the timer found: retried shortly if its commit fails.
    is_flag: bool,
}

impl Change {
    fn replace(batch: Batch, next: Box<State>, now: u64) -> Change {
        Change {
            batch,
            apply: Apply::Replace(next),
            now,
            ack_seq: None,
            error_after: None,
            is_move: false,
            is_flag: false,
        }
    }
}

/// An event with its protobuf frame when that could be cut from the event's stored form.
pub(crate) type Framed = (GameEvent, Option<Vec<u8>>);

/// A change handed to the store: what settles it once the commit's outcome is known.
pub(crate) struct Staged {
    events: Vec<Framed>,
    apply: Apply,
    ack_seq: u64,
    error_after: Option<ClientError>,
    is_move: bool,
    is_flag: bool,
}

struct Pending {
    release_ms: u64,
    min_plies: u32,
    /// The event, in the frame that carries it.
    frame: Arc<SharedFrame>,
}

pub(crate) struct Game {
    id: i64,
    gid: String,
    info: GameInfo,
    red: i64,
    black: i64,
    /// Boxed: the rarer handlers clone it, change the clone and swap it in after the commit
    /// (a move changes it in place); boxed, the handlers' futures hold a pointer instead of a
    /// 1.7 KB copy at each await.
    st: Box<State>,
    seq: u64,
    env: Env,
    live: View,
    public: Option<View>,
    ring: VecDeque<Arc<SharedFrame>>,
    public_ring: VecDeque<Arc<SharedFrame>>,
    live_subs: Vec<Outbox>,
    public_subs: Vec<Outbox>,
    delayed: VecDeque<Pending>,
    delay_plies: u32,
    delay_ms: u64,
    summary: Arc<Mutex<GameSummary>>,
    move_limit: u32,
    finished_at: Option<Instant>,
    commit_retry: Option<Instant>,
    alive: Arc<AtomicBool>,
    /// The time controls' text for the clock snapshot stored with each change.
    controls_text: crate::snapshot::ControlsText,
}

/// Creates a new game: commits its first event, then starts the actor.
pub async fn create(env: Env, seed: GameSeed) -> Result<GameHandle, ClientError> {
    let (game, _) = Game::build(env.clone(), seed, None)?;
    game.start_new().await
}

/// Recovers a stored game (finished or not) from its event log.
pub async fn recover(env: Env, seed: GameSeed) -> Result<GameHandle, String> {
    let events = env
        .persist
        .events(seed.row.id)
        .await
        .map_err(|e| e.to_string())?;
    if events.is_empty() {
        // Created but its first event never committed: create it now.
        let (game, _) = Game::build(env.clone(), seed, None).map_err(|e| e.to_string())?;
        return game.start_new().await.map_err(|e| e.to_string());
    }
    let mut stored = Vec::with_capacity(events.len());
    for (seq, payload) in events {
        let s = StoredEvent::decode(payload.as_slice())
            .map_err(|e| format!("event {seq} of game {}: {e}", seed.row.id))?;
        stored.push(s);
    }
    let (mut game, _) = Game::build(env.clone(), seed, Some(&stored)).map_err(|e| e.to_string())?;
    game.replay(stored)?;
    game.resume_after_restart().await
}

impl Game {
    fn build(
        env: Env,
        seed: GameSeed,
        _stored: Option<&[StoredEvent]>,
    ) -> Result<(Game, ()), ClientError> {
        let row = &seed.row;
        let move_limit = if seed.move_limit_plies == 0 {
            120
        } else {
            seed.move_limit_plies
        };
        let board = Board::new(&row.start_fen, &row.ruleset, move_limit)
            .map_err(ClientError::InvalidArgument)?;
        let controls: Controls = row
            .time_control
            .parse()
            .map_err(|e: chuhe_clock::ParseError| ClientError::InvalidArgument(e.to_string()))?;
        let clock = Clock::new(controls, LagConfig::default());
        let gid = row.id.to_string();
        let info = GameInfo {
            game_id: gid.clone(),
            red_id: row.red.to_string(),
            red_name: seed.red.name.clone(),
            black_id: row.black.to_string(),
            black_name: seed.black.name.clone(),
            time_control: row.time_control.clone(),
            ruleset: row.ruleset.clone(),
            initial_fen: board.fen(),
            event: row.event.clone().unwrap_or_default(),
            round: row.round.clone().unwrap_or_default(),
            board: row.board.map(|b| b.to_string()).unwrap_or_default(),
            delay: Some(w::BroadcastDelay {
                plies: row.delay_plies,
                seconds: (row.delay_ms / 1000) as u32,
            }),
            move_limit_plies: seed.move_limit_plies,
            created_at_ms: row.created_at_ms,
        };
        let delayed_view = row.delay_plies > 0 || row.delay_ms > 0;
        let summary = Arc::new(Mutex::new(GameSummary {
            game_id: gid.clone(),
            red_name: seed.red.name.clone(),
            black_name: seed.black.name.clone(),
            time_control: row.time_control.clone(),
            ..GameSummary::default()
        }));
        Ok((
            Game {
                id: row.id,
                gid: gid.clone(),
                info,
                red: row.red,
                black: row.black,
                st: Box::new(State {
                    board,
                    status: Status {
                        clock,
                        fouls: [0, 0],
                        draw_offer: None,
                        offer_blocked: [false, false],
                        result: None,
                        last_move: None,
                    },
                }),
                seq: 0,
                env,
                live: View::new(&gid, false),
                public: delayed_view.then(|| View::new(&gid, true)),
                ring: VecDeque::new(),
                public_ring: VecDeque::new(),
                live_subs: Vec::new(),
                public_subs: Vec::new(),
                delayed: VecDeque::new(),
                delay_plies: row.delay_plies,
                delay_ms: row.delay_ms,
                summary,
                move_limit,
                finished_at: None,
                commit_retry: None,
                alive: Arc::new(AtomicBool::new(true)),
                controls_text: Default::default(),
            },
            (),
        ))
    }

    fn now(&self) -> u64 {
        self.env.time.now_ms()
    }

    fn clock_state(st: &State, now: u64) -> ClockState {
        let v = st.status.clock.view(Millis(now));
        let sc = |s: chuhe_clock::SideView| SideClock {
            remaining_ms: s.period_remaining_ms.unwrap_or(s.remaining_ms),
            periods_left: s.periods_left,
            in_byoyomi: s.period_remaining_ms.is_some(),
        };
        let running = if st.status.result.is_some()
            || v.paused
            || v.flag.is_some()
            || !st.status.clock.is_started()
        {
            Side::Unspecified
        } else {
            v.to_move.map(wside).unwrap_or(Side::Unspecified)
        };
        ClockState {
            red: Some(sc(v.red)),
            black: Some(sc(v.black)),
            running: running as i32,
            paused: v.paused,
        }
    }

    /// Hands the game to its shard; from now on the handle routes to it.
    async fn adopt(self) -> Result<GameHandle, ClientError> {
        let tx = self.env.shards.sender_for(self.id);
        let handle = GameHandle {
            id: self.id,
            tx: tx.clone(),
            summary: self.summary.clone(),
            alive: self.alive.clone(),
        };
        tx.send(ShardCmd::Adopt(Box::new(self)))
            .await
            .map_err(|_| ClientError::ShuttingDown)?;
        Ok(handle)
    }

    async fn start_new(mut self) -> Result<GameHandle, ClientError> {
        let now = self.now();
        let mut next = self.st.clone();
        next.status
            .clock
            .start(Millis(now))
            .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
        let clock = Game::clock_state(&next, now);
        let mut b = Batch::default();
        b.push(Kind::Created(w::GameCreated {
            info: Some(self.info.clone()),
            clock: Some(clock),
        }));
        let events = self.commit_now(Change::replace(b, next, now)).await?;
        self.env.metrics.live_games.fetch_add(1, Ordering::Relaxed);
        self.publish(events);
        info!(game = self.id, "game created");
        self.adopt().await
    }

    /// Rebuilds state from stored events (recovery).
    fn replay(&mut self, stored: Vec<StoredEvent>) -> Result<(), String> {
        let mut last_clock: Option<ClockSnapshot> = None;
        for s in stored {
            // Either stored form (protobuf, or the JSON of older servers).
            if let Some(snap) = crate::snapshot::stored_clock(&s)
                .map_err(|e| format!("event {} of game {}: {e}", self.seq + 1, self.id))?
            {
                last_clock = Some(snap);
            }
            let Some(ev) = s.event else {
                return Err("stored event without event".into());
            };
            if ev.seq != self.seq + 1 {
                return Err(format!("event log gap at seq {}", ev.seq));
            }
            match &ev.kind {
                Some(Kind::Move(m)) => {
                    let mv = m.r#move.clone().unwrap_or_default();
                    let side = self.st.board.to_move();
                    self.st
                        .board
                        .play(&mv.iccs)
                        .map_err(|e| format!("stored move {} refused: {e}", mv.iccs))?;
                    if self.st.status.draw_offer == Some(other(side)) {
                        self.st.status.offer_blocked[sidx(other(side))] = true;
                    }
                    self.st.status.draw_offer = None;
                    self.st.status.last_move = Some(LastMove {
                        ply: mv.ply,
                        seq: ev.seq,
                        side,
                    });
                }
                Some(Kind::DrawOffered(d)) => {
                    let s = Side::try_from(d.side).unwrap_or(Side::Red);
                    self.st.status.draw_offer = Some(s);
                    self.st.status.offer_blocked[sidx(other(s))] = false;
                }
                Some(Kind::DrawDeclined(d)) => {
                    let decliner = Side::try_from(d.side).unwrap_or(Side::Red);
                    self.st.status.offer_blocked[sidx(other(decliner))] = true;
                    self.st.status.draw_offer = None;
                }
                Some(Kind::Foul(f)) => {
                    let s = Side::try_from(f.side).unwrap_or(Side::Red);
                    self.st.status.fouls[sidx(s)] = f.count;
                }
                Some(Kind::Ended(e)) => {
                    self.st.status.result = Some((
                        WResult::try_from(e.result).unwrap_or(WResult::Unspecified),
                        e.reason.clone(),
                    ));
                    self.st.status.draw_offer = None;
                }
                Some(Kind::RulingOverridden(o)) if o.result != WResult::Unspecified as i32 => {
                    self.st.status.result = Some((
                        WResult::try_from(o.result).unwrap_or(WResult::Unspecified),
                        "arbiter".into(),
                    ));
                }
                _ => {}
            }
            self.seq = ev.seq;
            let frame = Arc::new(self.frame_for(&ev));
            self.live.apply(&ev);
            push_ring(&mut self.ring, frame.clone(), self.env.config.replay_events);
            if let Some(p) = &mut self.public {
                p.apply(&ev);
                push_ring(&mut self.public_ring, frame, self.env.config.replay_events);
            }
        }
        if let Some(snap) = last_clock {
            self.st.status.clock =
                Clock::restore(&snap, Millis(self.now())).map_err(|e| e.to_string())?;
        }
        if self.live.info.move_limit_plies > 0 {
            self.move_limit = self.live.info.move_limit_plies;
        }
        self.info = self.live.info.clone();
        self.update_summary();
        Ok(())
    }

    async fn resume_after_restart(mut self) -> Result<GameHandle, String> {
        if self.st.status.result.is_none() {
            let now = self.now();
            let downtime = now.saturating_sub(self.live.at_ms);
            let next = self.st.clone();
            let mut b = Batch::default();
            b.push(Kind::ServerRestarted(w::ServerRestarted {
                clock: Some(Game::clock_state(&next, now)),
                downtime_ms: downtime,
            }));
            let events = self
                .commit_now(Change::replace(b, next, now))
                .await
                .map_err(|e| e.to_string())?;
            self.publish(events);
            self.env
                .metrics
                .live_games
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            info!(game = self.id, downtime_ms = downtime, "game recovered");
        } else {
            self.finished_at = Some(Instant::now());
        }
        self.adopt().await.map_err(|e| e.to_string())
    }

    fn frame_for(&self, ev: &GameEvent) -> SharedFrame {
        SharedFrame::new(
            ev.seq,
            ServerMessage {
                kind: Some(server_message::Kind::Event(ev.clone())),
            },
        )
    }

    /// Commits a change right away through the store (a game not yet handed to its shard:
    /// its first event); Ok: the committed events, to publish.
    async fn commit_now(&mut self, change: Change) -> Result<Vec<GameEvent>, ClientError> {
        let (op, staged) = self.stage(change);
        let t = Instant::now();
        let r = self.env.persist.append(op.game, op.events, op.finish).await;
        self.env.metrics.commit_latency.observe(t.elapsed());
        let ok = r.is_ok();
        match self.settle(staged, ok) {
            Ok((_, events)) => Ok(events.into_iter().map(|(ev, _)| ev).collect()),
            Err(()) => Err(ClientError::StoreUnavailable),
        }
    }

    /// Gives a change's events their seqs and their stored form: the append for the store, and
    /// what [`Game::settle`] needs once the commit's outcome is known. Nothing of the game
    /// changes until then (a move is already applied in place and is undone if it fails).
    pub(crate) fn stage(&mut self, change: Change) -> (AppendOp, Staged) {
        let Change {
            batch,
            apply,
            now,
            ack_seq,
            error_after,
            is_move,
            is_flag,
        } = change;
        let clock = match &apply {
            Apply::InPlace(_) => &self.st.status.clock,
            Apply::Replace(next) => &next.status.clock,
        };
        let snapshot =
            crate::snapshot::to_wire_cached(&clock.snapshot(Millis(now)), &mut self.controls_text);
        let n = batch.kinds.len();
        let mut snapshot = Some(snapshot);
        let mut rows = Vec::with_capacity(n);
        let mut events = Vec::with_capacity(n);
        let mut finish = None;
        for (i, (kind, actor, reason)) in batch.kinds.into_iter().enumerate() {
            let seq = self.seq + 1 + i as u64;
            let label = kind_label(&kind);
            if let Kind::Ended(e) = &kind {
                finish = Some(FinishRow {
                    result: result_text(
                        WResult::try_from(e.result).unwrap_or(WResult::Unspecified),
                    )
                    .to_string(),
                    reason: e.reason.clone(),
                    at_ms: now,
                });
            }
            // The event is moved into the stored form for encoding and taken back out.
            let mut stored = StoredEvent {
                event: Some(GameEvent {
                    game_id: self.gid.clone(),
                    seq,
                    at_ms: now,
                    kind: Some(kind),
                }),
                clock_snapshot: String::new(),
                clock: if i + 1 == n { snapshot.take() } else { None },
            };
            let payload = stored.encode_to_vec();
            let frame = crate::snapshot::event_frame(&payload);
            rows.push(EventRow {
                seq,
                kind: label,
                payload,
                at_ms: now,
                actor,
                reason,
            });
            events.extend(stored.event.take().map(|ev| (ev, frame)));
        }
        let last = self.seq + n as u64;
        (
            AppendOp {
                game: self.id,
                events: rows,
                finish,
            },
            Staged {
                events,
                apply,
                ack_seq: ack_seq.unwrap_or(last),
                error_after,
                is_move,
                is_flag,
            },
        )
    }

    /// Settles a staged change once its commit's outcome is known: committed, the state
    /// becomes the change's and the events (with their seqs) and the seq to acknowledge are
    /// returned for publication; failed, nothing changes (a move is taken back).
    pub(crate) fn settle(
        &mut self,
        staged: Staged,
        committed: bool,
    ) -> Result<(u64, Vec<Framed>), ()> {
        let was_finished = match &staged.apply {
            Apply::InPlace(undo) => undo.0.result.is_some(),
            Apply::Replace(_) => self.st.status.result.is_some(),
        };
        if !committed {
            self.env
                .metrics
                .store_errors_total
                .fetch_add(1, Ordering::Relaxed);
            warn!(game = self.id, "commit failed; state unchanged");
            if let Apply::InPlace(undo) = staged.apply {
                self.undo_move(undo);
            }
            if staged.is_flag {
                self.commit_retry = Some(Instant::now() + Duration::from_millis(500));
            }
            return Err(());
        }
        let n = staged.events.len() as u64;
        if let Apply::Replace(next) = staged.apply {
            self.st = next;
        }
        self.seq += n;
        self.env
            .metrics
            .events_total
            .fetch_add(n, Ordering::Relaxed);
        if staged.is_move {
            self.env.metrics.moves_total.fetch_add(1, Ordering::Relaxed);
        }
        if !was_finished && self.st.status.result.is_some() {
            self.finished_at = Some(Instant::now());
            self.env.metrics.live_games.fetch_sub(1, Ordering::Relaxed);
        }
        Ok((staged.ack_seq, staged.events))
    }

    /// Restores the state from before a move applied in place: the board takes the move back,
    /// everything else comes from `undo`.
    fn undo_move(&mut self, undo: Box<Undo>) {
        self.st.status = undo.0;
        if let Err(e) = self.st.board.take_back() {
            // Unreachable: the same moves were legal a moment ago and replay is deterministic.
            error!(game = self.id, error = %e, "taking back an uncommitted move failed");
        }
    }

    /// Settles a staged change (see [`Game::settle`]) and answers for it: committed events are
    /// published; the request that asked for it, if any (a timer's has none), gets its reply,
    /// or the error it was to get after the commit, or `store_unavailable`.
    pub(crate) fn conclude(&mut self, mut staged: Staged, committed: bool, r: Option<&Request>) {
        let error_after = staged.error_after.take();
        let is_move = staged.is_move;
        let settled = self.settle(staged, committed);
        let Some(r) = r else {
            if let Ok((_, events)) = settled {
                self.publish_framed(events);
            }
            return;
        };
        match (settled, error_after) {
            (Ok((_, events)), Some(e)) => {
                self.publish_framed(events);
                self.error(r, &e);
            }
            (Ok((seq, events)), None) => {
                self.reply(r, seq);
                if is_move {
                    self.env.metrics.move_latency.observe(r.received.elapsed());
                }
                self.publish_framed(events);
            }
            (Err(()), Some(e)) => self.error(r, &e),
            (Err(()), None) => self.error(r, &ClientError::StoreUnavailable),
        }
    }

    /// Live subscribers get events now; spectators through the delay queue.
    pub(crate) fn publish(&mut self, events: Vec<GameEvent>) {
        self.publish_framed(events.into_iter().map(|ev| (ev, None)).collect());
    }

    /// As [`Game::publish`], with the protobuf frame of an event when it is already known
    /// (cut from its stored form, so it is not encoded twice).
    fn publish_framed(&mut self, events: Vec<Framed>) {
        for (ev, proto) in events {
            let release_ms = ev.at_ms + self.delay_ms;
            let seq = ev.seq;
            let msg = ServerMessage {
                kind: Some(server_message::Kind::Event(ev)),
            };
            let frame = Arc::new(match proto {
                Some(p) => SharedFrame::with_proto(seq, msg, p),
                None => SharedFrame::new(seq, msg),
            });
            if let Some(ev) = frame.event() {
                self.live.apply(ev);
            }
            push_ring(&mut self.ring, frame.clone(), self.env.config.replay_events);
            send_all(&mut self.live_subs, &frame, &self.env);
            if self.public.is_some() {
                self.delayed.push_back(Pending {
                    release_ms,
                    min_plies: self.live.moves.len() as u32 + self.delay_plies,
                    frame,
                });
            }
        }
        self.release_delayed();
        self.update_summary();
    }

    /// Releases delayed events whose time (and ply distance) has come. At the
    /// end of the game the ply delay no longer holds anything back.
    fn release_delayed(&mut self) {
        let Some(public) = &mut self.public else {
            return;
        };
        let now = self.env.time.now_ms();
        let plies = self.live.moves.len() as u32;
        let over = self.live.finished;
        let mut released = false;
        while let Some(p) = self.delayed.front() {
            if p.release_ms > now || (!over && p.min_plies > plies) {
                break;
            }
            let Some(p) = self.delayed.pop_front() else {
                break;
            };
            if let Some(ev) = p.frame.event() {
                public.apply(ev);
            }
            push_ring(
                &mut self.public_ring,
                p.frame.clone(),
                self.env.config.replay_events,
            );
            send_all(&mut self.public_subs, &p.frame, &self.env);
            released = true;
        }
        if released {
            self.update_summary();
        }
    }

    fn next_release(&self) -> Option<Instant> {
        let p = self.delayed.front()?;
        let plies = self.live.moves.len() as u32;
        if !self.live.finished && p.min_plies > plies {
            return None; // waits for moves, not time
        }
        Some(self.env.time.instant_at(p.release_ms))
    }

    fn update_summary(&self) {
        let v = self.public.as_ref().unwrap_or(&self.live);
        if let Ok(mut g) = self.summary.lock() {
            // The names and time control are set once; a move changes only the counts.
            if g.game_id.is_empty() || g.red_name != v.info.red_name {
                v.fill_summary(&mut g);
            } else {
                v.fill_counts(&mut g);
            }
        }
    }

    fn flag_instant(&self) -> Option<Instant> {
        if self.st.status.result.is_some() {
            return None;
        }
        if let Some(r) = self.commit_retry {
            return Some(r);
        }
        self.st
            .status
            .clock
            .flag_deadline()
            .map(|m| self.env.time.instant_at(m.0))
    }

    /// When the shard must next wake this game: a flag to check (or a failed flag commit to
    /// retry), delayed events to release, or a finished game to unload. `busy`: a commit is
    /// in flight (a flag waits for it).
    pub(crate) fn next_wake(&self, busy: bool) -> Option<Instant> {
        let flag = if busy { None } else { self.flag_instant() };
        let linger = if self.delayed.is_empty() && !busy {
            self.finished_at
                .map(|t| t + self.env.config.finished_linger)
        } else {
            None
        };
        [flag, self.next_release(), linger]
            .into_iter()
            .flatten()
            .min()
    }

    /// The shard woke the game at `now` (no commit of it in flight): releases what the
    /// broadcast delay held back, and answers a flag to commit, or that the game may unload.
    pub(crate) fn wake(&mut self, now: Instant) -> Wake {
        if self.next_release().is_some_and(|t| t <= now) {
            self.release_delayed();
        }
        if self.flag_instant().is_some_and(|t| t <= now) {
            self.commit_retry = None;
            if let Some(c) = self.prepare_flag() {
                return Wake::Commit(Box::new(c));
            }
        }
        let linger = self
            .finished_at
            .map(|t| t + self.env.config.finished_linger);
        if self.delayed.is_empty() && linger.is_some_and(|t| t <= now) {
            debug!(game = self.id, "finished game unloaded");
            return Wake::Unload;
        }
        Wake::Nothing
    }

    /// The game as its shard sees it when it stops or unloads it.
    pub(crate) fn unloaded(&self) {
        self.alive.store(false, Ordering::Release);
        if self.st.status.result.is_none() {
            self.env.metrics.live_games.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Forgets a connection's subscriptions.
    pub(crate) fn detach(&mut self, conn: u64) {
        self.live_subs.retain(|o| o.conn_id != conn);
        self.public_subs.retain(|o| o.conn_id != conn);
    }

    /// The record as the live stream (`public` false) or the delayed public stream sees it.
    pub(crate) fn record_view(&self, public: bool) -> RecordView {
        let view = if public {
            self.public.as_ref().unwrap_or(&self.live)
        } else {
            &self.live
        };
        RecordView { view: view.clone() }
    }

    pub(crate) fn id(&self) -> i64 {
        self.id
    }

    /// The flag has fallen: the change that ends the game on time, if it has.
    fn prepare_flag(&mut self) -> Option<Change> {
        let now = self.now();
        let mut next = self.st.clone();
        let flag = next.status.clock.check_flag(Millis(now))?;
        let loser = wside(flag.side);
        next.status.result = Some((win_for(other(loser)), "flag".into()));
        let clock = Game::clock_state(&next, now);
        let mut b = Batch::default();
        b.push(Kind::Ended(w::GameEnded {
            result: win_for(other(loser)) as i32,
            reason: "flag".into(),
            explanation: format!("{flag}: {} wins on time.", side_name(other(loser))),
            clock: Some(clock),
            arbiter: None,
        }));
        let mut c = Change::replace(b, next, now);
        c.is_flag = true;
        Some(c)
    }

    /// A move came after the flag fell: the flag is committed (if the clock says so) and the
    /// move refused with `game_finished`.
    fn flag_instead(&mut self) -> Result<Option<Change>, ClientError> {
        self.commit_retry = None;
        match self.prepare_flag() {
            Some(mut c) => {
                c.error_after = Some(ClientError::GameFinished);
                Ok(Some(c))
            }
            None => Err(ClientError::GameFinished),
        }
    }

    fn side_of(&self, who: &Principal) -> Option<Side> {
        let id = who.id()?;
        if who.role() != Some(Role::Player) {
            return None;
        }
        if id == self.red {
            Some(Side::Red)
        } else if id == self.black {
            Some(Side::Black)
        } else {
            None
        }
    }

    fn reply(&self, r: &Request, seq: u64) {
        r.out.send_msg(ServerMessage {
            kind: Some(server_message::Kind::Reply(w::Reply {
                request_id: r.req,
                game_id: self.gid.clone(),
                seq,
            })),
        });
    }

    pub(crate) fn error(&self, r: &Request, e: &ClientError) {
        self.env
            .metrics
            .client_errors_total
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if e.is_server_side() {
            warn!(game = self.id, code = e.code(), "request failed");
        } else {
            debug!(game = self.id, code = e.code(), "request refused");
        }
        r.out.send_msg(ServerMessage {
            kind: Some(server_message::Kind::Error(e.to_wire(r.req, &self.gid))),
        });
    }

    /// What a client request changes: Ok(Some(change)) to commit (the shard then settles and
    /// answers it), Ok(None) when the request was answered already (nothing to commit), Err
    /// to answer with that error (nothing changed).
    pub(crate) fn prepare(&mut self, r: &Request) -> Result<Option<Change>, ClientError> {
        match &r.body {
            Body::Subscribe { last_seq } => {
                self.subscribe(r, *last_seq);
                Ok(None)
            }
            Body::Unsubscribe => {
                let c = r.out.conn_id;
                self.live_subs.retain(|o| o.conn_id != c);
                self.public_subs.retain(|o| o.conn_id != c);
                self.reply(r, 0);
                Ok(None)
            }
            Body::Move {
                ply,
                mv,
                offer_draw,
                think_ms,
            } => self.play(r, *ply, mv, *offer_draw, *think_ms),
            Body::OfferDraw => {
                let side = self.side_of(&r.who).ok_or(ClientError::NotAPlayer)?;
                self.ensure_playing()?;
                if self.st.board.to_move() == side || self.st.status.draw_offer == Some(side) {
                    return Err(ClientError::DrawOfferNotAllowed);
                }
                let now = self.now();
                let mut next = self.st.clone();
                let mut b = Batch::default();
                if self.st.status.draw_offer == Some(other(side)) {
                    // The opponent's offer stands: treat as acceptance? No — answer it.
                    return Err(ClientError::DrawOfferNotAllowed);
                }
                Game::offer(&mut next, &mut b, side, now);
                Ok(Some(Change::replace(b, next, now)))
            }
            Body::AnswerDraw { accept } => {
                let side = self.side_of(&r.who).ok_or(ClientError::NotAPlayer)?;
                self.ensure_playing()?;
                if self.st.status.draw_offer != Some(other(side)) {
                    return Err(ClientError::NoDrawOffer);
                }
                let now = self.now();
                let mut next = self.st.clone();
                let mut b = Batch::default();
                next.status.draw_offer = None;
                if *accept {
                    Game::end(
                        &mut next,
                        &mut b,
                        now,
                        WResult::Draw,
                        "draw_agreed",
                        format!(
                            "{} accepted {}'s draw offer.",
                            side_name(side),
                            side_name(other(side))
                        ),
                        None,
                    );
                } else {
                    next.status.offer_blocked[sidx(other(side))] = true;
                    b.push(Kind::DrawDeclined(w::DrawDeclined {
                        side: side as i32,
                        by_moving: false,
                    }));
                }
                Ok(Some(Change::replace(b, next, now)))
            }
            Body::Resign => {
                let side = self.side_of(&r.who).ok_or(ClientError::NotAPlayer)?;
                self.ensure_not_finished()?;
                let now = self.now();
                let mut next = self.st.clone();
                let mut b = Batch::default();
                Game::end(
                    &mut next,
                    &mut b,
                    now,
                    win_for(other(side)),
                    "resign",
                    format!("{} resigned.", side_name(side)),
                    None,
                );
                Ok(Some(Change::replace(b, next, now)))
            }
            Body::ClaimMoveLimit => {
                let side = self.side_of(&r.who).ok_or(ClientError::NotAPlayer)?;
                self.ensure_playing()?;
                let now = self.now();
                let mut next = self.st.clone();
                let mut b = Batch::default();
                let counted = self.st.board.move_limit_count();
                if counted >= self.move_limit {
                    Game::end(
                        &mut next,
                        &mut b,
                        now,
                        WResult::Draw,
                        "move_limit",
                        format!(
                            "{} claimed the natural move limit: {counted} plies without a capture (limit {}). Draw (art. 4.2.4).",
                            side_name(side),
                            self.move_limit
                        ),
                        None,
                    );
                } else {
                    Game::foul(
                        &mut next,
                        &mut b,
                        side,
                        "false_move_limit_claim",
                        format!(
                            "{} claimed the move limit after {counted} plies without a capture; the limit is {}. A false claim is a foul and costs 5 minutes (art. 23.3).",
                            side_name(side),
                            self.move_limit
                        ),
                        None,
                        now,
                    );
                    if next.status.result.is_none() {
                        let flag = next
                            .status
                            .clock
                            .charge_time(cside(side), Duration::from_secs(300), Millis(now))
                            .ok()
                            .flatten();
                        b.push(Kind::ClockAdjusted(w::ClockAdjusted {
                            side: side as i32,
                            delta_ms: -300_000,
                            code: "false_claim_penalty".into(),
                            clock: Some(Game::clock_state(&next, now)),
                            arbiter: None,
                        }));
                        if flag.is_some() {
                            Game::end(
                                &mut next,
                                &mut b,
                                now,
                                win_for(other(side)),
                                "flag",
                                format!("The 5-minute penalty used up {}'s time.", side_name(side)),
                                None,
                            );
                        }
                    }
                }
                Ok(Some(Change::replace(b, next, now)))
            }
            Body::RequestRuling => {
                self.side_of(&r.who).ok_or(ClientError::NotAPlayer)?;
                self.ensure_playing()?;
                let now = self.now();
                let next = self.st.clone();
                let mut b = Batch::default();
                let ruling = self.st.board.pending_warning().unwrap_or_else(|| w::Ruling {
                    kind: w::RulingKind::None as i32,
                    explanation: "No cycle is being repeated: there is nothing to rule on (art. 24). The server rules automatically at every third occurrence of a position.".into(),
                    ply: self.st.board.plies(),
                    ..w::Ruling::default()
                });
                b.push(Kind::Ruling(w::RulingIssued {
                    ruling: Some(ruling),
                }));
                Ok(Some(Change::replace(b, next, now)))
            }
            Body::Arbiter { reason, action } => self.arbiter(r, reason, action),
        }
    }

    fn ensure_not_finished(&self) -> Result<(), ClientError> {
        if self.st.status.result.is_some() {
            return Err(ClientError::GameFinished);
        }
        Ok(())
    }

    fn ensure_playing(&self) -> Result<(), ClientError> {
        self.ensure_not_finished()?;
        if self.st.status.clock.is_paused() {
            return Err(ClientError::GamePaused);
        }
        Ok(())
    }

    fn subscribe(&mut self, r: &Request, last_seq: u64) {
        let live = r.who.sees_live() || self.side_of(&r.who).is_some() || self.public.is_none();
        let (view, ring) = if live {
            (&self.live, &self.ring)
        } else {
            match &self.public {
                Some(p) => (p, &self.public_ring),
                None => (&self.live, &self.ring),
            }
        };
        let first_in_ring = ring.front().map(|f| f.seq).unwrap_or(view.seq + 1);
        let out = &r.out;
        self.reply(r, view.seq);
        if last_seq == 0 || last_seq > view.seq || last_seq + 1 < first_in_ring {
            out.send_msg(ServerMessage {
                kind: Some(server_message::Kind::Snapshot(view.snapshot())),
            });
        } else {
            for f in ring.iter().filter(|f| f.seq > last_seq) {
                out.send(Out::Shared(f.clone()));
            }
        }
        let list = if live {
            &mut self.live_subs
        } else {
            &mut self.public_subs
        };
        list.retain(|o| o.conn_id != out.conn_id);
        list.push(out.clone());
    }

    fn offer(next: &mut State, b: &mut Batch, side: Side, now: u64) {
        if next.status.offer_blocked[sidx(side)] {
            Game::foul(
                next,
                b,
                side,
                "repeated_draw_offer",
                format!(
                    "{} offered a draw again after it was refused, before {} offered one: a foul (art. 9.1.3). The offer is not passed on.",
                    side_name(side),
                    side_name(other(side))
                ),
                None,
                now,
            );
            return;
        }
        next.status.draw_offer = Some(side);
        next.status.offer_blocked[sidx(other(side))] = false;
        b.push(Kind::DrawOffered(w::DrawOffered { side: side as i32 }));
    }

    #[allow(clippy::too_many_arguments)]
    fn foul(
        next: &mut State,
        b: &mut Batch,
        side: Side,
        code: &str,
        explanation: String,
        arbiter: Option<(i64, &str)>,
        now: u64,
    ) {
        next.status.fouls[sidx(side)] += 1;
        let count = next.status.fouls[sidx(side)];
        let note = arbiter.map(|(id, why)| ArbiterNote {
            arbiter_id: id.to_string(),
            reason: why.to_string(),
        });
        let k = Kind::Foul(w::FoulRecorded {
            side: side as i32,
            code: code.into(),
            explanation,
            count,
            arbiter: note.clone(),
        });
        match arbiter {
            Some((id, why)) => b.push_by(k, id, why),
            None => b.push(k),
        }
        if count >= 3 {
            Game::end(
                next,
                b,
                now,
                win_for(other(side)),
                "fouls",
                format!(
                    "{} committed 3 fouls and loses (art. 4.1.8).",
                    side_name(side)
                ),
                note,
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn end(
        next: &mut State,
        b: &mut Batch,
        now: u64,
        result: WResult,
        reason: &str,
        explanation: String,
        arbiter: Option<ArbiterNote>,
    ) {
        if next.status.result.is_none() {
            let _ = next.status.clock.stop(Millis(now));
        }
        next.status.result = Some((result, reason.to_string()));
        next.status.draw_offer = None;
        let k = Kind::Ended(w::GameEnded {
            result: result as i32,
            reason: reason.into(),
            explanation,
            clock: Some(Game::clock_state(next, now)),
            arbiter: arbiter.clone(),
        });
        match arbiter {
            Some(a) => b.push_by(k, a.arbiter_id.parse().unwrap_or(0), &a.reason),
            None => b.push(k),
        }
    }

    fn play(
        &mut self,
        r: &Request,
        ply: u32,
        mv: &str,
        offer_draw: bool,
        think_ms: Option<u32>,
    ) -> Result<Option<Change>, ClientError> {
        let side = self.side_of(&r.who).ok_or(ClientError::NotAPlayer)?;
        // Idempotent resend of the last move: the same ply in any of its notations.
        if let Some(last) = self.st.status.last_move {
            let record = self.live.moves.last().filter(|m| m.ply == ply);
            if let (true, Some(rec)) = (last.ply == ply && last.side == side, record) {
                let t = mv.trim();
                if canonical_iccs(mv).as_deref() == Some(rec.iccs.as_str())
                    || [&rec.iccs, &rec.chinese, &rec.wxf].iter().any(|x| *x == t)
                {
                    self.reply(r, last.seq);
                    return Ok(None);
                }
            }
        }
        self.ensure_playing()?;
        let expected = self.st.board.plies() + 1;
        if ply != expected {
            return Err(ClientError::StalePly { got: ply, expected });
        }
        if self.st.board.to_move() != side {
            return Err(ClientError::NotYourTurn);
        }
        let now = self.env.time.ms_at(r.received);
        let illegal = |why| ClientError::IllegalMove {
            mv: mv.to_string(),
            why,
        };
        let m = self.st.board.parse(mv).map_err(illegal)?;
        // The move is applied to the state in place (no copy of the game per move) and
        // undone if anything below refuses it or its commit fails.
        let undo = Box::new(Undo(self.st.status.clone()));
        let played = self.st.board.play_move(m).map_err(illegal)?;
        let report = match self.st.status.clock.on_move(
            Millis(now),
            think_ms.map(|t| Duration::from_millis(t as u64)),
            r.lag,
        ) {
            Ok(rep) => rep,
            Err(e) => {
                self.undo_move(undo);
                return match e {
                    chuhe_clock::ClockError::Paused => Err(ClientError::GamePaused),
                    chuhe_clock::ClockError::Flagged(_) | chuhe_clock::ClockError::GameOver => {
                        // The flag fell before the move arrived: the timer decides now.
                        self.flag_instead()
                    }
                    e => Err(ClientError::InvalidArgument(e.to_string())),
                };
            }
        };
        if report.is_flagged() {
            self.undo_move(undo);
            return self.flag_instead();
        }
        let next = &mut *self.st;
        let mut b = Batch::default();
        if next.status.draw_offer == Some(other(side)) {
            next.status.offer_blocked[sidx(other(side))] = true;
            b.push(Kind::DrawDeclined(w::DrawDeclined {
                side: side as i32,
                by_moving: true,
            }));
        }
        next.status.draw_offer = None;
        let seq_of_move = self.seq + b.kinds.len() as u64 + 1;
        let clock = Game::clock_state(next, now);
        let Played {
            iccs,
            chinese,
            wxf,
            fen,
            check,
            capture,
            end,
            warning,
        } = played;
        b.push(Kind::Move(w::MovePlayed {
            r#move: Some(w::MoveRecord {
                ply,
                iccs,
                chinese,
                wxf,
                spent_ms: report.used_ms,
                fen,
                check,
                capture,
            }),
            clock: Some(clock),
            side: side as i32,
        }));
        next.status.last_move = Some(LastMove {
            ply,
            seq: seq_of_move,
            side,
        });
        if let Some(warning) = warning {
            b.push(Kind::Ruling(w::RulingIssued {
                ruling: Some(warning),
            }));
        }
        if let Some(end) = end {
            if let Some(r) = end.ruling {
                b.push(Kind::Ruling(w::RulingIssued { ruling: Some(r) }));
            }
            Game::end(
                next,
                &mut b,
                now,
                end.result,
                end.reason,
                end.explanation,
                None,
            );
        } else if offer_draw {
            Game::offer(next, &mut b, side, now);
        }
        Ok(Some(Change {
            batch: b,
            apply: Apply::InPlace(undo),
            now,
            ack_seq: Some(seq_of_move),
            error_after: None,
            is_move: true,
            is_flag: false,
        }))
    }

    fn arbiter(
        &mut self,
        r: &Request,
        reason: &str,
        action: &Action,
    ) -> Result<Option<Change>, ClientError> {
        if !r.who.sees_live() {
            return Err(ClientError::NotAnArbiter);
        }
        let by = r.who.id().unwrap_or(0);
        if reason.trim().is_empty() {
            return Err(ClientError::InvalidArgument(
                "an arbiter command needs a reason".into(),
            ));
        }
        let note = ArbiterNote {
            arbiter_id: by.to_string(),
            reason: reason.to_string(),
        };
        let now = self.now();
        let mut next = self.st.clone();
        let mut b = Batch::default();
        let side_arg = |s: i32| match Side::try_from(s) {
            Ok(Side::Red) => Ok(Side::Red),
            Ok(Side::Black) => Ok(Side::Black),
            _ => Err(ClientError::InvalidArgument(
                "side must be SIDE_RED or SIDE_BLACK".into(),
            )),
        };
        match action {
            Action::Pause(_) => {
                self.ensure_not_finished()?;
                next.status
                    .clock
                    .pause(Millis(now))
                    .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
                b.push_by(
                    Kind::Paused(w::GamePaused {
                        clock: Some(Game::clock_state(&next, now)),
                        arbiter: Some(note),
                    }),
                    by,
                    reason,
                );
            }
            Action::Resume(_) => {
                self.ensure_not_finished()?;
                next.status
                    .clock
                    .resume(Millis(now))
                    .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
                b.push_by(
                    Kind::Resumed(w::GameResumed {
                        clock: Some(Game::clock_state(&next, now)),
                        arbiter: Some(note),
                    }),
                    by,
                    reason,
                );
            }
            Action::AddTime(a) => {
                self.ensure_not_finished()?;
                let side = side_arg(a.side)?;
                let d = Duration::from_millis(a.delta_ms.unsigned_abs());
                let mut flagged = false;
                if a.delta_ms >= 0 {
                    next.status
                        .clock
                        .add_time(cside(side), d, Millis(now))
                        .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
                } else {
                    flagged = next
                        .status
                        .clock
                        .charge_time(cside(side), d, Millis(now))
                        .map_err(|e| ClientError::InvalidArgument(e.to_string()))?
                        .is_some();
                }
                b.push_by(
                    Kind::ClockAdjusted(w::ClockAdjusted {
                        side: side as i32,
                        delta_ms: a.delta_ms,
                        code: "arbiter".into(),
                        clock: Some(Game::clock_state(&next, now)),
                        arbiter: Some(note.clone()),
                    }),
                    by,
                    reason,
                );
                if flagged {
                    Game::end(
                        &mut next,
                        &mut b,
                        now,
                        win_for(other(side)),
                        "flag",
                        format!(
                            "The time charged by the arbiter used up {}'s time.",
                            side_name(side)
                        ),
                        Some(note),
                    );
                }
            }
            Action::RecordFoul(f) => {
                self.ensure_not_finished()?;
                let side = side_arg(f.side)?;
                Game::foul(
                    &mut next,
                    &mut b,
                    side,
                    "arbiter",
                    format!(
                        "The arbiter recorded a foul against {}: {reason}",
                        side_name(side)
                    ),
                    Some((by, reason)),
                    now,
                );
            }
            Action::SetResult(s) => {
                let result = WResult::try_from(s.result).unwrap_or(WResult::Unspecified);
                if result == WResult::Unspecified {
                    return Err(ClientError::InvalidArgument("result must be set".into()));
                }
                Game::end(
                    &mut next,
                    &mut b,
                    now,
                    result,
                    "arbiter",
                    format!(
                        "The arbiter set the result {}: {reason}",
                        result_text(result)
                    ),
                    Some(note),
                );
            }
            Action::OverrideRuling(o) => {
                if !self
                    .live
                    .rulings
                    .iter()
                    .any(|(seq, _)| *seq == o.ruling_seq)
                {
                    return Err(ClientError::InvalidArgument(format!(
                        "event {} is not a ruling",
                        o.ruling_seq
                    )));
                }
                let result = WResult::try_from(o.result).unwrap_or(WResult::Unspecified);
                if result == WResult::Unspecified && self.st.status.result.is_some() {
                    return Err(ClientError::InvalidArgument(
                        "a finished game cannot be reopened; set a result instead".into(),
                    ));
                }
                b.push_by(
                    Kind::RulingOverridden(w::RulingOverridden {
                        ruling_seq: o.ruling_seq,
                        result: o.result,
                        arbiter: Some(note.clone()),
                    }),
                    by,
                    reason,
                );
                if result != WResult::Unspecified {
                    Game::end(
                        &mut next,
                        &mut b,
                        now,
                        result,
                        "arbiter",
                        format!("The arbiter overrode the ruling: {reason}"),
                        Some(note),
                    );
                }
            }
        }
        Ok(Some(Change::replace(b, next, now)))
    }
}

/// What a wake-up of a game asks of its shard.
pub(crate) enum Wake {
    Nothing,
    /// Commit this (a flag).
    Commit(Box<Change>),
    /// The game is finished and has lingered long enough: unload it.
    Unload,
}

fn canonical_iccs(mv: &str) -> Option<String> {
    chuhe_rules::Move::from_iccs(mv).ok().map(|m| m.to_iccs())
}

fn push_ring(ring: &mut VecDeque<Arc<SharedFrame>>, f: Arc<SharedFrame>, cap: usize) {
    if ring.len() >= cap.max(1) {
        ring.pop_front();
    }
    ring.push_back(f);
}

fn send_all(subs: &mut Vec<Outbox>, frame: &Arc<SharedFrame>, env: &Env) {
    let _ = env;
    // A failed send means the connection is gone or was kicked for being too
    // slow (its writer closes it with 4008): either way it leaves the list.
    subs.retain(|o| o.send(Out::Shared(frame.clone())));
}

fn kind_label(k: &Kind) -> &'static str {
    match k {
        Kind::Created(_) => "created",
        Kind::Move(_) => "move",
        Kind::DrawOffered(_) => "draw_offered",
        Kind::DrawDeclined(_) => "draw_declined",
        Kind::Foul(_) => "foul",
        Kind::ClockAdjusted(_) => "clock_adjusted",
        Kind::Paused(_) => "paused",
        Kind::Resumed(_) => "resumed",
        Kind::Ruling(_) => "ruling",
        Kind::Ended(_) => "ended",
        Kind::RulingOverridden(_) => "ruling_overridden",
        Kind::ServerRestarted(_) => "server_restarted",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::persist::{MemoryPersist, Persist};
    use chuhe_proto::Encoding;
    use tokio::sync::watch;

    struct Table {
        persist: Arc<MemoryPersist>,
        handle: GameHandle,
        red: Arc<Principal>,
        black: Arc<Principal>,
        out: Outbox,
        rx: crate::outbox::Inbox,
        _shutdown: watch::Sender<bool>,
        _done: mpsc::Receiver<()>,
        req: u32,
    }

    async fn table(fen: &str) -> Table {
        table_with(fen, crate::Config::default()).await
    }

    async fn table_with(fen: &str, config: crate::Config) -> Table {
        let persist = Arc::new(MemoryPersist::default());
        let red = persist.create_account("red", Role::Player).await.unwrap();
        let black = persist.create_account("black", Role::Player).await.unwrap();
        let row = persist
            .create_game(GameRow {
                id: 0,
                red: red.id,
                black: black.id,
                time_control: "90m+30s".into(),
                ruleset: "cxa".into(),
                start_fen: fen.into(),
                delay_plies: 0,
                delay_ms: 0,
                event: None,
                round: None,
                board: None,
                created_at_ms: 0,
                finished: false,
            })
            .await
            .unwrap();
        let (sd_tx, sd_rx) = watch::channel(false);
        let (done_tx, done_rx) = mpsc::channel(1);
        let env = Env::start(persist.clone(), config, sd_rx, done_tx);
        let seed = GameSeed {
            row,
            red: red.clone(),
            black: black.clone(),
            move_limit_plies: 0,
        };
        let handle = create(env, seed).await.unwrap();
        let (out, rx, _) = Outbox::new(1, Encoding::Proto, 64);
        let who = |a: Account| Arc::new(Principal { account: Some(a) });
        Table {
            persist,
            handle,
            red: who(red),
            black: who(black),
            out,
            rx,
            _shutdown: sd_tx,
            _done: done_rx,
            req: 0,
        }
    }

    impl Table {
        /// Sends a move and returns the answer: Ok(seq acknowledged) or Err(error code).
        async fn play(
            &mut self,
            red: bool,
            ply: u32,
            mv: &str,
            offer_draw: bool,
        ) -> Result<u64, String> {
            let id = self.send(
                red,
                Body::Move {
                    ply,
                    mv: mv.into(),
                    offer_draw,
                    think_ms: None,
                },
            );
            loop {
                let (rid, answer) = self.answer().await;
                if rid == id {
                    return answer;
                }
            }
        }

        async fn record(&self) -> View {
            self.handle.record(false).await.unwrap().view
        }

        /// Sends a request without waiting for its answer; returns its request id.
        fn send(&mut self, red: bool, body: Body) -> u32 {
            self.req += 1;
            let who = if red { &self.red } else { &self.black };
            self.handle
                .send(Request {
                    req: self.req,
                    who: who.clone(),
                    out: self.out.clone(),
                    lag: Duration::ZERO,
                    received: Instant::now(),
                    body,
                })
                .unwrap();
            self.req
        }

        /// The next reply or error: (request id, Ok(seq) or Err(code)).
        async fn answer(&mut self) -> (u32, Result<u64, String>) {
            loop {
                let crate::outbox::Out::Own(msg) = self.rx.recv().await.unwrap() else {
                    continue;
                };
                match msg.kind {
                    Some(server_message::Kind::Reply(r)) => return (r.request_id, Ok(r.seq)),
                    Some(server_message::Kind::Error(e)) => return (e.request_id, Err(e.code)),
                    _ => {}
                }
            }
        }

        /// Nothing but events is waiting in the outbox.
        fn no_answer_yet(&mut self) -> bool {
            while let Some(out) = self.rx.try_recv() {
                if let crate::outbox::Out::Own(msg) = out {
                    if matches!(
                        msg.kind,
                        Some(server_message::Kind::Reply(_) | server_message::Kind::Error(_))
                    ) {
                        return false;
                    }
                }
            }
            true
        }
    }

    fn mv(ply: u32, m: &str) -> Body {
        Body::Move {
            ply,
            mv: m.into(),
            offer_draw: false,
            think_ms: None,
        }
    }

    #[tokio::test]
    async fn commands_wait_for_their_games_commit_and_run_in_order() {
        let mut t = table(chuhe_rules::START_FEN).await;
        t.persist.hold(true);
        let a = t.send(true, mv(1, "h2e2"));
        let b = t.send(false, mv(2, "h9g7"));
        let c = t.send(true, mv(3, "h0g2"));
        // A record is answered at once, from what is committed: the shard has taken the three
        // moves, the first is being committed, nothing is acknowledged or visible yet.
        let rec = t.record().await;
        assert!(rec.moves.is_empty(), "an uncommitted move is visible");
        assert!(t.no_answer_yet(), "answered before the commit");
        t.persist.hold(false);
        assert_eq!(t.answer().await, (a, Ok(2)));
        assert_eq!(t.answer().await, (b, Ok(3)));
        assert_eq!(t.answer().await, (c, Ok(4)));
        let rec = t.record().await;
        let iccs: Vec<&str> = rec.moves.iter().map(|m| m.iccs.as_str()).collect();
        assert_eq!(iccs, ["h2e2", "h9g7", "h0g2"]);
    }

    #[tokio::test]
    async fn a_full_backlog_answers_busy_and_loses_nothing_else() {
        let config = crate::Config {
            game_mailbox: 2,
            ..crate::Config::default()
        };
        let mut t = table_with(chuhe_rules::START_FEN, config).await;
        t.persist.hold(true);
        let first = t.send(true, mv(1, "h2e2"));
        let waiting = [t.send(false, mv(2, "h9g7")), t.send(true, mv(3, "h0g2"))];
        let over = t.send(false, Body::Resign);
        assert_eq!(t.answer().await, (over, Err("busy".into())));
        t.persist.hold(false);
        assert_eq!(t.answer().await, (first, Ok(2)));
        assert_eq!(t.answer().await, (waiting[0], Ok(3)));
        assert_eq!(t.answer().await, (waiting[1], Ok(4)));
        assert!(
            !t.record().await.finished,
            "the refused resignation was not played"
        );
    }

    #[tokio::test]
    async fn a_request_for_a_game_the_shard_does_not_hold_is_answered() {
        let mut t = table(chuhe_rules::START_FEN).await;
        let other = t.handle.id + 1000;
        let r = Request {
            req: 77,
            who: t.red.clone(),
            out: t.out.clone(),
            lag: Duration::ZERO,
            received: Instant::now(),
            body: Body::Resign,
        };
        t.handle
            .tx
            .try_send(ShardCmd::Client(other, Box::new(r)))
            .unwrap_or_else(|_| panic!("mailbox"));
        assert_eq!(t.answer().await, (77, Err("game_not_found".into())));
    }

    #[tokio::test]
    async fn a_finished_game_unloads_after_lingering() {
        tokio::time::pause();
        let config = crate::Config {
            finished_linger: Duration::from_secs(60),
            ..crate::Config::default()
        };
        let mut t = table_with(chuhe_rules::START_FEN, config).await;
        let r = t.send(true, Body::Resign);
        assert_eq!(t.answer().await, (r, Ok(2)));
        assert!(t.handle.is_alive());
        tokio::time::advance(Duration::from_secs(59)).await;
        assert!(
            t.record().await.finished,
            "still loaded before the linger is over"
        );
        tokio::time::advance(Duration::from_secs(2)).await;
        // The shard answers records of games it holds only; once unloaded, none comes.
        assert!(t.handle.record(false).await.is_none());
        assert!(!t.handle.is_alive());
    }

    #[tokio::test]
    async fn a_move_whose_commit_fails_is_taken_back_completely() {
        let mut t = table(chuhe_rules::START_FEN).await;
        assert_eq!(t.play(true, 1, "h2e2", false).await, Ok(2));
        let before = t.record().await;
        // Black's knight move (with a draw offer) cannot be stored: refused, nothing changes.
        t.persist.set_failing(true);
        assert_eq!(
            t.play(false, 2, "h9g7", true).await,
            Err("store_unavailable".into())
        );
        t.persist.set_failing(false);
        let after = t.record().await;
        assert_eq!(
            (after.seq, after.moves.len(), after.fen(), after.draw_offer),
            (
                before.seq,
                before.moves.len(),
                before.fen(),
                before.draw_offer
            )
        );
        // The same move is still ply 2 and legal (the knight is back on h9), the clock
        // runs for Black, and it is not mistaken for a resend of a stored move.
        assert_eq!(t.play(false, 2, "h9g7", false).await, Ok(3));
        assert_eq!(
            t.play(false, 2, "h9g7", false).await,
            Ok(3),
            "idempotent resend"
        );
        assert_eq!(
            t.play(false, 2, "马8进7", false).await,
            Ok(3),
            "resend in Chinese"
        );
        assert_eq!(t.play(true, 3, "h0g2", false).await, Ok(4));
        let rec = t.record().await;
        let iccs: Vec<&str> = rec.moves.iter().map(|m| m.iccs.as_str()).collect();
        assert_eq!(iccs, ["h2e2", "h9g7", "h0g2"]);
        assert_eq!(rec.draw_offer, Side::Unspecified as i32);
        let stored = t.persist.events(t.handle.id).await.unwrap();
        assert_eq!(stored.len(), 4, "created + three moves");
    }

    #[tokio::test]
    async fn a_mating_move_whose_commit_fails_leaves_the_game_running() {
        // Red mates with i7i9: the rook on a8 holds the 8th rank.
        let mut t = table("4k4/R8/8R/9/9/9/9/9/9/3K5 w - - 0 1").await;
        t.persist.set_failing(true);
        assert_eq!(
            t.play(true, 1, "i7i9", false).await,
            Err("store_unavailable".into())
        );
        let rec = t.record().await;
        assert!(!rec.finished && rec.moves.is_empty());
        assert_eq!(
            rec.clock.running,
            Side::Red as i32,
            "Red's clock still runs"
        );
        t.persist.set_failing(false);
        assert_eq!(t.play(true, 1, "i7i9", false).await, Ok(2));
        let rec = t.record().await;
        assert!(rec.finished);
        assert_eq!(rec.result, WResult::RedWins as i32);
        assert_eq!(rec.end_reason, "checkmate");
    }
}
