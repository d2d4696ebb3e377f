//! A game's state and [`fold`]: how each committed event changes it. Live play folds the
//! events it has just committed; recovery folds the stored log; both through this one
//! function, so a rule of how an event changes the game is written once.

use crate::board::Board;
use crate::side;
use crate::types::{GameEvent, GameInfo, GameResult, Kind, Side, StartMode};
use chuhe_clock::{Clock, ClockSnapshot, Controls, LagConfig, Millis};

/// The natural move limit when a game names none: 60 moves each (art. 4.2.4).
pub const DEFAULT_MOVE_LIMIT_PLIES: u32 = 120;

/// One event as the core decides and folds it: the game event (what clients receive and the
/// log stores, converted to the wire by the server) and what the store keeps beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The event with its seq and time.
    pub event: GameEvent,
    /// The clock after this event; the last event of every committed batch carries it, so
    /// recovery resumes the clock exactly (see [`fold`]).
    pub clock: Option<ClockSnapshot>,
    /// Who caused it (an arbiter), for the audit columns of the log.
    pub actor: Option<i64>,
    /// Why (the arbiter's reason).
    pub reason: Option<String>,
}

impl Event {
    /// The event's kind (every event the core makes has one).
    pub fn kind(&self) -> Option<&Kind> {
        self.event.kind.as_ref()
    }
}

/// The last move, for answering a resent move idempotently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastMove {
    pub ply: u32,
    /// The seq of its event (the acknowledgement a resend gets).
    pub seq: u64,
    pub side: Side,
    /// The move as recorded: ICCS, Chinese, WXF (a resend may use any of them).
    pub iccs: String,
    pub chinese: String,
    pub wxf: String,
}

/// A call not yet closed, as the state keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenCall {
    /// The `ArbiterCalled` event's seq: the call's id.
    pub seq: u64,
    pub side: Side,
    pub at_ms: u64,
    pub reason: String,
    /// The arbiter who took it.
    pub taken_by: Option<i64>,
    pub clock_stopped: bool,
}

/// Everything a game's commands are decided on. Built by folding events only.
#[derive(Debug, Clone)]
pub struct State {
    /// The game's static description (from its `Created` event).
    pub info: GameInfo,
    /// Player ids of Red and Black.
    pub red: i64,
    pub black: i64,
    /// Seq and time of the last event folded.
    pub seq: u64,
    pub at_ms: u64,
    /// Position, moves, rulings in force and the move-limit count.
    pub board: Box<Board>,
    pub clock: Clock,
    /// Fouls per side (index [`side::index`]).
    pub fouls: [u32; 2],
    /// The side whose draw offer stands.
    pub draw_offer: Option<Side>,
    /// A side whose offer was refused may not offer again until the opponent has offered.
    pub offer_blocked: [bool; 2],
    /// The result and its reason code, once the game is over.
    pub result: Option<(GameResult, String)>,
    pub last_move: Option<LastMove>,
    /// Plies without a capture that draw (the game's own limit, or the default).
    pub move_limit: u32,
    /// Seqs of the ruling events (an arbiter may override only those).
    pub rulings: Vec<u64>,
    /// When the clocks start (from the game's description).
    pub start_mode: StartMode,
    /// The instant the clocks started (None: not yet).
    pub started_at: Option<u64>,
    /// Which sides have joined the game (art. 21 lateness; START_MODE_PLAYERS_PRESENT).
    pub joined: [bool; 2],
    /// The earliest instant a scheduled start may have: the game's creation, or — while its
    /// clocks have not started — the server's restart after an outage. A start that fell
    /// before it (the game did not exist yet, or the server was down) happens then, with the
    /// clocks and the lateness limit credited for the gap (issue 19 item 7), as clocks
    /// already running are after a restart.
    pub start_not_before: u64,
    /// Calls to the arbiter made per side (index [`side::index`]).
    pub calls: [u32; 2],
    /// The call not yet closed.
    pub open_call: Option<OpenCall>,
    /// When each side's player last sent a message (0: never), for the rate limit.
    pub last_message_at: [u64; 2],
    /// The board the last move replaced, kept for the next move to be tried on (see
    /// [`State::board_copy`]). Not part of the game: a copy of the state starts without one.
    spare: SpareBoard,
}

