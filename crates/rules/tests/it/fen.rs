//! FEN reading, writing and position validation.
#![allow(clippy::unwrap_used)]

use chuhe_rules::{
    Color, EndReason, FenError, InvalidReason, ParseFenError, Piece, PieceKind, Position,
    START_FEN, Setup, Square,
};

fn parse_err(fen: &str) -> ParseFenError {
    match Position::from_fen(fen) {
        Err(FenError::Parse(e)) => e,
        other => panic!("{fen}: expected a parse error, got {other:?}"),
    }
}

fn invalid(fen: &str) -> Vec<InvalidReason> {
    match Position::from_fen(fen) {
        Err(FenError::Invalid(e)) => e.reasons,
        other => panic!("{fen}: expected an invalid position, got {other:?}"),
    }
}

#[test]
fn start_position_round_trips() {
    let pos = Position::from_fen(START_FEN).unwrap();
    assert_eq!(pos, Position::new());
    assert_eq!(pos.to_fen(), START_FEN);
    assert_eq!(pos.side_to_move(), Color::Red);
    assert_eq!(
        pos.king_square(Color::Black),
        Square::from_iccs("e9").unwrap()
    );
    assert_eq!(
        pos.piece_at(Square::from_iccs("h2").unwrap()),
        Some(Piece::new(Color::Red, PieceKind::Cannon))
    );
    assert_eq!(pos.pieces().count(), 32);
    assert_eq!(
        pos.pieces().next(),
        Some((
            Square::from_iccs("a0").unwrap(),
            Piece::new(Color::Red, PieceKind::Rook)
        ))
    );
}

#[test]
fn accepts_r_e_h_and_short_forms() {
    let pos = Position::from_fen("rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR r")
        .unwrap();
    assert_eq!(pos.to_fen(), START_FEN);
    let pos =
        Position::from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 3 7")
            .unwrap();
    assert_eq!(pos.side_to_move(), Color::Black);
    assert_eq!(pos.halfmoves(), 3);
    assert_eq!(pos.fullmoves(), 7);
    assert_eq!(
        Position::from_fen("  ".to_string().as_str())
            .unwrap_err()
            .to_string(),
        "bad FEN: empty FEN"
    );
}

#[test]
fn parse_errors_say_what_and_where() {
    let e = parse_err("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C2/9/RNBAKABNR w");
    assert_eq!(e, ParseFenError::FileCount { rank: 2, files: 10 });
    assert_eq!(e.to_string(), "rank 2 has 10 files, expected 9");
    assert_eq!(
        parse_err("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/RNBAKABNR w"),
        ParseFenError::RankCount { found: 9 }
    );
    assert_eq!(
        parse_err("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1X1P1P/1C5C1/9/RNBAKABNR w"),
        ParseFenError::BadPiece {
            rank: 3,
            found: 'X'
        }
    );
    assert!(matches!(
        parse_err("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x"),
        ParseFenError::BadTurn { .. }
    ));
    // The side to move is never guessed: a board alone is refused.
    for fen in [
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR",
        "  4k4/9/9/9/9/9/9/9/9/R2K5  ",
    ] {
        let e = parse_err(fen);
        assert_eq!(e, ParseFenError::MissingTurn, "{fen:?}");
        assert_eq!(
            e.to_string(),
            "the side to move is missing: w or b must follow the board"
        );
        assert!(Setup::from_fen(fen).is_err());
    }
    assert!(matches!(
        parse_err("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w KQ - 0 1"),
        ParseFenError::BadPlaceholder { field: 3, .. }
    ));
    assert!(matches!(
        parse_err("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - x 1"),
        ParseFenError::BadHalfmoves { .. }
    ));
    assert!(matches!(
        parse_err("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 0"),
        ParseFenError::BadFullmoves { .. }
    ));
    assert!(matches!(
        parse_err("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 9"),
        ParseFenError::TooManyFields { found: 7 }
    ));
}

