//! The game-facing API: errors, warnings in force, explanations.
#![allow(clippy::unwrap_used)]

use chuhe_rules::rulings::{
    EndCause, Game, GameError, GameResult, MoveClass, MoveLimit, Pattern, Reason, RulesConfig,
    Ruleset, Verdict,
};
use chuhe_rules::{Color, Move, Position};

fn mv(s: &str) -> Move {
    Move::from_iccs(s).unwrap()
}

/// Red's rook chases Black's unprotected horse (a7 ↔ c8).
const CHASE: &str = "4k4/9/n8/9/9/9/9/9/2R6/3K5 w - - 0 1";
const LOOP: [&str; 4] = ["c1a1", "a7c8", "a1c1", "c8a7"];

fn chase_game(times: usize) -> Game {
    let mut g = Game::new(Position::from_fen(CHASE).unwrap(), RulesConfig::default());
    for _ in 0..times {
        for m in LOOP {
            g.play(mv(m)).unwrap();
        }
    }
    g
}

#[test]
fn warning_then_loss() {
    let mut g = chase_game(1);
    for (i, m) in LOOP.iter().enumerate() {
        let p = g.play(mv(m)).unwrap();
        assert!(p.end.is_none());
        assert_eq!(p.warning.is_some(), i == 3, "ply {}", i + 5);
    }
    let w = g.pending_warning().unwrap().clone();
    assert_eq!(
        (w.side, w.reason, w.article, w.ply),
        (Color::Red, Reason::PerpetualChase, "24.3", 8)
    );
    let r = &w.ruling;
    assert_eq!(
        r.verdict,
        Verdict::MustVary {
            offender: Color::Red
        }
    );
    assert_eq!((r.red, r.black), (Pattern::PerpetualChase, Pattern::Idle));
    assert_eq!(r.moves.len(), 8);
    assert_eq!(r.moves[0].iccs, "c1a1");
    assert_eq!(r.moves[0].chinese, "车七平九");
    assert_eq!(r.moves[0].class, MoveClass::Chase);
    assert_eq!(r.moves[0].chased[0].square.to_string(), "a7");
    assert!(r.text_zh().contains("红方长捉"), "{}", r.text_zh());
    assert!(r.text_zh().contains("第24.3条"));
    assert!(r.text_en().contains("must vary"), "{}", r.text_en());
    // The warned loop goes on: the warning stays in force and is not repeated …
    for m in &LOOP[..3] {
        let p = g.play(mv(m)).unwrap();
        assert!(p.warning.is_none() && p.end.is_none());
        assert!(g.pending_warning().is_some());
    }
    // … and completing the cycle again loses (24.3).
    let p = g.play(mv(LOOP[3])).unwrap();
    let end = p.end.unwrap();
    assert_eq!(
        (end.result, end.cause, end.article, end.ply),
        (GameResult::BlackWins, EndCause::PerpetualChase, "24.3", 12)
    );
    let r = end.ruling.unwrap();
    assert!(r.after_warning);
    assert!(r.text_en().contains("loses (art. 24.3)"), "{}", r.text_en());
    // Moves after the end are refused with the ply of the end.
    assert_eq!(
        g.play(mv("c1a1")),
        Err(GameError::GameOver {
            ply: 12,
            result: GameResult::BlackWins
        })
    );
    assert!(g.pending_warning().is_none());
}

#[test]
fn varying_lifts_the_pending_warning() {
    let mut g = chase_game(2);
    assert_eq!(g.warnings().len(), 1);
    assert!(g.pending_warning().is_some());
    g.play(mv("c1b1")).unwrap();
    assert!(g.pending_warning().is_none());
    assert_eq!(g.warnings().len(), 1);
    assert!(g.end().is_none());
}

#[test]
fn illegal_moves_leave_the_game_unchanged() {
    let mut g = chase_game(1);
    let before = g.position().to_fen();
    let err = g.play(mv("a7a6")).unwrap_err();
    assert!(matches!(err, GameError::Illegal(_)), "{err}");
    assert_eq!(g.position().to_fen(), before);
    assert_eq!(g.moves().len(), 4);
}

#[test]
fn engine_rules_end_at_once() {
    let mut g = Game::new(
        Position::from_fen(CHASE).unwrap(),
        RulesConfig {
            ruleset: Ruleset::Engine,
            ..RulesConfig::default()
        },
    );
    let mut last = None;
    for _ in 0..2 {
        for m in LOOP {
            last = Some(g.play(mv(m)).unwrap());
        }
    }
    let end = last.unwrap().end.unwrap();
    assert_eq!(
        (end.result, end.cause, end.article),
        (GameResult::BlackWins, EndCause::PerpetualChase, "engine")
    );
    assert!(end.ruling.unwrap().text_zh().contains("引擎规则"));
}

#[test]
fn dead_start_and_move_limit_counter() {
    let g = Game::new(
        Position::from_fen("2b1k4/4a4/9/9/9/9/9/9/4A4/2B1K4 w - - 0 1").unwrap(),
        RulesConfig::default(),
    );
    let end = g.end().unwrap();
    assert_eq!((end.cause, end.ply), (EndCause::DeadPosition, 0));

    let mut g = Game::new(
        Position::from_fen("4k4/9/9/9/9/9/9/9/9/R2K5 w - - 0 1").unwrap(),
        RulesConfig {
            ruleset: Ruleset::Cxa,
            move_limit: MoveLimit {
                moves: 60,
                check_cap: 1,
            },
        },
    );
    g.play(mv("a0a9")).unwrap(); // check 1: counts
    g.play(mv("e9e8")).unwrap();
    assert_eq!(g.move_limit_count(), 2);
    g.play(mv("a9a8")).unwrap(); // check 2: over the cap
    g.play(mv("e8e7")).unwrap(); // the reply does not count either
    assert_eq!(g.move_limit_count(), 2);
    g.play(mv("d0d1")).unwrap();
    assert_eq!(g.move_limit_count(), 3);
}