/// A board kept only for its buffers ([`State::board_copy`]): a move is tried on a copy of
/// the board, and copying into the board the move before replaced reuses its allocations
/// (the history of moves and positions) where a fresh copy would allocate five and free five
/// when it is replaced, every move. A `Cell`, as deciding reads the state without changing it.
#[derive(Default)]
struct SpareBoard(std::cell::Cell<Option<Box<Board>>>);

impl Clone for SpareBoard {
    fn clone(&self) -> Self {
        SpareBoard::default()
    }
}

impl std::fmt::Debug for SpareBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SpareBoard")
    }
}

/// Why an event cannot be folded: the log does not describe a game this server can rebuild.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FoldError {
    #[error("event {seq}: expected seq {expected}")]
    Gap { seq: u64, expected: u64 },
    #[error("event {seq} has no kind")]
    NoKind { seq: u64 },
    #[error("the first event must be the game's creation")]
    NotCreated,
    #[error("event {seq}: the game's description is unusable: {why}")]
    BadInfo { seq: u64, why: String },
    #[error("event {seq}: stored move {iccs} cannot be played: {why}")]
    BadMove { seq: u64, iccs: String, why: String },
    #[error("event {seq}: its clock snapshot cannot be restored: {why}")]
    BadClock { seq: u64, why: String },
    #[error("event {seq}: the game's end names no result")]
    NoResult { seq: u64 },
}

impl State {
    /// The state a game starts in, from its description (no event folded yet: seq 0, clock
    /// not started).
    pub fn from_info(info: &GameInfo) -> Result<State, String> {
        let move_limit = match info.move_limit_plies {
            0 => DEFAULT_MOVE_LIMIT_PLIES,
            n => n,
        };
        let board = Board::new(&info.initial_fen, &info.ruleset, move_limit)?;
        let controls: Controls = info
            .time_control
            .parse()
            .map_err(|e: chuhe_clock::ParseError| e.to_string())?;
        let id = |s: &str, what: &str| {
            s.parse::<i64>()
                .map_err(|_| format!("{what} id {s:?} is not a number"))
        };
        Ok(State {
            red: id(&info.red_id, "red")?,
            black: id(&info.black_id, "black")?,
            info: info.clone(),
            seq: 0,
            at_ms: info.created_at_ms,
            board: Box::new(board),
            clock: Clock::new(controls, LagConfig::default()),
            fouls: [0, 0],
            draw_offer: None,
            offer_blocked: [false, false],
            result: None,
            last_move: None,
            move_limit,
            rulings: Vec::new(),
            start_mode: info.start_mode,
            started_at: None,
            joined: [false, false],
            start_not_before: 0,
            calls: [0, 0],
            open_call: None,
            last_message_at: [0, 0],
            spare: SpareBoard::default(),
        })
    }

    /// Where the spare board is (tests).
    #[cfg(test)]
    pub(crate) fn spare_at(&self) -> Option<*const Board> {
        let spare = self.spare.0.take();
        let at = spare.as_deref().map(|b| b as *const Board);
        self.spare.0.set(spare);
        at
    }

    /// A copy of the board to try a move on: the spare board overwritten in place when there
    /// is one (no allocation), a new copy otherwise.
    pub(crate) fn board_copy(&self) -> Box<Board> {
        match self.spare.0.take() {
            Some(mut spare) => {
                spare.as_mut().clone_from(&self.board);
                spare
            }
            None => self.board.clone(),
        }
    }

