//! The pure core through `decide` and `fold` only: no tokio, no store. Every command and
//! event, the arbiter actions, the false-claim penalty, draw-offer alternation, and replay
//! equivalence (folding the committed log gives the state live play has).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::types::{
    self as w, ArbiterAction as Action, GameInfo, GameResult as WResult, Kind, Side, StartMode,
};
use chuhe_clock::Millis;
use proptest::prelude::*;

use super::*;
use crate::error::ClientError;
use crate::types::Role;

const RED: Actor = Actor {
    id: Some(10),
    role: Some(Role::Player),
};
const BLACK: Actor = Actor {
    id: Some(20),
    role: Some(Role::Player),
};
const STRANGER: Actor = Actor {
    id: Some(30),
    role: Some(Role::Player),
};
const SPECTATOR: Actor = Actor {
    id: None,
    role: None,
};
const ARBITER: Actor = Actor {
    id: Some(99),
    role: Some(Role::Arbiter),
};
const ORGANIZER: Actor = Actor {
    id: Some(98),
    role: Some(Role::Organizer),
};

/// Mate in two: 1. b1b8 (only reply e9f9) 2. a0a9#.
const MATE_FEN: &str = "4k4/9/9/9/9/9/9/9/1R7/R2K5 w - - 0 1";
/// 1. f7f8 leaves Black without a legal move, not in check: 困毙.
const STALEMATE_FEN: &str = "4k4/9/5P3/9/9/9/9/9/9/3K5 w - - 0 1";
/// Red's rook checks from a9/a8, Black's king shuffles: perpetual check.
const PERPETUAL_FEN: &str = "3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1";

fn info(fen: &str, tc: &str, move_limit: u32) -> GameInfo {
    GameInfo {
        game_id: "1".into(),
        red_id: "10".into(),
        red_name: "Red player".into(),
        black_id: "20".into(),
        black_name: "Black player".into(),
        time_control: tc.into(),
        ruleset: "cxa".into(),
        initial_fen: fen.into(),
        move_limit_plies: move_limit,
        created_at_ms: 1_000,
        ..GameInfo::default()
    }
}

/// A game driven through the core: every decision is "committed" (appended to `log`) and
/// folded, as the shard does.
struct Table {
    st: State,
    log: Vec<Event>,
    now: u64,
}

impl Table {
    fn new(fen: &str, tc: &str) -> Table {
        Table::with_limit(fen, tc, 0)
    }

    fn with_limit(fen: &str, tc: &str, move_limit: u32) -> Table {
        Table::with_info(info(fen, tc, move_limit))
    }

    fn with_info(info: GameInfo) -> Table {
        Table::with_info_at(info, 1_000)
    }

    /// A game created at `now`.
    fn with_info_at(info: GameInfo, now: u64) -> Table {
        let (mut st, mut d) = create(&info, now).unwrap();
        let log = d.events.clone();
        apply(&mut st, &mut d).unwrap();
        Table { st, log, now }
    }

    /// Decides, commits and folds `cmd`; returns the answer and the kinds of the new events.
    fn run(&mut self, cmd: Command, who: Actor) -> Result<(Answer, Vec<Kind>), ClientError> {
        let mut d = decide(&self.st, &cmd, &who, self.now)?;
        let kinds = d.events.iter().filter_map(|e| e.kind().cloned()).collect();
        self.log.extend(d.events.iter().cloned());
        apply(&mut self.st, &mut d).unwrap();
        Ok((d.answer, kinds))
    }

    fn mv(&mut self, who: Actor, mv: &str) -> Result<(Answer, Vec<Kind>), ClientError> {
        let ply = self.st.board.plies() + 1;
        self.run(mv_cmd(ply, mv, false), who)
    }

    fn later(&mut self, ms: u64) -> &mut Table {
        self.now += ms;
        self
    }

    /// The state rebuilt from the log alone, as recovery does.
    fn replayed(&self) -> State {
        State::replay(&self.log).unwrap()
    }
}

fn mv_cmd(ply: u32, mv: &str, offer_draw: bool) -> Command {
    Command::Move {
        ply,
        mv: mv.into(),
        offer_draw,
        think_ms: None,
        lag: Duration::ZERO,
    }
}

fn arbiter(reason: &str, action: Action) -> Command {
    Command::Arbiter {
        reason: reason.into(),
        action,
    }
}

fn names(kinds: &[Kind]) -> Vec<&'static str> {
    kinds.iter().map(|k| k.label()).collect()
}

fn ended(kinds: &[Kind]) -> &w::GameEnded {
    kinds
        .iter()
        .find_map(|k| match k {
            Kind::Ended(e) => Some(e),
            _ => None,
        })
        .expect("an Ended event")
}

/// Main time left on a side's clock at `now`, in ms.
fn left(st: &State, s: Side, now: u64) -> u64 {
    let v = st.clock.view(Millis(now));
    if s == Side::Red {
        v.red.remaining_ms
    } else {
        v.black.remaining_ms
    }
}

/// Everything of a state that commands are decided on, to compare two states.
fn looks(st: &State) -> String {
    let at = Millis(st.at_ms + 12_345);
    format!(
        "seq={} at={} fen={} plies={} limit={} count={} warning={:?} fouls={:?} offer={:?} blocked={:?} result={:?} last={:?} rulings={:?} clock={:?} started={} paused={}",
        st.seq,
        st.at_ms,
        st.board.fen(),
        st.board.plies(),
        st.move_limit,
        st.board.move_limit_count(),
        st.board.pending_warning().map(|w| w.ply),
        st.fouls,
        st.draw_offer,
        st.offer_blocked,
        st.result,
        st.last_move,
        st.rulings,
        st.clock.snapshot(at),
        st.clock.is_started(),
        st.clock.is_paused(),
    )
}

// --- creation and moves ---

#[test]
fn creation_starts_the_clock_and_is_the_first_event() {
    let t = Table::new(chuhe_rules::START_FEN, "10m+5s");
    assert_eq!(t.st.seq, 1);
    assert_eq!(names(&[t.log[0].kind().unwrap().clone()]), ["created"]);
    assert!(t.log[0].clock.is_some(), "the batch carries the clock");
    assert!(t.st.clock.is_started());
    assert_eq!((t.st.red, t.st.black), (10, 20));
    assert_eq!(t.st.move_limit, DEFAULT_MOVE_LIMIT_PLIES);
    assert!(create(&info("not a fen", "10m", 0), 0).is_err());
    assert!(create(&info(chuhe_rules::START_FEN, "ten minutes", 0), 0).is_err());
}

