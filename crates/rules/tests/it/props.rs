//! Property tests over positions reached by random play from the start (and their mirrors).
#![allow(clippy::unwrap_used)]

use chuhe_rules::{Color, Move, Piece, PieceKind, Position, Setup, Square, perft};
use proptest::prelude::*;

/// Plays `choices.len()` random legal moves from the start (stopping at a game end).
fn random_position(choices: &[u16]) -> (Position, Vec<Position>) {
    let mut pos = Position::new();
    let mut history = vec![pos.clone()];
    for &c in choices {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let m = moves[c as usize % moves.len()];
        pos = pos.play(m).unwrap();
        history.push(pos.clone());
    }
    (pos, history)
}

/// A deliberately naive legal-move generator (mailbox stepping, full re-check of every move),
/// independent of the crate's tables and pin logic.
fn naive_legal(pos: &Position) -> Vec<Move> {
    let us = pos.side_to_move();
    let at = |f: i8, r: i8| -> Option<Option<Piece>> {
        Square::new(u8::try_from(f).ok()?, u8::try_from(r).ok()?).map(|s| pos.piece_at(s))
    };
    let mut pseudo = Vec::new();
    for from in Square::all() {
        let Some(p) = pos.piece_at(from) else {
            continue;
        };
        if p.color != us {
            continue;
        }
        let (f, r) = (from.file() as i8, from.rank() as i8);
        let mut add = |tf: i8, tr: i8| {
            if let Some(Some(to)) = (tf >= 0 && tr >= 0).then(|| Square::new(tf as u8, tr as u8)) {
                if pos.piece_at(to).is_none_or(|q| q.color != us) {
                    pseudo.push(Move::new(from, to));
                }
            }
        };
        let fwd = if us == Color::Red { 1 } else { -1 };
        match p.kind {
            PieceKind::King | PieceKind::Advisor => {
                let steps: &[(i8, i8)] = if p.kind == PieceKind::King {
                    &[(0, 1), (0, -1), (1, 0), (-1, 0)]
                } else {
                    &[(1, 1), (1, -1), (-1, 1), (-1, -1)]
                };
                for &(df, dr) in steps {
                    if let Some(to) = from.offset(df, dr) {
                        if to.in_palace(us) {
                            add(f + df, r + dr);
                        }
                    }
                }
            }
            PieceKind::Elephant => {
                for (df, dr) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
                    if let (Some(Some(None)), Some(to)) =
                        (Some(at(f + df, r + dr)), from.offset(2 * df, 2 * dr))
                    {
                        if to.is_on_side(us) {
                            add(f + 2 * df, r + 2 * dr);
                        }
                    }
                }
            }
            PieceKind::Horse => {
                for (lf, lr) in [(0, 1), (0, -1), (1, 0), (-1, 0)] {
                    if at(f + lf, r + lr) == Some(None) {
                        if lf == 0 {
                            add(f + 1, r + 2 * lr);
                            add(f - 1, r + 2 * lr);
                        } else {
                            add(f + 2 * lf, r + 1);
                            add(f + 2 * lf, r - 1);
                        }
                    }
                }
            }
            PieceKind::Rook | PieceKind::Cannon => {
                for (df, dr) in [(0, 1), (0, -1), (1, 0), (-1, 0)] {
                    let (mut tf, mut tr) = (f + df, r + dr);
                    let mut screen = false;
                    while let Some(cell) = at(tf, tr) {
                        match (cell, p.kind, screen) {
                            (None, _, false) | (None, PieceKind::Rook, _) => add(tf, tr),
                            (None, _, true) => {}
                            (Some(_), PieceKind::Rook, _) => {
                                add(tf, tr);
                                break;
                            }
                            (Some(_), _, false) => screen = true,
                            (Some(_), _, true) => {
                                add(tf, tr);
                                break;
                            }
                        }
                        tf += df;
                        tr += dr;
                    }
                }
            }
            PieceKind::Pawn => {
                add(f, r + fwd);
                if !from.is_on_side(us) {
                    add(f + 1, r);
                    add(f - 1, r);
                }
            }
        }
    }
    pseudo
        .into_iter()
        .filter(|&m| {
            let mut next = pos.clone();
            next.play_unchecked(m);
            let k = next.king_square(us);
            let theirs = next.king_square(!us);
            let facing = k.file() == theirs.file()
                && Square::all().all(|s| {
                    s.file() != k.file()
                        || s.rank() <= k.rank().min(theirs.rank())
                        || s.rank() >= k.rank().max(theirs.rank())
                        || next.piece_at(s).is_none()
                });
            !facing && !next.is_attacked(k, !us)
        })
        .collect()
}

