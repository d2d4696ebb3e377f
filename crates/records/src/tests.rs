#![allow(clippy::unwrap_used, clippy::expect_used)]

use chuhe_rules::{Color, Move, Position, START_FEN};
use proptest::prelude::*;

use crate::xqf::{Keys, WriteOptions};
use crate::{Format, Game, GameResult, Notation, RecordError, dhtmlxq, pgn, xqf};

/// A game of `plies` pseudo-random legal moves from `fen` (stops early at a game's end).
fn random_game(fen: &str, seed: u64, plies: usize) -> Game {
    let mut pos = Position::from_fen(fen).unwrap();
    let mut moves = Vec::new();
    let mut s = seed | 1;
    for _ in 0..plies {
        let list = pos.legal_moves();
        if list.is_empty() {
            break;
        }
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let m = list.as_slice()[(s % list.len() as u64) as usize];
        pos.play_mut(m).unwrap();
        moves.push(m);
    }
    Game {
        event: "2026 象甲联赛".into(),
        round: "3".into(),
        board: "2".into(),
        red: "赵一".into(),
        black: "钱二".into(),
        red_team: "东城".into(),
        black_team: "西城".into(),
        result: [
            GameResult::RedWins,
            GameResult::BlackWins,
            GameResult::Draw,
            GameResult::BothLose,
            GameResult::Unknown,
        ][(seed % 5) as usize],
        reason: "time".into(),
        fen: fen.into(),
        moves,
        ..Game::default()
    }
}

const FENS: [&str; 3] = [
    START_FEN,
    "3akab2/9/4b4/p3p3p/2p3p2/6P2/P1P1P3P/2N1C1N2/4A4/2BAK1B2 b - - 0 1",
    "4k4/4a4/9/9/9/9/9/9/4A4/3AK4 w - - 0 1",
];

fn same_board(a: &str, b: &str) -> bool {
    let (a, b) = (
        Position::from_fen(a).unwrap(),
        Position::from_fen(b).unwrap(),
    );
    a.to_setup().board_fen() == b.to_setup().board_fen() && a.side_to_move() == b.side_to_move()
}

fn assert_same(a: &Game, b: &Game, what: &str) {
    assert_eq!(a.moves, b.moves, "{what}: moves");
    assert_eq!(a.result, b.result, "{what}: result");
    assert!(
        same_board(&a.fen, &b.fen),
        "{what}: start {} vs {}",
        a.fen,
        b.fen
    );
    for k in [
        "Event",
        "Round",
        "Board",
        "Red",
        "Black",
        "RedTeam",
        "BlackTeam",
        "Termination",
    ] {
        assert_eq!(a.header(k), b.header(k), "{what}: header {k}");
    }
}

#[test]
fn pgn_round_trip_in_each_notation() {
    for (i, fen) in FENS.iter().enumerate() {
        for seed in 1..8u64 {
            let g = random_game(fen, seed * 31 + i as u64, 80);
            for n in [Notation::Chinese, Notation::Wxf, Notation::Iccs] {
                let text = pgn::write(&g, n).unwrap();
                let back = pgn::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
                assert_same(&g, &back, &format!("{n:?} {text}"));
            }
        }
    }
}

#[test]
fn pgn_text_follows_the_convention() {
    let mut g = random_game(START_FEN, 3, 0);
    let p = Position::new();
    let m1 = p.parse_move("炮二平五").unwrap();
    let m2 = p.play(m1).unwrap().parse_move("马8进7").unwrap();
    g.moves = vec![m1, m2];
    g.result = GameResult::RedWins;
    let t = pgn::write(&g, Notation::Chinese).unwrap();
    assert!(t.starts_with("[Game \"Chinese Chess\"]\n"), "{t}");
    assert!(t.contains("[Format \"Chinese\"]"));
    assert!(t.contains("[RedTeam \"东城\"]"));
    assert!(t.contains("[Result \"1-0\"]"));
    assert!(t.contains("[Termination \"time\"]"));
    assert!(!t.contains("[FEN"));
    assert!(t.ends_with("\n1. 炮二平五 马８进７\n1-0\n"), "{t}");
    let t = pgn::write(&g, Notation::Iccs).unwrap();
    assert!(t.contains("1. H2-E2 H9-G7\n"), "{t}");
    let t = pgn::write(&g, Notation::Wxf).unwrap();
    assert!(t.contains("1. C2=5 H8+7\n"), "{t}");
    let g2 = random_game(FENS[1], 5, 3);
    let t = pgn::write(&g2, Notation::Chinese).unwrap();
    assert!(t.contains(&format!("[FEN \"{}\"]", FENS[1])));
    assert!(t.contains("\n1. ... "), "{t}");
}

