//! Every text decoder a client reaches, fed arbitrary input: FEN (`Setup::from_fen`,
//! `Position::from_fen`) and move text (ICCS, Fairy-Stockfish UCI, WXF, Chinese, any). None
//! may panic; each answers a typed error with a sentence, or a value that is consistent (a FEN
//! that reads writes back to itself, a move that reads is legal in its position).
#![allow(clippy::unwrap_used)]

use chuhe_rules::{Move, NotationError, Position, START_FEN, Setup, Square};
use proptest::prelude::*;

/// Positions to read moves in: both sides to move, tandem pieces, pawn clusters (the WXF and
/// Chinese position words), a middlegame.
const POSITIONS: [&str; 7] = [
    START_FEN,
    "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR w - - 2 2",
    "r1bakab1r/9/1cn3nc1/p1p1p1p1p/9/2P6/P3P1P1P/1CN1C1N2/9/R1BAKAB1R b - - 4 4",
    "3k5/9/4P4/4P4/4P4/4P4/4P4/9/9/4K4 w - - 0 1",
    "3k5/9/2P6/2P3P2/2P3P2/4R4/9/4R4/9/5K3 w - - 0 1",
    "3k5/2N6/2N6/9/2C6/2C6/9/2R6/2R6/4K4 w - - 0 1",
    "4k4/9/9/4p4/4p4/4p4/9/9/9/3K5 b - - 0 1",
];

fn positions() -> Vec<Position> {
    POSITIONS
        .iter()
        .map(|f| Position::from_fen(f).unwrap())
        .collect()
}

