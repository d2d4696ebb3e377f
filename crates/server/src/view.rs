//! A projection of a game's event stream: folding `GameEvent`s gives the
//! `GameSnapshot` a (re)joining client receives. The game actor keeps one for
//! the live stream and, when the game has a broadcast delay, one for the
//! delayed spectator stream. Recovery folds the stored events the same way.

use chuhe_proto::v1::{
    ClockState, GameEvent, GameInfo, GameSnapshot, GameSummary, MoveRecord, Result as WireResult,
    Ruling, Side, game_event::Kind,
};

/// The folded state of a game's events.
#[derive(Debug, Clone, Default)]
pub struct View {
    pub game_id: String,
    pub seq: u64,
    pub at_ms: u64,
    pub info: GameInfo,
    pub moves: Vec<MoveRecord>,
    pub clock: ClockState,
    pub result: i32,
    pub end_reason: String,
    /// Why the game ended, as a code with parameters.
    pub end_phrase: Option<chuhe_proto::v1::Phrase>,
    pub draw_offer: i32,
    pub red_fouls: u32,
    pub black_fouls: u32,
    pub rulings: Vec<(u64, Ruling)>,
    pub finished: bool,
    pub delayed: bool,
    /// The open call to the arbiter (only the live view, which players and arbiters follow,
    /// ever has one: spectators' views get stand-ins).
    pub open_call: Option<chuhe_proto::v1::OpenCall>,
    /// Every event of the game's arbiter channel, whole (the live view only; not in
    /// snapshots): what the event's arbiters read back.
    pub channel: Vec<GameEvent>,
}

impl View {
    pub fn new(game_id: &str, delayed: bool) -> View {
        View {
            game_id: game_id.to_string(),
            delayed,
            ..View::default()
        }
    }

    /// The position now: the last move's FEN, or the initial one (kept once, not copied per
    /// move).
    pub fn fen(&self) -> &str {
        self.moves
            .last()
            .map_or(self.info.initial_fen.as_str(), |m| m.fen.as_str())
    }

    /// The side to move, from the number of plies and the initial FEN.
    pub fn to_move(&self) -> Side {
        let red_first = self.info.initial_fen.split_whitespace().nth(1) != Some("b");
        let red_now = red_first == (self.moves.len() % 2 == 0);
        if red_now { Side::Red } else { Side::Black }
    }

    /// [`View::apply`] for an event the caller gives away: a move's record is kept as it is,
    /// not copied.
    pub fn apply_owned(&mut self, mut ev: GameEvent) {
        let record = match &mut ev.kind {
            Some(Kind::Move(m)) => m.r#move.take(),
            _ => None,
        };
        self.apply(&ev);
        self.moves.extend(record);
    }