#[test]
fn a_move_is_acknowledged_with_its_seq_and_changes_nothing_until_folded() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m+5s");
    let before = looks(&t.st);
    let d = decide(&t.st, &mv_cmd(1, "h2e2", false), &RED, 2_000).unwrap();
    assert_eq!(looks(&t.st), before, "deciding changed the state");
    assert_eq!(d.answer, Answer::Seq(2));
    assert_eq!(d.events.len(), 1);
    drop(d);
    let (ans, kinds) = t.later(1_000).mv(RED, "h2e2").unwrap();
    assert_eq!((ans, names(&kinds)), (Answer::Seq(2), vec!["move"]));
    let Kind::Move(m) = &kinds[0] else { panic!() };
    let rec = m.mv.as_ref().unwrap();
    assert_eq!(
        (rec.chinese.as_str(), rec.wxf.as_str()),
        ("炮二平五", "C2=5")
    );
    assert_eq!(rec.spent_ms, 1_000);
    assert_eq!(t.st.board.plies(), 1);
    assert_eq!(t.st.board.to_move(), Side::Black);
}

/// A move is tried on the board the move before replaced, copied over in place: the copy
/// lives where that board lived, is the board exactly, and the game folded so is the game
/// replayed from its log.
#[test]
fn a_move_is_tried_on_the_board_the_last_one_replaced() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m+5s");
    t.later(1_000).mv(RED, "h2e2").unwrap();
    let replaced: *const crate::board::Board = &*t.st.board;
    t.later(1_000).mv(BLACK, "h9g7").unwrap();
    assert_eq!(
        t.st.spare_at(),
        Some(replaced),
        "the replaced board was not kept"
    );
    let copy = t.st.board_copy();
    assert!(
        std::ptr::eq(&*copy, replaced),
        "the replaced board was not reused"
    );
    assert_eq!(t.st.spare_at(), None);
    assert_eq!(format!("{copy:?}"), format!("{:?}", t.st.board));
    drop(copy);
    // Without a spare (it was just taken and dropped), a fresh copy; then play goes on.
    for (who, mv) in [
        (RED, "h0g2"),
        (BLACK, "i9h9"),
        (RED, "i0h0"),
        (BLACK, "b7b3"),
    ] {
        t.later(500).mv(who, mv).unwrap();
    }
    assert_eq!(looks(&t.st), looks(&t.replayed()));
    assert_eq!(
        format!("{:?}", t.st.board),
        format!("{:?}", t.replayed().board)
    );
    // The game's end lets the spare go.
    assert!(t.st.spare_at().is_some());
    t.later(500).run(Command::Resign, RED).unwrap();
    assert!(t.st.is_finished());
    assert_eq!(
        t.st.spare_at(),
        None,
        "a finished game kept its spare board"
    );
}

#[test]
fn moves_are_refused_for_every_reason_with_its_code() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m+5s");
    let code = |r: Result<_, ClientError>| r.map(|_| ()).unwrap_err().code();
    assert_eq!(code(t.mv(SPECTATOR, "h2e2")), "not_a_player");
    assert_eq!(code(t.mv(STRANGER, "h2e2")), "not_a_player");
    assert_eq!(code(t.mv(ARBITER, "h2e2")), "not_a_player");
    assert_eq!(code(t.mv(BLACK, "h9g7")), "not_your_turn");
    assert_eq!(code(t.run(mv_cmd(3, "h2e2", false), RED)), "stale_ply");
    assert_eq!(code(t.mv(RED, "a0a5")), "illegal_move");
    assert_eq!(code(t.mv(RED, "zz")), "illegal_move");
    assert_eq!(t.log.len(), 1, "nothing refused was committed");
}

#[test]
fn a_resent_move_is_answered_with_its_seq_in_any_notation() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m+5s");
    t.mv(RED, "h2e2").unwrap();
    for text in ["h2e2", "H2-E2", "炮二平五", "C2=5"] {
        let d = decide(&t.st, &mv_cmd(1, text, false), &RED, t.now).unwrap();
        assert!(d.events.is_empty(), "{text}");
        assert_eq!(d.answer, Answer::Seq(2), "{text}");
    }
    // Black resending Red's ply is not a resend.
    let e = decide(&t.st, &mv_cmd(1, "h2e2", false), &BLACK, t.now).unwrap_err();
    assert_eq!(e.code(), "stale_ply");
}

#[test]
fn checkmate_and_stalemate_end_the_game() {
    let mut t = Table::new(MATE_FEN, "10m+5s");
    t.mv(RED, "b1b8").unwrap();
    t.mv(BLACK, "e9f9").unwrap();
    let (_, kinds) = t.mv(RED, "a0a9").unwrap();
    assert_eq!(names(&kinds), ["move", "ended"]);
    assert_eq!(ended(&kinds).reason, "checkmate");
    assert_eq!(t.st.result, Some((WResult::RedWins, "checkmate".into())));
    assert_eq!(t.mv(BLACK, "f9e9").unwrap_err().code(), "game_finished");

    let mut t = Table::new(STALEMATE_FEN, "10m+5s");
    let (_, kinds) = t.mv(RED, "f7f8").unwrap();
    assert_eq!(ended(&kinds).reason, "stalemate");
    assert_eq!(ended(&kinds).result, Some(WResult::RedWins));
    assert_eq!(looks(&t.replayed()), looks(&t.st));
}

#[test]
fn perpetual_check_is_ruled_with_the_ruling_before_the_end() {
    let mut t = Table::new(PERPETUAL_FEN, "10m+5s");
    let mut last = Vec::new();
    for mv in [
        "a0a9", "d9d8", "a9a8", "d8d9", "a8a9", "d9d8", "a9a8", "d8d9", "a8a9",
    ] {
        let who = if t.st.board.to_move() == Side::Red {
            RED
        } else {
            BLACK
        };
        last = t.mv(who, mv).unwrap().1;
        if t.st.is_finished() {
            break;
        }
    }
    assert_eq!(names(&last), ["move", "ruling", "ended"]);
    assert_eq!(ended(&last).reason, "perpetual_check");
    assert_eq!(t.st.rulings.len(), 1);
    assert_eq!(looks(&t.replayed()), looks(&t.st));
}

// --- the clock ---

#[test]
fn the_flag_falls_only_when_the_time_is_up_and_a_late_move_is_refused() {
    let mut t = Table::new(chuhe_rules::START_FEN, "1m");
    assert!(decide(&t.st, &Command::Tick, &Actor::SERVER, 30_000).is_err());
    // One minute from the start at 1 s, plus the lag grace.
    let deadline = t.st.clock.flag_deadline().unwrap().0;
    assert!((61_000..63_000).contains(&deadline), "{deadline}");
    assert!(decide(&t.st, &Command::Tick, &Actor::SERVER, deadline - 1).is_err());
    // A move that reaches the server after the flag: the flag is committed, the move refused.
    t.later(70_000);
    let (ans, kinds) = t.mv(RED, "h2e2").unwrap();
    assert_eq!(ans, Answer::Error(ClientError::GameFinished));
    assert_eq!(names(&kinds), ["ended"]);
    assert_eq!(ended(&kinds).reason, "flag");
    assert_eq!(ended(&kinds).result, Some(WResult::BlackWins));
    assert_eq!(t.st.board.plies(), 0, "the late move was not played");
    assert!(decide(&t.st, &Command::Tick, &Actor::SERVER, t.now).is_err());
    assert_eq!(looks(&t.replayed()), looks(&t.st));

    let mut t = Table::new(chuhe_rules::START_FEN, "1m");
    let deadline = t.st.clock.flag_deadline().unwrap().0;
    t.now = deadline;
    let (_, kinds) = t.run(Command::Tick, Actor::SERVER).unwrap();
    assert_eq!(ended(&kinds).reason, "flag");
}

