//! A game as its shard runs it: the pure core's [`State`](chuhe_game::State) plus everything
//! the core does not own — the projections clients see (live and delayed), the replay rings,
//! the subscribers, the broadcast-delay queue, the game-list summary, the timers. The shard
//! ([`crate::shard`]) drives it; nothing here awaits.
//!
//! Every change follows one path: [`LiveGame::prepare`] asks the core to `decide` a request,
//! [`LiveGame::stage`] turns the decision into the store's append, the shard commits it with
//! other games' appends, and [`LiveGame::conclude`] folds the committed events into the state,
//! answers the requester and broadcasts. A failed commit changes nothing (the state was never
//! touched).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use chuhe_proto::v1::{self as w, GameEvent, GameSummary, ServerMessage, server_message};
use tokio::time::Instant;
use tracing::{debug, error, info, warn};

use crate::error::{ClientError, ErrorToWire};
use crate::game_deps::GameDeps;
use crate::outbox::{Cork, Out, Outbox, SharedFrame};
use crate::persist::{AppendOp, EventRow, FinishRow};
use crate::request::{Body, Principal, RecordView, Request};
use crate::view::View;
use chuhe_game::{self as game, Answer, Command, Decided, State};

/// A decision handed to the store: what settles it once the commit's outcome is known.
pub(crate) struct Staged {
    decided: Decided,
    /// Its events on the wire (what is stored and sent).
    wire: Vec<GameEvent>,
    /// The websocket frame of each event (protobuf), encoded with its stored form.
    frames: Vec<Option<Bytes>>,
    is_move: bool,
    /// The server's timer asked for it: retried shortly if its commit fails.
    is_timer: bool,
}

struct Pending {
    release_ms: u64,
    min_plies: u32,
    /// The event, in the frame that carries it.
    frame: Arc<SharedFrame>,
}

/// What a wake-up of a game asks of its shard.
pub(crate) enum Wake {
    Nothing,
    /// Commit this (a flag).
    Commit(Box<Decided>),
    /// The game is finished and has lingered long enough: unload it.
    Unload,
}

/// What a request asks of the shard once the core has decided it.
pub(crate) enum Handled {
    /// Answered already (or nothing to answer).
    Done,
    /// Commit this, then answer.
    Commit(Box<Decided>),
    /// Commit this; the request was answered already (a player's subscription that records
    /// the player joining).
    CommitQuietly(Box<Decided>),
}

pub(crate) struct LiveGame {
    id: i64,
    gid: String,
    /// The game's state: changed only by folding committed events.
    core: Box<State>,
    env: GameDeps,
    live: View,
    public: Option<View>,
    ring: VecDeque<Arc<SharedFrame>>,
    public_ring: VecDeque<Arc<SharedFrame>>,
    live_subs: Subs,
    public_subs: Subs,
    /// Several nodes: where this game's streams are published for the other nodes' relays.
    channels: Option<Arc<crate::node::publish::GameChannels>>,
    /// Whether another node may follow this game's streams, so that they are published on
    /// its channels: set by the first subscription another node relays here (which the
    /// owner answers before anything later is published), and from the start for a game
    /// recovered from its log (another owner ran it before, and the other nodes' relays
    /// follow its channels without asking the new owner until they notice the move). A game
    /// whose clients are all on its owner costs the coordination service nothing.
    followed: bool,
    delayed: VecDeque<Pending>,
    delay_plies: u32,
    delay_ms: u64,
    pub(crate) summary: Arc<Mutex<GameSummary>>,
    finished_at: Option<Instant>,
    commit_retry: Option<Instant>,
    pub(crate) alive: Arc<AtomicBool>,
    /// The time controls' text for the clock snapshot stored with each change.
    controls_text: crate::snapshot::ControlsText,
    /// How many subscribers of one event the shard writes to itself ([`direct_writes`]).
    direct_writes: usize,
}

/// How many of an event's subscribers a game's shard writes to itself, where they wait; the
/// rest get it through their queues, written by their connections' tasks. On one worker
/// thread every write is this thread's anyway, and the shard's own is the cheaper (no wake-up,
/// no poll); with several, a board's thousands of spectators beyond the first
/// [`DIRECT_WRITES_SHARED`] are written by the connections' tasks on every worker.
fn direct_writes() -> usize {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => DIRECT_WRITES_SHARED,
        _ => usize::MAX,
    }
}

