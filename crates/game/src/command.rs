//! Commands, who sends them, and [`decide`]: what a command would change, as events, without
//! changing anything. The state changes only when the events are committed and folded
//! ([`super::state::fold`]).

use std::time::Duration;

use chuhe_clock::{Clock, Millis};

use super::state::{Event, Precomputed, State, fold_with};
use crate::board::Board;
use crate::error::ClientError;
use crate::phrase::{phrase, side_code};
use crate::side;
use crate::types::{
    self as t, ArbiterAction, ArbiterNote, ClockState, GameEvent, GameResult, Kind, Role, Side,
    SideClock,
};

/// Who sends a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor {
    /// The principal's id; None: anonymous, or the server itself ([`Actor::SERVER`]).
    pub id: Option<i64>,
    pub role: Option<Role>,
}

impl Actor {
    /// The server's own timers (flags, restarts).
    pub const SERVER: Actor = Actor {
        id: None,
        role: None,
    };

    /// Arbiters and organisers rule on games and see them live.
    pub fn is_arbiter(&self) -> bool {
        matches!(self.role, Some(Role::Arbiter | Role::Organizer))
    }

    /// The side this actor plays in the game, if it is one of its players.
    pub fn side_in(&self, st: &State) -> Option<Side> {
        if self.role != Some(Role::Player) {
            return None;
        }
        st.side_of_player(self.id?)
    }
}

/// What can be asked of a game.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A player's move (ICCS, Chinese or WXF), optionally with a draw offer.
    Move {
        ply: u32,
        mv: String,
        offer_draw: bool,
        /// The client's own measure of its thinking time (lag compensation).
        think_ms: Option<u32>,
        /// The connection's round-trip estimate (bounds lag compensation).
        lag: Duration,
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
        action: ArbiterAction,
    },
    /// A player calls the arbiter (请裁判).
    CallArbiter {
        reason: String,
    },
    /// An arbiter takes the open call.
    TakeCall,
    /// An arbiter closes the open call with a decision.
    CloseCall {
        decision: String,
    },
    /// A message on the arbiter channel (`to`: one side, None: both; a player's goes to the
    /// arbiters and names no side).
    Message {
        to: Option<Side>,
        text: String,
    },
    /// The server's timer: whatever is due now — a scheduled start, a lateness forfeit
    /// (art. 21), the flag. Refused when nothing is due.
    Tick,
    /// A player of the game is here (subscribed with its player token): recorded once per side.
    Join,
    /// The game is taken up again after the server was down: clocks resume, the outage
    /// charged to nobody.
    Restart,
}

/// What the requester is told once the events are committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Acknowledged with this seq.
    Seq(u64),
    /// Refused with this error although events were committed (a move that came after the
    /// flag fell: the flag is committed, the move refused).
    Error(ClientError),
}

/// A decision: the events to commit (none: answered already, e.g. a resent move) and the
/// answer once they are committed.
#[derive(Debug)]
pub struct Decided {
    pub events: Vec<Event>,
    pub answer: Answer,
    /// The board and clock after the events, so folding them need not compute them again.
    pub(crate) precomputed: Precomputed,
}

impl Decided {
    /// Nothing to commit; the answer stands at once.
    pub(crate) fn answered(answer: Answer) -> Decided {
        Decided {
            events: Vec::new(),
            answer,
            precomputed: Precomputed::default(),
        }
    }

    /// The seq of the last event (what a plain request is acknowledged with).
    pub fn last_seq(&self) -> Option<u64> {
        self.events.last().map(|e| e.event.seq)
    }
}

/// Folds a decision's events once they are committed. Same state as folding the events one
/// by one with [`super::state::fold`] (tested), without playing the move twice.
pub fn apply(st: &mut State, decided: &mut Decided) -> Result<(), super::state::FoldError> {
    for ev in &decided.events {
        fold_with(st, ev, &mut decided.precomputed)?;
    }
    Ok(())
}

pub(crate) fn ensure_not_finished(st: &State) -> Result<(), ClientError> {
    if st.result.is_some() {
        return Err(ClientError::GameFinished);
    }
    Ok(())
}