#[test]
fn a_restart_charges_the_outage_to_nobody() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m");
    t.later(4_000).mv(RED, "h2e2").unwrap(); // Black's clock runs from 5 s
    t.later(3_000); // Black has used 3 s when the server goes down at 8 s
    let mut down = t.replayed();
    // The last event was at 5 s; the server comes back at 600 s.
    let (ans, kinds) = {
        let mut d = decide(&down, &Command::Restart, &Actor::SERVER, 600_000).unwrap();
        let kinds: Vec<Kind> = d.events.iter().filter_map(|e| e.kind().cloned()).collect();
        apply(&mut down, &mut d).unwrap();
        (d.answer, kinds)
    };
    assert_eq!(ans, Answer::Seq(3));
    let Kind::ServerRestarted(r) = &kinds[0] else {
        panic!()
    };
    assert_eq!(r.downtime_ms, 595_000);
    assert_eq!(
        left(&down, Side::Black, 600_000),
        600_000,
        "the outage was charged"
    );
    assert_eq!(
        left(&down, Side::Black, 601_000),
        599_000,
        "the clock runs again"
    );
    assert!(decide(&t.st, &Command::Restart, &Actor::SERVER, 1).is_ok());
}

// --- draws, claims, resignation ---

#[test]
fn draw_offers_alternate_and_a_repeated_offer_is_a_foul() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m+5s");
    let code = |r: Result<_, ClientError>| r.map(|_| ()).unwrap_err().code();
    assert_eq!(
        code(t.run(Command::OfferDraw, RED)),
        "draw_offer_not_allowed"
    );
    assert_eq!(
        code(t.run(Command::AnswerDraw { accept: true }, BLACK)),
        "no_draw_offer"
    );
    // Red offers with its move; Black declines.
    let (_, kinds) = t.run(mv_cmd(1, "h2e2", true), RED).unwrap();
    assert_eq!(names(&kinds), ["move", "draw_offered"]);
    assert_eq!(t.st.draw_offer, Some(Side::Red));
    assert_eq!(
        code(t.run(Command::OfferDraw, RED)),
        "draw_offer_not_allowed"
    );
    assert_eq!(
        code(t.run(Command::OfferDraw, BLACK)),
        "draw_offer_not_allowed"
    );
    let (_, kinds) = t.run(Command::AnswerDraw { accept: false }, BLACK).unwrap();
    assert_eq!(names(&kinds), ["draw_declined"]);
    assert_eq!(t.st.offer_blocked, [true, false]);
    // Red offers again before Black has offered: a foul, not passed on.
    t.mv(BLACK, "h9g7").unwrap();
    let (_, kinds) = t.run(mv_cmd(3, "h0g2", true), RED).unwrap();
    assert_eq!(names(&kinds), ["move", "foul"]);
    assert_eq!(t.st.fouls, [1, 0]);
    assert_eq!(t.st.draw_offer, None);
    // Black offers (after its own move): Red may offer again later.
    t.mv(BLACK, "i9h9").unwrap();
    let (_, kinds) = t.run(Command::OfferDraw, BLACK).unwrap();
    assert_eq!(names(&kinds), ["draw_offered"]);
    assert_eq!(t.st.offer_blocked, [false, false]);
    // Red declines by moving: Black is now the one blocked.
    let (_, kinds) = t.mv(RED, "i0h0").unwrap();
    assert_eq!(names(&kinds), ["draw_declined", "move"]);
    assert_eq!(t.st.offer_blocked, [false, true]);
    // Black offers, Red accepts.
    let (_, kinds) = t.run(mv_cmd(6, "b9c7", true), BLACK).unwrap();
    assert_eq!(names(&kinds), ["move", "foul"], "Black was blocked");
    t.mv(RED, "b0c2").unwrap();
    let (_, kinds) = t.run(mv_cmd(8, "a9b9", false), BLACK).unwrap();
    assert_eq!(names(&kinds), ["move"]);
    let (_, kinds) = t.run(mv_cmd(9, "a0b0", true), RED).unwrap();
    assert_eq!(names(&kinds), ["move", "draw_offered"]);
    let (_, kinds) = t.run(Command::AnswerDraw { accept: true }, BLACK).unwrap();
    assert_eq!(ended(&kinds).reason, "draw_agreed");
    assert_eq!(t.st.result, Some((WResult::Draw, "draw_agreed".into())));
    assert_eq!(looks(&t.replayed()), looks(&t.st));
}

#[test]
fn three_fouls_lose() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m+5s");
    for i in 1..=3 {
        let (_, kinds) = t
            .run(
                arbiter(
                    "talking",
                    Action::RecordFoul {
                        side: Some(Side::Red),
                    },
                ),
                ARBITER,
            )
            .unwrap();
        if i < 3 {
            assert_eq!(names(&kinds), ["foul"]);
        } else {
            assert_eq!(names(&kinds), ["foul", "ended"]);
            assert_eq!(ended(&kinds).reason, "fouls");
            assert_eq!(ended(&kinds).result, Some(WResult::BlackWins));
        }
    }
    assert_eq!(t.st.fouls, [3, 0]);
}

#[test]
fn a_false_move_limit_claim_is_a_foul_and_costs_five_minutes() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m");
    let before = left(&t.st, Side::Red, t.now);
    let (ans, kinds) = t.run(Command::ClaimMoveLimit, RED).unwrap();
    assert_eq!(names(&kinds), ["foul", "clock_adjusted"]);
    assert_eq!(ans, Answer::Seq(3));
    let Kind::ClockAdjusted(c) = &kinds[1] else {
        panic!()
    };
    assert_eq!(
        (c.delta_ms, c.code.as_str()),
        (-300_000, "false_claim_penalty")
    );
    let after = left(&t.st, Side::Red, t.now);
    assert_eq!(before - after, draw::FALSE_CLAIM_PENALTY.as_millis() as u64);
    assert_eq!(t.st.fouls, [1, 0]);
    // With less than five minutes left, the penalty flags the claimant.
    let mut t = Table::new(chuhe_rules::START_FEN, "4m");
    let (_, kinds) = t.run(Command::ClaimMoveLimit, BLACK).unwrap();
    assert_eq!(names(&kinds), ["foul", "clock_adjusted", "ended"]);
    assert_eq!(ended(&kinds).reason, "flag");
    assert_eq!(ended(&kinds).result, Some(WResult::RedWins));
    assert_eq!(looks(&t.replayed()), looks(&t.st));
    assert_eq!(
        t.run(Command::ClaimMoveLimit, SPECTATOR)
            .unwrap_err()
            .code(),
        "not_a_player"
    );
}

