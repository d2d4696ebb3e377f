//! Game records: JSON (the snapshot message in canonical JSON) and a
//! PGN-style text in Chinese, WXF or ICCS notation.

use std::fmt::Write as _;

use chuhe_proto::v1::Result as WResult;

use crate::view::View;

/// Move notation for the text record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notation {
    Chinese,
    Wxf,
    Iccs,
}

impl Notation {
    pub fn parse(s: &str) -> Option<Notation> {
        match s.to_ascii_lowercase().as_str() {
            "" | "chinese" | "zh" => Some(Notation::Chinese),
            "wxf" => Some(Notation::Wxf),
            "iccs" => Some(Notation::Iccs),
            _ => None,
        }
    }
}

/// A result in PGN form: `1-0`, `0-1`, `1/2-1/2`, `0-0` (both lose), `*` (not over).
pub fn result_text(r: WResult) -> &'static str {
    chuhe_game::types::result_text(crate::game_wire::result_of(r as i32))
}

fn header(out: &mut String, key: &str, value: &str) {
    let v = value.replace('\\', "\\\\").replace('"', "\\\"");
    let _ = writeln!(out, "[{key} \"{v}\"]");
}

/// The PGN-style text of a game (live games end with `*`).
pub fn pgn(view: &View, notation: Notation) -> String {
    let info = &view.info;
    let result = WResult::try_from(view.result).unwrap_or(WResult::Unspecified);
    let mut o = String::new();
    header(&mut o, "Game", "Chinese Chess");
    header(
        &mut o,
        "Event",
        if info.event.is_empty() {
            "Casual game"
        } else {
            &info.event
        },
    );
    header(
        &mut o,
        "Round",
        if info.round.is_empty() {
            "-"
        } else {
            &info.round
        },
    );
    header(
        &mut o,
        "Board",
        if info.board.is_empty() {
            "-"
        } else {
            &info.board
        },
    );
    header(&mut o, "Red", &info.red_name);
    header(&mut o, "Black", &info.black_name);
    header(&mut o, "Result", result_text(result));
    if !view.end_reason.is_empty() {
        header(&mut o, "Termination", &view.end_reason);
    }
    header(&mut o, "TimeControl", &info.time_control);
    header(&mut o, "Ruleset", &info.ruleset);
    header(&mut o, "GameId", &info.game_id);
    if info.initial_fen != chuhe_rules::START_FEN {
        header(&mut o, "FEN", &info.initial_fen);
    }
    header(
        &mut o,
        "Format",
        match notation {
            Notation::Chinese => "Chinese",
            Notation::Wxf => "WXF",
            Notation::Iccs => "ICCS",
        },
    );
    o.push('\n');
    let black_first = info.initial_fen.split_whitespace().nth(1) == Some("b");
    let mut line = String::new();
    let mut n = 1;
    let mut moves = view.moves.iter().peekable();
    if black_first {
        if let Some(m) = moves.next() {
            let _ = write!(line, "1. ... {}", text(m, notation));
            n = 2;
            o.push_str(&line);
            o.push('\n');
            line.clear();
        }
    }
    while let Some(r) = moves.next() {
        let _ = write!(line, "{n}. {}", text(r, notation));
        if let Some(b) = moves.next() {
            let _ = write!(line, " {}", text(b, notation));
        }
        o.push_str(&line);
        o.push('\n');
        line.clear();
        n += 1;
    }
    o.push_str(result_text(result));
    o.push('\n');
    o
}

fn text(m: &chuhe_proto::v1::MoveRecord, n: Notation) -> &str {
    match n {
        Notation::Chinese if !m.chinese.is_empty() => &m.chinese,
        Notation::Wxf if !m.wxf.is_empty() => &m.wxf,
        _ => &m.iccs,
    }
}
