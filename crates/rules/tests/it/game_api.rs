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

/// Plays `lp` `times` times from `fen` (or from its colour mirror) and returns the game and
/// the last move's report.
fn play_loop(
    fen: &str,
    lp: &[&str],
    times: usize,
    mirrored: bool,
) -> (Game, chuhe_rules::rulings::Played) {
    use chuhe_rules::rulings::casefile::{mirror_fen, mirror_iccs};
    let fen = if mirrored {
        mirror_fen(fen).unwrap()
    } else {
        fen.to_string()
    };
    let mut g = Game::new(Position::from_fen(&fen).unwrap(), RulesConfig::default());
    let mut last = None;
    for _ in 0..times {
        for m in lp {
            let m = if mirrored {
                mirror_iccs(m).unwrap()
            } else {
                (*m).to_string()
            };
            last = Some(g.play(mv(&m)).unwrap());
        }
    }
    (g, last.unwrap())
}

/// The side that played the first move of the loop: Red, or Black in the mirror.
fn first(mirrored: bool) -> Color {
    if mirrored { Color::Black } else { Color::Red }
}

/// 长杀 against 长捉 (the red cannon threatens mate from f2 and f4, the black rook chases it):
/// both forbidden (25.2), a draw (24.2, 26.3) — with either colour threatening.
#[test]
fn perpetual_mate_threat_against_perpetual_chase_is_a_draw() {
    let fen = "5P3/9/3P1kr2/9/9/5C2r/4N4/9/p2K1c3/3A5 w - - 0 1";
    for mirrored in [false, true] {
        let (g, p) = play_loop(fen, &["f4f2", "i4i2", "f2f4", "i2i4"], 2, mirrored);
        assert!(g.warnings().is_empty(), "no warning for the 长杀 side");
        let end = p.end.unwrap();
        assert_eq!(
            (end.result, end.cause, end.article, end.ply),
            (GameResult::Draw, EndCause::RepetitionDraw, "24.2", 8)
        );
        let r = end.ruling.unwrap();
        let s = first(mirrored);
        assert_eq!(r.pattern(s), Pattern::PerpetualMateThreat);
        assert_eq!(r.pattern(!s), Pattern::PerpetualChase);
        assert_eq!(r.articles(), ["24.2", "26.3"]);
        assert_eq!(r.moves[0].class, MoveClass::MateThreat);
        assert_eq!(r.moves[1].class, MoveClass::Chase);
        let (zh, en) = (r.text_zh(), r.text_en());
        assert!(zh.contains("长杀") && zh.contains("长捉"), "{zh}");
        assert!(
            zh.contains("双方均为禁止着法") && zh.contains("第26.3条"),
            "{zh}"
        );
        assert!(en.contains("perpetual mate threat"), "{en}");
        assert!(
            en.contains("perpetual chase") && en.contains("26.3"),
            "{en}"
        );
    }
}

/// 长杀 against idle moves: the threatening side is warned (24.3, 26.4) and loses when the
/// cycle completes again.
#[test]
fn perpetual_mate_threat_against_idle_is_warned_then_loses() {
    let fen = "7R1/9/3aka3/9/9/9/4p4/2p3R2/5K3/5A3 w - - 0 1";
    let lp = ["g2g3", "e3d3", "g3g2", "d3e3"];
    for mirrored in [false, true] {
        let s = first(mirrored);
        let (g, p) = play_loop(fen, &lp, 2, mirrored);
        let w = p.warning.unwrap();
        assert_eq!((w.side, w.article, w.ply), (s, "24.3", 8));
        assert_eq!(w.ruling.pattern(s), Pattern::PerpetualMateThreat);
        assert_eq!(w.ruling.pattern(!s), Pattern::Idle);
        assert_eq!(w.ruling.articles(), ["24.3", "26.4"]);
        assert!(w.ruling.text_zh().contains("长杀"));
        assert!(g.end().is_none());
        let (_, p) = play_loop(fen, &lp, 3, mirrored);
        let end = p.end.unwrap();
        assert_eq!(
            (end.result, end.cause, end.article, end.ply),
            (
                GameResult::win_for(!s),
                EndCause::PerpetualChase,
                "24.3",
                12
            )
        );
        let r = end.ruling.unwrap();
        assert!(r.after_warning);
        assert_eq!(r.pattern(s), Pattern::PerpetualMateThreat);
        assert!(r.text_en().contains("perpetual mate threat"));
    }
}