#[test]
fn the_move_limit_ends_the_game_by_itself() {
    // A limit of 4 plies: four quiet moves draw.
    let mut t = Table::with_limit(chuhe_rules::START_FEN, "10m", 4);
    assert_eq!(t.st.move_limit, 4);
    t.mv(RED, "h0g2").unwrap();
    t.mv(BLACK, "h9g7").unwrap();
    t.mv(RED, "g2h0").unwrap();
    let (_, kinds) = t.mv(BLACK, "g7h9").unwrap();
    assert_eq!(ended(&kinds).reason, "move_limit");
    assert_eq!(looks(&t.replayed()), looks(&t.st));
}

#[test]
fn resignation_and_the_ruling_request() {
    let mut t = Table::new(PERPETUAL_FEN, "10m+5s");
    let (_, kinds) = t.run(Command::RequestRuling, RED).unwrap();
    let Kind::Ruling(r) = &kinds[0] else { panic!() };
    assert_eq!(
        r.ruling.as_ref().unwrap().kind,
        Some(w::RulingKind::None),
        "nothing to rule on"
    );
    assert_eq!(
        t.run(Command::RequestRuling, SPECTATOR).unwrap_err().code(),
        "not_a_player"
    );
    let (_, kinds) = t.run(Command::Resign, BLACK).unwrap();
    assert_eq!(ended(&kinds).reason, "resign");
    assert_eq!(ended(&kinds).result, Some(WResult::RedWins));
    assert_eq!(
        t.run(Command::Resign, RED).unwrap_err().code(),
        "game_finished"
    );
}

// --- arbiter ---

#[test]
fn arbiter_commands_need_an_arbiter_and_a_reason() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m");
    let pause = || Action::Pause;
    for who in [RED, BLACK, SPECTATOR, STRANGER] {
        let e = t.run(arbiter("x", pause()), who).unwrap_err();
        assert_eq!(e.code(), "permission_denied");
    }
    assert_eq!(
        t.run(arbiter("  ", pause()), ARBITER).unwrap_err().code(),
        "invalid_argument"
    );
    assert!(t.run(arbiter("organiser may", pause()), ORGANIZER).is_ok());
}

#[test]
fn pause_stops_the_clock_and_moves_until_resumed() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m");
    let (_, kinds) = t
        .later(2_000)
        .run(arbiter("network", Action::Pause), ARBITER)
        .unwrap();
    assert_eq!(names(&kinds), ["paused"]);
    assert!(t.st.clock.is_paused());
    assert_eq!(t.log.last().unwrap().actor, Some(99));
    assert_eq!(t.log.last().unwrap().reason.as_deref(), Some("network"));
    let Kind::Paused(p) = &kinds[0] else { panic!() };
    assert_eq!(p.clock.unwrap().running, None);
    assert_eq!(
        t.later(60_000).mv(RED, "h2e2").unwrap_err().code(),
        "game_paused"
    );
    assert!(t.run(Command::Tick, Actor::SERVER).is_err());
    assert_eq!(
        t.run(arbiter("again", Action::Pause), ARBITER)
            .unwrap_err()
            .code(),
        "invalid_argument"
    );
    let (_, kinds) = t.run(arbiter("back", Action::Resume), ARBITER).unwrap();
    assert_eq!(names(&kinds), ["resumed"]);
    // The 60 s paused were charged to nobody.
    assert_eq!(left(&t.st, Side::Red, t.now), 598_000);
    t.mv(RED, "h2e2").unwrap();
    assert_eq!(looks(&t.replayed()), looks(&t.st));
}

#[test]
fn added_and_charged_time() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m");
    let add =
        |side: Option<Side>, delta_ms: i64| arbiter("adjust", Action::AddTime { side, delta_ms });
    let (_, kinds) = t.run(add(Some(Side::Black), 60_000), ARBITER).unwrap();
    assert_eq!(names(&kinds), ["clock_adjusted"]);
    assert_eq!(left(&t.st, Side::Black, t.now), 660_000);
    assert_eq!(
        t.run(add(None, 1), ARBITER).unwrap_err().code(),
        "invalid_argument"
    );
    let (_, kinds) = t.run(add(Some(Side::Red), -700_000), ARBITER).unwrap();
    assert_eq!(names(&kinds), ["clock_adjusted", "ended"]);
    let e = ended(&kinds);
    assert_eq!(
        (e.reason.as_str(), e.result),
        ("flag", Some(WResult::BlackWins))
    );
    assert_eq!(e.arbiter.as_ref().unwrap().arbiter_id, "99");
    assert_eq!(
        t.run(add(Some(Side::Red), 1), ARBITER).unwrap_err().code(),
        "game_finished"
    );
    assert_eq!(looks(&t.replayed()), looks(&t.st));
}

#[test]
fn set_result_and_override_a_ruling() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m");
    let set = |r: Option<WResult>| arbiter("decided", Action::SetResult { result: r });
    assert_eq!(
        t.run(set(None), ARBITER).unwrap_err().code(),
        "invalid_argument"
    );
    let (_, kinds) = t.run(set(Some(WResult::BothLose)), ARBITER).unwrap();
    let e = ended(&kinds);
    assert_eq!(
        (e.reason.as_str(), e.result),
        ("arbiter", Some(WResult::BothLose))
    );
    assert_eq!(t.st.result, Some((WResult::BothLose, "arbiter".into())));
    // A finished game's record is closed (the store keeps its result with its end): a
    // correction is refused, not accepted and then lost.
    assert_eq!(
        t.run(set(Some(WResult::Draw)), ARBITER).unwrap_err().code(),
        "game_finished"
    );

    // Overriding: only ruling events; a decided ruling can be turned into another result.
    let mut t = Table::new(PERPETUAL_FEN, "10m+5s");
    let (_, kinds) = t.run(Command::RequestRuling, RED).unwrap();
    assert_eq!(names(&kinds), ["ruling"]);
    let ruling_seq = t.st.seq;
    let over = |seq: u64, r: Option<WResult>| {
        arbiter(
            "reviewed",
            Action::OverrideRuling {
                ruling_seq: seq,
                result: r,
            },
        )
    };
    assert_eq!(
        t.run(over(1, Some(WResult::Draw)), ARBITER)
            .unwrap_err()
            .code(),
        "invalid_argument",
        "event 1 is the creation"
    );
    let (_, kinds) = t.run(over(ruling_seq, None), ARBITER).unwrap();
    assert_eq!(names(&kinds), ["ruling_overridden"]);
    assert!(!t.st.is_finished());
    let (_, kinds) = t
        .run(over(ruling_seq, Some(WResult::Draw)), ARBITER)
        .unwrap();
    assert_eq!(names(&kinds), ["ruling_overridden", "ended"]);
    assert_eq!(t.st.result, Some((WResult::Draw, "arbiter".into())));
    assert_eq!(
        t.run(over(ruling_seq, None), ARBITER).unwrap_err().code(),
        "game_finished",
        "a finished game is not reopened"
    );
    assert_eq!(looks(&t.replayed()), looks(&t.st));
}

// --- start modes, joining, lateness ---

// --- calls to the arbiter and the arbiter channel ---