#[test]
fn pgn_reads_programs_files() {
    // As 象棋百科全书 writes them: full-width digits, several games, comments, variations.
    let text = "\u{feff}[Game \"Chinese Chess\"]\n[Event \"全国象棋甲级联赛\"]\n[Red \"许银川\"]\n[Black \"吕钦\"]\n[Result \"1/2-1/2\"]\n[Format \"Chinese\"]\n\n{开局}\n  1. 炮二平五 马８进７ (1... 炮8平5 2. 马二进三) \n  2. 马二进三 $1 车９平８ ; 注\n  3. 车一平二! 1/2-1/2\n\n[Game \"Chinese Chess\"]\n[Format \"ICCS\"]\n1.H2-E2 H9-G7 *\n";
    let games = pgn::parse_all(text).unwrap();
    assert_eq!(games.len(), 2);
    assert_eq!(games[0].moves.len(), 5);
    assert_eq!(games[0].result, GameResult::Draw);
    assert_eq!(games[0].red, "许银川");
    assert_eq!(games[1].moves.len(), 2);
    assert_eq!(games[1].result, GameResult::Unknown);
}

#[test]
fn pgn_names_the_first_bad_move() {
    let text =
        "[Game \"Chinese Chess\"]\n\n1. 炮二平五 马8进7\n2. 马二进三 车9平8\n3. 车一进九 车8进4\n";
    match pgn::parse_all(text) {
        Err(RecordError::BadMove {
            number,
            side,
            text,
            place,
            ..
        }) => {
            assert_eq!(number, 3);
            assert_eq!(side, Color::Red);
            assert_eq!(text, "车一进九");
            assert_eq!(place, "game 1, line 5, column 4");
        }
        other => panic!("{other:?}"),
    }
    let e = pgn::parse_all("1. C2=5 X9+9").unwrap_err();
    assert_eq!(e.code(), "bad_move");
    assert!(e.to_string().contains("move 1 (black)"), "{e}");
    // A bad second game: nothing is returned.
    let e = pgn::parse_all("1. h2e2 *\n\n[Result \"2-0\"]\n1. h2e2").unwrap_err();
    assert_eq!(e.code(), "syntax");
    assert!(e.to_string().contains("game 2"), "{e}");
    assert_eq!(pgn::parse_all("  \n").unwrap_err(), RecordError::Empty);
    assert_eq!(
        pgn::parse_all("[Event \"x").unwrap_err().code(),
        "truncated"
    );
    assert_eq!(pgn::parse_all("1. h2e2 {").unwrap_err().code(), "truncated");
    assert_eq!(
        pgn::parse_all("[FEN \"9/9 w\"]\n*").unwrap_err().code(),
        "bad_fen"
    );
}

#[test]
fn pgn_reads_gbk_bytes() {
    let text = "[Game \"Chinese Chess\"]\n[Red \"许银川\"]\n1. 炮二平五 马８进７ *\n";
    let gbk = encoding_rs::GB18030.encode(text).0.into_owned();
    assert!(std::str::from_utf8(&gbk).is_err());
    let g = pgn::parse(&pgn::decode(&gbk)).unwrap();
    assert_eq!(g.red, "许银川");
    assert_eq!(g.moves.len(), 2);
}

fn encrypted(version: u8, seed: u8) -> WriteOptions {
    WriteOptions {
        version,
        keys: Keys {
            mask: 0xFF ^ seed,
            or: [seed, seed.wrapping_mul(3), 7, seed.wrapping_add(11)],
            sum: 0,
            xy: seed.wrapping_mul(37),
            xyf: seed.wrapping_mul(11).wrapping_add(5),
            xyt: seed.wrapping_mul(101).wrapping_add(9),
        },
    }
}

#[test]
fn xqf_round_trip_plain_and_encrypted() {
    for (i, fen) in FENS.iter().enumerate() {
        for seed in 1..8u64 {
            let g = random_game(fen, seed * 17 + i as u64, 90);
            for opts in [
                WriteOptions::default(),
                encrypted(0x0B, seed as u8),
                encrypted(0x10, (seed as u8).wrapping_mul(29)),
                encrypted(0x12, (seed as u8).wrapping_mul(53).wrapping_add(1)),
            ] {
                let bytes = xqf::write(&g, &opts).unwrap();
                assert_eq!(&bytes[..2], b"XQ");
                let back = xqf::read(&bytes).unwrap_or_else(|e| panic!("{opts:?}: {e}"));
                assert_same(&g, &back, &format!("{opts:?}"));
            }
        }
    }
}