/// [`direct_writes`] under the multi-threaded scheduler: about 2 ms of one worker.
const DIRECT_WRITES_SHARED: usize = 512;

impl LiveGame {
    /// A game around a state that has folded nothing yet (a new game, or one about to be
    /// replayed): its views start empty and fill as events are published or replayed.
    pub(crate) fn new(env: GameDeps, id: i64, core: State) -> LiveGame {
        let gid = id.to_string();
        let channels = crate::node::publish::GameChannels::of(env.publisher.as_ref(), id);
        let delay = core.info.delay.unwrap_or_default();
        let delay_plies = delay.plies;
        let delay_ms = u64::from(delay.seconds) * 1000;
        let delayed_view = delay_plies > 0 || delay_ms > 0;
        let summary = Arc::new(Mutex::new(GameSummary {
            game_id: gid.clone(),
            red_name: core.info.red_name.clone(),
            black_name: core.info.black_name.clone(),
            time_control: core.info.time_control.clone(),
            ..GameSummary::default()
        }));
        LiveGame {
            id,
            gid: gid.clone(),
            core: Box::new(core),
            env,
            live: View::new(&gid, false),
            public: delayed_view.then(|| View::new(&gid, true)),
            ring: VecDeque::new(),
            public_ring: VecDeque::new(),
            live_subs: Subs::default(),
            public_subs: Subs::default(),
            channels,
            followed: false,
            delayed: VecDeque::new(),
            delay_plies,
            delay_ms,
            summary,
            finished_at: None,
            commit_retry: None,
            alive: Arc::new(AtomicBool::new(true)),
            controls_text: Default::default(),
            direct_writes: direct_writes(),
        }
    }

    pub(crate) fn id(&self) -> i64 {
        self.id
    }

    pub(crate) fn state(&self) -> &State {
        &self.core
    }

    /// Fills the views, replay rings and broadcast-delay queue from the stored log the state
    /// was rebuilt from (recovery): the events take the same path as when they were first
    /// published, so spectators of a delayed game see after a restart exactly what they saw
    /// before it.
    pub(crate) fn replayed(&mut self, events: Vec<GameEvent>) {
        // Not published to the other nodes again: their relays asked for what they missed.
        let channels = self.channels.take();
        self.publish_framed(events.into_iter().map(|e| (e, None)).collect(), None);
        self.channels = channels;
        self.followed = true;
        if self.core.is_finished() {
            self.finished_at = Some(Instant::now());
        }
    }

    /// Gives a decision's events their stored form: the append for the store, and what
    /// [`LiveGame::conclude`] needs once the commit's outcome is known. The state does not
    /// change until then.
    pub(crate) fn stage(&mut self, decided: Decided, is_timer: bool) -> (AppendOp, Staged) {
        let mut wire: Vec<GameEvent> = decided
            .events
            .iter()
            .map(|e| crate::game_wire::event(e.event.clone()))
            .collect();
        let (op, frames, is_move) = self.encode(&decided, &mut wire);
        (
            op,
            Staged {
                decided,
                wire,
                frames,
                is_move,
                is_timer,
            },
        )
    }

    /// The append of a staged decision again, byte for byte (the encoding is deterministic):
    /// to ask the store whether a commit whose outcome was unknown happened.
    pub(crate) fn append_of(&mut self, staged: &mut Staged) -> AppendOp {
        self.encode(&staged.decided, &mut staged.wire).0
    }

    /// The stored form of a decision's events: the append, each event's protobuf frame (cut
    /// from its stored form), and whether it plays a move.
    fn encode(
        &mut self,
        decided: &Decided,
        wire: &mut [GameEvent],
    ) -> (AppendOp, Vec<Option<Bytes>>, bool) {
        let n = decided.events.len();
        let mut rows = Vec::with_capacity(n);
        let mut frames = Vec::with_capacity(n);
        let mut finish = None;
        let mut is_move = false;
        for (ev, wire) in decided.events.iter().zip(wire) {
            let label = ev.kind().map_or("unknown", game::types::Kind::label);
            match ev.kind() {
                Some(game::types::Kind::Ended(e)) => {
                    finish = Some(FinishRow {
                        result: game::types::result_text(e.result).to_string(),
                        reason: e.reason.clone(),
                        at_ms: ev.event.at_ms,
                    });
                }
                Some(game::types::Kind::Move(_)) => is_move = true,
                _ => {}
            }
            let clock = ev
                .clock
                .as_ref()
                .map(|c| crate::snapshot::to_wire_cached(c, &mut self.controls_text));
            let (payload, frame) = crate::snapshot::stored_event(wire, clock.as_ref());
            frames.push(Some(frame));
            rows.push(EventRow {
                seq: ev.event.seq,
                kind: label,
                payload,
                at_ms: ev.event.at_ms,
                actor: ev.actor,
                reason: ev.reason.clone(),
            });
        }
        (
            AppendOp {
                game: self.id,
                events: rows,
                finish,
            },
            frames,
            is_move,
        )
    }