fn league_info(calls: Option<w::CallSettings>) -> GameInfo {
    GameInfo {
        league: Some(w::LeagueBoard {
            league_id: "5".into(),
            round: 1,
            table: 1,
            board: 1,
            stage: 0,
        }),
        calls,
        ..info(chuhe_rules::START_FEN, "10m", 0)
    }
}

fn call(reason: &str) -> Command {
    Command::CallArbiter {
        reason: reason.into(),
    }
}

fn say(to: Option<Side>, text: &str) -> Command {
    Command::Message {
        to,
        text: text.into(),
    }
}

fn calls_state(st: &State) -> String {
    format!(
        "{} calls={:?} open={:?} last_msg={:?}",
        looks(st),
        st.calls,
        st.open_call,
        st.last_message_at
    )
}

#[test]
fn a_call_stops_the_clock_and_the_arbiter_takes_answers_and_resumes() {
    let mut t = Table::with_info(league_info(None));
    t.later(1_000).mv(RED, "h2e2").unwrap();
    let (Answer::Seq(call_seq), kinds) = t
        .later(3_000)
        .run(call("he is using an engine"), BLACK)
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(names(&kinds), ["arbiter_called"]);
    let Kind::ArbiterCalled(c) = &kinds[0] else {
        panic!()
    };
    assert!(c.clock_stopped);
    assert_eq!((c.side, c.count), (Some(Side::Black), 1));
    assert!(t.st.clock.is_paused());
    assert_eq!(t.st.open_call.as_ref().unwrap().seq, call_seq);
    // While the call is open: no move, no second call.
    assert_eq!(
        t.later(10_000).mv(BLACK, "h9g7").unwrap_err().code(),
        "game_paused"
    );
    assert_eq!(t.run(call(""), RED).unwrap_err().code(), "call_open");
    // Only an arbiter takes it; a second arbiter is told who has it.
    assert_eq!(
        t.run(Command::TakeCall, RED).unwrap_err().code(),
        "permission_denied"
    );
    let (_, kinds) = t.run(Command::TakeCall, ARBITER).unwrap();
    assert_eq!(names(&kinds), ["call_taken"]);
    let (_, kinds) = t.run(Command::TakeCall, ARBITER).unwrap();
    assert!(
        kinds.is_empty(),
        "taking one's own call again changes nothing"
    );
    let e = t.run(Command::TakeCall, ORGANIZER).unwrap_err();
    assert_eq!(e, ClientError::CallTaken { by: "99".into() });
    assert_eq!(e.code(), "call_taken");
    // Messages both ways.
    t.later(1_000)
        .run(say(None, "which move?"), ARBITER)
        .unwrap();
    let (_, kinds) = t.later(1_000).run(say(None, "move 12"), BLACK).unwrap();
    let Kind::Message(m) = &kinds[0] else {
        panic!()
    };
    assert_eq!(
        (m.from_side, m.call_seq, m.text.as_str()),
        (Some(Side::Black), call_seq, "move 12")
    );
    // The arbiter adds time, resumes and closes the call.
    t.run(
        arbiter(
            "for the call",
            Action::AddTime {
                side: Some(Side::Black),
                delta_ms: 60_000,
            },
        ),
        ARBITER,
    )
    .unwrap();
    t.run(arbiter("play on", Action::Resume), ARBITER).unwrap();
    assert_eq!(
        t.run(
            Command::CloseCall {
                decision: " ".into()
            },
            ARBITER
        )
        .unwrap_err()
        .code(),
        "invalid_argument"
    );
    let (_, kinds) = t
        .run(
            Command::CloseCall {
                decision: "no evidence; play on".into(),
            },
            ARBITER,
        )
        .unwrap();
    assert_eq!(names(&kinds), ["call_closed"]);
    assert_eq!(
        t.log.last().unwrap().reason.as_deref(),
        Some("no evidence; play on")
    );
    assert!(t.st.open_call.is_none());
    assert_eq!(
        t.run(
            Command::CloseCall {
                decision: "x".into()
            },
            ARBITER
        )
        .unwrap_err()
        .code(),
        "no_open_call"
    );
    // Black thought 3 s before calling; the 12 s the call lasted were charged to nobody; the
    // 60 s were added.
    assert_eq!(left(&t.st, Side::Black, t.now), 657_000);
    t.mv(BLACK, "h9g7").unwrap();
    assert_eq!(calls_state(&t.replayed()), calls_state(&t.st));
    let log: Vec<_> = t
        .log
        .iter()
        .filter_map(|e| e.kind())
        .map(|k| k.label())
        .collect();
    assert_eq!(
        log[2..],
        [
            "arbiter_called",
            "call_taken",
            "message",
            "message",
            "clock_adjusted",
            "resumed",
            "call_closed",
            "move"
        ]
    );
}

#[test]
fn a_replay_in_the_middle_of_a_call_keeps_it_open_and_the_clock_stopped() {
    let mut t = Table::with_info(league_info(None));
    t.later(1_000).run(call("disconnect"), RED).unwrap();
    t.run(Command::TakeCall, ARBITER).unwrap();
    t.later(1_000).run(say(None, "here"), RED).unwrap();
    let r = t.replayed();
    assert!(r.clock.is_paused());
    assert_eq!(r.open_call.as_ref().map(|c| c.taken_by), Some(Some(99)));
    assert_eq!(calls_state(&r), calls_state(&t.st));
}

#[test]
fn calls_are_limited_and_the_settings_may_keep_the_clock_running() {
    let mut t = Table::with_info(league_info(Some(w::CallSettings {
        max_per_side: 1,
        clock_runs: true,
    })));
    let (_, kinds) = t.later(1_000).run(call(""), RED).unwrap();
    let Kind::ArbiterCalled(c) = &kinds[0] else {
        panic!()
    };
    assert!(!c.clock_stopped);
    assert!(!t.st.clock.is_paused());
    t.run(
        Command::CloseCall {
            decision: "fine".into(),
        },
        ARBITER,
    )
    .unwrap();
    let e = t.run(call(""), RED).unwrap_err();
    assert_eq!(e.code(), "call_limit_reached");
    // The other side has its own.
    t.run(call(""), BLACK).unwrap();
    // The default is 3 a side.
    let mut t = Table::with_info(league_info(None));
    for _ in 0..3 {
        t.run(call(""), RED).unwrap();
        t.run(arbiter("go", Action::Resume), ARBITER).unwrap();
        t.run(
            Command::CloseCall {
                decision: "ok".into(),
            },
            ARBITER,
        )
        .unwrap();
    }
    assert_eq!(
        t.run(call(""), RED).unwrap_err(),
        ClientError::CallLimitReached { max: 3 }
    );
}