pub(crate) fn ensure_playing(st: &State) -> Result<(), ClientError> {
    ensure_not_finished(st)?;
    if st.started_at.is_none() {
        return Err(ClientError::GameNotStarted);
    }
    if st.clock.is_paused() {
        return Err(ClientError::GamePaused);
    }
    Ok(())
}

/// The clocks as clients see them at `now`.
pub(crate) fn clock_state(clock: &Clock, finished: bool, now: u64) -> ClockState {
    let v = clock.view(Millis(now));
    let sc = |s: chuhe_clock::SideView| SideClock {
        remaining_ms: s.period_remaining_ms.unwrap_or(s.remaining_ms),
        periods_left: s.periods_left,
        in_byoyomi: s.period_remaining_ms.is_some(),
    };
    let running = if finished || v.paused || v.flag.is_some() || !clock.is_started() {
        None
    } else {
        v.to_move.map(side::from_clock)
    };
    ClockState {
        red: Some(sc(v.red)),
        black: Some(sc(v.black)),
        running,
        paused: v.paused,
    }
}

/// The events of one decision as they are being drafted, with the clock, fouls and result as
/// they stand after the events drafted so far (so a foul can see the count it makes, and the
/// end of the game the clock it stops).
pub(crate) struct Batch<'a> {
    pub st: &'a State,
    pub now: u64,
    kinds: Vec<(Kind, Option<(i64, String)>)>,
    /// The clock after the drafted events (a copy of the state's, made when first changed).
    clock: Option<Clock>,
    pub fouls: [u32; 2],
    pub ended: bool,
    /// The board after a move.
    pub board: Option<Box<Board>>,
    /// The seq to acknowledge (None: the last event's).
    pub ack: Option<u64>,
    /// The instant the clocks started, as of the drafted events.
    pub started: Option<u64>,
    /// The answer instead of an acknowledgement.
    pub error_after: Option<ClientError>,
}