    pub fn apply(&mut self, ev: &GameEvent) {
        self.seq = ev.seq;
        self.at_ms = ev.at_ms;
        let Some(kind) = &ev.kind else { return };
        if crate::audience::is_private(Some(kind)) {
            self.channel.push(ev.clone());
        }
        match kind {
            Kind::Created(c) => {
                if let Some(info) = &c.info {
                    self.info = info.clone();
                }
                if let Some(clock) = &c.clock {
                    self.clock = *clock;
                }
            }
            Kind::Move(m) => {
                if let Some(mv) = &m.r#move {
                    self.moves.push(mv.clone());
                }
                if let Some(clock) = &m.clock {
                    self.clock = *clock;
                }
                // A move declines a pending offer by the opponent; the mover's own
                // offer comes as a separate DrawOffered event after the move.
                self.draw_offer = Side::Unspecified as i32;
            }
            Kind::DrawOffered(d) => self.draw_offer = d.side,
            Kind::DrawDeclined(_) => self.draw_offer = Side::Unspecified as i32,
            Kind::Foul(f) => {
                if f.side == Side::Red as i32 {
                    self.red_fouls = f.count;
                } else if f.side == Side::Black as i32 {
                    self.black_fouls = f.count;
                }
            }
            Kind::ClockAdjusted(c) => {
                if let Some(clock) = &c.clock {
                    self.clock = *clock;
                }
            }
            Kind::Paused(p) => {
                if let Some(clock) = &p.clock {
                    self.clock = *clock;
                }
            }
            Kind::Resumed(p) => {
                if let Some(clock) = &p.clock {
                    self.clock = *clock;
                }
            }
            Kind::Ruling(r) => {
                if let Some(ruling) = &r.ruling {
                    self.rulings.push((ev.seq, ruling.clone()));
                }
            }
            Kind::Ended(e) => {
                self.result = e.result;
                self.end_reason = e.reason.clone();
                self.end_phrase.clone_from(&e.phrase);
                self.finished = true;
                self.draw_offer = Side::Unspecified as i32;
                self.open_call = None;
                if let Some(clock) = &e.clock {
                    self.clock = *clock;
                }
            }
            Kind::RulingOverridden(o) => {
                if o.result == WireResult::Unspecified as i32 && self.finished {
                    // The overridden ruling had ended the game: play goes on.
                    self.finished = false;
                    self.result = WireResult::Unspecified as i32;
                    self.end_reason.clear();
                    self.end_phrase = None;
                } else if o.result != WireResult::Unspecified as i32 {
                    self.result = o.result;
                    self.end_reason = "arbiter".into();
                    self.end_phrase = None;
                    self.finished = true;
                }
            }
            Kind::ServerRestarted(r) => {
                if let Some(clock) = &r.clock {
                    self.clock = *clock;
                }
            }
            Kind::Started(s) => {
                if let Some(clock) = &s.clock {
                    self.clock = *clock;
                }
            }
            Kind::Joined(_) => {}
            Kind::ArbiterCalled(c) => {
                if let Some(clock) = &c.clock {
                    self.clock = *clock;
                }
                self.open_call = Some(chuhe_proto::v1::OpenCall {
                    call_seq: ev.seq,
                    side: c.side,
                    at_ms: ev.at_ms,
                    taken_by: String::new(),
                    clock_stopped: c.clock_stopped,
                });
            }
            Kind::CallTaken(t) => {
                if let Some(call) = &mut self.open_call {
                    call.taken_by = t
                        .arbiter
                        .as_ref()
                        .map(|a| a.arbiter_id.clone())
                        .unwrap_or_default();
                }
            }
            Kind::CallClosed(_) => self.open_call = None,
            Kind::Message(_) => {}
            Kind::Private(p) => {
                if let Some(clock) = &p.clock {
                    self.clock = *clock;
                }
            }
        }
    }

    pub fn snapshot(&self) -> GameSnapshot {
        GameSnapshot {
            game_id: self.game_id.clone(),
            seq: self.seq,
            at_ms: self.at_ms,
            info: Some(self.info.clone()),
            moves: self.moves.clone(),
            fen: self.fen().to_string(),
            to_move: self.to_move() as i32,
            clock: Some(self.clock),
            result: self.result,
            end_reason: self.end_reason.clone(),
            draw_offer: self.draw_offer,
            red_fouls: self.red_fouls,
            black_fouls: self.black_fouls,
            rulings: self.rulings.iter().map(|(_, r)| r.clone()).collect(),
            delayed: self.delayed,
            finished: self.finished,
            end_phrase: self.end_phrase.clone(),
            open_call: self.open_call.clone(),
        }
    }

    /// Brings the game's summary `s` up to date, reusing its strings' allocations (called
    /// after every move).
    pub fn fill_summary(&self, s: &mut GameSummary) {
        s.game_id.clone_from(&self.game_id);
        s.red_name.clone_from(&self.info.red_name);
        s.black_name.clone_from(&self.info.black_name);
        s.time_control.clone_from(&self.info.time_control);
        self.fill_counts(s);
    }

    /// Brings only what a move changes in the summary up to date (plies, result).
    pub fn fill_counts(&self, s: &mut GameSummary) {
        s.plies = self.moves.len() as u32;
        s.finished = self.finished;
        s.result = self.result;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view given its events keeps what a view lent them keeps.
    #[test]
    fn a_view_given_its_events_is_the_view_lent_them() {
        use chuhe_proto::v1::{DrawOffered, GameCreated, MovePlayed, SideClock};
        let ev = |seq, kind| GameEvent {
            game_id: "g".into(),
            seq,
            at_ms: seq * 10,
            kind: Some(kind),
        };
        let record = |iccs: &str| MoveRecord {
            iccs: iccs.into(),
            fen: format!("{iccs} fen"),
            ..Default::default()
        };
        let clock = |remaining_ms| ClockState {
            red: Some(SideClock {
                remaining_ms,
                ..Default::default()
            }),
            ..Default::default()
        };
        let events = [
            ev(
                1,
                Kind::Created(GameCreated {
                    clock: Some(clock(5)),
                    ..Default::default()
                }),
            ),
            ev(
                2,
                Kind::DrawOffered(DrawOffered {
                    side: Side::Black as i32,
                }),
            ),
            ev(
                3,
                Kind::Move(MovePlayed {
                    r#move: Some(record("h2e2")),
                    clock: Some(clock(4)),
                    ..Default::default()
                }),
            ),
            ev(
                4,
                Kind::Move(MovePlayed {
                    r#move: None,
                    clock: Some(clock(3)),
                    ..Default::default()
                }),
            ),
            ev(
                5,
                Kind::Move(MovePlayed {
                    r#move: Some(record("h9g7")),
                    ..Default::default()
                }),
            ),
        ];
        let mut lent = View::new("g", false);
        let mut given = View::new("g", false);
        for e in events {
            lent.apply(&e);
            given.apply_owned(e);
            assert_eq!(given.snapshot(), lent.snapshot());
        }
        assert_eq!(given.moves.len(), 2);
        assert_eq!(given.clock, clock(3));
    }

    #[test]
    fn summary_follows_the_view() {
        let mut v = View::new("7", false);
        v.info.red_name = "red".into();
        v.info.black_name = "black".into();
        v.info.time_control = "90m+30s".into();
        v.moves.push(MoveRecord::default());
        let mut s = GameSummary {
            red_name: "someone else".into(),
            plies: 9,
            finished: true,
            ..GameSummary::default()
        };
        v.fill_summary(&mut s);
        assert_eq!(
            s,
            GameSummary {
                game_id: "7".into(),
                red_name: "red".into(),
                black_name: "black".into(),
                time_control: "90m+30s".into(),
                plies: 1,
                finished: false,
                result: v.result,
            }
        );
    }
}