#[test]
fn who_may_call_and_message() {
    // A game without arbiters: no calls.
    let mut t = Table::new(chuhe_rules::START_FEN, "10m");
    assert_eq!(
        t.run(call(""), RED).unwrap_err().code(),
        "calls_not_allowed"
    );
    let mut t = Table::with_info(league_info(None));
    assert_eq!(
        t.run(call(""), STRANGER).unwrap_err().code(),
        "not_a_player"
    );
    assert_eq!(t.run(call(""), ARBITER).unwrap_err().code(), "not_a_player");
    assert_eq!(
        t.run(call(&"x".repeat(501)), RED).unwrap_err().code(),
        "message_too_long"
    );
    // No call open: a player may message nobody.
    assert_eq!(
        t.run(say(None, "hi"), RED).unwrap_err().code(),
        "messaging_not_allowed"
    );
    t.run(call(""), RED).unwrap();
    // Not the opponent, not a spectator or a stranger.
    assert_eq!(
        t.run(say(Some(Side::Black), "draw?"), RED)
            .unwrap_err()
            .code(),
        "messaging_not_allowed"
    );
    assert_eq!(
        t.run(say(Some(Side::Red), "me"), RED).unwrap_err().code(),
        "messaging_not_allowed"
    );
    assert_eq!(
        t.run(say(None, "hi"), SPECTATOR).unwrap_err().code(),
        "messaging_not_allowed"
    );
    assert_eq!(
        t.run(say(None, "hi"), STRANGER).unwrap_err().code(),
        "messaging_not_allowed"
    );
    // Limits.
    assert_eq!(
        t.run(say(None, &"字".repeat(501)), RED).unwrap_err().code(),
        "message_too_long"
    );
    assert_eq!(
        t.run(say(None, "  "), RED).unwrap_err().code(),
        "invalid_argument"
    );
    t.run(say(None, &"字".repeat(500)), RED).unwrap();
    assert_eq!(
        t.later(999)
            .run(say(None, "again"), RED)
            .unwrap_err()
            .code(),
        "message_rate_limited"
    );
    t.later(1).run(say(None, "again"), RED).unwrap();
    // The arbiter messages one player or both, any time.
    t.run(
        Command::CloseCall {
            decision: "ok".into(),
        },
        ARBITER,
    )
    .unwrap();
    let (_, kinds) = t.run(say(Some(Side::Black), "a word"), ARBITER).unwrap();
    let Kind::Message(m) = &kinds[0] else {
        panic!()
    };
    assert_eq!(
        (m.to, m.call_seq, m.from_role),
        (Some(Side::Black), 0, Some(w::Role::Arbiter))
    );
    assert_eq!(t.log.last().unwrap().actor, Some(99));
    // The game's end closes the call and the channel.
    t.run(call(""), BLACK).unwrap();
    t.run(
        arbiter(
            "over",
            Action::SetResult {
                result: Some(WResult::Draw),
            },
        ),
        ARBITER,
    )
    .unwrap();
    assert!(t.st.open_call.is_none());
    assert_eq!(
        t.run(say(None, "hi"), ARBITER).unwrap_err().code(),
        "game_finished"
    );
    assert_eq!(calls_state(&t.replayed()), calls_state(&t.st));
}

fn scheduled(at: u64, lateness_ms: u64) -> GameInfo {
    GameInfo {
        start_mode: StartMode::Scheduled,
        scheduled_start_ms: at,
        lateness_limit_ms: lateness_ms,
        ..info(chuhe_rules::START_FEN, "10m", 0)
    }
}

#[test]
fn a_scheduled_game_starts_its_clocks_at_the_instant_whoever_is_there() {
    let mut t = Table::with_info(scheduled(60_000, 0));
    assert_eq!(t.st.started_at, None);
    assert!(!t.st.clock.is_started());
    assert_eq!(t.st.next_due(), Some(60_000));
    assert_eq!(t.mv(RED, "h2e2").unwrap_err().code(), "game_not_started");
    assert_eq!(
        t.run(Command::OfferDraw, BLACK).unwrap_err().code(),
        "game_not_started"
    );
    assert!(decide(&t.st, &Command::Tick, &Actor::SERVER, 59_999).is_err());
    // The timer fires 250 ms late: the clocks still started at the scheduled instant.
    t.now = 60_250;
    assert!(due_before_requests(&t.st, t.now));
    let (_, kinds) = t.run(Command::Tick, Actor::SERVER).unwrap();
    assert_eq!(names(&kinds), ["started"]);
    let Kind::Started(s) = &kinds[0] else {
        panic!()
    };
    assert_eq!(s.started_at_ms, 60_000);
    assert_eq!(s.clock.unwrap().running, Some(Side::Red));
    assert_eq!(t.st.started_at, Some(60_000));
    assert_eq!(left(&t.st, Side::Red, 60_250), 599_750);
    t.later(1_000).mv(RED, "h2e2").unwrap();
    assert_eq!(looks(&t.replayed()), looks(&t.st));
    let mut bad = scheduled(0, 0);
    bad.scheduled_start_ms = 0;
    assert!(create(&bad, 0).is_err(), "a scheduled game needs its time");
}

#[test]
fn a_game_cannot_start_from_a_decided_position() {
    // Black to move and checkmated; then Black stalemated (困毙): no move could be played, the
    // game would only wait for a flag.
    for (fen, how) in [
        ("R3k4/R8/9/9/9/9/9/9/9/3K5 b - - 0 1", "checkmated"),
        ("3k5/4P4/9/9/9/9/9/9/9/5K3 b - - 0 1", "stalemated"),
    ] {
        let err = create(&info(fen, "10m", 0), 0).unwrap_err();
        assert_eq!(err.code(), "invalid_argument", "{fen}");
        assert!(err.to_string().contains(how), "{fen}: {err}");
    }
}

#[test]
fn a_start_that_fell_during_an_outage_happens_at_the_restart_with_the_clocks_credited() {
    // Scheduled at 60 s with a 30 s lateness limit; created at 1 s; the server is down from
    // then until 120 s (issue 19 item 7). Before the credit, the clocks started at 60 s with
    // Red charged the outage, and both players lost by lateness at once.
    let mut t = Table::with_info(scheduled(60_000, 30_000));
    t.now = 120_000;
    t.run(Command::Restart, Actor::SERVER).unwrap();
    assert_eq!(t.st.next_due(), Some(120_000), "the start is due at once");
    let (_, kinds) = t.run(Command::Tick, Actor::SERVER).unwrap();
    assert_eq!(names(&kinds), ["started"], "nobody lost by lateness");
    let Kind::Started(s) = &kinds[0] else {
        panic!()
    };
    assert_eq!(s.started_at_ms, 120_000, "started at the restart");
    assert_eq!(left(&t.st, Side::Red, 120_000), 600_000, "no time charged");
    assert_eq!(
        t.st.lateness_due(),
        Some(150_000),
        "lateness counts from then"
    );
    assert_eq!(looks(&t.replayed()), looks(&t.st));
    // A restart after the start credits nothing more: the running clock is resumed as ever.
    t.now = 200_000;
    t.run(Command::Restart, Actor::SERVER).unwrap();
    assert_eq!(t.st.started_at, Some(120_000));

    // A game created after its scheduled instant (set up late, say by a league catching up
    // after an outage) starts when it exists, not before.
    let mut t = Table::with_info_at(scheduled(60_000, 30_000), 90_000);
    assert_eq!(t.st.next_due(), Some(90_000));
    let (_, kinds) = t.run(Command::Tick, Actor::SERVER).unwrap();
    let Kind::Started(s) = &kinds[0] else {
        panic!()
    };
    assert_eq!(s.started_at_ms, 90_000);
    assert_eq!(looks(&t.replayed()), looks(&t.st));
}