/// The FEN as the crate wrote it before `to_fen` was rewritten to build one string: kept here
/// as the reference the new output must equal byte for byte.
fn reference_fen(setup: &Setup) -> String {
    let mut board = String::with_capacity(48);
    for rank in (0..10).rev() {
        let mut empty = 0;
        for file in 0..9 {
            match setup.board[rank * 9 + file] {
                None => empty += 1,
                Some(p) => {
                    if empty > 0 {
                        board.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    board.push(p.fen_char());
                }
            }
        }
        if empty > 0 {
            board.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            board.push('/');
        }
    }
    format!(
        "{} {} - - {} {}",
        board,
        match setup.turn {
            Color::Red => 'w',
            Color::Black => 'b',
        },
        setup.halfmoves,
        setup.fullmoves
    )
}

fn choices() -> impl Strategy<Value = Vec<u16>> {
    proptest::collection::vec(any::<u16>(), 0..160)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn fen_round_trip(ch in choices()) {
        let (pos, _) = random_position(&ch);
        let fen = pos.to_fen();
        let back = Position::from_fen(&fen).unwrap();
        prop_assert_eq!(&back, &pos);
        prop_assert_eq!(back.to_fen(), fen);
        prop_assert_eq!(back.hash(), pos.hash());
        let mirrored = pos.mirror();
        prop_assert_eq!(Position::from_fen(&mirrored.to_fen()).unwrap(), mirrored);
    }

    #[test]
    fn fen_equals_the_reference_formatting(
        ch in choices(),
        halfmoves in prop_oneof![Just(0u32), Just(9), Just(10), Just(u32::MAX), any::<u32>()],
        fullmoves in prop_oneof![Just(1u32), Just(99), Just(100), Just(u32::MAX), any::<u32>()],
    ) {
        let (pos, history) = random_position(&ch);
        let mirror = pos.mirror();
        for p in history.iter().chain([&mirror]) {
            let setup = p.to_setup();
            let fen = p.to_fen();
            prop_assert_eq!(&fen, &reference_fen(&setup));
            prop_assert_eq!(&setup.to_fen(), &fen);
            let board = setup.board_fen();
            prop_assert_eq!(Some(board.as_str()), fen.split(' ').next());
            prop_assert_eq!(&Position::from_fen(&fen).unwrap(), p);
        }
        // Any counters (a Setup takes what it is given), and the empty board.
        for mut setup in [pos.to_setup(), Setup::empty()] {
            setup.halfmoves = halfmoves;
            setup.fullmoves = fullmoves;
            prop_assert_eq!(setup.to_fen(), reference_fen(&setup));
            prop_assert_eq!(Setup::from_fen(&setup.to_fen()).ok(), (fullmoves > 0).then_some(setup));
        }
    }

    #[test]
    fn has_legal_move_agrees_with_the_count(ch in choices()) {
        let (pos, history) = random_position(&ch);
        let mirror = pos.mirror();
        for p in history.iter().chain([&mirror]) {
            let n = p.count_legal();
            prop_assert_eq!(p.has_legal_move(), n > 0, "{}", p.to_fen());
            prop_assert_eq!(p.outcome().is_none(), n > 0, "{}", p.to_fen());
            // One ply further: every reply position, checks included.
            for &m in p.legal_moves().iter() {
                let mut next = p.clone();
                next.play_unchecked(m);
                prop_assert_eq!(next.has_legal_move(), next.count_legal() > 0, "{} {}", p.to_fen(), m);
            }
        }
    }

    #[test]
    fn generated_moves_are_exactly_the_legal_ones(ch in choices()) {
        let (pos, _) = random_position(&ch);
        for p in [pos.clone(), pos.mirror()] {
            let mut ours: Vec<Move> = p.legal_moves().to_vec();
            let mut naive = naive_legal(&p);
            ours.sort();
            naive.sort();
            prop_assert_eq!(&ours, &naive, "{}", p.to_fen());
            prop_assert_eq!(p.count_legal(), ours.len() as u64);
            for &m in &ours {
                prop_assert!(p.is_legal(m));
            }
            // Everything else is refused by play() with the position unchanged.
            for from in Square::all() {
                for to in Square::all() {
                    let m = Move::new(from, to);
                    if !ours.contains(&m) {
                        prop_assert!(p.play(m).is_err(), "{} accepted {}", p.to_fen(), m);
                    }
                }
            }
        }
    }

    #[test]
    fn notation_round_trips(ch in choices()) {
        let (pos, _) = random_position(&ch);
        for p in [pos.clone(), pos.mirror()] {
            for &m in p.legal_moves().iter() {
                prop_assert_eq!(m.to_iccs(), format!("{}{}", m.from(), m.to()));
                prop_assert_eq!(m.to_string(), m.to_iccs());
                prop_assert_eq!(p.parse_iccs(&m.to_string()).unwrap(), m);
                prop_assert_eq!(Move::from_fsf_uci(&m.to_fsf_uci()).unwrap(), m);
                let wxf = p.to_wxf(m).unwrap();
                prop_assert_eq!(p.parse_wxf(&wxf).map_err(|e| e.to_string()), Ok(m), "{} {}", p.to_fen(), wxf);
                let zh = p.to_chinese(m).unwrap();
                prop_assert_eq!(p.parse_chinese(&zh).map_err(|e| e.to_string()), Ok(m), "{} {}", p.to_fen(), zh);
                prop_assert_eq!(p.parse_move(&zh).unwrap(), m);
                prop_assert_eq!(p.parse_move(&wxf).unwrap(), m);
            }
        }
    }

    #[test]
    fn copy_make_restores_and_hash_is_incremental(ch in choices()) {
        let (pos, history) = random_position(&ch);
        for h in &history {
            prop_assert_eq!(h.hash(), h.compute_hash());
        }
        let before = pos.clone();
        for &m in pos.legal_moves().iter() {
            let next = pos.play(m).unwrap();
            prop_assert_eq!(next.hash(), next.compute_hash());
            prop_assert_ne!(next.hash(), pos.hash());
            prop_assert_eq!(&pos, &before);
            prop_assert_eq!(pos.hash(), before.hash());
        }
    }

    #[test]
    fn mirrored_positions_count_the_same(ch in choices()) {
        let (pos, _) = random_position(&ch);
        let m = pos.mirror();
        prop_assert_eq!(m.mirror(), pos.clone());
        prop_assert_eq!(perft(&pos, 2), perft(&m, 2));
        prop_assert_eq!(pos.is_check(), m.is_check());
        prop_assert_eq!(pos.outcome().map(|o| o.reason), m.outcome().map(|o| o.reason));
        let mut flipped: Vec<Move> = pos.legal_moves().iter().map(|mv| mv.flip_rank()).collect();
        let mut theirs = m.legal_moves().to_vec();
        flipped.sort();
        theirs.sort();
        prop_assert_eq!(flipped, theirs);
    }
}

/// Pawn clusters random play rarely reaches: five, four and three pawns on a file, two files
/// with two or more; both colours (through the mirror).
#[test]
fn notation_round_trips_for_pawn_clusters() {
    let fens = [
        "3k5/9/4P4/4P4/4P4/4P4/4P4/9/9/4K4 w - - 0 1",
        "3k5/9/4P4/4P4/4P4/4P4/P8/9/9/4K4 w - - 0 1",
        "3k5/9/2P6/2P3P2/2P3P2/4R4/9/4R4/9/5K3 w - - 0 1",
        "3k5/9/9/2P1P4/2P1P4/9/4P4/9/9/5K3 w - - 0 1",
        "3k5/2N6/2N6/9/2C6/2C6/9/2R6/2R6/4K4 w - - 0 1",
    ];
    let mut checked = 0;
    for fen in fens {
        let pos = Position::from_fen(fen).unwrap();
        for p in [pos.clone(), pos.mirror()] {
            for &m in p.legal_moves().iter() {
                let wxf = p.to_wxf(m).unwrap();
                let zh = p.to_chinese(m).unwrap();
                assert_eq!(p.parse_wxf(&wxf).unwrap(), m, "{} {wxf}", p.to_fen());
                assert_eq!(p.parse_chinese(&zh).unwrap(), m, "{} {zh}", p.to_fen());
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
    // Spot checks of the forms.
    let pos = Position::from_fen(fens[0]).unwrap();
    let mv = |s: &str| Move::from_iccs(s).unwrap();
    assert_eq!(pos.to_chinese(mv("e7e8")).unwrap(), "一兵进一");
    assert!(
        pos.to_chinese(mv("e3e4"))
            .unwrap_err()
            .to_string()
            .contains("illegal")
    );
    assert_eq!(pos.to_chinese(mv("e5d5")).unwrap(), "三兵平六");
    assert_eq!(pos.to_wxf(mv("e5d5")).unwrap(), "35=6");
    let black = pos.mirror();
    assert_eq!(black.to_chinese(mv("e4d4")).unwrap(), "三卒平4");
    assert_eq!(black.to_chinese(mv("e2e1")).unwrap(), "一卒进1");
    let pos = Position::from_fen(fens[3]).unwrap();
    assert_eq!(pos.to_chinese(mv("c6c7")).unwrap(), "前兵七进一");
    assert_eq!(pos.to_chinese(mv("e5f5")).unwrap(), "中兵五平四");
    assert_eq!(pos.to_wxf(mv("e5f5")).unwrap(), "25=4");
    assert_eq!(pos.to_chinese(mv("e3e4")).unwrap(), "后兵五进一");
}