    /// Settles a staged decision once its commit's outcome is known: committed, its events are
    /// folded into the state and returned (with their frames) for publication; failed,
    /// nothing changes.
    fn settle(&mut self, staged: Staged, committed: bool) -> Result<(Answer, Vec<Framed>), ()> {
        if !committed {
            self.env
                .metrics
                .store_errors_total
                .fetch_add(1, Ordering::Relaxed);
            warn!(game = self.id, "commit failed; state unchanged");
            if staged.is_timer {
                self.commit_retry = Some(Instant::now() + Duration::from_millis(500));
            }
            return Err(());
        }
        let Staged {
            mut decided,
            wire,
            frames,
            is_move,
            ..
        } = staged;
        let was_finished = self.core.is_finished();
        if let Err(e) = game::apply(&mut self.core, &mut decided) {
            // Unreachable: the core decided these events on this very state.
            error!(game = self.id, error = %e, "a committed decision could not be folded");
        }
        if let Some(board) = &self.core.info.league {
            let board = crate::game_wire::league_board(board.clone());
            for e in &wire {
                if crate::audience::is_private(e.kind.as_ref()) {
                    self.env.desks.push(&board, e);
                }
            }
        }
        let n = decided.events.len() as u64;
        self.env
            .metrics
            .events_total
            .fetch_add(n, Ordering::Relaxed);
        if is_move {
            self.env.metrics.moves_total.fetch_add(1, Ordering::Relaxed);
        }
        if !was_finished && self.core.is_finished() {
            self.finished_at = Some(Instant::now());
            self.env.metrics.live_games.fetch_sub(1, Ordering::Relaxed);
            self.tell_league();
        }
        let events = wire.into_iter().zip(frames).collect();
        Ok((decided.answer, events))
    }

    /// Settles a staged decision (see [`LiveGame::settle`]) and answers for it: committed
    /// events are published; the request that asked for it, if any (a timer's has none), gets
    /// its answer, or `store_unavailable`.
    pub(crate) fn conclude(&mut self, staged: Staged, committed: bool, r: Option<&Request>) {
        let is_move = staged.is_move;
        let settled = self.settle(staged, committed);
        let Some(r) = r else {
            if let Ok((_, events)) = settled {
                self.publish_framed(events, None);
            }
            return;
        };
        match settled {
            Ok((Answer::Error(e), events)) => {
                self.publish_framed(events, None);
                self.error(r, &e);
            }
            Ok((Answer::Seq(seq), events)) => {
                // The requester's answer and the events it sees leave together, before the
                // events go to everyone else.
                let cork = r.out.cork();
                self.reply(r, seq);
                if is_move {
                    self.env.metrics.move_latency.observe(r.received.elapsed());
                }
                self.publish_framed(events, Some((&r.out, cork)));
            }
            Err(()) => self.error(r, &ClientError::StoreUnavailable),
        }
    }