    /// Rebuilds a game from its log (recovery): the first event creates it, every later one
    /// is folded.
    pub fn replay<'a>(events: impl IntoIterator<Item = &'a Event>) -> Result<State, FoldError> {
        let mut events = events.into_iter();
        let first = events.next().ok_or(FoldError::NotCreated)?;
        let Some(Kind::Created(c)) = first.kind() else {
            return Err(FoldError::NotCreated);
        };
        let seq = first.event.seq;
        let info = c.info.as_deref().cloned().unwrap_or_default();
        let mut st = State::from_info(&info).map_err(|why| FoldError::BadInfo { seq, why })?;
        fold(&mut st, first)?;
        for ev in events {
            fold(&mut st, ev)?;
        }
        Ok(st)
    }

    /// The side a player id plays, if any.
    pub fn side_of_player(&self, id: i64) -> Option<Side> {
        if id == self.red {
            Some(Side::Red)
        } else if id == self.black {
            Some(Side::Black)
        } else {
            None
        }
    }

    pub fn is_finished(&self) -> bool {
        self.result.is_some()
    }

    /// The instant a scheduled game's clocks are due to start (None: not scheduled, or
    /// started).
    pub fn start_due(&self) -> Option<u64> {
        (self.start_mode == StartMode::Scheduled
            && self.started_at.is_none()
            && !self.is_finished())
        .then_some(self.info.scheduled_start_ms.max(self.start_not_before))
    }

    /// The instant an absent player loses by lateness (art. 21), while a side has not joined.
    pub fn lateness_due(&self) -> Option<u64> {
        let limit = self.info.lateness_limit_ms;
        if limit == 0 || self.is_finished() || self.joined == [true, true] {
            return None;
        }
        Some(self.started_at?.saturating_add(limit))
    }

    /// The next instant the server's timer must look at the game ([`super::Command::Tick`]):
    /// a scheduled start, a lateness limit, or the flag.
    pub fn next_due(&self) -> Option<u64> {
        let flag = if self.is_finished() {
            None
        } else {
            self.clock.flag_deadline().map(|m| m.0)
        };
        [self.start_due(), self.lateness_due(), flag]
            .into_iter()
            .flatten()
            .min()
    }
}

/// What [`fold`] may take instead of computing it again: the board and clock that deciding
/// a command already computed (live play). Recovery folds with none.
#[derive(Debug, Default)]
pub struct Precomputed {
    pub(crate) board: Option<Box<Board>>,
    pub(crate) clock: Option<Clock>,
}

/// Changes the state by one committed event. Events must come in seq order without gaps.
pub fn fold(st: &mut State, ev: &Event) -> Result<(), FoldError> {
    fold_with(st, ev, &mut Precomputed::default())
}