#[test]
fn a_game_waiting_for_its_players_starts_when_both_have_joined() {
    let mut t = Table::with_info(GameInfo {
        start_mode: StartMode::PlayersPresent,
        ..info(chuhe_rules::START_FEN, "10m", 0)
    });
    assert!(tracks_joining(&t.st));
    assert_eq!(t.st.next_due(), None, "nothing to wait for on a timer");
    assert_eq!(
        t.run(Command::Join, SPECTATOR).unwrap_err().code(),
        "not_a_player"
    );
    let (_, kinds) = t.later(5_000).run(Command::Join, BLACK).unwrap();
    assert_eq!(names(&kinds), ["joined"]);
    let (ans, kinds) = t.run(Command::Join, BLACK).unwrap();
    assert!(kinds.is_empty(), "joining twice records nothing");
    assert_eq!(ans, Answer::Seq(2));
    assert!(!t.st.clock.is_started());
    let (_, kinds) = t.later(7_000).run(Command::Join, RED).unwrap();
    assert_eq!(names(&kinds), ["joined", "started"]);
    assert_eq!(t.st.started_at, Some(13_000));
    assert_eq!(t.st.joined, [true, true]);
    t.mv(RED, "h2e2").unwrap();
    assert_eq!(looks(&t.replayed()), looks(&t.st));
}

#[test]
fn a_player_absent_past_the_lateness_limit_loses() {
    // Starts at 10 s; 5 minutes' lateness limit.
    let start = 10_000;
    let limit = 300_000;
    let mut t = Table::with_info(scheduled(start, limit));
    t.now = start;
    t.run(Command::Tick, Actor::SERVER).unwrap();
    // Red joins (and moves); Black never comes.
    t.later(30_000).run(Command::Join, RED).unwrap();
    let (_, kinds) = t.mv(RED, "h2e2").unwrap();
    assert_eq!(names(&kinds), ["move"], "Red had joined already");
    assert_eq!(
        t.st.next_due().map(|d| d.min(start + limit)),
        Some(start + limit)
    );
    assert!(decide(&t.st, &Command::Tick, &Actor::SERVER, start + limit - 1).is_err());
    t.now = start + limit;
    let (_, kinds) = t.run(Command::Tick, Actor::SERVER).unwrap();
    let e = ended(&kinds);
    assert_eq!(
        (e.reason.as_str(), e.result),
        ("lateness", Some(WResult::RedWins))
    );
    assert!(
        e.explanation.contains("Black had not joined"),
        "{}",
        e.explanation
    );
    assert_eq!(looks(&t.replayed()), looks(&t.st));

    // Neither comes: both lose.
    let mut t = Table::with_info(scheduled(start, limit));
    t.now = start + limit + 5;
    let (_, kinds) = t.run(Command::Tick, Actor::SERVER).unwrap();
    assert_eq!(names(&kinds), ["started", "ended"]);
    assert_eq!(ended(&kinds).result, Some(WResult::BothLose));

    // A player who moves has joined, without subscribing first.
    let mut t = Table::with_info(scheduled(start, limit));
    t.now = start;
    t.run(Command::Tick, Actor::SERVER).unwrap();
    let (ans, kinds) = t.later(1_000).mv(RED, "h2e2").unwrap();
    assert_eq!(names(&kinds), ["joined", "move"]);
    assert_eq!(ans, Answer::Seq(4), "the move's own seq");
    t.run(Command::Join, BLACK).unwrap();
    assert_eq!(t.st.lateness_due(), None, "both are here");
}

#[test]
fn games_without_lateness_or_waiting_record_no_joining() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m");
    assert!(!tracks_joining(&t.st));
    let (ans, kinds) = t.run(Command::Join, RED).unwrap();
    assert!(kinds.is_empty());
    assert_eq!(ans, Answer::Seq(1));
    let (_, kinds) = t.mv(RED, "h2e2").unwrap();
    assert_eq!(names(&kinds), ["move"]);
    assert_eq!(t.st.started_at, Some(1_000));
    assert_eq!(
        t.run(Command::Tick, Actor::SERVER).unwrap_err().code(),
        "invalid_argument",
        "nothing is due"
    );
}

// --- folding ---

#[test]
fn folding_refuses_a_log_with_a_gap_or_without_its_creation() {
    let mut t = Table::new(chuhe_rules::START_FEN, "10m");
    t.mv(RED, "h2e2").unwrap();
    t.mv(BLACK, "h9g7").unwrap();
    let mut gap = t.log.clone();
    gap.remove(1);
    assert!(matches!(
        State::replay(&gap),
        Err(FoldError::Gap {
            seq: 3,
            expected: 2
        })
    ));
    assert!(matches!(
        State::replay(&t.log[1..]),
        Err(FoldError::NotCreated)
    ));
    let mut bad = t.log.clone();
    if let Some(Kind::Move(m)) = &mut bad[2].event.kind {
        m.mv.as_mut().unwrap().iccs = "a0a5".into();
    }
    assert!(matches!(
        State::replay(&bad),
        Err(FoldError::BadMove { seq: 3, .. })
    ));
}

// --- replay equivalence ---

/// One step of a random game: what to try, by whom, after how long.
#[derive(Debug, Clone)]
struct Step {
    what: u8,
    pick: u16,
    who: u8,
    after_ms: u32,
}

fn step() -> impl Strategy<Value = Step> {
    (0u8..100, any::<u16>(), 0u8..10, 0u32..40_000).prop_map(|(what, pick, who, after_ms)| Step {
        what,
        pick,
        who,
        after_ms,
    })
}

