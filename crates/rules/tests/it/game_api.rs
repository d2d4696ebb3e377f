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