/// 长将 against 长杀: the checking side loses (24.1, 26.1; 26.3 excludes one-sided 长将).
#[test]
fn perpetual_check_against_perpetual_mate_threat_loses() {
    let fen = "1r7/9/4k1P2/c8/9/2r6/9/9/9/1nB1CKC2 w - - 0 1";
    for mirrored in [false, true] {
        let s = first(mirrored);
        let (_, p) = play_loop(fen, &["c0e2", "a6e6", "e2c0", "e6a6"], 2, mirrored);
        let end = p.end.unwrap();
        assert_eq!(
            (end.result, end.cause, end.article, end.ply),
            (GameResult::win_for(!s), EndCause::PerpetualCheck, "24.1", 8)
        );
        let r = end.ruling.unwrap();
        assert_eq!(r.verdict, Verdict::Loss { loser: s });
        assert_eq!(r.pattern(s), Pattern::PerpetualCheck);
        assert_eq!(r.pattern(!s), Pattern::PerpetualMateThreat);
        assert_eq!(r.articles(), ["24.1", "26.1"]);
        // 27.4: the cannon's move back both threatens mate and attacks the elephant: 杀.
        assert_eq!(r.moves[3].class, MoveClass::MateThreat);
        assert!(!r.moves[3].chased.is_empty());
        assert!(r.text_zh().contains("长将") && r.text_zh().contains("长杀"));
    }
}

/// 一杀一捉 against 长捉: both forbidden, a draw (26.3) — also when the 杀 also attacks a
/// piece (杀兼捉 counts as 杀, 27.4).
#[test]
fn mate_threat_and_chase_against_perpetual_chase_is_a_draw() {
    let cases: [(&str, [&str; 4]); 2] = [
        (
            "9/8r/3kna2N/9/3N5/9/5R3/B4K3/9/9 w - - 0 1",
            ["f3d3", "i8a8", "d3f3", "a8i8"],
        ),
        (
            "2nk1a3/3n5/3R5/2C6/6C2/9/7N1/9/3K2N2/3A5 w - - 0 1",
            ["d7c7", "c9a8", "c7d7", "a8c9"],
        ),
    ];
    for (fen, lp) in cases {
        for mirrored in [false, true] {
            let s = first(mirrored);
            let (g, p) = play_loop(fen, &lp, 2, mirrored);
            assert!(g.warnings().is_empty());
            let end = p.end.unwrap();
            assert_eq!((end.result, end.article), (GameResult::Draw, "24.2"));
            let r = end.ruling.unwrap();
            assert_eq!(r.pattern(s), Pattern::MateThreatAndChase, "{fen}");
            assert_eq!(r.pattern(!s), Pattern::PerpetualChase, "{fen}");
            assert_eq!(r.articles(), ["24.2", "26.3"]);
            assert!(r.text_zh().contains("一杀一捉") && r.text_zh().contains("第26.3条"));
            assert!(r.text_en().contains("alternating mate threat and chase"));
        }
    }
}

/// 29.4, 细则 7: a rook on its king's file between the king and the enemy rook "attacks" a
/// cannon and a horse in turn; taking either would expose the king, so the moves are idle
/// and the repetition is a draw (26.2). Without the enemy rook they are 长捉.
#[test]
fn a_false_chase_by_the_rook_shielding_its_king_is_idle() {
    let lp = ["f4f5", "e9e8", "f5f4", "e8e9"];
    for mirrored in [false, true] {
        let s = first(mirrored);
        let (g, p) = play_loop("4kr3/9/9/9/1c7/1n3R3/9/9/9/5K3 w - - 0 1", &lp, 2, mirrored);
        assert!(g.warnings().is_empty());
        let end = p.end.unwrap();
        assert_eq!(
            (end.result, end.cause),
            (GameResult::Draw, EndCause::RepetitionDraw)
        );
        let r = end.ruling.unwrap();
        assert_eq!(r.pattern(s), Pattern::Idle);
        assert!(r.moves.iter().all(|m| m.class == MoveClass::Idle));
        assert_eq!(r.articles(), ["24.2", "26.2"]);
        let (_, p) = play_loop("4k4/9/9/9/1c7/1n3R3/9/9/9/5K3 w - - 0 1", &lp, 2, mirrored);
        let w = p.warning.unwrap();
        assert_eq!(w.side, s);
        assert_eq!(w.ruling.pattern(s), Pattern::PerpetualChase);
    }
}