#[test]
fn xqf_keeps_long_texts_in_the_comment() {
    let mut g = random_game(START_FEN, 9, 10);
    g.red = "一个很长很长很长的名字甲".into();
    g.extra.push(("Comment".into(), "好棋".into()));
    let back = xqf::read(&xqf::write(&g, &WriteOptions::default()).unwrap()).unwrap();
    assert_eq!(back.red, g.red);
    assert_eq!(back.header("Comment"), Some("好棋"));
}

/// An XQF file built byte by byte from the format's description (XQStudio's header record
/// as quoted by the `cchess` reader; Morning Yellow's XQF notes), independent of the writer:
/// version 0x12 with keys, so the rotated, shifted piece bytes, the shifted move points and
/// the stream key are all exercised.
#[test]
fn xqf_reads_a_file_built_from_the_description() {
    let (mask, or, xy_h, xyf_h, xyt_h, sum_h) =
        (0xF3u8, [0x10u8, 0x22, 0x01, 0x40], 5u8, 77u8, 200u8, 9u8);
    let sq = |b: u8| b.wrapping_mul(b).wrapping_mul(54).wrapping_add(221); // ((((k²·3+9)·3+8)·2+1)·3+8) = 54k²+221
    let xy = sq(xy_h).wrapping_mul(xy_h);
    let xyf = sq(xyf_h).wrapping_mul(xy);
    let xyt = sq(xyt_h).wrapping_mul(xyf);
    let rmk = (u32::from(sum_h) * 256 + u32::from(xy_h)) % 32000 + 767;
    let kb = [
        (sum_h & mask) | or[0],
        (xy_h & mask) | or[1],
        (xyf_h & mask) | or[2],
        (xyt_h & mask) | or[3],
    ];
    let f32: Vec<u8> = b"[(C) Copyright Mr. Dong Shiwei.]"
        .iter()
        .enumerate()
        .map(|(i, c)| c & kb[i % 4])
        .collect();
    let mut h = vec![0u8; 1024];
    h[..3].copy_from_slice(b"XQ\x12");
    h[3] = mask;
    h[8..12].copy_from_slice(&or);
    h[12] = sum_h;
    h[13] = xy_h;
    h[14] = xyf_h;
    h[15] = xyt_h;
    // The opening position, piece by piece (file*10 + rank).
    let red = [
        0u8, 10, 20, 30, 40, 50, 60, 70, 80, 12, 72, 3, 23, 43, 63, 83,
    ];
    let black = [
        9u8, 19, 29, 39, 49, 59, 69, 79, 89, 17, 77, 6, 26, 46, 66, 86,
    ];
    let pieces: Vec<u8> = red.iter().chain(black.iter()).copied().collect();
    for i in 0..32 {
        // Stored byte i holds piece (xy + i + 1) mod 32, plus xy.
        h[16 + i] = pieces[(usize::from(xy) + i + 1) % 32].wrapping_add(xy);
    }
    h[51] = 2; // Black won.
    h[304] = 4;
    h[305..309].copy_from_slice(&encoding_rs::GB18030.encode("许银").0);
    // Root with a comment "ok", then h2e2 (7,2)->(4,2), h9g7 (7,9)->(6,7).
    let mut body = vec![0x18u8, 0x20, 0x80 | 0x20, 0];
    body.extend_from_slice(&(2 + rmk as i32).to_le_bytes());
    body.extend_from_slice(b"ok");
    for (from, to, next) in [(72u8, 42u8, true), (79, 67, false)] {
        body.extend_from_slice(&[
            from.wrapping_add(0x18).wrapping_add(xyf),
            to.wrapping_add(0x20).wrapping_add(xyt),
            if next { 0x80 } else { 0 },
            0,
        ]);
    }
    for (i, b) in body.iter_mut().enumerate() {
        *b = b.wrapping_add(f32[(1024 + i) % 32]);
    }
    h.extend_from_slice(&body);
    let g = xqf::read(&h).unwrap();
    assert_eq!(
        g.moves,
        vec![
            Move::from_iccs("h2e2").unwrap(),
            Move::from_iccs("h9g7").unwrap()
        ]
    );
    assert_eq!(g.result, GameResult::BlackWins);
    assert_eq!(g.red, "许银");
    assert_eq!(g.header("Comment"), Some("ok"));
    assert!(g.from_start());
}