    /// Live subscribers get events now; spectators through the delay queue. The protobuf
    /// frame of an event comes along when it is already known (made with its stored form, so
    /// the event is not encoded twice).
    /// `first`: the requester, whose corked answer goes out in one write with its copy of the
    /// first event, before the others get it (when it follows the live stream and none of the
    /// events is the arbiter channel's).
    fn publish_framed(&mut self, events: Vec<Framed>, first: Option<(&Outbox, Cork<'_>)>) {
        let (first, mut cork) = match first {
            Some((out, cork)) => (Some(out), Some(cork)),
            None => (None, None),
        };
        // A connection of this node that follows the live stream (connection ids are unique
        // per node; a client of another node follows the game through its own node's relay).
        let first = first.filter(|out| {
            !out.is_remote()
                && self.live_subs.members.contains(&out.conn_id)
                && !events
                    .iter()
                    .any(|(ev, _)| crate::audience::is_private(ev.kind.as_ref()))
        });
        for (ev, proto) in events {
            // The game's description (names, time control, start) is not what the delay
            // hides: spectators get it at once.
            let created = matches!(ev.kind, Some(w::game_event::Kind::Created(_)));
            let release_ms = if created {
                ev.at_ms
            } else {
                ev.at_ms + self.delay_ms
            };
            let seq = ev.seq;
            let private = crate::audience::is_private(ev.kind.as_ref());
            // An event with its protobuf frame is shared as the frame alone, and the live view
            // keeps the event itself (a move's record is not copied); an event of the arbiter
            // channel keeps its message, which each viewer's form is made from.
            let msg = |ev| ServerMessage {
                kind: Some(server_message::Kind::Event(ev)),
            };
            let frame = Arc::new(match proto {
                Some(f) if !private => {
                    self.live.apply_owned(ev);
                    SharedFrame::from_proto_frame(seq, f, false)
                }
                Some(f) => {
                    self.live.apply(&ev);
                    SharedFrame::with_proto_frame(seq, msg(ev), f)
                }
                None => {
                    self.live.apply(&ev);
                    SharedFrame::new(seq, msg(ev))
                }
            });
            push_ring(&mut self.ring, frame.clone(), self.env.config.replay_events);
            // The requester first: its corked answer and this event leave in one write.
            let sent = first.map(|out| (out, out.send(Out::Shared(frame.clone()))));
            drop(cork.take());
            // The arbiter channel: each subscriber gets what is theirs, spectators and the
            // delayed stream a stand-in (the seq stays contiguous).
            let frame = if private {
                self.send_private(&frame)
            } else if self.live_subs.list.len() >= crate::metrics::FANOUT_OBSERVED {
                let began = Instant::now();
                self.live_subs.send_all(&frame, sent, self.direct_writes);
                self.env.metrics.fanout_latency.observe(began.elapsed());
                frame
            } else {
                self.live_subs.send_all(&frame, sent, self.direct_writes);
                frame
            };
            if let Some(c) = self.channels.as_ref().filter(|_| self.followed) {
                c.publish(true, &frame);
            }
            if self.public.is_some() {
                self.delayed.push_back(Pending {
                    release_ms,
                    min_plies: if created {
                        0
                    } else {
                        self.live.moves.len() as u32 + self.delay_plies
                    },
                    frame,
                });
            }
        }
        self.release_delayed();
        self.update_summary();
    }

    /// Sends an event of the arbiter channel to each live subscriber as it may see it, and
    /// returns the spectators' stand-in (what the delayed stream and the other nodes get).
    fn send_private(&mut self, frame: &Arc<SharedFrame>) -> Arc<SharedFrame> {
        let Some(ev) = frame.event() else {
            return frame.clone();
        };
        let clock = Some(self.live.clock);
        let stand_in = Arc::new(private_frame(ev, crate::audience::Viewer::Spectator, clock));
        self.live_subs.compact();
        let viewers: Vec<_> = self
            .live_subs
            .list
            .iter()
            .map(|s| self.viewer(&s.who))
            .collect();
        let mut i = 0;
        self.live_subs.retain(|s| {
            let Some(&v) = viewers.get(i) else {
                return false;
            };
            i += 1;
            let f = match v {
                crate::audience::Viewer::Arbiter => frame.clone(),
                crate::audience::Viewer::Spectator => stand_in.clone(),
                v => Arc::new(private_frame(ev, v, clock)),
            };
            s.out.send(Out::Shared(f))
        });
        stand_in
    }

    /// Who `who` is on this game's arbiter channel.
    fn viewer(&self, who: &Principal) -> crate::audience::Viewer {
        let actor = self.actor_of(who);
        if actor.is_arbiter() {
            crate::audience::Viewer::Arbiter
        } else if let Some(s) = actor.side_in(&self.core) {
            crate::audience::Viewer::Player(crate::game_wire::side(s))
        } else {
            crate::audience::Viewer::Spectator
        }
    }

    /// Releases delayed events whose time (and ply distance) has come. At the end of the game
    /// the ply delay no longer holds anything back.
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
            self.public_subs
                .send_all(&p.frame, None, self.direct_writes);
            if let Some(c) = self.channels.as_ref().filter(|_| self.followed) {
                c.publish(false, &p.frame);
            }
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

    /// When the server's timer must next look at the game: a scheduled start, a lateness
    /// limit, the flag — or a failed timer commit to retry.
    fn due_instant(&self) -> Option<Instant> {
        if self.core.is_finished() {
            return None;
        }
        if let Some(r) = self.commit_retry {
            return Some(r);
        }
        self.core.next_due().map(|m| self.env.time.instant_at(m))
    }

    /// When the shard must next wake this game: something due (see `due_instant`), delayed
    /// events to release, or a finished game to unload. `busy`: a commit is in flight (what is
    /// due waits for it).
    pub(crate) fn next_wake(&self, busy: bool) -> Option<Instant> {
        let due = if busy { None } else { self.due_instant() };
        let linger = if self.delayed.is_empty() && !busy {
            self.finished_at
                .map(|t| t + self.env.config.finished_linger)
        } else {
            None
        };
        [due, self.next_release(), linger]
            .into_iter()
            .flatten()
            .min()
    }

    /// The shard woke the game at `now` (no commit of it in flight): releases what the
    /// broadcast delay held back, and answers what is due to commit, or that the game may
    /// unload.
    pub(crate) fn wake(&mut self, now: Instant) -> Wake {
        if self.next_release().is_some_and(|t| t <= now) {
            self.release_delayed();
        }
        if self.due_instant().is_some_and(|t| t <= now) {
            self.commit_retry = None;
            let cmd = Command::Tick;
            if let Ok(d) = game::decide(
                &self.core,
                &cmd,
                &game::Actor::SERVER,
                self.env.time.now_ms(),
            ) {
                return Wake::Commit(Box::new(d));
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

    /// A scheduled start or a lateness limit already due when a request comes: decided first,
    /// so the request meets the game as it is after it.
    pub(crate) fn due_first(&mut self) -> Option<Decided> {
        let now = self.env.time.now_ms();
        if !game::due_before_requests(&self.core, now) {
            return None;
        }
        game::decide(&self.core, &Command::Tick, &game::Actor::SERVER, now).ok()
    }

    /// The game as its shard sees it when it stops or unloads it.
    pub(crate) fn unloaded(&self) {
        self.alive.store(false, Ordering::Release);
        if !self.core.is_finished() {
            self.env.metrics.live_games.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Forgets a connection's subscriptions.
    pub(crate) fn detach(&mut self, conn: u64) {
        self.live_subs.remove(conn);
        self.public_subs.remove(conn);
    }

    /// Takes every subscriber with the last seq it was sent (the game leaves this node: they
    /// subscribe again wherever it goes).
    pub(crate) fn take_subscribers(&mut self) -> Vec<(Outbox, Arc<Principal>, u64)> {
        let live = self.live.seq;
        let public = self.public.as_ref().map_or(live, |p| p.seq);
        let mut v: Vec<_> = self
            .live_subs
            .take()
            .into_iter()
            .map(|s| (s.out, s.who, live))
            .collect();
        v.extend(
            self.public_subs
                .take()
                .into_iter()
                .map(|s| (s.out, s.who, public)),
        );
        v
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
            .fetch_add(1, Ordering::Relaxed);
        if e.is_server_side() {
            warn!(game = self.id, code = e.code(), "request failed");
        } else {
            debug!(game = self.id, code = e.code(), "request refused");
        }
        r.out.send_msg(ServerMessage {
            kind: Some(server_message::Kind::Error(e.to_wire(r.req, &self.gid))),
        });
    }

    /// A client request: the core's decision to commit, or Done when the request was answered
    /// already (a subscription, a refusal, a resent move).
    pub(crate) fn prepare(&mut self, r: &Request) -> Handled {
        let cmd = match &r.body {
            Body::Subscribe { last_seq, relay } => {
                self.subscribe(r, *last_seq, relay.as_deref());
                // A player subscribing has joined its game (lateness, a start on arrival).
                let joined = r.who.actor().side_in(&self.core).is_some_and(|s| {
                    game::tracks_joining(&self.core) && !self.core.joined[game::side::index(s)]
                });
                if joined {
                    let now = self.env.time.now_ms();
                    if let Ok(d) = game::decide(&self.core, &Command::Join, &r.who.actor(), now) {
                        if !d.events.is_empty() {
                            return Handled::CommitQuietly(Box::new(d));
                        }
                    }
                }
                return Handled::Done;
            }
            Body::Unsubscribe => {
                self.detach(r.out.conn_id);
                self.reply(r, 0);
                return Handled::Done;
            }
            body => match body.command(r.lag) {
                Some(c) => c,
                None => return Handled::Done,
            },
        };
        // A move happens when it reached the server; anything else when it is handled.
        let now = match cmd {
            Command::Move { .. } => self.env.time.ms_at(r.received),
            _ => self.env.time.now_ms(),
        };
        match game::decide(&self.core, &cmd, &self.actor_of(&r.who), now) {
            Err(e) => {
                self.error(r, &e);
                Handled::Done
            }
            Ok(d) if d.events.is_empty() => {
                match &d.answer {
                    Answer::Seq(seq) => self.reply(r, *seq),
                    Answer::Error(e) => self.error(r, e),
                }
                Handled::Done
            }
            Ok(d) => {
                // A flag committed in place of the move: no retry timer pending any more.
                if matches!(d.answer, Answer::Error(_)) {
                    self.commit_retry = None;
                }
                Handled::Commit(Box::new(d))
            }
        }
    }

    /// Who `who` is to this game: an arbiter who is not one of a league game's event's
    /// arbiters is only a spectator of it (no arbiter commands, the delayed view); organizers
    /// and the event's own arbiters rule on it. Only arbiters pay for the look-up.
    fn actor_of(&self, who: &crate::request::Principal) -> game::Actor {
        let mut actor = who.actor();
        if actor.role == Some(crate::persist::Role::Arbiter)
            && !actor.id.is_some_and(|id| self.rules_on(id))
        {
            actor.role = None;
        }
        actor
    }

    /// Whether the arbiter with account `id` rules on this game: any game but a league's, and
    /// a league's when it is one of its event's arbiters.
    pub(crate) fn rules_on(&self, id: i64) -> bool {
        match &self.core.info.league {
            Some(board) => self.env.leagues.arbiter_of(&board.league_id, id),
            None => true,
        }
    }

    fn subscribe(
        &mut self,
        r: &Request,
        last_seq: u64,
        relay: Option<&std::sync::atomic::AtomicBool>,
    ) {
        let actor = self.actor_of(&r.who);
        let player = actor.side_in(&self.core).is_some();
        let live = actor.is_arbiter() || player || self.public.is_none();
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
        if let Some(flag) = relay {
            flag.store(live, Ordering::Release);
            // Published from now on: this catch-up has everything up to here.
            self.followed = true;
        }
        self.reply(r, view.seq);
        let viewer = self.viewer(&r.who);
        if last_seq == 0 || last_seq > view.seq || last_seq + 1 < first_in_ring {
            let mut snap = view.snapshot();
            if viewer == crate::audience::Viewer::Spectator {
                snap.open_call = None;
            }
            out.send_msg(ServerMessage {
                kind: Some(server_message::Kind::Snapshot(snap)),
            });
        } else {
            for f in ring.iter().filter(|f| f.seq > last_seq) {
                match f.is_private().then(|| f.event()).flatten() {
                    Some(ev) if viewer != crate::audience::Viewer::Arbiter => {
                        // The ring keeps the clocks of neither; the stand-in carries none.
                        out.send(Out::Shared(Arc::new(private_frame(ev, viewer, None))));
                    }
                    _ => {
                        out.send(Out::Shared(f.clone()));
                    }
                }
            }
        }
        let list = if live {
            &mut self.live_subs
        } else {
            &mut self.public_subs
        };
        if relay.is_some() {
            return;
        }
        list.add(Sub {
            out: out.clone(),
            who: r.who.clone(),
        });
    }

    /// A league's game that has just ended tells its league.
    fn tell_league(&self) {
        let Some(board) = &self.core.info.league else {
            return;
        };
        let (Ok(league), Some((result, reason))) =
            (board.league_id.parse::<i64>(), &self.core.result)
        else {
            return;
        };
        self.env.leagues.game_ended_anywhere(
            league,
            crate::league::hooks::GameEnd {
                game: self.id,
                result: crate::game_wire::result(Some(*result)) as i32,
                reason: reason.clone(),
                fouls: self.core.fouls,
            },
        );
    }

    /// Logs a game taken up after a restart (or created), once its first events are published.
    pub(crate) fn started(&self, recovered: Option<u64>) {
        if !self.core.is_finished() {
            self.env.metrics.live_games.fetch_add(1, Ordering::Relaxed);
        }
        match recovered {
            Some(downtime_ms) => info!(game = self.id, downtime_ms, "game recovered"),
            None => info!(game = self.id, "game created"),
        }
    }
}

/// The frame of an arbiter-channel event as `viewer` receives it.
fn private_frame(
    ev: &GameEvent,
    viewer: crate::audience::Viewer,
    clock: Option<w::ClockState>,
) -> SharedFrame {
    let ev = crate::audience::redact(ev, viewer, clock);
    SharedFrame::new(
        ev.seq,
        ServerMessage {
            kind: Some(server_message::Kind::Event(ev)),
        },
    )
}

/// An event with its protobuf websocket frame when that was made with the event's stored form.
type Framed = (GameEvent, Option<Bytes>);

fn push_ring(ring: &mut VecDeque<Arc<SharedFrame>>, f: Arc<SharedFrame>, cap: usize) {
    if ring.len() >= cap.max(1) {
        ring.pop_front();
    }
    ring.push_back(f);
}

/// A subscriber: its connection's queue, and who it is (to subscribe it again elsewhere).
struct Sub {
    out: Outbox,
    who: Arc<Principal>,
}

/// One stream's subscribers, one entry per connection. A connection that leaves is only noted
/// (a set lookup); the list drops every noted connection in one pass before it is next used, so
/// the ten thousand spectators of a board leaving together cost one pass over it, not one each
/// (and a connection subscribing looks itself up in a set, not in the list).
#[derive(Default)]
struct Subs {
    list: Vec<Sub>,
    /// The connections in `list`, less those that left.
    members: IdSet,
    /// Connections that left and are still in `list`.
    leaving: IdSet,
}

type IdSet = chuhe_store::IdSet<u64>;

impl Subs {
    /// Drops the connections that left.
    fn compact(&mut self) {
        if self.leaving.is_empty() {
            return;
        }
        let leaving = std::mem::take(&mut self.leaving);
        self.list.retain(|s| !leaving.contains(&s.out.conn_id));
    }

    /// `sub`'s connection subscribes (again: its earlier entry goes).
    fn add(&mut self, sub: Sub) {
        let conn = sub.out.conn_id;
        if self.leaving.contains(&conn) {
            self.compact();
        }
        if !self.members.insert(conn) {
            self.list.retain(|s| s.out.conn_id != conn);
        }
        self.list.push(sub);
    }

    /// The connection leaves (it is gone from the list before the list is next used).
    fn remove(&mut self, conn: u64) {
        if self.members.remove(&conn) {
            self.leaving.insert(conn);
        }
    }

    /// Keeps the subscribers `keep` says yes to (it is called once for each, in order).
    fn retain(&mut self, mut keep: impl FnMut(&Sub) -> bool) {
        self.compact();
        let members = &mut self.members;
        self.list.retain(|s| {
            let k = keep(s);
            if !k {
                members.remove(&s.out.conn_id);
            }
            k
        });
    }

    /// Sends `frame` to every subscriber but `sent` (a connection that has it already, and
    /// whether that send succeeded): to the first `direct` of them straight to their sockets
    /// where they wait, to the rest through their queues.
    fn send_all(&mut self, frame: &Arc<SharedFrame>, sent: Option<(&Outbox, bool)>, direct: usize) {
        let mut n = 0usize;
        // A failed send means the connection is gone or was kicked for being too slow (its
        // writer closes it with 4008): either way it leaves the list.
        self.retain(|s| match sent {
            Some((out, ok)) if out.same_connection(&s.out) => ok,
            _ => {
                n += 1;
                if n <= direct {
                    s.out.send(Out::Shared(frame.clone()))
                } else {
                    s.out.send_queued(Out::Shared(frame.clone()))
                }
            }
        });
    }

    /// Every subscriber, leaving the list empty.
    fn take(&mut self) -> Vec<Sub> {
        self.compact();
        self.members.clear();
        std::mem::take(&mut self.list)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod subs_tests {
    use super::*;
    use crate::outbox::Inbox;
    use chuhe_proto::Encoding;

    fn conn(id: u64) -> (Sub, Inbox) {
        let (out, rx, _kick) = Outbox::new(id, Encoding::Proto, 16);
        let sub = Sub {
            out,
            who: Arc::new(Principal { account: None }),
        };
        (sub, rx)
    }

    fn frame(seq: u64) -> Arc<SharedFrame> {
        Arc::new(SharedFrame::new(seq, ServerMessage::default()))
    }

    fn got(rx: &mut Inbox) -> Vec<u64> {
        std::iter::from_fn(|| rx.try_recv())
            .map(|o| match o {
                Out::Shared(f) => f.seq,
                Out::Own(_) => 0,
            })
            .collect()
    }

    #[test]
    fn a_connection_that_left_gets_nothing_more_and_one_that_came_back_gets_each_frame_once() {
        let mut subs = Subs::default();
        let mut rxs = Vec::new();
        for id in 1..=5 {
            let (s, rx) = conn(id);
            subs.add(s);
            rxs.push(rx);
        }
        subs.send_all(&frame(1), None, usize::MAX);
        subs.remove(2);
        subs.remove(4);
        subs.remove(9); // never subscribed: nothing happens
        subs.send_all(&frame(2), None, usize::MAX);
        let seen: Vec<_> = rxs.iter_mut().map(got).collect();
        assert_eq!(seen, [vec![1, 2], vec![1], vec![1, 2], vec![1], vec![1, 2]]);
        assert_eq!(subs.list.len(), 3);

        // Connection 2 leaves and subscribes again before anything is sent: one entry.
        let (again, mut rx2) = conn(2);
        subs.remove(2);
        subs.add(again);
        // Connection 3 subscribes twice (a resume): its earlier entry goes.
        let (twice, mut rx3) = conn(3);
        subs.add(twice);
        subs.send_all(&frame(3), None, usize::MAX);
        assert_eq!(got(&mut rx2), [3]);
        assert_eq!(got(&mut rx3), [3]);
        assert_eq!(
            got(&mut rxs[2]),
            Vec::<u64>::new(),
            "the replaced entry is gone"
        );
        assert_eq!(subs.list.len(), 4);

        // A connection whose reader is gone drops out at the next send and can come back.
        drop(rxs.pop());
        subs.send_all(&frame(4), None, usize::MAX);
        assert_eq!(subs.list.len(), 3);
        let (back, mut rx5) = conn(5);
        subs.add(back);
        subs.send_all(&frame(5), None, usize::MAX);
        assert_eq!(got(&mut rx5), [5]);
        assert_eq!(subs.take().len(), 4);
        assert!(subs.members.is_empty() && subs.leaving.is_empty());
    }
    #[tokio::test]
    async fn on_one_worker_the_shard_writes_to_every_waiting_subscriber() {
        assert_eq!(direct_writes(), usize::MAX);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_several_workers_the_shard_writes_to_the_first_few() {
        assert_eq!(direct_writes(), DIRECT_WRITES_SHARED);
    }

    /// The first `direct` subscribers that wait get the frame on their sockets from the
    /// sender; the others through their queues.
    #[tokio::test]
    async fn beyond_its_direct_writes_a_fan_out_goes_through_the_queues() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut subs = Subs::default();
        let mut conns = Vec::new();
        for id in 1..=3 {
            let client = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
            let (server, _) = l.accept().await.unwrap();
            let (sub, mut rx) = conn(id);
            rx.write_directly(crate::socket::SharedSocket::new(server));
            // The connection's task waits: its queue is empty.
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            assert!(rx.poll_next(&mut cx).is_pending());
            subs.add(sub);
            conns.push((rx, client));
        }
        subs.send_all(&frame(1), None, 1);
        let queued: Vec<_> = conns.iter_mut().map(|(rx, _)| got(rx)).collect();
        assert_eq!(queued, [vec![], vec![1], vec![1]]);
    }

    #[test]
    fn a_connection_sent_the_frame_first_gets_it_once_and_leaves_if_that_send_failed() {
        let mut subs = Subs::default();
        let mut rxs = Vec::new();
        for id in 1..=3 {
            let (s, rx) = conn(id);
            subs.add(s);
            rxs.push(rx);
        }
        // Connection 2 had frame 1 already: the others get it, 2 nothing more.
        let two = subs.list[1].out.clone();
        subs.send_all(&frame(1), Some((&two, true)), usize::MAX);
        let seen: Vec<_> = rxs.iter_mut().map(got).collect();
        assert_eq!(seen, [vec![1], vec![], vec![1]]);
        assert_eq!(subs.list.len(), 3);
        // Its first send failed: it leaves like any connection whose send failed.
        subs.send_all(&frame(2), Some((&two, false)), usize::MAX);
        assert_eq!(subs.list.len(), 2);
        assert!(!subs.members.contains(&2));
    }
}