impl<'a> Batch<'a> {
    pub fn new(st: &'a State, now: u64) -> Batch<'a> {
        Batch {
            st,
            now,
            kinds: Vec::with_capacity(2),
            clock: None,
            fouls: st.fouls,
            ended: st.result.is_some(),
            board: None,
            ack: None,
            started: st.started_at,
            error_after: None,
        }
    }

    /// Nothing drafted.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The clock after the drafted events.
    pub fn clock(&self) -> &Clock {
        self.clock.as_ref().unwrap_or(&self.st.clock)
    }

    /// The clock, to change (copied from the state's on first use).
    pub fn clock_mut(&mut self) -> &mut Clock {
        self.clock.get_or_insert_with(|| self.st.clock.clone())
    }

    /// Takes a clock computed elsewhere as the clock after the drafted events.
    pub fn set_clock(&mut self, clock: Clock) {
        self.clock = Some(clock);
    }

    /// The clocks as clients see them now, after the drafted events.
    pub fn clock_state(&self) -> ClockState {
        clock_state(self.clock(), self.ended, self.now)
    }

    /// The seq the next drafted event gets.
    pub fn next_seq(&self) -> u64 {
        self.st.seq + self.kinds.len() as u64 + 1
    }

    pub fn push(&mut self, k: Kind) {
        self.kinds.push((k, None));
    }

    /// An event an arbiter caused, with the reason, for the log's audit columns.
    pub fn push_by(&mut self, k: Kind, note: Option<&ArbiterNote>) {
        let by = note.map(|n| (n.arbiter_id.parse().unwrap_or(0), n.reason.clone()));
        self.kinds.push((k, by));
    }

    /// Ends the game (stopping the clock) unless it is already over.
    pub fn end(
        &mut self,
        result: GameResult,
        reason: &str,
        explanation: String,
        phrase: t::Phrase,
        arbiter: Option<ArbiterNote>,
    ) {
        if !self.ended {
            let now = self.now;
            let _ = self.clock_mut().stop(Millis(now));
        }
        self.ended = true;
        let k = Kind::Ended(t::GameEnded {
            result: Some(result),
            reason: reason.into(),
            explanation,
            clock: Some(self.clock_state()),
            arbiter: arbiter.clone(),
            phrase: Some(phrase),
        });
        self.push_by(k, arbiter.as_ref());
    }

    /// Records a foul; the third loses (art. 4.1.8).
    pub fn foul(
        &mut self,
        s: Side,
        code: &str,
        explanation: String,
        phrase: t::Phrase,
        arbiter: Option<ArbiterNote>,
    ) {
        self.fouls[side::index(s)] += 1;
        let count = self.fouls[side::index(s)];
        let k = Kind::Foul(t::FoulRecorded {
            side: Some(s),
            code: code.into(),
            explanation,
            count,
            arbiter: arbiter.clone(),
            phrase: Some(phrase),
        });
        self.push_by(k, arbiter.as_ref());
        if count >= 3 {
            self.end(
                side::win_for(side::other(s)),
                "fouls",
                format!(
                    "{} committed 3 fouls and loses (art. 4.1.8).",
                    side::name(s)
                ),
                crate::phrase::phrase(
                    "ended.fouls",
                    &[("side", side_code(s)), ("article", "4.1.8".into())],
                ),
                arbiter,
            );
        }
    }

    /// Ends the drafted game on time if the draft's clock has flagged at its `now`.
    pub fn flag(&mut self) -> bool {
        if self.ended {
            return false;
        }
        let now = self.now;
        let Some(flag) = self.clock_mut().check_flag(Millis(now)) else {
            return false;
        };
        let loser = side::from_clock(flag.side);
        let winner = side::other(loser);
        self.ended = true;
        let clock = self.clock_state();
        self.push(Kind::Ended(t::GameEnded {
            result: Some(side::win_for(winner)),
            reason: "flag".into(),
            explanation: format!("{flag}: {} wins on time.", side::name(winner)),
            clock: Some(clock),
            arbiter: None,
            phrase: Some(crate::phrase::phrase(
                "ended.flag",
                &[
                    ("side", crate::phrase::side_code(loser)),
                    ("winner", crate::phrase::side_code(winner)),
                ],
            )),
        }));
        true
    }

    /// A draw offer by `s`, or the foul of offering again after a refusal (art. 9.1.3).
    pub fn offer(&mut self, s: Side) {
        if self.st.offer_blocked[side::index(s)] {
            self.foul(
                s,
                "repeated_draw_offer",
                format!(
                    "{} offered a draw again after it was refused, before {} offered one: a foul (art. 9.1.3). The offer is not passed on.",
                    side::name(s),
                    side::name(side::other(s))
                ),
                phrase(
                    "foul.repeated_draw_offer",
                    &[
                        ("side", side_code(s)),
                        ("other", side_code(side::other(s))),
                        ("article", "9.1.3".into()),
                    ],
                ),
                None,
            );
            return;
        }
        self.push(Kind::DrawOffered(t::DrawOffered { side: Some(s) }));
    }

    /// The decision: the events with their seqs, time and the clock after the batch (on the
    /// last event, as stored).
    pub fn finish_batch(self) -> Decided {
        let n = self.kinds.len();
        let clock = self.clock.unwrap_or_else(|| self.st.clock.clone());
        let snapshot = clock.snapshot(Millis(self.now));
        let mut snapshot = Some(snapshot);
        let mut events = Vec::with_capacity(n);
        for (i, (kind, by)) in self.kinds.into_iter().enumerate() {
            let (actor, reason) = match by {
                Some((a, r)) => (Some(a), Some(r)),
                None => (None, None),
            };
            events.push(Event {
                event: GameEvent {
                    game_id: self.st.info.game_id.clone(),
                    seq: self.st.seq + 1 + i as u64,
                    at_ms: self.now,
                    kind: Some(kind),
                },
                clock: if i + 1 == n { snapshot.take() } else { None },
                actor,
                reason,
            });
        }
        let last = self.st.seq + n as u64;
        let answer = match self.error_after {
            Some(e) => Answer::Error(e),
            None => Answer::Seq(self.ack.unwrap_or(last)),
        };
        Decided {
            events,
            answer,
            precomputed: Precomputed {
                board: self.board,
                clock: Some(clock),
            },
        }
    }
}