#[test]
fn impossible_positions_are_refused_with_every_reason() {
    // No black king, a red king outside the palace.
    let r = invalid("9/9/9/9/9/9/9/9/9/K8 w");
    assert!(r.contains(&InvalidReason::MissingKing(Color::Black)));
    assert!(r.contains(&InvalidReason::Unreachable {
        piece: Piece::new(Color::Red, PieceKind::King),
        square: Square::from_iccs("a0").unwrap(),
    }));
    // Three rooks, six pawns.
    let r = invalid("3k5/9/9/9/9/P1P1P1P1P/P8/9/9/RRR1K4 w");
    assert!(r.contains(&InvalidReason::TooMany {
        color: Color::Red,
        kind: PieceKind::Rook,
        count: 3
    }));
    assert!(r.contains(&InvalidReason::TooMany {
        color: Color::Red,
        kind: PieceKind::Pawn,
        count: 6
    }));
    // Advisor, elephant and pawns on points they can never reach.
    let r = invalid("3k5/9/9/9/9/9/1P7/9/P2A3B1/4K4 w");
    let unreachable: Vec<String> = r
        .iter()
        .filter_map(|x| match x {
            InvalidReason::Unreachable { square, .. } => Some(square.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(unreachable, ["a1", "d1", "h1", "b3"]);
    // Black pawn behind its start.
    assert!(matches!(
        invalid("3k5/p8/9/9/9/9/9/9/9/4K4 w")[..],
        [InvalidReason::Unreachable { .. }]
    ));
    // Kings facing.
    assert_eq!(
        invalid("4k4/9/9/9/9/9/9/9/9/4K4 w"),
        [InvalidReason::KingsFacing]
    );
    // Black in check with Red to move.
    assert_eq!(
        invalid("4k4/9/9/9/9/9/9/9/4R4/3K5 w"),
        [InvalidReason::OppositeCheck]
    );
    // The message lists the reasons.
    let msg = Position::from_fen("9/9/9/9/9/9/9/9/9/K8 w")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("black has no king"), "{msg}");
    assert!(msg.contains("red king on a0"), "{msg}");
}

#[test]
fn reachable_points() {
    let count = |kind| {
        Square::all()
            .filter(|&s| Position::reachable(Piece::new(Color::Black, kind), s))
            .count()
    };
    assert_eq!(count(PieceKind::King), 9);
    assert_eq!(count(PieceKind::Advisor), 5);
    assert_eq!(count(PieceKind::Elephant), 7);
    assert_eq!(count(PieceKind::Pawn), 45 + 10);
    assert_eq!(count(PieceKind::Horse), 90);
}

#[test]
fn checkmate_and_stalemate() {
    let mate = Position::from_fen("3k5/R8/3R5/9/9/9/9/9/9/4K4 b - - 0 1").unwrap();
    assert!(mate.is_check());
    assert!(mate.is_checkmate());
    let o = mate.outcome().unwrap();
    assert_eq!((o.winner, o.reason), (Color::Red, EndReason::Checkmate));
    // 困毙: not in check, no legal move — a loss for the side to move.
    let stale = Position::from_fen("3k5/R8/9/9/9/9/9/9/9/4K4 b - - 0 1").unwrap();
    assert!(!stale.is_check());
    assert!(stale.is_stalemate());
    let o = stale.outcome().unwrap();
    assert_eq!((o.winner, o.reason), (Color::Red, EndReason::Stalemate));
    assert_eq!(Position::new().outcome(), None);
}

/// `has_legal_move` stops at the first legal move: positions where none exists, and where the
/// only one is the last thing the generator would look at (a king step, a pinned piece, a move
/// onto a cannon's screen point), all colour-mirrored as well.
#[test]
fn has_legal_move_at_the_edges() {
    let none = [
        // 将死 by two rooks; 困毙 by one rook.
        "3k5/R8/3R5/9/9/9/9/9/9/4K4 b - - 0 1",
        "3k5/R8/9/9/9/9/9/9/9/4K4 b - - 0 1",
        // 将死 by a cannon with a screen, the king hemmed in by its own advisors.
        "3akab2/9/4C4/9/9/9/9/4C4/9/4K4 b - - 0 1",
        // 困毙 with a free piece that has nowhere to go: the advisor d9's one point holds its
        // king (e8), whose steps are all covered (rook i9, pawn f7, the red king's open file).
        "3a4R/4k4/5P3/9/9/9/9/9/9/3K5 b - - 0 1",
    ];
    for fen in none {
        let pos = Position::from_fen(fen).unwrap();
        for p in [pos.clone(), pos.mirror()] {
            assert_eq!(p.count_legal(), 0, "{fen}");
            assert!(!p.has_legal_move(), "{fen}");
            assert!(p.outcome().is_some(), "{fen}");
        }
    }
    let some = [
        // Only king steps: the lone king, not in check.
        "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1",
        // The rook on e1 is pinned by the rook on e9 (it may move along the file only).
        "3kr4/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1",
        // In check from a rook: a king step out or a block.
        "4k4/9/9/9/9/9/9/9/9/3K1r3 w - - 0 1",
    ];
    for fen in some {
        let pos = Position::from_fen(fen).unwrap();
        for p in [pos.clone(), pos.mirror()] {
            assert!(p.count_legal() > 0, "{fen}");
            assert!(p.has_legal_move(), "{fen}");
            assert_eq!(p.outcome(), None, "{fen}");
        }
    }
}

#[test]
fn setup_mirror_and_board_fen() {
    let s = Setup::start();
    assert_eq!(s.mirror().mirror(), s);
    assert_eq!(s.board_fen(), START_FEN.split(' ').next().unwrap());
    assert_eq!(Setup::from_fen(START_FEN).unwrap(), s);
}

#[test]
fn attack_queries() {
    // Red: cannon e2 with the advisor e8 as screen checks the black king e9.
    let pos = Position::from_fen("4k4/4a4/9/9/9/9/9/4C4/9/3K5 b - - 0 1").unwrap();
    let sq = |s: &str| Square::from_iccs(s).unwrap();
    assert!(pos.is_check());
    assert_eq!(pos.checkers().into_iter().collect::<Vec<_>>(), [sq("e2")]);
    assert!(pos.attacks_from(sq("e2")).contains(sq("e9")));
    assert!(!pos.attacks_from(sq("e2")).contains(sq("e8")));
    assert!(pos.attackers_to(sq("e9"), Color::Red).contains(sq("e2")));
    // The advisor protects nothing off its diagonals; the king protects e8.
    assert!(pos.attackers_to(sq("e8"), Color::Black).contains(sq("e9")));
    assert!(pos.is_attacked(sq("e8"), Color::Black));
    // Remove the screen: the cannon no longer attacks the king (x-ray query).
    let mut occ = pos.occupied();
    occ.remove(sq("e8"));
    assert!(pos.attackers_with(sq("e9"), Color::Red, occ).is_empty());
    // A horse's blocked leg.
    let pos = Position::new();
    assert_eq!(pos.attacks_from(sq("b0")).count(), 2);
    assert!(pos.attacks_from(sq("a5")).is_empty());
}

#[test]
fn swap_turn_gives_check_and_moves_from() {
    let sq = |s: &str| Square::from_iccs(s).unwrap();
    let pos = Position::new();
    let swapped = pos.swap_turn().unwrap();
    assert_eq!(swapped.side_to_move(), Color::Black);
    assert_eq!(swapped.hash(), swapped.compute_hash());
    assert_eq!(swapped.swap_turn().unwrap().hash(), pos.hash());
    assert_eq!(pos.legal_moves_from(sq("h2")).len(), 12);
    assert!(pos.legal_moves_from(sq("h9")).is_empty());
    let checked = Position::from_fen("4k4/4a4/9/9/9/9/9/4C4/9/3K5 b - - 0 1").unwrap();
    assert_eq!(
        checked.swap_turn().unwrap_err().reasons,
        [InvalidReason::OppositeCheck]
    );
    let pos = Position::from_fen("3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1").unwrap();
    assert!(pos.gives_check("e1d1".parse().unwrap()));
    assert!(!pos.gives_check("e1e2".parse().unwrap()));
}