/// [`fold`], taking the board after a move and the clock after the batch from `precomputed`
/// when they are there instead of computing them again. Gives the same state (tested: live
/// play against replay).
pub fn fold_with(
    st: &mut State,
    ev: &Event,
    precomputed: &mut Precomputed,
) -> Result<(), FoldError> {
    let seq = ev.event.seq;
    let expected = st.seq + 1;
    if seq != expected {
        return Err(FoldError::Gap { seq, expected });
    }
    let kind = ev.kind().ok_or(FoldError::NoKind { seq })?;
    match kind {
        Kind::Created(c) => {
            let info = c.info.as_deref().cloned().unwrap_or_default();
            let mut fresh =
                State::from_info(&info).map_err(|why| FoldError::BadInfo { seq, why })?;
            fresh.seq = st.seq;
            fresh.start_not_before = ev.event.at_ms;
            *st = fresh;
        }
        Kind::Move(m) => {
            let none = crate::types::MoveRecord::default();
            let mv = m.mv.as_ref().unwrap_or(&none);
            let mover = st.board.to_move();
            match precomputed.board.take() {
                Some(b) => {
                    let replaced = std::mem::replace(&mut st.board, b);
                    st.spare.0.set(Some(replaced));
                }
                None => {
                    st.board.play(&mv.iccs).map_err(|why| FoldError::BadMove {
                        seq,
                        iccs: mv.iccs.clone(),
                        why,
                    })?;
                }
            }
            // A move declines the opponent's offer (its `DrawDeclined` came just before).
            st.draw_offer = None;
            // The last move's texts are copied into the buffers the one before used.
            match &mut st.last_move {
                Some(last) => {
                    last.ply = mv.ply;
                    last.seq = seq;
                    last.side = mover;
                    last.iccs.clone_from(&mv.iccs);
                    last.chinese.clone_from(&mv.chinese);
                    last.wxf.clone_from(&mv.wxf);
                }
                None => {
                    st.last_move = Some(LastMove {
                        ply: mv.ply,
                        seq,
                        side: mover,
                        iccs: mv.iccs.clone(),
                        chinese: mv.chinese.clone(),
                        wxf: mv.wxf.clone(),
                    });
                }
            }
        }
        Kind::DrawOffered(d) => {
            let s = d.side.unwrap_or(Side::Red);
            st.draw_offer = Some(s);
            st.offer_blocked[side::index(side::other(s))] = false;
        }
        Kind::DrawDeclined(d) => {
            let decliner = d.side.unwrap_or(Side::Red);
            st.offer_blocked[side::index(side::other(decliner))] = true;
            st.draw_offer = None;
        }
        Kind::Foul(f) => {
            let s = f.side.unwrap_or(Side::Red);
            st.fouls[side::index(s)] = f.count;
        }
        Kind::Ended(e) => {
            let result = e.result.ok_or(FoldError::NoResult { seq })?;
            st.result = Some((result, e.reason.clone()));
            st.draw_offer = None;
            // The game's end closes its call.
            st.open_call = None;
            // No move follows: a finished game kept loaded does not keep a second board.
            let _ = st.spare.0.take();
        }
        Kind::RulingOverridden(o) => {
            if let Some(result) = o.result {
                st.result = Some((result, "arbiter".into()));
            }
        }
        Kind::Ruling(_) => st.rulings.push(seq),
        Kind::Started(s) => st.started_at = Some(s.started_at_ms),
        Kind::Joined(j) => {
            if let Some(s) = j.side {
                st.joined[side::index(s)] = true;
            }
        }
        // Their effect is on the clock, which the batch's snapshot carries.
        Kind::ServerRestarted(_) => {
            if st.started_at.is_none() {
                st.start_not_before = ev.event.at_ms;
            }
        }
        Kind::ClockAdjusted(_) | Kind::Paused(_) | Kind::Resumed(_) => {}
        Kind::ArbiterCalled(c) => {
            let s = c.side.unwrap_or(Side::Red);
            st.calls[side::index(s)] = c.count;
            st.open_call = Some(OpenCall {
                seq,
                side: s,
                at_ms: ev.event.at_ms,
                reason: c.reason.clone(),
                taken_by: None,
                clock_stopped: c.clock_stopped,
            });
        }
        Kind::CallTaken(t) => {
            if let Some(call) = &mut st.open_call {
                call.taken_by = t.arbiter.as_ref().and_then(|a| a.arbiter_id.parse().ok());
            }
        }
        Kind::CallClosed(_) => st.open_call = None,
        Kind::Message(m) => {
            if let Some(s) = m.from_side {
                st.last_message_at[side::index(s)] = ev.event.at_ms;
            }
        }
    }
    if let Some(snap) = &ev.clock {
        st.clock = match precomputed.clock.take() {
            Some(c) => c,
            None => {
                Clock::restore(snap, Millis(ev.event.at_ms)).map_err(|e| FoldError::BadClock {
                    seq,
                    why: e.to_string(),
                })?
            }
        };
    }
    // A game created with its clocks running (START_MODE_NOW) started with its creation.
    if st.started_at.is_none() && st.clock.is_started() {
        st.started_at = Some(ev.event.at_ms);
    }
    st.seq = seq;
    st.at_ms = ev.event.at_ms;
    Ok(())
}