#[test]
fn replay_rebuilds_rulings() {
    let moves: Vec<Move> = LOOP.iter().cycle().take(8).map(|m| mv(m)).collect();
    let g = Game::replay(
        Position::from_fen(CHASE).unwrap(),
        RulesConfig::default(),
        &moves,
    )
    .unwrap();
    assert_eq!(g.warnings().len(), 1);
    assert_eq!(g.pending_warning().unwrap().ply, 8);
    let mut bad = moves.clone();
    bad.push(mv("a7a6"));
    let (i, e) = Game::replay(
        Position::from_fen(CHASE).unwrap(),
        RulesConfig::default(),
        &bad,
    )
    .unwrap_err();
    assert_eq!(i, 8);
    assert!(matches!(e, GameError::Illegal(_)));
}

/// Rook and king against a lone king: no capture, no check in the moves played below.
const QUIET: &str = "4k4/9/9/9/9/9/9/9/9/R2K5";

fn game_from(fen: &str, moves: u32, check_cap: u32) -> Game {
    Game::new(
        Position::from_fen(fen).unwrap(),
        RulesConfig {
            ruleset: Ruleset::Cxa,
            move_limit: MoveLimit { moves, check_cap },
        },
    )
}

#[test]
fn the_fen_halfmove_clock_counts_towards_the_move_limit() {
    // 119 plies without a capture before the FEN: the next quiet move is the 120th, a draw
    // (4.2.4; as Pikafish and Fairy-Stockfish rule).
    let mut g = game_from(&format!("{QUIET} w - - 119 60"), 60, 10);
    assert!(g.end().is_none());
    assert_eq!(g.move_limit_count(), 119);
    let end = g.play(mv("a0a1")).unwrap().end.unwrap();
    assert_eq!(
        (end.result, end.cause, end.article, end.ply),
        (GameResult::Draw, EndCause::MoveLimit, "4.2.4", 1)
    );

    // 118: one more ply first.
    let mut g = game_from(&format!("{QUIET} b - - 118 60"), 60, 10);
    assert!(g.play(mv("e9e8")).unwrap().end.is_none());
    assert_eq!(g.move_limit_count(), 119);
    let end = g.play(mv("a0a1")).unwrap().end.unwrap();
    assert_eq!((end.cause, end.ply), (EndCause::MoveLimit, 2));

    // A lowered limit counts the same plies.
    let mut g = game_from(&format!("{QUIET} w - - 79 40"), 40, 10);
    assert_eq!(g.play(mv("a0a1")).unwrap().end.unwrap().ply, 1);

    // A capture starts the count afresh, whatever the FEN said.
    let mut g = game_from("4k4/9/9/9/9/9/9/9/r8/R2K5 w - - 119 60", 60, 10);
    assert!(g.play(mv("a0a1")).unwrap().end.is_none());
    assert_eq!(g.move_limit_count(), 0);
}

#[test]
fn a_fen_at_or_past_the_move_limit_is_drawn_at_ply_0() {
    for clock in [120, 121, u32::MAX] {
        let g = game_from(&format!("{QUIET} w - - {clock} 70"), 60, 10);
        let end = g.end().unwrap();
        assert_eq!(
            (end.result, end.cause, end.ply),
            (GameResult::Draw, EndCause::MoveLimit, 0),
            "{clock}"
        );
    }
    // A mate on the board comes first (4.1.1), and with the limit off nothing is drawn.
    let g = game_from("3k5/3R5/3R5/9/9/9/9/9/9/4K4 b - - 120 70", 60, 10);
    assert_eq!(g.end().unwrap().cause, EndCause::Checkmate);
    let mut g = game_from(&format!("{QUIET} w - - {} 70", u32::MAX), 0, 10);
    assert!(g.end().is_none());
    assert!(g.play(mv("a0a1")).unwrap().end.is_none());
    assert_eq!(g.move_limit_count(), u32::MAX);
}

#[test]
fn plies_before_the_fen_count_and_none_of_them_was_a_check() {
    // The history before the FEN is unknown: every ply its clock counts is counted, and each
    // side's checks are counted from the FEN on (its first `check_cap` checks count).
    let mut g = game_from(&format!("{QUIET} w - - 100 60"), 60, 1);
    g.play(mv("a0a9")).unwrap(); // Red's first check since the FEN: counts
    g.play(mv("e9e8")).unwrap();
    assert_eq!(g.move_limit_count(), 102);
    g.play(mv("a9a8")).unwrap(); // the second: over the cap, and the reply does not count
    g.play(mv("e8e7")).unwrap();
    assert_eq!(g.move_limit_count(), 102);
}

#[test]
fn a_huge_move_limit_does_not_overflow() {
    let mut g = game_from(&format!("{QUIET} w - - 7 70"), u32::MAX, 10);
    assert!(g.play(mv("a0a1")).unwrap().end.is_none());
    assert_eq!(g.move_limit_count(), 8);
}