fn command_for(st: &State, s: &Step) -> (Command, Actor) {
    let mover = if st.board.to_move() == Side::Red {
        RED
    } else {
        BLACK
    };
    let other = if mover == RED { BLACK } else { RED };
    let who = match s.who {
        0..=6 => mover,
        7 => other,
        8 => ARBITER,
        _ => SPECTATOR,
    };
    let legal: Vec<chuhe_rules::Move> = st.board.position().legal_moves().iter().copied().collect();
    let cmd = match s.what {
        0..=69 if !legal.is_empty() => {
            let m = legal[s.pick as usize % legal.len()];
            let ply = st.board.plies() + 1 - u32::from(s.pick % 17 == 0);
            mv_cmd(ply, &m.to_iccs(), s.pick % 5 == 0)
        }
        70..=74 => Command::OfferDraw,
        75..=79 => Command::AnswerDraw {
            accept: s.pick % 4 == 0,
        },
        80..=82 => Command::ClaimMoveLimit,
        83..=84 => Command::RequestRuling,
        85..=87 => Command::Tick,
        88 => Command::Resign,
        89 => Command::Join,
        90 => arbiter("p", Action::Pause),
        91..=92 => arbiter("r", Action::Resume),
        93 => arbiter(
            "t",
            Action::AddTime {
                side: Some(if s.pick % 2 == 0 {
                    Side::Black
                } else {
                    Side::Red
                }),
                delta_ms: i64::from(s.pick) * 10 - 300_000,
            },
        ),
        94 => arbiter(
            "f",
            Action::RecordFoul {
                side: Some(if s.pick % 2 == 0 {
                    Side::Black
                } else {
                    Side::Red
                }),
            },
        ),
        95 => arbiter(
            "o",
            Action::OverrideRuling {
                ruling_seq: st.rulings.last().copied().unwrap_or(1),
                result: (s.pick % 4 == 0).then_some(WResult::Draw),
            },
        ),
        96 => Command::Restart,
        _ => mv_cmd(st.board.plies() + 1, "zz", false),
    };
    (cmd, who)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// For random games with random commands from random people at random times, folding the
    /// committed log gives the state live play has, after every step; and `apply` (which
    /// reuses what `decide` computed) equals plain `fold`.
    #[test]
    fn folding_the_log_gives_the_live_state(
        setup in 0u8..3,
        steps in prop::collection::vec(step(), 1..120),
    ) {
        // At once; scheduled 10 s ahead with a 60 s lateness limit; when both players join,
        // with a 30 s limit.
        let mut i = info(chuhe_rules::START_FEN, "3m+2s", 0);
        match setup {
            1 => {
                i.start_mode = StartMode::Scheduled;
                i.scheduled_start_ms = 11_000;
                i.lateness_limit_ms = 60_000;
            }
            2 => {
                i.start_mode = StartMode::PlayersPresent;
                i.lateness_limit_ms = 30_000;
            }
            _ => {}
        }
        let mut t = Table::with_info(i);
        for s in &steps {
            t.now += u64::from(s.after_ms);
            let (cmd, who) = command_for(&t.st, s);
            let before = looks(&t.st);
            match decide(&t.st, &cmd, &who, t.now) {
                Err(_) => prop_assert_eq!(looks(&t.st), before),
                Ok(mut d) => {
                    prop_assert_eq!(looks(&t.st), before, "decide changed the state");
                    let mut plain = t.st.clone();
                    for ev in &d.events {
                        fold(&mut plain, ev).unwrap();
                    }
                    t.log.extend(d.events.iter().cloned());
                    apply(&mut t.st, &mut d).unwrap();
                    prop_assert_eq!(looks(&plain), looks(&t.st), "apply differs from fold");
                    let seqs: Vec<u64> = t.log.iter().map(|e| e.event.seq).collect();
                    let expected: Vec<u64> = (1..=t.log.len() as u64).collect();
                    prop_assert_eq!(seqs, expected);
                }
            }
            prop_assert_eq!(looks(&t.replayed()), looks(&t.st));
        }
    }
}

// --- phrases: every explanation also as a code with parameters ---

fn param(p: &Option<w::Phrase>, name: &str) -> String {
    p.as_ref()
        .and_then(|p| p.params.iter().find(|x| x.name == name))
        .map(|x| x.value.clone())
        .unwrap_or_default()
}

#[test]
fn ends_rulings_and_fouls_carry_a_phrase() {
    // Mate: the loser, the winner and the article.
    let mut t = Table::new(MATE_FEN, "10m+5s");
    t.mv(RED, "b1b8").unwrap();
    t.mv(BLACK, "e9f9").unwrap();
    let (_, kinds) = t.mv(RED, "a0a9").unwrap();
    let p = &ended(&kinds).phrase;
    assert_eq!(p.as_ref().map(|p| p.code.as_str()), Some("ended.checkmate"));
    assert_eq!(param(p, "side"), "black");
    assert_eq!(param(p, "winner"), "red");
    assert_eq!(param(p, "article"), "4.1.1");
    // A resignation and the answer to a ruling request.
    let mut t = Table::new(PERPETUAL_FEN, "10m+5s");
    let (_, kinds) = t.run(Command::RequestRuling, RED).unwrap();
    let Kind::Ruling(r) = &kinds[0] else { panic!() };
    let r = r.ruling.as_ref().unwrap();
    assert_eq!(r.phrase.as_ref().unwrap().code, "ruling.none");
    assert!(!r.explanation_zh.is_empty() && !r.explanation_en.is_empty());
    let (_, kinds) = t.run(Command::Resign, BLACK).unwrap();
    let p = &ended(&kinds).phrase;
    assert_eq!(p.as_ref().unwrap().code, "ended.resign");
    assert_eq!(param(p, "side"), "black");
    // A draw by agreement names who accepted whose offer; a repeated offer is a foul.
    let mut t = Table::new(chuhe_rules::START_FEN, "10m+5s");
    t.run(mv_cmd(1, "h2e2", true), RED).unwrap();
    t.run(Command::AnswerDraw { accept: false }, BLACK).unwrap();
    t.mv(BLACK, "h9g7").unwrap();
    let (_, kinds) = t.run(mv_cmd(3, "h0g2", true), RED).unwrap();
    let Kind::Foul(f) = &kinds[1] else { panic!() };
    assert_eq!(f.phrase.as_ref().unwrap().code, "foul.repeated_draw_offer");
    assert_eq!(param(&f.phrase, "side"), "red");
    t.run(mv_cmd(4, "i9h9", true), BLACK).unwrap();
    let (_, kinds) = t.run(Command::AnswerDraw { accept: true }, RED).unwrap();
    let p = &ended(&kinds).phrase;
    assert_eq!(p.as_ref().unwrap().code, "ended.draw_agreed");
    assert_eq!(
        (param(p, "side"), param(p, "other")),
        ("red".into(), "black".into())
    );
}

#[test]
fn a_repetition_ruling_has_its_phrase_and_each_language_apart() {
    let mut t = Table::new(PERPETUAL_FEN, "10m+5s");
    let mut all = Vec::new();
    for mv in [
        "a0a9", "d9d8", "a9a8", "d8d9", "a8a9", "d9d8", "a9a8", "d8d9", "a8a9",
    ] {
        let who = if t.st.board.to_move() == Side::Red {
            RED
        } else {
            BLACK
        };
        let (_, kinds) = t.mv(who, mv).unwrap();
        all.extend(kinds);
    }
    let ruling = all
        .iter()
        .find_map(|k| match k {
            Kind::Ruling(r) => r.ruling.clone(),
            _ => None,
        })
        .expect("a ruling");
    let p = ruling.phrase.clone();
    assert!(p.as_ref().unwrap().code.starts_with("ruling."));
    assert_eq!(param(&p, "red"), "perpetual_check");
    assert_eq!(param(&p, "article"), ruling.article);
    assert!(!ruling.explanation_en.contains('将'));
    assert!(ruling.explanation_zh.contains("长将"));
    assert!(!ruling.explanation_zh.contains("Red"));
}