#[test]
fn xqf_errors_name_the_place() {
    let g = random_game(START_FEN, 4, 6);
    let bytes = xqf::write(&g, &WriteOptions::default()).unwrap();
    assert_eq!(xqf::read(&bytes[..100]).unwrap_err().code(), "truncated");
    assert_eq!(xqf::read(b"PK\x03\x04").unwrap_err().code(), "syntax");
    let e = xqf::read(&bytes[..bytes.len() - 3]).unwrap_err();
    assert_eq!(e.code(), "truncated", "{e}");
    // The third move's from-point (after the root's 8 bytes and its comment, and two moves of
    // 8 bytes) moved to an empty point.
    let clen = u32::from_le_bytes(bytes[1028..1032].try_into().unwrap()) as usize;
    let at = 1024 + 8 + clen + 16;
    let mut bad = bytes.clone();
    bad[at] = 0x18 + 44; // e4: empty
    match xqf::read(&bad).unwrap_err() {
        RecordError::BadMove {
            number,
            side,
            place,
            ..
        } => {
            assert_eq!((number, side), (2, Color::Red));
            assert_eq!(place, format!("byte {at}"));
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn dhtmlxq_block() {
    let p = Position::new();
    let m1 = p.parse_move("炮二平五").unwrap();
    let m2 = p.play(m1).unwrap().parse_move("马8进7").unwrap();
    let g = Game {
        red: "赵一".into(),
        black: "钱二".into(),
        result: GameResult::RedWins,
        moves: vec![m1, m2],
        ..Game::default()
    };
    let t = dhtmlxq::write(&g).unwrap();
    assert!(t.starts_with("[DhtmlXQ]\n"));
    assert!(t.ends_with("[/DhtmlXQ]\n"));
    assert!(
        t.contains("[DhtmlXQ_movelist]77477062[/DhtmlXQ_movelist]"),
        "{t}"
    );
    assert!(t.contains("[DhtmlXQ_result]红胜[/DhtmlXQ_result]"));
    assert!(!t.contains("binit"));
    let g = random_game(FENS[2], 1, 2);
    let t = dhtmlxq::write(&g).unwrap();
    // Red king e0 → x4 y9; its slot is the fifth.
    let binit = t
        .split("[DhtmlXQ_binit]")
        .nth(1)
        .unwrap()
        .split('[')
        .next()
        .unwrap();
    assert_eq!(binit.len(), 64);
    assert_eq!(&binit[8..10], "49");
}

#[test]
fn formats_by_name_and_export_of_several() {
    assert_eq!(Format::parse("xqf"), Some(Format::Xqf));
    assert_eq!(Format::parse("pgn-wxf"), Some(Format::Pgn(Notation::Wxf)));
    assert_eq!(Format::from_path("a/b.XQF"), Some(Format::Xqf));
    let gs = vec![random_game(START_FEN, 1, 20), random_game(FENS[1], 2, 20)];
    let bytes = crate::export(Format::Pgn(Notation::Wxf), &gs).unwrap();
    let back = crate::import(Format::Pgn(Notation::Wxf), &bytes).unwrap();
    assert_eq!(back.len(), 2);
    assert_same(&gs[1], &back[1], "second");
    assert_eq!(
        crate::export(Format::Xqf, &gs).unwrap_err().code(),
        "unwritable"
    );
}

#[test]
fn dhtmlxq_blocks_read_back_from_a_forum_post() {
    let a = random_game(START_FEN, 3, 40);
    let b = Game {
        red: "赵一".into(),
        red_team: "东城".into(),
        result: GameResult::BlackWins,
        ..random_game(FENS[2], 5, 11)
    };
    let post = format!(
        "看这盘：\n{}中间的文字\n{}",
        dhtmlxq::write(&a).unwrap(),
        dhtmlxq::write(&b).unwrap()
    );
    let back = dhtmlxq::read(&post).unwrap();
    assert_eq!(back.len(), 2);
    assert_eq!((&back[0].moves, back[0].result), (&a.moves, a.result));
    assert_eq!((&back[1].moves, back[1].result), (&b.moves, b.result));
    assert_eq!(
        (back[1].red.as_str(), back[1].red_team.as_str()),
        ("赵一", "东城")
    );
    let board = |g: &Game| {
        let fen = g.replay().unwrap()[0].to_fen();
        fen.split(' ').take(2).collect::<Vec<_>>().join(" ")
    };
    assert_eq!(board(&back[1]), board(&b));
    // An illegal move is named with its block and number; a cut block, an odd list, none.
    let bad = "[DhtmlXQ][DhtmlXQ_movelist]77477062 00000101[/DhtmlXQ_movelist][/DhtmlXQ]";
    match dhtmlxq::read(bad).unwrap_err() {
        RecordError::BadMove { number, place, .. } => {
            assert_eq!((number, place.as_str()), (2, "block 1, move 3"));
        }
        e => panic!("{e:?}"),
    }
    for (text, code) in [
        ("[DhtmlXQ][DhtmlXQ_movelist]7747", "truncated"),
        (
            "[DhtmlXQ][DhtmlXQ_movelist]774[/DhtmlXQ_movelist][/DhtmlXQ]",
            "syntax",
        ),
        ("no block here", "empty"),
    ] {
        assert_eq!(dhtmlxq::read(text).unwrap_err().code(), code, "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn dhtmlxq_reader_never_panics(text in "(\\[DhtmlXQ(_[a-z]{0,8})?\\]|\\[/DhtmlXQ(_[a-z]{0,8})?\\]|[0-9]{0,8}|\\PC{0,3}){0,12}") {
        if let Ok(gs) = dhtmlxq::read(&text) {
            for g in gs {
                g.replay().unwrap();
            }
        }
    }

    #[test]
    fn xqf_reader_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..1400)) {
        let _ = xqf::read(&bytes);
    }

    #[test]
    fn xqf_reader_survives_damaged_files(seed in 1u64.., at in any::<prop::sample::Index>(), v in any::<u8>(), cut in any::<prop::sample::Index>(), enc in any::<bool>()) {
        let g = random_game(START_FEN, seed, 30);
        let opts = if enc { encrypted(0x12, seed as u8) } else { WriteOptions::default() };
        let mut b = xqf::write(&g, &opts).unwrap();
        let i = at.index(b.len());
        b[i] = v;
        b.truncate(cut.index(b.len() + 1).max(1));
        if let Ok(g) = xqf::read(&b) {
            // Whatever was read is a legal game.
            g.replay().unwrap();
        }
    }

    #[test]
    fn pgn_reader_never_panics(text in "\\PC{0,400}") {
        let _ = pgn::parse_all(&text);
    }

    #[test]
    fn importers_never_panic_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        for f in [Format::Pgn(Notation::Chinese), Format::Xqf, Format::DhtmlXq] {
            if let Ok(gs) = crate::import(f, &bytes) {
                for g in gs {
                    g.replay().unwrap();
                }
            }
        }
        if let Ok(gs) = pgn::parse_all(&pgn::decode(&bytes)) {
            for g in gs {
                g.replay().unwrap();
            }
        }
    }

    #[test]
    fn pgn_reader_survives_damaged_records(seed in 1u64.., at in any::<prop::sample::Index>(), junk in "[\\[\\]{}()\"\\\\ 0-9a-z.进平退车马\n]{0,4}", n in 0usize..3) {
        let g = random_game(FENS[(seed % 3) as usize], seed, 30);
        let n = [Notation::Chinese, Notation::Wxf, Notation::Iccs][n];
        let text = pgn::write(&g, n).unwrap();
        let chars: Vec<char> = text.chars().collect();
        let i = at.index(chars.len());
        let damaged: String = chars[..i].iter().collect::<String>() + &junk + &chars[i..].iter().collect::<String>();
        if let Ok(gs) = pgn::parse_all(&damaged) {
            for g in gs {
                g.replay().unwrap();
            }
        }
    }

    #[test]
    fn every_format_round_trips(seed in 1u64.., fen in 0usize..3, plies in 0usize..120) {
        let g = random_game(FENS[fen], seed, plies);
        for f in [Format::Pgn(Notation::Chinese), Format::Pgn(Notation::Wxf), Format::Pgn(Notation::Iccs), Format::Xqf, Format::DhtmlXq] {
            let b = crate::export(f, std::slice::from_ref(&g)).unwrap();
            let back = crate::import(f, &b).unwrap();
            prop_assert_eq!(back.len(), 1);
            prop_assert_eq!(&back[0].moves, &g.moves);
            prop_assert_eq!(back[0].result, g.result);
        }
    }
}