/// Reads `text` as a FEN both ways; what reads must write back to itself.
fn check_fen(text: &str) -> Result<(), TestCaseError> {
    match Setup::from_fen(text) {
        Ok(setup) => {
            let fen = setup.to_fen();
            prop_assert_eq!(Setup::from_fen(&fen), Ok(setup), "{:?}", text);
        }
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    match Position::from_fen(text) {
        Ok(pos) => {
            let fen = pos.to_fen();
            prop_assert_eq!(Position::from_fen(&fen).ok(), Some(pos), "{:?}", text);
        }
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    Ok(())
}

/// What a move reader answered: a legal move of the position, or a typed error with a
/// sentence that quotes nothing it was not given.
fn check_move(
    pos: &Position,
    text: &str,
    r: Result<Move, NotationError>,
) -> Result<(), TestCaseError> {
    match r {
        Ok(m) => {
            prop_assert!(
                pos.is_legal(m),
                "{:?} read as illegal {} in {}",
                text,
                m,
                pos.to_fen()
            );
            prop_assert!(pos.to_wxf(m).is_ok() && pos.to_chinese(m).is_ok());
        }
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    Ok(())
}

fn read_everywhere(text: &str) -> Result<(), TestCaseError> {
    let _ = Square::from_iccs(text);
    if let Err(e) = Move::from_iccs(text) {
        prop_assert!(e.is_syntax(), "{e}");
    }
    if let Err(e) = Move::from_fsf_uci(text) {
        prop_assert!(e.is_syntax(), "{e}");
    }
    for pos in positions() {
        check_move(&pos, text, pos.parse_iccs(text))?;
        check_move(&pos, text, pos.parse_wxf(text))?;
        check_move(&pos, text, pos.parse_chinese(text))?;
        check_move(&pos, text, pos.parse_move(text))?;
    }
    Ok(())
}

/// A FEN-like string: the FEN alphabet, digits (0 and 10+ included), separators.
fn fen_like() -> impl Strategy<Value = String> {
    "[1-9kabnrcpehKABNRCPEHx0/ wrbWRB\\-]{0,110}"
}

/// A FEN built field by field: ten ranks of nine points (some pieces, kings often), then a side
/// to move, placeholders and counters from good and bad choices — so the text usually reads
/// and the position checks (kings, counts, points, check) run.
fn structured_fen() -> impl Strategy<Value = String> {
    let point = prop_oneof![
        10 => Just(None),
        3 => proptest::sample::select(vec!['K', 'k']).prop_map(Some),
        4 => proptest::sample::select("KABNRCPkabnrcpEHeh".chars().collect::<Vec<_>>()).prop_map(Some),
    ];
    let rank = proptest::collection::vec(point, 9).prop_map(|points| {
        let mut out = String::new();
        let mut empty = 0;
        for p in points {
            match p {
                None => empty += 1,
                Some(c) => {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(c);
                }
            }
        }
        if empty > 0 {
            out.push_str(&empty.to_string());
        }
        out
    });
    let choice = |v: &[&'static str]| proptest::sample::select(v.to_vec());
    (
        proptest::collection::vec(rank, 10),
        choice(&["w", "b", "r", "W", "B", "R", "", "x", "wb", "-"]),
        choice(&[
            "",
            " - -",
            " - - 0 1",
            " - - 12 7",
            " - - 119 60",
            " - - 4294967295 4294967295",
            " - - 4294967296 1",
            " - - 0 0",
            " KQ - 0 1",
            " - - -1 1",
            " - - 0 1 1",
        ]),
    )
        .prop_map(|(ranks, turn, rest)| format!("{} {turn}{rest}", ranks.join("/")))
}

/// Move texts built from their parts (position words, pieces, files, operators, numbers),
/// mostly well-formed so that the readers look for the pieces and moves they name.
fn structured_move() -> impl Strategy<Value = String> {
    fn part(v: &str) -> BoxedStrategy<String> {
        proptest::sample::select(v.split(' ').map(String::from).collect::<Vec<_>>()).boxed()
    }
    fn maybe(v: &str) -> BoxedStrategy<String> {
        prop_oneof![3 => Just(String::new()), 1 => part(v)].boxed()
    }
    let chinese = (
        maybe("前 中 后 後 一 二 三 四 五 六"),
        part("车 車 马 馬 炮 砲 相 象 仕 士 帅 帥 将 將 兵 卒"),
        part("一 二 三 四 五 六 七 八 九 1 2 3 4 5 6 7 8 9 ５ 十 0"),
        part("进 進 退 平"),
        part("一 二 三 四 五 六 七 八 九 1 2 3 4 5 6 7 8 9 ９ 十 0"),
        maybe("一 进 1"),
    );
    let wxf = (
        maybe("+ - 1 2 3 9 0"),
        part("K A E B H N R C P k a e b h n r c p"),
        part("1 2 3 4 5 6 7 8 9 0 10 + -"),
        part("+ - = ."),
        part("1 2 3 4 5 6 7 8 9 0 10"),
        maybe("1 +"),
    );
    prop_oneof![
        chinese.prop_map(|(a, b, c, d, e, f)| [a, b, c, d, e, f].concat()),
        wxf.prop_map(|(a, b, c, d, e, f)| [a, b, c, d, e, f].concat()),
    ]
}

/// One of the known-good FENs with a few random edits (replace, insert, delete).
fn mutated_fen() -> impl Strategy<Value = String> {
    let fens: Vec<&'static str> = POSITIONS.to_vec();
    (
        proptest::sample::select(fens),
        proptest::collection::vec((any::<usize>(), 0u8..3, any::<char>()), 1..4),
    )
        .prop_map(|(fen, edits)| {
            let mut chars: Vec<char> = fen.chars().collect();
            for (at, op, c) in edits {
                let i = at % (chars.len() + 1);
                match op {
                    0 if i < chars.len() => chars[i] = c,
                    1 => chars.insert(i, c),
                    _ if i < chars.len() => {
                        chars.remove(i);
                    }
                    _ => chars.push(c),
                }
            }
            chars.into_iter().collect()
        })
}

/// Move-text alphabets: Chinese (both piece-name sets, both numeral styles, full-width
/// digits), WXF, ICCS and UCI.
fn move_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "[车車马馬炮砲包相象仕士帅帥将將兵卒进進退平前中后後一二三四五六七八九1-9０-９]{0,6}",
        "[KAEBHNRCPkaebhnrcp+\\-=.0-9 ]{0,6}",
        "[a-j0-9\\- ]{0,6}",
        "\\PC{0,10}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn fen_of_any_text(text in "\\PC{0,140}") {
        check_fen(&text)?;
    }

    #[test]
    fn fen_of_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        check_fen(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn fen_like_text(text in fen_like()) {
        check_fen(&text)?;
    }

    #[test]
    fn fen_with_edits(text in mutated_fen()) {
        check_fen(&text)?;
    }


    #[test]
    fn fen_counters_of_any_size(
        half in prop_oneof![Just("4294967295".to_string()), Just("4294967296".to_string()), "[0-9+\\-]{1,25}"],
        full in prop_oneof![Just("0".to_string()), Just("4294967296".to_string()), "[0-9+\\-]{1,25}"],
    ) {
        check_fen(&format!("4k4/9/9/9/9/9/9/9/9/R2K5 w - - {half} {full}"))?;
    }

    #[test]
    fn move_text_of_any_kind(text in move_like()) {
        read_everywhere(&text)?;
    }

    #[test]
    fn move_text_of_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..24)) {
        read_everywhere(&String::from_utf8_lossy(&bytes))?;
    }
}

proptest! {
    // The structured inputs reach deep paths only now and then: more cases (each is cheap).
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn fen_built_by_fields(text in structured_fen()) {
        check_fen(&text)?;
    }

    #[test]
    fn move_text_built_by_parts(text in structured_move()) {
        read_everywhere(&text)?;
    }
}

/// The edges the generators may miss, once each.
#[test]
fn decoder_edges() {
    for text in [
        "",
        " ",
        "/",
        "//////////",
        "9/9/9/9/9/9/9/9/9/9 w",
        "99/9/9/9/9/9/9/9/9/9 w",
        "0/9/9/9/9/9/9/9/9/9 w",
        "k/9/9/9/9/9/9/9/9/9 w",
        "\u{0}",
        "ｗ",
        "4k4/9/9/9/9/9/9/9/9/R2K5 w - - - -",
        "4k4/9/9/9/9/9/9/9/9/R2K5 w - - 1 1 1",
    ] {
        check_fen(text).unwrap();
    }
    for text in [
        "",
        "-",
        "--",
        "a0",
        "a0a",
        "a0a0a0",
        "j0a0",
        "a10a0",
        "a-0a0",
        "é0a0",
        "h2-e2",
        "h3e3",
        "a11a1",
        "a0a11",
        "炮",
        "炮二",
        "炮二平",
        "炮二平五五",
        "前",
        "前前车进一",
        "一二三四五",
        "兵十平五",
        "兵0平5",
        "+",
        "+R",
        "R+",
        "C2=",
        "C2=0",
        "C0=5",
        "C10=5",
        "99+1",
        "0P+1",
        "+P+1",
        "P9+9",
        "K5+9",
        "\u{feff}h2e2",
    ] {
        read_everywhere(text).unwrap();
    }
}
